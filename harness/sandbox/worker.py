"""The worker: runs inside the sandbox, loads one candidate program, answers JSON lines until its input ends.

Started by :mod:`harness.sandbox.client` (never imported by the harness for a
candidate's sake; standard library only, since nothing else is bound in the
sandbox). The first message carries the limits, which the worker applies to
itself (rlimits) before it reads a line of the candidate, then the source. The
protocol channel is a private copy of stdout: the candidate's prints go to stderr
through a capped writer, so a print can never be taken for an answer.

Requests, one JSON object a line: ``{"op": "call", "id", "method", "args"}``,
``{"op": "many", "id", "calls": [[method, args], ...]}``,
``{"op": "plan", "id", "planner": "mcts" | "playouts" | "minimax" | "returns_table", "kwargs"}``.
Answers, each one frame (``answers.FRAME``: magic, the request's id, the length)
then JSON within the host's bounds: ``{"ok": true, "value"}``,
``{"ok": false, "failure"}``, or for ``many`` ``{"results": [...]}``.
"""

from __future__ import annotations

import errno
import json
import math
import os
import resource
import sys
import time
import traceback
import types
from collections.abc import Callable
from typing import Any

from harness.sandbox import answers, planner
from harness.sandbox.guard import Guard

PLANNERS: dict[str, Callable[..., dict[str, Any]]] = {
    "mcts": planner.mcts,
    "playouts": planner.playouts,
    "minimax": planner.minimax,
    "returns_table": planner.returns_table,
}
CWM_FUNCTIONS = ("initial_state", "current_player", "legal_actions", "apply_action", "is_terminal", "returns", "value")
TRACEBACK_CHARS = 4000
CHECKED_PLANNER_APPLIES = 100  # the planner checks this many apply_action calls per request for mutation
# what the kernel answers an operation the walls refuse (EAGAIN: a process or thread past RLIMIT_NPROC)
_BLOCKED_ERRNOS = {errno.EROFS, errno.EACCES, errno.EPERM, errno.ENETUNREACH, errno.ECONNREFUSED, errno.EADDRNOTAVAIL, errno.EAGAIN}


class OutputLimitExceeded(Exception):
    """The candidate printed more than the worker's output allowance."""


class MutatedInput(Exception):
    """apply_action changed the state it was given."""


class CappedWriter:
    """``sys.stdout`` and ``sys.stderr`` of the candidate: to fd 2, at most ``cap`` bytes in the worker's life."""

    def __init__(self, cap: int) -> None:
        self.cap, self.written = cap, 0

    def write(self, text: str) -> int:
        data = text.encode("utf-8", "replace")
        self.written += len(data)
        if self.written > self.cap:
            raise OutputLimitExceeded(f"the program printed more than {self.cap} bytes")
        os.write(2, data)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def _snapshot(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=repr)


