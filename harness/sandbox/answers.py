"""What a worker may answer: the reply frame, bounded JSON, and the declared type of every answer.

A reply is one frame, ``FRAME`` (magic, the request's id, the payload's length)
then the payload: JSON of at most the message cap. :func:`decode` reads a payload
or raises :class:`BadAnswer` (never anything else): valid UTF-8, nesting at most
``VALUE_DEPTH`` arrays and objects below the reply's envelope, no number token of
more than ``INT_DIGITS`` digits (so every integer converts to a finite float and
prints quickly), every float finite (no NaN, no Infinity, no 1e999), every string
encodable. :func:`unpack` then checks each answer against :data:`ANSWERS`, the
declared type of each CWM function and planner: a well-formed answer of the wrong
type is ``("bad", why)`` for that call alone; a reply out of protocol or bounds is
a :class:`BadAnswer` (only a forged frame or a broken worker sends one).

Host side, standard library only: the worker imports the frame and
:func:`bounds_problem` to keep its own replies within the bounds the host checks.
"""

from __future__ import annotations

import json
import math
import re
import reprlib
import struct
from collections.abc import Callable, Sequence
from typing import Any

from harness.sandbox.failures import FailureKind

FRAME_MAGIC = b"CWM\x01"
FRAME = struct.Struct(">4sQI")  # magic, request id, payload length
VALUE_DEPTH = 60  # arrays and objects an answer's value may nest
INT_DIGITS = 64  # digits in a row a number token may have
INT64 = 1 << 63  # actions and counts are signed 64-bit integers
FAILURE_KINDS = frozenset(kind.value for kind in FailureKind)

_STRING = re.compile(rb'"[^"\\]*(?:\\[\s\S][^"\\]*)*"?')  # linear: it always matches from a quote
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_SQUARE = bytes.maketrans(b"{}", b"[]")
_DIGITS = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))  # a digit as "0", anything else as " "
_LONG_NUMBER = b"0" * (INT_DIGITS + 1)
_EXPONENTS = bytes(0x30 if 0x30 <= b <= 0x39 else 0x65 if b in b"eE" else 0x2B if b in b"+-" else 0x20 for b in range(256))
_BRIEF = reprlib.Repr()
_BRIEF.maxstring = _BRIEF.maxother = _BRIEF.maxlong = 60
_BRIEF.maxlevel, _BRIEF.maxlist, _BRIEF.maxdict = 3, 6, 6


class BadAnswer(ValueError):
    """A reply out of protocol or out of bounds; the message says why."""


def bounds_problem(payload: bytes, depth: int) -> str | None:
    """Why the JSON text ``payload`` is out of bounds (nesting deeper than ``depth``, a number token of more than
    ``INT_DIGITS`` digits), or None; exact for valid JSON (invalid JSON is refused by the parser), C-speed scans."""
    outside = None
    if payload.count(b"[") + payload.count(b"{") > depth:
        outside = _outside_strings(payload)
        brackets = outside.translate(_SQUARE, _NOT_BRACKETS)
        for _ in range(depth):  # each pass peels the innermost level of every array and object
            if not brackets:
                break
            brackets = brackets.replace(b"[]", b"")
        if brackets:
            return f"nesting deeper than {depth} arrays and objects"
    if _LONG_NUMBER in payload.translate(_DIGITS):
        if _LONG_NUMBER in (outside if outside is not None else _outside_strings(payload)).translate(_DIGITS):
            return f"a number of more than {INT_DIGITS} digits"
    return None


def _outside_strings(payload: bytes) -> bytes:
    """The JSON text with every string emptied (its brackets and digits are not the value's)."""
    if b"\\" not in payload:  # no escapes: the quotes pair up in order
        return b'""'.join(payload.split(b'"')[::2])
    return _STRING.sub(b'""', payload)


def decode(payload: bytes, depth: int) -> Any:
    """The JSON value of ``payload`` within the bounds (module docstring); :class:`BadAnswer` otherwise."""
    problem = bounds_problem(payload, depth)
    if problem is not None:
        raise BadAnswer(problem)
    try:
        text = payload.decode("utf-8")
        if _big_exponent(payload):
            value = json.loads(text, parse_float=_finite, parse_constant=_constant)
        else:  # no exponent of 3 digits, no run of more than INT_DIGITS: every float is finite
            value = json.loads(text, parse_constant=_constant)
    except BadAnswer:
        raise
    except UnicodeDecodeError:
        raise BadAnswer("a reply that is not UTF-8") from None
    except (ValueError, RecursionError) as error:  # json.JSONDecodeError is a ValueError
        raise BadAnswer(f"a reply that is not JSON: {str(error)[:80]}") from None
    if b"\\u" in payload and _SURROGATE.search(payload) and not _encodable(value):
        raise BadAnswer("a string with a lone surrogate (not encodable as UTF-8)")
    return value


def _big_exponent(payload: bytes) -> bool:
    """Whether a number may have an exponent of three digits or more (the only way to a float beyond range here)."""
    marks = payload.translate(_EXPONENTS)
    return b"e000" in marks or b"e+000" in marks


def _finite(token: str) -> float:
    number = float(token)
    if not math.isfinite(number):
        raise BadAnswer(f"a number beyond a float's range: {token[:40]}")
    return number


def _constant(token: str) -> Any:
    raise BadAnswer(f"{token} is not a finite number")


