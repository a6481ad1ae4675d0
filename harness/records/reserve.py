"""A full disk stops a run at its first failed write, with every call it paid for still written.

A run holds :data:`RESERVE_BYTES` of the disk in ``DIR/.disk_reserve`` (:class:`DiskReserve`) from its start to
its end. The first write that fails for want of space (ENOSPC, or a quota: EDQUOT) is cut back off its file
(:func:`~harness.models.cache.append_whole`), and :meth:`DiskReserve.release` then

1. records the error (the file and the OS's words: :attr:`DiskReserve.error`),
2. deletes the reserve, so the lines still to come have room: the failed line itself, tried once more, the
   replies of the calls already on the wire when the disk filled (paid for, so they must be on record), the
   games that finish with them, the manifest's seal, ``metrics.json`` and ``report.md``,
3. asks the run to stop (``on_full``): no new model call or game starts.

The run then stops like an interrupted one (resumable: ``arena run --resume DIR`` once there is space) and says
why, naming the file and the error. A second failure (the reserve spent too) is raised as it is. The reserve
is deleted when the run ends; a run killed before that leaves it behind, and a resume writes it again.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
from collections.abc import Callable
from pathlib import Path

from harness.models.cache import OnFull, retried_when_freed

RESERVE_FILE = ".disk_reserve"
RESERVE_BYTES = 8 * 2**20  # the calls in flight when the disk fills (prompts included), the games they end, the wrap-up
_CHUNK = 2**16


class DiskReserve:
    """Space held in a run directory for the records still to come when its disk fills; see the module docstring."""

    def __init__(self, run_dir: Path, on_full: Callable[[OSError], None], size: int | None = None) -> None:
        self.path = run_dir / RESERVE_FILE
        self.error: OSError | None = None  # the first write that failed for want of space
        self._on_full = on_full
        self._lock = threading.Lock()
        _hold(self.path, RESERVE_BYTES if size is None else size)

    def release(self, error: OSError) -> bool:
        """A write failed for want of space (:data:`~harness.models.cache.OnFull`): the first time, free the reserve,
        ask the run to stop and return True (try the write once more); after that, False (raise it)."""
        with self._lock:
            if self.error is not None:
                return False
            self.error = error
            self.path.unlink(missing_ok=True)
        self._on_full(error)
        return True

    def close(self) -> None:
        """The run ends: give the space back."""
        self.path.unlink(missing_ok=True)


def _hold(path: Path, size: int) -> None:
    """Write ``size`` bytes to ``path`` (allocated, not sparse); on failure nothing is left and the error names it."""
    try:
        with path.open("wb") as handle:
            try:
                os.posix_fallocate(handle.fileno(), 0, size)
            except OSError as error:
                if error.errno not in (errno.EOPNOTSUPP, errno.EINVAL):  # a file system without fallocate: write zeros
                    raise
                _zeros(handle.fileno(), size)
    except OSError as error:
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)
        raise OSError(error.errno, error.strerror, str(path)) from error


def _zeros(fd: int, size: int) -> None:
    block = bytes(_CHUNK)
    while size > 0:
        size -= os.write(fd, block[: min(size, _CHUNK)])


def write_atomically(path: Path, text: str, on_full: OnFull | None = None) -> None:
    """Write ``path`` by a temporary file and a rename (readers see the old text or the new, whole); a temporary
    that did not fit is deleted, and with ``on_full`` the write is tried once more after it freed space."""
    temporary = path.with_suffix(path.suffix + ".tmp")

    def write() -> None:
        try:
            temporary.write_text(text, encoding="utf-8")
        except OSError:
            temporary.unlink(missing_ok=True)
            raise

    retried_when_freed(write, on_full)
    os.replace(temporary, path)
