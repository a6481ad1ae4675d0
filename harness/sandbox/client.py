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
import secrets
import signal
import subprocess
import tempfile
import time
import weakref
from collections import Counter
from collections.abc import Sequence
from typing import Any

from harness.sandbox import answers, cgroup, command, uids
from harness.sandbox.channel import ChannelClosed, ChannelGarbage, ChannelTimeout, OutputDrain
from harness.sandbox.failures import TRACEBACK_CHARS, Failure, FailureKind, Result, SandboxUnavailable
from harness.sandbox.limits import Limits
from harness.sandbox.pause import Pauser, PausingReader, ResumingPipe

# the kernel's refusals: the CPU-time limit (SIGXCPU), a seccomp filter's kill of a forbidden system call (SIGSYS)
_SIGNAL_KINDS = {signal.SIGXCPU: FailureKind.TIMEOUT, signal.SIGSYS: FailureKind.FORBIDDEN}


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
        self._lease: uids.UidLease | None = None  # held while a process of that uid may live
        self.cgroup: cgroup.WorkerCgroup | None = None  # the worker's memory and pids cgroup, where the machine allows one
        self._oom_kills = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._pauser: Pauser | None = None
        self._reader: PausingReader | None = None
        self._drain: OutputDrain | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._load_failure: Failure | None = None
        self._started_once = False
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
        else:  # broken at load (an exception, a segfault, an exit, a signal): remembered, never started again
            self._load_failure = result.failure
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
    def cgroup_applied(self) -> bool:
        """Whether the worker's memory and pids are bounded by a cgroup of its own (the report says so)."""
        return self.cgroup is not None

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
        request_id = secrets.randbits(63) or 1  # unguessable: a frame written ahead cannot match a request not yet sent
        return self._exchange({**message, "id": request_id}, self.limits.call_s, expect_id=request_id, many=many)

    def _exchange(self, message: dict[str, Any], seconds: float, expect_id: int, many: int = 0) -> Any:
        assert self._process is not None and self._process.stdin is not None and self._reader is not None
        data = json.dumps(message, separators=(",", ":"), allow_nan=False).encode() + b"\n"
        if len(data) > self.limits.message_bytes:
            raise ValueError(f"a request of {len(data)} bytes is over the message cap of {self.limits.message_bytes}")
        if stray := self._reader.stray():  # a reply nobody asked for: the program wrote on the channel itself
            return self._fatal(FailureKind.BAD_OUTPUT, f"the worker wrote {stray} bytes while no request was in flight")
        try:
            self._process.stdin.write(data)
            self._process.stdin.flush()
            payload = self._reader.read_frame(expect_id, time.monotonic() + seconds)
        except ChannelTimeout:
            return self._fatal(FailureKind.TIMEOUT, f"no answer within the wall-clock limit of {seconds:g} s")
        except ChannelGarbage as error:
            return self._fatal(FailureKind.BAD_OUTPUT, str(error))
        except (ChannelClosed, BrokenPipeError, OSError):
            return self._died()
        return self._parse(payload, answers.expected(message), many)

    def _parse(self, payload: bytes, kinds: list[str], many: int) -> Any:
        """A Result (a list of them for a batch), each a value of its call's declared type or a classified failure."""
        try:
            unpacked = answers.unpack(payload, kinds, bool(many))
        except answers.BadAnswer as error:  # out of protocol or bounds: a forged frame or a broken worker
            return self._fatal(FailureKind.BAD_OUTPUT, str(error))
        results = [self._result(answer) for answer in unpacked]
        if any(r.failure is not None and r.failure.fatal for r in results):
            self._kill()
        return results if many and len(results) == many else results[0]

    def _result(self, answer: answers.Answer) -> Result:
        tag, content = answer
        if tag == "value":
            return Result(content)
        if tag == "failure":
            kind, message, trace = content
            failure = Failure(FailureKind(kind), message[:TRACEBACK_CHARS], trace[-TRACEBACK_CHARS:])
        else:  # a well-formed answer of the wrong type: this call's failure, the worker stays
            failure = Failure(FailureKind.BAD_OUTPUT, content)
        self.failures[failure.kind.value] += 1
        return Result(failure=failure)

    def _fatal(self, kind: FailureKind, message: str) -> Result:
        self._kill()
        self.failures[kind.value] += 1
        return Result(failure=Failure(kind, message, self.output[-2000:]))

    def _died(self) -> Result:
        if self._pauser is not None and self._pauser.refused:  # it answered, but left a thread or process running
            return self._fatal(FailureKind.FORBIDDEN, self._pauser.refused)
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
        if self.cgroup is not None and self.cgroup.oom_kills() > self._oom_kills:
            kind, why = FailureKind.MEMORY, why + " (by the kernel, at the worker's cgroup memory limit)"
        elif kind is FailureKind.TIMEOUT:
            why += f" (the CPU-time limit: {self.limits.cpu_s} s a call, {self.limits.lifetime_cpu_s} s in the worker's life)"
        elif kind is FailureKind.FORBIDDEN:
            why += " (a forbidden system call, refused by the seccomp filter)"
        return self._fatal(kind, f"the worker ended without answering: {why}")

    def _spawn(self) -> None:
        if self.sandboxed:
            self._lease = uids.acquire()
            self.uid = self._lease.uid
            self.cgroup = cgroup.for_worker(self.uid, self.limits)
            self._oom_kills = self.cgroup.oom_kills() if self.cgroup is not None else 0
            argv, env, cwd = command.worker_argv(self.uid, self.limits.tmp_bytes, self.cgroup), {}, None
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
        self._pauser = Pauser(process, self.sandboxed, watch_tasks=self._rlimits()["processes"] != 1)
        process.stdin = ResumingPipe(process.stdin, self._pauser)  # type: ignore[assignment]
        self._reader = PausingReader(process.stdout.fileno(), self.limits.message_bytes, self._pauser)
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
        if self._pauser is not None:
            self._pauser.close()
            self._pauser = None
        if self._lease is not None:
            self._lease.end()  # the PID namespace dies just after bubblewrap: the uid is freed once none of it is left
        self._lease = None
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
