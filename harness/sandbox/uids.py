"""One uid per live sandboxed worker: leased under a lock file, never shared while the worker lives.

A sandboxed worker runs as a uid of its own: RLIMIT_NPROC counts that uid's tasks,
and closing the worker waits until no process of that uid is left. So no two live
workers may ever share one, in this process or in any other on the machine (test
workers and runs start sandboxes at once). :func:`acquire` leases a uid between
``UID_BASE`` and ``UID_BASE + UID_COUNT``: it takes an exclusive ``flock`` on the
uid's lock file in ``LOCK_DIR`` (a fixed host directory, whatever ``TMPDIR`` says)
and skips a uid that some live process runs as (one left by a process that died
holding the lock, or by anything that does not take it). The lock is held, on a
descriptor the worker does not inherit, until :meth:`UidLease.end` finds no
process of the uid left (or :meth:`UidLease.release`). Host side only.
"""

from __future__ import annotations

import fcntl
import os
import random
import signal
import time
from functools import lru_cache
from pathlib import Path

UID_BASE = 200_000  # above every uid a distribution hands out to people and services
UID_COUNT = 1 << 16  # live workers on one machine at once, at most
LOCK_DIR = Path("/run/arena-sandbox-uids" if os.path.isdir("/run") and os.access("/run", os.W_OK) else "/tmp/arena-sandbox-uids")


class NoFreeUid(RuntimeError):
    """Every uid of the range is leased (or in use by a live process)."""


class UidLease:
    """A uid held for one worker: its lock file stays locked until :meth:`release` (or this process ends)."""

    def __init__(self, uid: int, fd: int) -> None:
        self.uid = uid
        self._fd: int | None = fd

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Free the uid for the next worker; call it only once no process of the uid is left. Twice is harmless."""
        fd, self._fd = self._fd, None
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def end(self) -> bool:
        """Kill what is left of the uid's processes (they are this lease's), then release it; if some will not die,
        keep it held (never handed out again while this process lives) and say False."""
        if self._fd is None:
            return True
        if kill_uid(self.uid):
            return False
        self.release()
        return True

    def __enter__(self) -> UidLease:
        return self

    def __exit__(self, *exc: object) -> None:
        self.end()


def acquire(start: int | None = None) -> UidLease:
    """A uid no other live worker holds and no live process runs as, tried from ``start`` (else at random) upwards."""
    _lock_dir()
    first = random.randrange(UID_COUNT) if start is None else (start - UID_BASE) % UID_COUNT
    for step in range(UID_COUNT):
        uid = UID_BASE + (first + step) % UID_COUNT
        lease = _try(uid)
        if lease is not None:
            return lease
    raise NoFreeUid(f"all {UID_COUNT} sandbox uids from {UID_BASE} are in use (lock files in {LOCK_DIR})")


def _try(uid: int) -> UidLease | None:
    fd = os.open(LOCK_DIR / str(uid), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    lease = UidLease(uid, fd)
    if processes_of(uid):  # someone else's process runs as it: not ours to share, nor to kill
        lease.release()
        return None
    return lease


@lru_cache(maxsize=1)
def _lock_dir() -> Path:
    LOCK_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
    return LOCK_DIR


def processes_of(uid: int) -> list[int]:
    """Live (not zombie) processes whose real or effective uid is ``uid``, from /proc."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/status", encoding="ascii", errors="replace") as status:
                fields = dict(line.split(":", 1) for line in status if ":" in line)
        except OSError:
            continue
        if str(uid) in fields.get("Uid", "").split()[:2] and not fields.get("State", "").strip().startswith("Z"):
            found.append(int(entry.name))
    return found


def kill_uid(uid: int, seconds: float = 5.0) -> list[int]:
    """SIGKILL every process of a worker's own leased ``uid`` until none is left (or ``seconds`` pass); what is left."""
    deadline = time.monotonic() + seconds
    while (left := processes_of(uid)) and time.monotonic() < deadline:
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.01)
    return left