class Worker:
    """One candidate program and its calls."""

    def __init__(self, load: dict[str, Any], out_fd: int) -> None:
        self.out_fd = out_fd
        self.pid = os.getpid()
        self.message_bytes = int(load["limits"]["message_bytes"])
        self.check_mutation = bool(load.get("check_mutation", True))
        self.guard = Guard(tuple(load.get("readable", ())), load.get("tmp", "/tmp"))
        self._take_events: Callable[[], list[str]] = list  # the hook's refusals since the last take (none without it)
        self.cpu_s, self.lifetime_cpu_s = int(load["limits"]["cpu_s"]), int(load["limits"]["lifetime_cpu_s"])
        self._cpu_soft = 0
        self.functions: dict[str, Any] = {}

    def load(self, source: str, use_guard: bool) -> dict[str, Any]:
        module = types.ModuleType("candidate")
        sys.modules["candidate"] = module
        if use_guard:
            self._take_events = self.guard.install()
        outcome = self._run(lambda: exec(compile(source, "<candidate>", "exec"), module.__dict__))
        if not outcome["ok"]:
            return outcome
        self.functions = {name: fn for name in CWM_FUNCTIONS if callable(fn := getattr(module, name, None))}
        return {"ok": True, "value": {"functions": sorted(self.functions)}}

    def invoke(self, method: Any, args: Any) -> dict[str, Any]:
        function = self.functions.get(method) if isinstance(method, str) else None
        if function is None:
            return _failure("crash", f"the program defines no function {method!r} (CWM API: {', '.join(CWM_FUNCTIONS)})")
        if not isinstance(args, list):
            return _failure("bad_output", "args must be a JSON list")
        if method == "apply_action" and self.check_mutation and args:
            return self._run(lambda: self._apply_checked(function, args))
        return self._run(lambda: function(*args))

    def plan(self, name: Any, kwargs: Any) -> dict[str, Any]:
        run = PLANNERS.get(name) if isinstance(name, str) else None
        if run is None or not isinstance(kwargs, dict):
            return _failure("crash", f"unknown planner {name!r}: {', '.join(PLANNERS)} (with a JSON object of arguments)")
        game: Any = _PlannerGame(self.functions, self.check_mutation)  # the CWM functions, set per instance
        return self._run(lambda: run(game, **kwargs))

    def _apply_checked(self, function: Any, args: list[Any]) -> Any:
        before = _snapshot(args[0])
        value = function(*args)
        if _snapshot(args[0]) != before:
            raise MutatedInput("apply_action changed the state it was given (it must return a new state)")
        return value

    def _run(self, thunk: Any) -> dict[str, Any]:
        take_events, pid, classify, getpid = self._take_events, self.pid, _classify, os.getpid  # bound before the program runs
        take_events()  # what came before this call is not its own
        self._arm_cpu()
        try:
            value = thunk()
        except BaseException as error:  # noqa: BLE001 - every failure of the candidate is classified, none ends the worker
            if getpid() != pid:  # a forked copy of the worker must never answer
                os._exit(0)
            return classify(error, take_events())
        if getpid() != pid:
            os._exit(0)
        if events := take_events():
            return _failure("forbidden", "blocked: " + "; ".join(events[:5]))
        return {"ok": True, "value": value}

    def _arm_cpu(self) -> None:
        """The CPU allowance of one call: RLIMIT_CPU's soft limit at least ``cpu_s`` above what is used (SIGXCPU past it)."""
        soft = min(math.ceil(time.process_time()) + self.cpu_s, self.lifetime_cpu_s)
        if soft != self._cpu_soft:
            try:
                resource.setrlimit(resource.RLIMIT_CPU, (soft, self.lifetime_cpu_s + 1))
                self._cpu_soft = soft
            except (OSError, ValueError):  # the program lowered the hard limit itself: that one holds
                pass

    def send(self, request_id: int, answer: dict[str, Any]) -> None:
        self._write(request_id, self._encode(answer))

    def send_many(self, request_id: int, results: list[dict[str, Any]]) -> None:
        parts = [self._encode(result, checked=False) for result in results]
        payload = b'{"results":[' + b",".join(parts) + b"]}"
        if answers.bounds_problem(payload, answers.VALUE_DEPTH + 3) is not None:  # find the answers out of bounds
            payload = b'{"results":[' + b",".join(self._bounded(part) for part in parts) + b"]}"
        if len(payload) > self.message_bytes:
            payload = _plain("bad_output", f"the batch's answers are {len(payload)} bytes of JSON, more than {self.message_bytes}")
        self._write(request_id, payload)

    def _encode(self, answer: dict[str, Any], checked: bool = True) -> bytes:
        """One answer's JSON: within the message cap and (``checked``) the host's bounds, or a bad_output failure."""
        try:
            data = json.dumps(answer, separators=(",", ":"), allow_nan=False).encode()
        except (TypeError, ValueError, RecursionError) as error:
            return _plain("bad_output", f"the result is not JSON: {error}"[:300])
        if len(data) > self.message_bytes:
            return _plain("bad_output", f"the result is {len(data)} bytes of JSON, more than {self.message_bytes}")
        return self._bounded(data) if checked else data

    def _bounded(self, data: bytes) -> bytes:
        problem = answers.bounds_problem(data, answers.VALUE_DEPTH + 1)
        return data if problem is None else _plain("bad_output", f"the result is out of bounds: {problem}")

    def _write(self, request_id: int, payload: bytes) -> None:
        """One frame (harness.sandbox.answers.FRAME): the reply to ``request_id``."""
        view = memoryview(answers.FRAME.pack(answers.FRAME_MAGIC, request_id, len(payload)) + payload)
        while view:
            view = view[os.write(self.out_fd, view) :]


def _plain(kind: str, message: str) -> bytes:
    return json.dumps(_failure(kind, message)).encode()


