"""``SandboxWorker``: one persistent sandboxed worker per candidate program, failures returned as values.

    with SandboxWorker(source, Limits(call_s=2)) as worker:
        state = worker.call("initial_state", [layout]).unwrap()
        results = worker.call_many([("legal_actions", [state]), ("is_terminal", [state])])
        move = worker.plan("mcts", state=state, simulations=200, seed=1)

Every call returns a :class:`~harness.sandbox.failures.Result`. A fatal failure
(timeout, memory, forbidden, worker died, too much output) stops the worker and
the next call starts a fresh one with the same source (``restarts`` counts them);
a program that does not load answers every call with its load failure. Without a
working bubblewrap the constructor raises :class:`SandboxUnavailable` unless
``unsandboxed=True`` (rlimits only; ``sandboxed`` is then False and callers record
the run as UNSANDBOXED). Not thread-safe: one caller at a time.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
import weakref
from collections import Counter
from collections.abc import Sequence
from typing import Any

from harness.sandbox import command
from harness.sandbox.channel import ChannelClosed, ChannelGarbage, ChannelTimeout, LineReader, OutputDrain
from harness.sandbox.failures import Failure, FailureKind, Result, SandboxUnavailable
from harness.sandbox.limits import Limits

_SIGNAL_KINDS = {signal.SIGXCPU: FailureKind.TIMEOUT}


class SandboxWorker:
    """A candidate program loaded in its own sandboxed worker process, serving many calls."""

    def __init__(
        self, source: str, limits: Limits | None = None, *, unsandboxed: bool = False, guard: bool = True, check_mutation: bool = True
    ) -> None:
        if not unsandboxed and (problem := command.bubblewrap_problem()) is not None:
            raise SandboxUnavailable(f"{command.INSTALL_HINT} ({problem})")
        self.source, self.limits = source, limits or Limits()
        self.sandboxed, self.guard, self.check_mutation = not unsandboxed, guard, check_mutation
        self.restarts = 0
        self.failures: Counter[str] = Counter()
        self.functions: tuple[str, ...] = ()
        self.uid: int | None = None  # the uid the sandboxed worker runs as (its own; None unsandboxed)
        self._process: subprocess.Popen[bytes] | None = None
        self._reader: LineReader | None = None
        self._drain: OutputDrain | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._load_failure: Failure | None = None
        self._started_once = False
        self._next_id = 1
        self._finalizer: weakref.finalize[Any, Any] | None = None

    # -- life -------------------------------------------------------------------------------------------------

    def start(self) -> Result:
        """Start the worker and load the program; the load's failure (a syntax error, a crash at import) as a Result."""
        if self._process is not None:
            return Result({"functions": list(self.functions)})
        if self._load_failure is not None:
            return Result(failure=self._load_failure)
        if self._started_once:
            self.restarts += 1
        self._started_once = True
        self._spawn()
        load = {
            "source": self.source,
            "limits": self._rlimits(),
            "guard": self.guard,
            "check_mutation": self.check_mutation,
            "readable": self._readable(),
            "tmp": self._tmp_path(),
        }
        result = self._exchange(load, self.limits.start_s, expect_id=0)
        if result.ok:
            self.functions = tuple(result.value["functions"])
        elif result.failure is not None and result.failure.kind is not FailureKind.WORKER_DIED:
            self._load_failure = result.failure  # the program itself is broken (at import): no point restarting it
            self._kill()
        return result

    def close(self) -> None:
        """Kill the worker (its whole process group and PID namespace); calls after this start a new one."""
        self._kill()

    def __enter__(self) -> SandboxWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def output(self) -> str:
        """What the program printed (stdout and stderr), the first ``kept_output_bytes`` of it."""
        return self._drain.text() if self._drain is not None else ""

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    # -- calls ------------------------------------------------------------------------------------------------

    def call(self, method: str, args: Sequence[Any] = ()) -> Result:
        """One CWM function of the program, ``args`` JSON values; the answer or a classified failure."""
        return self._request({"op": "call", "method": method, "args": list(args)})

    def call_many(self, calls: Sequence[tuple[str, Sequence[Any]]]) -> list[Result]:
        """Several calls in one message (one round trip): a Result each; all fail alike if the worker dies."""
        if not calls:
            return []
        reply = self._request({"op": "many", "calls": [[method, list(args)] for method, args in calls]}, many=len(calls))
        if isinstance(reply, Result):
            return [reply] * len(calls)
        return reply

    def plan(self, planner: str, **kwargs: Any) -> Result:
        """Planning inside the worker: ``mcts`` (state, simulations, c, max_plies, seed), ``playouts`` (state, count...)
        or ``minimax`` (state, depth, max_nodes, seed, leaf_playouts, max_plies)."""
        return self._request({"op": "plan", "planner": planner, "kwargs": kwargs})

    # -- internals --------------------------------------------------------------------------------------------

    def _request(self, message: dict[str, Any], many: int = 0) -> Any:
        started = self.start()
        if not started.ok:
            return started
        request_id = self._next_id
        self._next_id += 1
        return self._exchange({**message, "id": request_id}, self.limits.call_s, expect_id=request_id, many=many)

    def _exchange(self, message: dict[str, Any], seconds: float, expect_id: int, many: int = 0) -> Any:
        assert self._process is not None and self._process.stdin is not None and self._reader is not None
        data = json.dumps(message, separators=(",", ":"), allow_nan=False).encode() + b"\n"
        if len(data) > self.limits.message_bytes:
            raise ValueError(f"a request of {len(data)} bytes is over the message cap of {self.limits.message_bytes}")
        try:
            self._process.stdin.write(data)
            self._process.stdin.flush()
            line = self._reader.read_line(time.monotonic() + seconds)
        except ChannelTimeout:
            return self._fatal(FailureKind.TIMEOUT, f"no answer within the wall-clock limit of {seconds:g} s")
        except ChannelGarbage as error:
            return self._fatal(FailureKind.BAD_OUTPUT, str(error))
        except (ChannelClosed, BrokenPipeError, OSError):
            return self._died()
        return self._parse(line, expect_id, many)

    def _parse(self, line: bytes, expect_id: int, many: int) -> Any:
        try:
            reply = json.loads(line)
        except (UnicodeDecodeError, json.JSONDecodeError):
            return self._fatal(FailureKind.BAD_OUTPUT, f"an answer that is not JSON: {line[:80]!r}")
        if not isinstance(reply, dict) or reply.get("id") != expect_id:
            return self._fatal(FailureKind.BAD_OUTPUT, f"an answer out of protocol: {line[:80]!r}")
        if many and "results" in reply:
            answers = reply["results"]
            if not isinstance(answers, list) or len(answers) != many:
                return self._fatal(FailureKind.BAD_OUTPUT, f"a batch answer of the wrong shape: {line[:80]!r}")
            results = [self._result(answer) for answer in answers]
            if any(r.failure is not None and r.failure.fatal for r in results):
                self._kill()
            return results
        result = self._result(reply)
        if result.failure is not None and result.failure.fatal:
            self._kill()
        return result

    def _result(self, answer: Any) -> Result:
        if isinstance(answer, dict) and answer.get("ok") is True:
            return Result(answer.get("value"))
        try:
            failure = Failure.from_json(answer["failure"])
        except (KeyError, TypeError, ValueError):
            failure = Failure(FailureKind.BAD_OUTPUT, f"an answer out of protocol: {str(answer)[:80]}")
        self.failures[failure.kind.value] += 1
        return Result(failure=failure)

    def _fatal(self, kind: FailureKind, message: str) -> Result:
        self._kill()
        self.failures[kind.value] += 1
        return Result(failure=Failure(kind, message, self.output[-2000:]))

    def _died(self) -> Result:
        process, drain = self._process, self._drain
        code = None
        if process is not None:
            try:
                code = process.wait(2)
            except subprocess.TimeoutExpired:  # it closed its end of the pipe but runs on
                _kill_group(process)
                code = process.wait(10)
        if drain is not None:
            drain.join(5)
        if drain is not None and drain.overflowed:
            return self._fatal(FailureKind.BAD_OUTPUT, f"the program printed more than {self._output_allowed()} bytes")
        # bubblewrap reports a child killed by signal N as exit status 128 + N
        signum = -code if code is not None and code < 0 else (code - 128 if code is not None and code > 128 else 0)
        kind = (
            _SIGNAL_KINDS.get(signal.Signals(signum), FailureKind.WORKER_DIED)
            if signum in signal.valid_signals()
            else FailureKind.WORKER_DIED
        )
        why = f"killed by {signal.Signals(signum).name}" if signum in signal.valid_signals() and signum else f"exit {code}"
        if kind is FailureKind.TIMEOUT:
            why += f" (the CPU-time limit of {self.limits.cpu_s} s)"
        return self._fatal(kind, f"the worker ended without answering: {why}")

    def _spawn(self) -> None:
        if self.sandboxed:
            self.uid = command.next_uid()
            argv, env, cwd = command.worker_argv(self.uid, self.limits.tmp_bytes), {}, None
        else:
            self._tmp = tempfile.TemporaryDirectory(prefix="sandbox-unsandboxed-")
            argv, env, cwd = command.unsandboxed_argv(), {"HOME": self._tmp.name, "LANG": "C.UTF-8"}, self._tmp.name
        process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
            start_new_session=True,
            close_fds=True,
            bufsize=0,
        )
        assert process.stdout is not None
        self._process = process
        self._reader = LineReader(process.stdout.fileno(), self.limits.message_bytes)
        self._drain = OutputDrain(process.stderr, self.limits.kept_output_bytes, self._output_allowed(), lambda: _kill_group(process))
        self._finalizer = weakref.finalize(self, _kill_group, process)

    def _kill(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        _kill_group(process)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            pass
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()
        if self.sandboxed and self.uid is not None:
            command.kill_uid(self.uid)  # the PID namespace dies just after bubblewrap: wait until it has
        if self._drain is not None:
            self._drain.join(5)
        if process.stderr is not None:
            process.stderr.close()
        if self._finalizer is not None:
            self._finalizer.detach()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def _rlimits(self) -> dict[str, Any]:
        fields = self.limits.rlimits()
        if not self.sandboxed:
            fields["processes"] = None  # RLIMIT_NPROC counts every process of the user outside a sandbox
        return fields

    def _readable(self) -> list[str]:
        roots = command.readable_roots()
        return roots if self.sandboxed else roots + [str(command.PACKAGE_DIR)]

    def _tmp_path(self) -> str:
        return self._tmp.name if self._tmp is not None else "/tmp"

    def _output_allowed(self) -> int:
        return 2 * self.limits.output_bytes + 64 * 1024


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the worker's process group (bubblewrap's death takes its PID namespace with it)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
