"""Short-lived worker processes for CPU-bound work of a model agent (llm-strategist's self-play search).

A model agent runs in a daemonic process (the referee's side ends it on every
exit path), and a daemonic process may not start ``multiprocessing`` children.
:class:`WorkerPool` therefore starts plain subprocesses
(``python -m harness.prompting.worker_pool``) that read tasks on their stdin and
write results on their stdout, one length-prefixed pickle each way. A task is a
module-level function and its arguments (pickled by reference: the worker imports
the function's module); its result comes back the same way, or the worker's
traceback as :class:`WorkerFailed`.

A worker ends when its stdin closes: when the pool is closed, and also when the
agent process dies or is killed (the pipe's only writer is gone), so no worker
outlives the run. Workers ignore SIGINT (a terminal's Ctrl-C reaches the whole
process group): the agent process decides what an interrupt stops.
"""

from __future__ import annotations

import os
import pickle
import queue
import signal
import struct
import subprocess
import sys
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import IO, Any

_HEADER = struct.Struct(">Q")
CLOSE_WAIT_S = 10.0


class WorkerFailed(RuntimeError):
    """A task raised in a worker (its traceback in the message), or a worker died."""


def _write(stream: IO[bytes], value: Any) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _read(stream: IO[bytes]) -> Any:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError("the pipe closed")
    size = _HEADER.unpack(header)[0]
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("the pipe closed in the middle of a message")
    return pickle.loads(data)  # noqa: S301 - our own pipe to our own process


class _Worker:
    """One worker process and its pipes."""

    def __init__(self) -> None:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(path for path in sys.path if path))
        self.process = subprocess.Popen(  # noqa: S603 - this interpreter, this module
            [sys.executable, "-m", "harness.prompting.worker_pool"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
        )

    def call(self, function: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        assert self.process.stdin is not None and self.process.stdout is not None
        try:
            _write(self.process.stdin, (function, args))
            status, value = _read(self.process.stdout)
        except (EOFError, BrokenPipeError, OSError) as error:
            raise WorkerFailed(f"a worker process died (exit code {self.process.poll()}): {error}") from None
        if status != "ok":
            raise WorkerFailed(f"a task failed in a worker process: {value}")
        return value

    def close(self) -> None:
        if self.process.stdin is not None:
            try:
                self.process.stdin.close()
            except OSError:
                pass
        try:
            self.process.wait(CLOSE_WAIT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


class WorkerPool:
    """``jobs`` worker processes, started when first needed; :meth:`map` runs tasks on them in any order."""

    def __init__(self, jobs: int) -> None:
        if jobs < 1:
            raise ValueError(f"jobs={jobs}: give at least one worker")
        self.jobs = jobs
        self._workers: list[_Worker] = []
        self._idle: queue.SimpleQueue[_Worker] = queue.SimpleQueue()

    def map(self, function: Callable[..., Any], tasks: Sequence[tuple[Any, ...]]) -> list[Any]:
        """``[function(*task) for task in tasks]``, each task on a worker; :class:`WorkerFailed` if one failed."""
        if not tasks:
            return []
        while len(self._workers) < min(self.jobs, len(tasks)):
            worker = _Worker()
            self._workers.append(worker)
            self._idle.put(worker)

        def run(task: tuple[Any, ...]) -> Any:
            worker = self._idle.get()
            try:
                return worker.call(function, task)
            finally:
                self._idle.put(worker)

        with ThreadPoolExecutor(max_workers=len(self._workers), thread_name_prefix="arena-worker") as threads:
            return list(threads.map(run, tasks))

    def close(self) -> None:
        """End every worker (closing its stdin; killed after :data:`CLOSE_WAIT_S`)."""
        workers, self._workers = self._workers, []
        for worker in workers:
            worker.close()
        self._idle = queue.SimpleQueue()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def worker_main(stdin: IO[bytes], stdout: IO[bytes]) -> None:
    """A worker's life: run each task read from ``stdin`` and write its result, until ``stdin`` closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            function, args = _read(stdin)
        except EOFError:
            return
        try:
            reply: tuple[str, Any] = ("ok", function(*args))
        except Exception:  # noqa: BLE001 - sent back: the agent process raises it, naming the task's failure
            reply = ("error", traceback.format_exc()[-4000:])
        try:
            _write(stdout, reply)
        except (BrokenPipeError, OSError):
            return


if __name__ == "__main__":
    _replies = os.fdopen(os.dup(1), "wb")  # the pipe back; anything printed (fd 1) goes to stderr instead
    os.dup2(2, 1)
    worker_main(sys.stdin.buffer, _replies)