class _PlannerGame:
    """The candidate's functions as the planner calls them, the first apply_action calls checked for mutation."""

    def __init__(self, functions: dict[str, Any], check: bool) -> None:
        for name in CWM_FUNCTIONS:
            if name == "apply_action":
                continue  # the checked method below
            if name in functions:
                setattr(self, name, functions[name])
            elif name != "value":
                setattr(self, name, _missing(name))
        self._raw_apply = functions.get("apply_action")
        self._checks_left = CHECKED_PLANNER_APPLIES if check else 0

    def apply_action(self, state: Any, action: Any) -> Any:
        if self._checks_left <= 0:
            return self._raw_apply(state, action)  # type: ignore[misc]
        self._checks_left -= 1
        before = _snapshot(state)
        value = self._raw_apply(state, action)  # type: ignore[misc]
        if _snapshot(state) != before:
            raise MutatedInput("apply_action changed the state it was given (it must return a new state)")
        return value


def _missing(name: str) -> Any:
    def missing(*args: Any) -> Any:
        raise planner.ModelError(f"the program defines no function {name!r}")

    return missing


def _failure(kind: str, message: str, trace: str = "") -> dict[str, Any]:
    return {"ok": False, "failure": {"kind": kind, "message": message[:TRACEBACK_CHARS], "traceback": trace}}


def _classify(error: BaseException, blocked: list[str]) -> dict[str, Any]:
    trace = "".join(traceback.format_exception(error))[-TRACEBACK_CHARS:]
    message = f"{type(error).__name__}: {error}"
    if isinstance(error, OutputLimitExceeded):
        return _failure("bad_output", str(error))
    if isinstance(error, MemoryError):
        return _failure("memory", "MemoryError: the program ran out of its address-space limit", trace)
    if isinstance(error, MutatedInput):
        return _failure("mutation", str(error), trace)
    if blocked:
        return _failure("forbidden", "blocked: " + "; ".join(blocked[:5]), trace)
    if (refused := _refused(error)) is not None:
        return _failure("forbidden", f"{message} (refused: {type(refused).__name__}: {refused})"[:TRACEBACK_CHARS], trace)
    return _failure("crash", message, trace)


def _refused(error: BaseException) -> BaseException | None:
    """A refusal of the kernel (or of the hook) in the error's chain: what the program saw, even if it raised another."""
    stack, seen = [error], 0
    while stack and seen < 32:
        current = stack.pop()
        seen += 1
        if isinstance(current, OSError) and current.errno in _BLOCKED_ERRNOS:
            return current
        if isinstance(current, RuntimeError) and str(current) == "can't start new thread":  # RLIMIT_NPROC refused it
            return current
        stack += [e for e in (current.__cause__, current.__context__) if e is not None]
    return None


def apply_limits(limits: dict[str, Any]) -> None:
    """The rlimits, set before any of the candidate runs (``processes`` is None when unsandboxed)."""
    lifetime = int(limits["lifetime_cpu_s"])
    resource.setrlimit(resource.RLIMIT_CPU, (min(int(limits["cpu_s"]), lifetime), lifetime + 1))
    resource.setrlimit(resource.RLIMIT_AS, (limits["memory_bytes"],) * 2)
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits["open_files"],) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits["file_bytes"],) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if limits.get("processes") is not None:
        resource.setrlimit(resource.RLIMIT_NPROC, (limits["processes"],) * 2)


def main() -> None:
    """The worker's life: load, then answer until stdin ends."""
    out_fd = os.dup(1)
    os.dup2(2, 1)  # fd 1 (a candidate's os.write(1, ...)) now goes to stderr, not into the protocol
    stdin = sys.stdin.buffer
    load = json.loads(stdin.readline())
    apply_limits(load["limits"])
    writer = CappedWriter(int(load["limits"]["output_bytes"]))
    sys.stdout = sys.stderr = writer
    worker = Worker(load, out_fd)
    worker.send(0, worker.load(load["source"], bool(load.get("guard", True))))
    limit = worker.message_bytes
    while line := stdin.readline(limit + 1):
        request = json.loads(line)
        op, request_id = request.get("op"), request.get("id")
        request_id = request_id if type(request_id) is int and 0 <= request_id < 1 << 64 else 0
        if op == "call":
            worker.send(request_id, worker.invoke(request.get("method"), request.get("args")))
        elif op == "many":
            worker.send_many(request_id, [worker.invoke(m, a) for m, a in request.get("calls", [])])
        elif op == "plan":
            worker.send(request_id, worker.plan(request.get("planner"), request.get("kwargs")))
        else:
            worker.send(request_id, _failure("crash", f"unknown op {op!r}"))
