# runner.py — the trusted side of the coding reward. It holds the hidden
# tests and runs them in its own process, in a sandbox of its own: the
# program's functions are proxies that send each call's arguments to the
# program's process (worker.py, descriptor 3) and read back the value it
# returns (descriptor 4), decoded as plain data. No code of the program
# ever runs here, so its prints, exits, patches of builtins or modules,
# atexit hooks, objects that equal everything, exceptions that end loops
# and the files it can reach change nothing of what is judged below.
#
# The verdict goes to troupe on this process's standard output, which the
# program's process cannot write: one JSON line for the syntax check, one
# per test, and {"done": true} at the end. What the tests print goes to
# standard error.
#
# Tests come in two kinds. The task's own (spec "written": false) are
# trusted code and run here. Tests a model wrote (spec "written": true: the
# code-test workflow's tester) are model-written code too, so they never
# run anywhere near the verdict: each is read as data — one
# `assert ENTRY(args) == expected` (or `is None/True/False`, a bare call, or
# `not` a call) whose arguments and expected value are literals — and only
# the call crosses to the program's process. Anything else (`assert True`,
# an import, a patch, an exit, a write to a descriptor) is a failing test
# that says so; no part of it is evaluated.
import ast
import builtins
import os
import sys

requests = os.fdopen(3, "wb")
replies = os.fdopen(4, "rb")
os.closerange(5, 1 << 20)  # a descriptor the sandbox's parent leaked
verdict = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)


def report(**kv):
    verdict.write(json.dumps(kv) + "\n")
    verdict.flush()


class Program:
    """The program's process, as seen from here: calls go out as data."""

    def __init__(self):
        self.gone = None

    def call(self, name, args, kwargs):
        """One call, isolated from the others: what fails to cross for this
        call fails this test alone. Only a stream out of step (the program
        gone, or a line too long to read whole) fails the calls after it."""
        if self.gone:
            raise RuntimeError(self.gone)
        try:
            line = frame({"call": name, "args": encode(list(args)), "kwargs": encode(kwargs)})
        except (ValueError, TypeError, RecursionError, MemoryError) as e:
            # the test's own arguments (an integer too long to write, say):
            # nothing was sent, the program is not to blame
            raise ValueError("the test's arguments cannot be sent to the program: " + describe(e)) from None
        try:
            requests.write(line)
            requests.flush()
            raw = read_line(replies)
        except (OSError, EOFError):
            self.gone = "the program stopped before it answered"
            raise RuntimeError(self.gone) from None
        except BrokenFrame as e:
            self.gone = "the program's answer was malformed: " + describe(e)
            raise RuntimeError(self.gone) from None
        try:
            reply = json.loads(raw)
        except (ValueError, RecursionError, MemoryError) as e:
            raise RuntimeError("the program's answer was malformed: " + describe(e)) from None
        if type(reply) is dict and type(reply.get("raise")) is str:
            raise exception(reply["raise"], str(reply.get("message", ""))[:300])
        if type(reply) is not dict or "value" not in reply:
            raise RuntimeError("the program's answer was malformed")
        try:
            value = decode(reply["value"])
            changed = reply.get("args")
            if type(changed) is list and len(changed) == len(args):
                for a, c in zip(args, changed):
                    if c is not None:
                        update(a, decode(c))
        except (ValueError, TypeError, RecursionError, MemoryError) as e:
            raise RuntimeError("the program's answer was malformed: " + describe(e)) from None
        return value


def exception(name, message):
    """The program's exception, rebuilt here: a builtin Exception of that
    name, or a RuntimeError naming it. Never one that steers the tests'
    control flow (StopIteration would end the loop of a map() the test
    iterates; SystemExit and KeyboardInterrupt are not Exceptions)."""
    cls = getattr(builtins, name, None)
    if isinstance(cls, type) and issubclass(cls, Exception) and not issubclass(cls, (StopIteration, StopAsyncIteration)):
        try:
            return cls(message)
        except Exception:
            pass
    return RuntimeError("%s: %s" % (name, message))


