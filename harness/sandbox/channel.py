"""The client's end of a worker's pipes: reply frames read against a deadline, stderr drained and capped.

A reply is one frame (:data:`harness.sandbox.answers.FRAME`: magic, the request's
id, the payload's length, then the payload), read with ``poll`` and ``os.read``
until complete or the deadline. A frame is garbage when its magic or id is not
the one expected, when it claims more than the message cap (refused on the
header, before reading on), or when more bytes follow it in the same read (a
second reply). :meth:`FrameReader.stray` tells whether bytes arrived while no
request was in flight. The worker's stderr (everything the candidate prints) is
read by a thread as it comes, so the worker never blocks on a full pipe: the
first ``kept`` bytes are kept, the rest only counted, and past ``allowed`` bytes
the thread kills the worker.
"""

from __future__ import annotations

import os
import select
import threading
import time
from collections.abc import Callable

from harness.sandbox.answers import FRAME, FRAME_MAGIC


class ChannelClosed(Exception):
    """The worker's end closed: it exited or was killed."""


class ChannelTimeout(Exception):
    """No complete reply before the deadline."""


class ChannelGarbage(Exception):
    """Bytes on the reply channel that are not the reply in flight: a bad frame, another request's, a second one."""


class FrameReader:
    """Reads reply frames from one pipe descriptor."""

    def __init__(self, fd: int, max_bytes: int) -> None:
        self._fd, self._max = fd, max_bytes
        self._buffer = bytearray()
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)

    def read_frame(self, expect_id: int, deadline: float) -> bytes:
        """The payload of the reply to request ``expect_id``; :class:`ChannelTimeout` at ``deadline`` (a
        ``time.monotonic`` value), :class:`ChannelGarbage` for a frame that is not that reply, alone."""
        self._fill(FRAME.size, deadline)
        magic, frame_id, length = FRAME.unpack_from(self._buffer)
        if magic != FRAME_MAGIC:
            raise ChannelGarbage(f"a reply that is not a frame of the worker: {bytes(self._buffer[:24])!r}")
        if frame_id != expect_id:
            raise ChannelGarbage(f"a reply to request {frame_id}, not to request {expect_id} (the one in flight)")
        if length > self._max:
            raise ChannelGarbage(f"a reply of {length} bytes, more than the message cap of {self._max}")
        end = FRAME.size + length
        self._fill(end, deadline)
        if len(self._buffer) > end:
            raise ChannelGarbage(f"{len(self._buffer) - end} more bytes after the reply to request {expect_id}")
        payload = bytes(self._buffer[FRAME.size : end])
        self._buffer.clear()
        return payload

    def stray(self) -> int:
        """How many bytes came while no request was in flight (0 when none; an end of file is left to the next read)."""
        if not self._buffer and self._poll.poll(0):
            try:
                self._buffer += os.read(self._fd, 1 << 16)
            except BlockingIOError:
                pass
        return len(self._buffer)

    def _fill(self, size: int, deadline: float) -> None:
        while len(self._buffer) < size:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ChannelTimeout()
            if not self._poll.poll(min(remaining, 3600.0) * 1000):
                continue
            chunk = os.read(self._fd, min(max(size - len(self._buffer), 1 << 16), 1 << 20))
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
