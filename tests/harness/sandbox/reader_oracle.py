"""The reader tests' oracle of the declared answer types, a fake worker the test writes replies into, hostile JSON texts.

A module of its own (imported like ``sandbox_limits``): the oracle is written apart from
``harness.sandbox.answers``, so the property tests check the reader against the declared
types, not against itself.
"""

from __future__ import annotations

import json
import math
import os
import threading
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from harness.sandbox import answers, channel
from harness.sandbox.client import SandboxWorker
from harness.sandbox.failures import Failure, FailureKind, Result
from harness.sandbox.limits import Limits

METHODS = ("initial_state", "apply_action", "current_player", "legal_actions", "is_terminal", "returns", "value")
PLANNERS = ("mcts", "playouts", "minimax", "returns_table")
INT64 = 1 << 63
VALUE_DEPTH = 60  # the nesting an answer's value may have (docs/sandbox.md)
INT_DIGITS = 64  # the digits an integer in an answer may have
FAKE_LIMITS = Limits(call_s=5.0, start_s=5.0, message_bytes=1 << 20)
PROPERTY = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# -- the oracle: what a value of each declared type is ----------------------------------------------------------


def bounded_json(value: Any, depth: int = 0) -> bool:
    """A JSON value a caller can use: nesting, integer digits and floats bounded, strings encodable."""
    if value is None or type(value) is bool:
        return True
    if type(value) is int:
        return len(str(abs(value))) <= INT_DIGITS
    if type(value) is float:
        return math.isfinite(value)
    if type(value) is str:
        return _encodable(value)
    if depth >= VALUE_DEPTH:
        return False
    if type(value) is list:
        return all(bounded_json(item, depth + 1) for item in value)
    if type(value) is dict:
        return all(type(k) is str and _encodable(k) and bounded_json(v, depth + 1) for k, v in value.items())
    return False


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _int64(value: Any) -> bool:
    return type(value) is int and -INT64 <= value < INT64


def _count(value: Any) -> bool:
    return _int64(value) and value >= 0


def _number(value: Any) -> bool:
    return type(value) in (int, float) and bounded_json(value)


