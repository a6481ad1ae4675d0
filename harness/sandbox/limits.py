"""What one sandboxed worker may use: wall clock per call, CPU time, memory, processes, output."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

MIB = 1 << 20


@dataclass(frozen=True)
class Limits:
    """The limits of one worker: the wall clock and the CPU time per call, the other rlimits for its whole life.

    ``cpu_s`` is the CPU time of one call (RLIMIT_CPU's soft limit, set again at each
    call's start: SIGXCPU, a ``timeout``); ``lifetime_cpu_s`` caps the worker's whole
    life as a backstop (a program that raised its own soft limit); ``call_s`` is the
    wall clock, the guard against a loop. Nothing of the program runs between calls
    (the host stops the worker), so a call's CPU is all it gets. ``memory_bytes`` is
    the address space (RLIMIT_AS), which counts the interpreter itself (about 30 MiB).
    ``processes`` caps the worker's uid's processes and threads (RLIMIT_NPROC; each
    worker gets a uid of its own): 1, the default, lets the program start none, and
    with more the host fails a call that leaves one alive.
    ``output_bytes``: what the candidate may print in the worker's life (stdout and
    stderr together; more is a ``bad_output`` failure and the worker is restarted);
    the first ``kept_output_bytes`` of it are kept for the report. ``message_bytes``
    caps one JSON message each way. ``tmp_bytes``: the size of the private /tmp.
    """

    call_s: float = 10.0
    start_s: float = 10.0
    cpu_s: int = 60
    lifetime_cpu_s: int = 3600
    memory_bytes: int = 1024 * MIB
    processes: int = 1
    open_files: int = 64
    output_bytes: int = 1 * MIB
    kept_output_bytes: int = 64 * 1024
    message_bytes: int = 16 * MIB
    tmp_bytes: int = 16 * MIB

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ValueError(f"Limits.{name}={value!r}: give a positive number")

    def rlimits(self) -> dict[str, Any]:
        """The fields the worker applies to itself (sent in its first message)."""
        return {
            "cpu_s": int(self.cpu_s),
            "lifetime_cpu_s": int(self.lifetime_cpu_s),
            "memory_bytes": self.memory_bytes,
            "processes": self.processes,
            "open_files": self.open_files,
            "file_bytes": self.tmp_bytes,
            "output_bytes": self.output_bytes,
            "message_bytes": self.message_bytes,
        }
