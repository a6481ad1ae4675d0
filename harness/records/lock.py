"""One writer per run directory: an OS lock held by every command that writes a run.

:func:`writer_lock` takes an exclusive ``flock`` on ``DIR/.writer.lock`` for as
long as the command writes the run, and writes the holder (process id, host and
start time) into the file. A second writer, in another terminal or a
cron job that fired twice, fails at once with :class:`RunLocked` naming the
holder. The lock belongs to the open file, so it dies with its process: a run
whose writer was killed (``kill -9``, a crash, a reboot) is simply taken over by
the next command, with no stale lock to clear by hand. (``flock`` is advisory and
local: two machines sharing a network file system are not kept apart.)
"""

from __future__ import annotations

import fcntl
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

LOCK_FILE = ".writer.lock"


class RunLocked(RuntimeError):
    """Another live process is writing this run directory."""


@contextmanager
def writer_lock(run_dir: Path) -> Iterator[None]:
    """Hold the run directory's writer lock (creating the directory); :class:`RunLocked` if another process holds it."""
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / LOCK_FILE
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(descriptor, 1000, 0).decode("utf-8", "replace").strip() or "a process that has not said"
            raise RunLocked(
                f"{run_dir} is being written by another process ({holder}); wait for it to finish or "
                "stop it (its lock goes with it), then resume"
            ) from None
        os.ftruncate(descriptor, 0)
        holder = f"pid {os.getpid()} on {socket.gethostname()}, since {datetime.now(UTC):%Y-%m-%d %H:%M:%S} UTC"
        os.pwrite(descriptor, (holder + "\n").encode(), 0)  # not the command line: it names the environment
        try:
            yield
        finally:
            os.ftruncate(descriptor, 0)
            fcntl.flock(descriptor, fcntl.LOCK_UN)
    finally:
        os.close(descriptor)