def _list(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: type(value) is list and all(check(item) for item in value)


def _pair(bound: float | None) -> Callable[[Any], bool]:
    return lambda v: type(v) is list and len(v) == 2 and all(_number(x) and (bound is None or -bound <= x <= bound) for x in v)


def _record(fields: dict[str, Callable[[Any], bool]]) -> Callable[[Any], bool]:
    return lambda value: type(value) is dict and set(value) == set(fields) and all(fields[k](value[k]) for k in fields)


PLAN_FIELDS: dict[str, dict[str, Callable[[Any], bool]]] = {
    "mcts": {"action": _int64, "actions": _list(_int64), "visits": _list(_count), "win_rates": _list(_number), "simulations": _count},
    "playouts": {"playouts": _count, "plies": _count, "returns": _pair(None)},
    "minimax": {
        "action": _int64,
        "actions": _list(_int64),
        "values": _list(_number),
        "value": _number,
        "depth": _count,
        "nodes": _count,
        "solved": lambda v: type(v) is bool,
        "stopped": lambda v: v in ("depth", "nodes", "solved"),
    },
    "returns_table": {"returns": _list(_pair(None))},
}
DECLARED: dict[str, Callable[[Any], bool]] = {
    "initial_state": bounded_json,
    "apply_action": bounded_json,
    "current_player": lambda v: type(v) is int and v in (0, 1),
    "legal_actions": _list(_int64),
    "is_terminal": lambda v: type(v) is bool,
    "returns": _pair(1.0),
    "value": _pair(None),
    **{f"plan:{name}": _record(fields) for name, fields in PLAN_FIELDS.items()},
}


def assert_declared(kind: str, result: Any) -> None:
    """``result`` is a Result holding a value of ``kind``'s declared type, or a classified failure."""
    assert isinstance(result, Result)
    if result.failure is None:
        assert DECLARED[kind](result.value), f"{kind} accepted {result.value!r:.200}"
    else:
        assert isinstance(result.failure, Failure) and isinstance(result.failure.kind, FailureKind)
        assert isinstance(result.failure.message, str) and isinstance(result.failure.traceback, str)


# -- a fake worker: the test writes the reply bytes -------------------------------------------------------------


def frame(request_id: int, payload: bytes) -> bytes:
    """A reply as the worker's encoder frames it."""
    return answers.FRAME.pack(answers.FRAME_MAGIC, request_id, len(payload)) + payload


class _FakeStdin:
    def __init__(self, fake: _FakeWorker) -> None:
        self.fake = fake

    def write(self, data: bytes) -> int:
        self.fake.requests.append(json.loads(data))
        reply = self.fake.respond(self.fake.requests[-1])
        threading.Thread(target=self.fake.send, args=(reply,), daemon=True).start()  # a pipe holds 64 KiB
        return len(data)

    def flush(self) -> None:
        pass


class _FakeWorker:
    """A process stand-in: requests parsed, replies written into a pipe; the write end closed after one reply."""

    def __init__(self, respond: Callable[[dict[str, Any]], bytes], close_after: bool) -> None:
        self.respond, self.close_after = respond, close_after
        self.requests: list[dict[str, Any]] = []
        self.read_fd, self.write_fd = os.pipe()
        self.stdin, self.stdout, self.stderr = _FakeStdin(self), None, None
        self.pid, self.returncode = 0, 0
        self.lock = threading.Lock()

    def send(self, reply: bytes) -> None:
        with self.lock:
            try:
                os.write(self.write_fd, reply) if reply else None
                if self.close_after:
                    os.close(self.write_fd)
                    self.write_fd = -1
            except OSError:
                pass

    def wait(self, timeout: float | None = None) -> int:
        return 0

    def poll(self) -> int:
        return 0

    def close(self) -> None:
        for fd in (self.read_fd, self.write_fd):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.read_fd = self.write_fd = -1


def attach(respond: Callable[[dict[str, Any]], bytes], close_after: bool = True, limits: Limits = FAKE_LIMITS) -> SandboxWorker:
    """A ``SandboxWorker`` talking to a fake worker; a fatal failure ends it (later calls fail: no new worker)."""
    fake = _FakeWorker(respond, close_after)
    worker = SandboxWorker("", limits, unsandboxed=True)
    worker._process = fake  # type: ignore[assignment]
    worker._reader = channel.FrameReader(fake.read_fd, limits.message_bytes)
    worker._drain = None

    def stop() -> None:
        worker._process = None
        fake.close()

    def start() -> Result:
        if worker._process is None:
            return Result(failure=Failure(FailureKind.WORKER_DIED, "the fake worker was stopped"))
        return Result({"functions": list(METHODS)})

    worker._kill = stop  # type: ignore[method-assign]
    worker.start = start  # type: ignore[method-assign]
    worker.fake = fake  # type: ignore[attr-defined]
    return worker


def ask(worker: SandboxWorker, kind: str) -> Result:
    """One request of ``kind`` (a CWM function or ``plan:<planner>``)."""
    if kind.startswith("plan:"):
        return worker.plan(kind[5:], state={"n": 0})
    return worker.call(kind, [{"n": 0}])


KINDS = st.sampled_from(METHODS + tuple(f"plan:{p}" for p in PLANNERS))

# -- hostile JSON texts -------------------------------------------------------------------------------------------

_NUMBERS = st.one_of(
    st.integers(-(10**80), 10**80).map(str),
    st.integers(1, 6000).map(lambda n: "9" * n),  # beyond Python's 4,300-digit limit at the top
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "-1e400", "1e308", "1e-999", "0.1e309", "-0", "1E+2"]),
)
_STRINGS = st.one_of(
    st.text(max_size=20).map(lambda s: json.dumps(s)),
    st.sampled_from(['"\\ud800"', '"\\udfff x"', '"\\ud83d\\ude00"', '"]]]]}}}"', '"\\\\"', '"[[[["']),
)
_SCALARS = st.one_of(st.sampled_from(["null", "true", "false"]), _NUMBERS, _STRINGS)


def _containers(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.lists(children, max_size=5).map(lambda items: "[" + ",".join(items) + "]"),
        st.lists(st.tuples(_STRINGS, children), max_size=5).map(lambda kv: "{" + ",".join(f"{k}:{v}" for k, v in kv) + "}"),
    )


def deep(depth: int, inner: str = "0") -> str:
    return "[" * depth + inner + "]" * depth


HOSTILE_JSON = st.one_of(
    st.recursive(_SCALARS, _containers, max_leaves=12),
    st.integers(1, 200_000).map(deep),
    st.integers(1, 3000).map(lambda n: '{"a":' * n + "0" + "}" * n),
)


def plan_fields(name: str) -> st.SearchStrategy[str]:
    """A planner's answer with its own keys (sometimes one dropped or one more), each value hostile or plausible."""
    keys = list(PLAN_FIELDS[name])
    value = st.one_of(HOSTILE_JSON, st.sampled_from(["0", "1", "[0,1]", "[[0,1]]", "0.5", "true", '"depth"']))
    return st.tuples(st.lists(st.tuples(st.sampled_from(keys + ["extra"]), value), max_size=len(keys) + 1), st.booleans()).map(
        lambda pairs_all: "{" + ",".join(f'"{k}":{v}' for k, v in pairs_all[0]) + "}"
    )


def ok_reply(value_text: str) -> bytes:
    return ('{"ok":true,"value":' + value_text + "}").encode("utf-8", "surrogatepass")