def update(arg, changed):
    """A list, dict, set or bytearray argument the function changed in place."""
    if type(arg) is not type(changed):
        return
    if type(arg) in (list, bytearray):
        arg[:] = changed
    elif type(arg) in (dict, set):
        arg.clear()
        arg.update(changed)


def proxy(program, name):
    def call(*args, **kwargs):
        return program.call(name, args, kwargs)

    call.__name__ = call.__qualname__ = name
    return call


class NotCheckable(Exception):
    """A written test outside the form that is read as data."""


WRITTEN_FORM = "write assert %s(args) == expected with literal arguments and a literal expected value"
SINGLETONS = (None, True, False)


def literal(node):
    try:
        return ast.literal_eval(node)
    except Exception:  # ValueError, TypeError, SyntaxError, RecursionError, MemoryError
        raise NotCheckable("not a literal: " + describe_node(node)) from None


def describe_node(node):
    try:
        return ast.unparse(node)[:200]
    except Exception:
        return type(node).__name__


def entry_call(node, entry):
    """The literal arguments of a call to the entry point, or None."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == entry):
        return None
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        raise NotCheckable("arguments must be literals, not unpacked")
    return [literal(a) for a in node.args], {k.arg: literal(k.value) for k in node.keywords}


def read_written(source, entry):
    """A written test as (args, kwargs, check): the call and how its value
    is judged. Parsing and literal_eval evaluate nothing of the test."""
    try:
        tree = ast.parse(source, mode="exec")
    except Exception as e:
        raise NotCheckable("does not parse: " + describe(e)) from None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Assert):
        raise NotCheckable("not one assert statement")
    test = tree.body[0].test
    call = entry_call(test, entry)
    if call is not None:
        return call[0], call[1], ("truthy", None)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        call = entry_call(test.operand, entry)
        if call is not None:
            return call[0], call[1], ("falsy", None)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        op, left, right = test.ops[0], test.left, test.comparators[0]
        call, other = entry_call(left, entry), right
        if call is None:
            call, other = entry_call(right, entry), left
        if call is not None and entry_call(other, entry) is None:
            expected = literal(other)
            if isinstance(op, ast.Eq):
                return call[0], call[1], ("equal", expected)
            if isinstance(op, ast.Is) and any(expected is s for s in SINGLETONS):
                return call[0], call[1], ("is", expected)
    raise NotCheckable("not a checkable assert")


def run_written(program, entry, source):
    """Judges a written test: the entry point called across the pipe, its
    plain-data value compared with the literal here."""
    try:
        args, kwargs, (how, expected) = read_written(source, entry)
    except NotCheckable as e:
        raise NotCheckable("%s (%s)" % (e, WRITTEN_FORM % entry)) from None
    value = program.call(entry, args, kwargs)
    ok = {"truthy": lambda: bool(value), "falsy": lambda: not value,
          "equal": lambda: value == expected, "is": lambda: value is expected}[how]()
    if not ok:
        raise AssertionError("%s returned %s" % (entry, repr(value)[:200]))


with open("tests.json", encoding="utf-8") as f:
    spec = json.load(f)
with open("solution.py", "rb") as f:
    source = f.read()  # bytes: an undecodable program is a SyntaxError, not a crash here
try:
    compile(source, "solution.py", "exec")
    tree = ast.parse(source)
except Exception as e:  # SyntaxError, ValueError (a null byte), RecursionError, MemoryError
    report(syntax=False, error=describe(e))
    sys.exit(0)
report(syntax=True)

# the names the tests may call: the entry point and the program's other
# top-level functions, except those that would hide a builtin the tests use
names = {spec["entry"]} | {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and not hasattr(builtins, n.name)}
program = Program()
for i, test in enumerate(spec["tests"]):
    try:
        if spec.get("written"):
            run_written(program, spec["entry"], test)
        else:
            scope = {"__name__": "__test__"}
            for name in names:
                scope[name] = proxy(program, name)
            exec(compile(test, "<test %d>" % i, "exec"), scope)
        report(test=i, passed=True)
    except BaseException as e:
        report(test=i, passed=False, error=describe(e))
report(done=True)
