"""Watching an ``arena`` process from a test (not a test module): its stderr line by line, and a file's line count.

Both block with a hang guard and never sleep: :class:`StderrWatch` reads stderr in a thread and wakes
the waiter on every line; :func:`wait_for_lines` polls a file (a glob pattern) while waiting 5 ms at a
time on the process itself, and fails at once if the process ends first.
"""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import pytest

HANG_GUARD_S = 120.0


class StderrWatch:
    """Reads a process's stderr in a thread; :meth:`wait_for` blocks until a line holds a text."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.lines: list[str] = []
        self._seen = threading.Condition()
        self._thread = threading.Thread(target=self._read, args=(process,), daemon=True)
        self._thread.start()

    def _read(self, process: subprocess.Popen[str]) -> None:
        assert process.stderr is not None
        for line in process.stderr:
            with self._seen:
                self.lines.append(line.rstrip("\n"))
                self._seen.notify_all()

    def wait_for(self, text: str, timeout: float = HANG_GUARD_S) -> None:
        with self._seen:
            if not self._seen.wait_for(lambda: any(text in line for line in self.lines), timeout):
                pytest.fail(f"no stderr line with {text!r} within {timeout} s: {self.lines[-10:]}")

    def finish(self) -> list[str]:
        """Every non-blank line, once the process has closed its stderr."""
        self._thread.join(HANG_GUARD_S)
        return [line for line in self.lines if line.strip()]


def wait_for_lines(root: Path, pattern: str, lines: int, process: subprocess.Popen[str]) -> Path:
    """The first file under ``root`` matching ``pattern`` once it has ``lines`` whole lines (hang guard: fail)."""
    deadline = time.monotonic() + HANG_GUARD_S
    while time.monotonic() < deadline:
        found = sorted(root.glob(pattern))
        if found and found[0].read_bytes().count(b"\n") >= lines:
            return found[0]
        if process.poll() is not None:
            pytest.fail(f"the run ended before the interrupt point (exit {process.returncode})")
        try:
            process.wait(timeout=0.005)
        except subprocess.TimeoutExpired:
            pass
    pytest.fail(f"no {pattern} under {root} reached {lines} lines in time")
