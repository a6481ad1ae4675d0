"""The stub server in a process of its own, so that a benchmark's CPU figures are the client's alone.

:class:`~harness.testing.stub_server.StubServer` serves from threads of the process that starts it;
in ``arena bench harness --stub`` that process is the referee of the run it measures, so the
stub's HTTP parsing and JSON bodies took CPU (and the GIL) from the run. :class:`StubProcess`
starts the same server (a legal move read from the prompt, ``latency_s``, a fault spec) in a
spawned process and offers what the benchmark reads (:class:`~harness.bench.throughput.Stub`):
``url``, ``latency_s`` and, once :meth:`StubProcess.stop` has run, ``requests`` (each request's
arrival time on the shared monotonic clock, and the fault it met) and ``cpu_s`` (the stub
process's own CPU seconds).
"""

from __future__ import annotations

import multiprocessing
import resource
from multiprocessing.connection import Connection
from typing import Any

START_TIMEOUT_S = 60.0


def _serve(conn: Connection, latency_s: float, faults: str | None, seed: int, retry_after: float) -> None:
    """The stub process: start the server, send its URL, serve until told to stop, send what it recorded."""
    from harness.testing.faults import FaultSpec
    from harness.testing.stub_server import LegalMoves, StubServer

    spec = FaultSpec.parse(faults, seed=seed) if faults else None
    server = StubServer(responder=LegalMoves(seed), latency_s=latency_s, faults=spec, retry_after=retry_after).start()
    conn.send(server.url)
    conn.recv()  # stop
    server.stop()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    conn.send(([{"time": r["time"], "fault": r.get("fault")} for r in server.requests], usage.ru_utime + usage.ru_stime))
    conn.close()


class StubProcess:
    """A :class:`~harness.testing.stub_server.StubServer` answering legal moves, in its own process (module docstring)."""

    def __init__(self, latency_s: float = 0.0, faults: str | None = None, seed: int = 0, retry_after: float = 1.0) -> None:
        self.latency_s = latency_s
        self._args = (latency_s, faults, seed, retry_after)
        self._url = ""
        self.requests: list[dict[str, Any]] = []
        self.cpu_s: float | None = None
        self._conn: Connection | None = None
        self._process: Any = None

    @property
    def url(self) -> str:
        return self._url

    def start(self) -> StubProcess:
        context = multiprocessing.get_context("spawn")
        ours, theirs = context.Pipe()
        self._process = context.Process(target=_serve, args=(theirs, *self._args), daemon=True, name="arena-stub-server")
        self._process.start()
        theirs.close()
        if not ours.poll(START_TIMEOUT_S):
            self._process.kill()
            raise RuntimeError(f"the stub server process did not start within {START_TIMEOUT_S:g} s")
        self._url, self._conn = ours.recv(), ours
        return self

    def stop(self) -> None:
        """Stop the server; its requests and CPU time are read back."""
        if self._conn is None:
            return
        self._conn.send("stop")
        self.requests, self.cpu_s = self._conn.recv()
        self._conn.close()
        self._conn = None
        self._process.join(timeout=30)

    def __enter__(self) -> StubProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
