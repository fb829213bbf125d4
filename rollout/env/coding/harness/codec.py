# codec.py — plain data across the pipes between the test runner and the
# program: one JSON document per line, with tags for what JSON lacks
# (tuples, sets, dicts with any keys, bytes, complex numbers). troupe puts
# this file in front of worker.py and of runner.py.
#
# Decoding builds builtin types only, never an object of the program's
# classes: a value that crosses to the test runner compares, hashes and
# prints as plain data does, whatever the program meant it to do.
import json

MAX_DEPTH = 100
MAX_FRAME = 16 << 20  # bytes in one line
PLAIN = "None, bool, int, float, complex, str, bytes, bytearray, list, tuple, dict, set or frozenset"


def encode(v, depth=0):
    if depth > MAX_DEPTH:
        raise ValueError("a value nested deeper than %d levels cannot cross between the tests and the program" % MAX_DEPTH)
    d = depth + 1
    if v is None or v is True or v is False:
        return v
    if isinstance(v, int):
        return int(v)
    if isinstance(v, float):
        return float(v)  # json writes NaN and Infinity and reads them back
    if isinstance(v, str):
        return str(v)
    if isinstance(v, complex):
        return {"complex": [v.real, v.imag]}
    if isinstance(v, bytearray):
        return {"bytearray": bytes(v).hex()}
    if isinstance(v, bytes):
        return {"bytes": bytes(v).hex()}
    if isinstance(v, list):
        return [encode(x, d) for x in v]
    if isinstance(v, tuple):
        return {"tuple": [encode(x, d) for x in v]}
    if isinstance(v, dict):
        return {"dict": [[encode(k, d), encode(x, d)] for k, x in v.items()]}
    if isinstance(v, frozenset):
        return {"frozenset": [encode(x, d) for x in v]}
    if isinstance(v, set):
        return {"set": [encode(x, d) for x in v]}
    raise TypeError("a value of type %s cannot cross between the tests and the program (plain data only: %s)" % (type(v).__name__, PLAIN))


_SEQUENCES = {"tuple": tuple, "set": set, "frozenset": frozenset}


def decode(v, depth=0):
    if depth > MAX_DEPTH:
        raise ValueError("value nested deeper than %d levels" % MAX_DEPTH)
    d = depth + 1
    t = type(v)
    if v is None or t is bool or t is int or t is float or t is str:
        return v
    if t is list:
        return [decode(x, d) for x in v]
    if t is dict and len(v) == 1:
        tag, body = next(iter(v.items()))
        if tag in _SEQUENCES and type(body) is list:
            return _SEQUENCES[tag](decode(x, d) for x in body)
        if tag == "dict" and type(body) is list and all(type(p) is list and len(p) == 2 for p in body):
            return {decode(k, d): decode(x, d) for k, x in body}
        if tag == "bytes" and type(body) is str:
            return bytes.fromhex(body)
        if tag == "bytearray" and type(body) is str:
            return bytearray.fromhex(body)
        if tag == "complex" and type(body) is list and len(body) == 2 and all(type(x) in (int, float) for x in body):
            return complex(body[0], body[1])
    raise ValueError("malformed value")


class BrokenFrame(Exception):
    """A line that cannot be read whole: the stream is out of step."""


def frame(obj):
    """obj as one line (ValueError, TypeError when it cannot be written)."""
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def send(f, obj):
    f.write(frame(obj))
    f.flush()


def read_line(f):
    """The next whole line; EOFError when the other side is gone,
    BrokenFrame when it is longer than MAX_FRAME."""
    line = f.readline(MAX_FRAME + 1)
    if not line:
        raise EOFError
    if len(line) > MAX_FRAME or not line.endswith(b"\n"):
        raise BrokenFrame("a line longer than %d bytes" % MAX_FRAME)
    return line


def receive(f):
    """The next line's document; EOFError when the other side is gone."""
    return json.loads(read_line(f))


def describe(e):
    return repr(e)[:300]
