"""The client's end of a worker's pipes: JSON lines read against a deadline, stderr drained and capped.

A reply is read with ``poll`` and ``os.read`` until its newline or the deadline;
one longer than the message cap is garbage. The worker's stderr (everything the
candidate prints) is read by a thread as it comes, so the worker never blocks on
a full pipe: the first ``kept`` bytes are kept, the rest only counted, and past
``allowed`` bytes the thread kills the worker.
"""

from __future__ import annotations

import os
import select
import threading
import time
from collections.abc import Callable


class ChannelClosed(Exception):
    """The worker's end closed: it exited or was killed."""


class ChannelTimeout(Exception):
    """No complete reply before the deadline."""


class ChannelGarbage(Exception):
    """A reply longer than the message cap."""


class LineReader:
    """Reads newline-terminated replies from one pipe descriptor."""

    def __init__(self, fd: int, max_bytes: int) -> None:
        self._fd, self._max = fd, max_bytes
        self._buffer = bytearray()
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)

    def read_line(self, deadline: float) -> bytes:
        """The next line without its newline; :class:`ChannelTimeout` at ``deadline`` (a ``time.monotonic`` value)."""
        scanned = 0
        while True:
            end = self._buffer.find(b"\n", scanned)
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                return line
            scanned = len(self._buffer)
            if scanned > self._max:
                raise ChannelGarbage(f"a reply longer than {self._max} bytes")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ChannelTimeout()
            if not self._poll.poll(min(remaining, 3600.0) * 1000):
                continue
            chunk = os.read(self._fd, 1 << 20)
            if not chunk:
                raise ChannelClosed()
            self._buffer += chunk


class OutputDrain:
    """A thread that reads the worker's stderr to its end, keeping the first ``kept`` bytes."""

    def __init__(self, stream: object, kept: int, allowed: int, on_overflow: Callable[[], None]) -> None:
        self._stream, self._kept, self._allowed, self._on_overflow = stream, kept, allowed, on_overflow
        self.head = bytearray()
        self.total = 0
        self.overflowed = False
        self._thread = threading.Thread(target=self._run, name="sandbox-stderr", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        fd = self._stream.fileno()  # type: ignore[attr-defined]
        try:
            while chunk := os.read(fd, 1 << 16):
                if len(self.head) < self._kept:
                    self.head += chunk[: self._kept - len(self.head)]
                self.total += len(chunk)
                if self.total > self._allowed and not self.overflowed:
                    self.overflowed = True
                    self._on_overflow()
        except (OSError, ValueError):
            pass

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    def text(self) -> str:
        shown = self.head.decode("utf-8", "replace")
        return shown + (f"\n[... {self.total - len(self.head)} more bytes not kept]" if self.total > len(self.head) else "")