def _encodable(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# -- the declared types ---------------------------------------------------------------------------------------------

Check = Callable[[Any], bool]


def _any(value: Any) -> bool:
    return True  # decode bounded it already


def _int64(value: Any) -> bool:
    return type(value) is int and -INT64 <= value < INT64


def _count(value: Any) -> bool:
    return type(value) is int and 0 <= value < INT64


def _number(value: Any) -> bool:
    return type(value) is float or type(value) is int  # finite and bounded by decode


def _bool(value: Any) -> bool:
    return type(value) is bool


def _player(value: Any) -> bool:
    return type(value) is int and value in (0, 1)


def _ints(value: Any) -> bool:
    if type(value) is not list:
        return False
    for item in value:
        if type(item) is not int or not -INT64 <= item < INT64:
            return False
    return True


def _list_of(check: Check) -> Check:
    return lambda value: type(value) is list and all(map(check, value))


def _pair(bound: float | None) -> Check:
    def pair(value: Any) -> bool:
        return (
            type(value) is list
            and len(value) == 2
            and all(map(_number, value))
            and (bound is None or all(-bound <= v <= bound for v in value))
        )

    return pair


def _record(fields: dict[str, Check]) -> Check:
    """A JSON object with exactly these keys, each value passing its check."""
    return lambda value: type(value) is dict and value.keys() == fields.keys() and all(check(value[k]) for k, check in fields.items())


_NUMBERS = _list_of(_number)
ANSWERS: dict[str, tuple[str, Check]] = {
    "initial_state": ("a JSON state", _any),
    "apply_action": ("a JSON state", _any),
    "current_player": ("0 or 1", _player),
    "legal_actions": ("a list of integers", _ints),
    "is_terminal": ("true or false", _bool),
    "returns": ("two numbers in [-1, 1]", _pair(1.0)),
    "value": ("two numbers", _pair(None)),
    "plan:mcts": (
        "the mcts fields",
        _record({"action": _int64, "actions": _ints, "visits": _list_of(_count), "win_rates": _NUMBERS, "simulations": _count}),
    ),
    "plan:playouts": ("the playouts fields", _record({"playouts": _count, "plies": _count, "returns": _pair(None)})),
    "plan:minimax": (
        "the minimax fields",
        _record(
            {
                "action": _int64,
                "actions": _ints,
                "values": _NUMBERS,
                "value": _number,
                "depth": _count,
                "nodes": _count,
                "solved": _bool,
                "stopped": lambda v: v in ("depth", "nodes", "solved"),
            }
        ),
    ),
    "plan:returns_table": ("{returns: [[r0, r1], ...]}", _record({"returns": _list_of(_pair(None))})),
    "load": ("the program's functions", _record({"functions": _list_of(lambda v: type(v) is str)})),
}


def expected(message: dict[str, Any]) -> list[str]:
    """The kind of answer (a key of :data:`ANSWERS`, or a name not in it: any JSON) of each call in a request."""
    op = message.get("op")
    if op == "many":
        return [str(method) for method, _ in message["calls"]]
    if op == "call":
        return [str(message["method"])]
    if op == "plan":
        return [f"plan:{message['planner']}"]
    return ["load"]


Answer = tuple[str, Any]  # ("value", value) | ("failure", (kind, message, traceback)) | ("bad", why)


def unpack(payload: bytes, kinds: Sequence[str], many: bool) -> list[Answer]:
    """One :data:`Answer` per kind (for a batch failed as a whole, one failure); :class:`BadAnswer` for a reply out of
    bounds or protocol."""
    reply = decode(payload, VALUE_DEPTH + (3 if many else 1))
    if not many:
        return [answer(reply, kinds[0])]
    if type(reply) is dict and reply.keys() == {"results"}:
        results = reply["results"]
        if type(results) is not list or len(results) != len(kinds):
            raise BadAnswer(f"a batch reply of the wrong shape: {_BRIEF.repr(results)}")
        return [answer(envelope, kind) for envelope, kind in zip(results, kinds)]
    single = answer(reply, "")  # the worker's failure for the whole batch (its answers too large together)
    if single[0] != "failure":
        raise BadAnswer(f"a batch reply of the wrong shape: {_BRIEF.repr(reply)}")
    return [single]


def answer(envelope: Any, kind: str) -> Answer:
    """One answer's envelope (``{"ok": true, "value"}`` or ``{"ok": false, "failure"}``) checked as ``kind``."""
    if type(envelope) is dict and len(envelope) == 2 and envelope.get("ok") is True and "value" in envelope:
        value = envelope["value"]
        declared = ANSWERS.get(kind)
        if declared is None or declared[1](value):
            return ("value", value)
        return ("bad", f"{kind} must answer {declared[0]}, got {_BRIEF.repr(value)}")
    failure = envelope.get("failure") if type(envelope) is dict and len(envelope) == 2 and envelope.get("ok") is False else None
    if (
        type(failure) is dict
        and failure.keys() == {"kind", "message", "traceback"}
        and type(failure["kind"]) is str
        and failure["kind"] in FAILURE_KINDS
        and type(failure["message"]) is str
        and type(failure["traceback"]) is str
    ):
        return ("failure", (failure["kind"], failure["message"], failure["traceback"]))
    raise BadAnswer(f"an answer out of protocol: {_BRIEF.repr(envelope)}")
