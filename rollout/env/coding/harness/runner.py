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
        if self.gone:
            raise RuntimeError(self.gone)
        request = {"call": name, "args": encode(list(args)), "kwargs": encode(kwargs)}
        try:
            send(requests, request)
            reply = receive(replies)
        except (OSError, EOFError):
            self.gone = "the program stopped before it answered"
            raise RuntimeError(self.gone) from None
        except (ValueError, RecursionError, MemoryError) as e:
            self.gone = "the program's answer was malformed: " + describe(e)
            raise RuntimeError(self.gone) from None
        if type(reply) is dict and type(reply.get("raise")) is str:
            raise exception(reply["raise"], str(reply.get("message", ""))[:300])
        if type(reply) is not dict or "value" not in reply:
            self.gone = "the program's answer was malformed"
            raise RuntimeError(self.gone)
        try:
            value = decode(reply["value"])
            changed = reply.get("args")
            if type(changed) is list and len(changed) == len(args):
                for a, c in zip(args, changed):
                    if c is not None:
                        update(a, decode(c))
        except (ValueError, TypeError, RecursionError, MemoryError) as e:
            self.gone = "the program's answer was malformed: " + describe(e)
            raise RuntimeError(self.gone) from None
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
    scope = {"__name__": "__test__"}
    for name in names:
        scope[name] = proxy(program, name)
    try:
        exec(compile(test, "<test %d>" % i, "exec"), scope)
        report(test=i, passed=True)
    except BaseException as e:
        report(test=i, passed=False, error=describe(e))
report(done=True)
