# worker.py — the program's side of the coding reward. It loads the joint
# program (solution.py) and answers the test runner's calls: a request per
# line on descriptor 3, a reply per line on descriptor 4.
#
# Untrusted once the program is loaded: the program can rewrite anything
# here, print, exit, or write to either descriptor. That is harmless by
# design. What it sends is only ever read as plain data by the runner,
# which holds the tests (never in this sandbox) and alone decides whether
# they passed; a program can obtain a pass only by answering each call
# with a value that makes the test's own assertions hold.
import os

requests = os.fdopen(3, "rb")
replies = os.fdopen(4, "wb")
# anything else open (a descriptor the sandbox's parent leaked) is closed
# before the program runs
os.closerange(5, 1 << 20)

MUTABLE = (list, dict, set, bytearray)

ns = {"__name__": "solution"}
load_error = None
try:
    with open("solution.py", "rb") as f:
        exec(compile(f.read(), "solution.py", "exec"), ns)
except BaseException as e:
    load_error = describe(e)

while True:
    try:
        req = receive(requests)
    except EOFError:
        break
    try:
        if load_error is not None:
            raise RuntimeError("the program failed as it loaded: " + load_error)
        f = ns.get(req["call"])
        if not callable(f):
            raise NameError("the program does not define %s" % req["call"])
        args, kwargs = decode(req["args"]), decode(req["kwargs"])
        value = f(*args, **kwargs)
        # the arguments too: a function may change a list or dict in place
        send(replies, {"value": encode(value), "args": [encode(a) if type(a) in MUTABLE else None for a in args]})
    except BaseException as e:
        send(replies, {"raise": type(e).__name__, "message": str(e)[:300]})
os._exit(0)
