"""Nothing of the program runs between calls: the host stops the worker after each answer, continues it before each request.

The worker's process (every thread of it) gets SIGSTOP, through a pidfd, as soon as
its answer is read, and SIGCONT just before the next request is written. A thread,
a timer's signal handler or a patched ``os.write`` that would run on after the
answer stays stopped until the next call, inside that call's wall clock and CPU
allowance. With one process allowed (``Limits.processes``, the default) the kernel
refuses every new thread and process of the worker's uid, so that is all. With
more allowed, a process the program forked is not stopped with the worker, so
after each answer the host also looks (about 5 us, from /proc): more than one
thread in the worker, any child of it, or any child of the sandbox's init but the
worker is a thread or process that outlived the call; the call then fails as
``forbidden`` and the worker is killed (``refused`` says why). Host side only.
"""

from __future__ import annotations

import os
import signal
import subprocess

from harness.sandbox.channel import FrameReader

NUM_THREADS = 17  # the field of /proc/PID/stat after the command's closing parenthesis
_STAT_BYTES = 4096
PIPE_BYTES = 65536  # a pipe's capacity on Linux (the worker has read the previous request whole: the pipe is empty)


class Pauser:
    """Stops and continues one worker; finds its process the first time (after the load's answer)."""

    def __init__(self, process: subprocess.Popen[bytes], sandboxed: bool, watch_tasks: bool) -> None:
        self._process, self._sandboxed, self._watch = process, sandboxed, watch_tasks
        self._pidfd: int | None = None
        self._files: tuple[int, ...] = ()  # the worker's stat and children, its init's children (sandboxed)
        self._worker = 0
        self.refused = ""  # why the last answer was refused: a thread or process outlived the call

    def resume(self) -> None:
        """SIGCONT before a request is written (a stopped worker would never read it)."""
        self._signal(signal.SIGCONT)

    def pause(self) -> bool:
        """SIGSTOP after an answer; False (``refused`` set) when a thread or process of the program outlived the call."""
        if self._pidfd is None:
            self._find()
            if self.refused:
                return False
        self._signal(signal.SIGSTOP)
        if not self._watch or not self._files:
            return True
        self.refused = self._leftover()
        return not self.refused

    def close(self) -> None:
        for fd in (*self._files, *((self._pidfd,) if self._pidfd is not None else ())):
            os.close(fd)
        self._files, self._pidfd = (), None

    def _signal(self, signum: int) -> None:
        if self._pidfd is not None:
            try:
                signal.pidfd_send_signal(self._pidfd, signum)
            except ProcessLookupError:  # it died: the channel says so next
                pass

    def _find(self) -> None:
        init, worker = self._process.pid, self._process.pid
        try:
            if self._sandboxed:  # bubblewrap's monitor -> the sandbox's init (pid 1) -> the worker (pid 2)
                init = _children(self._process.pid)[0]
                worker = next(pid for pid in _children(init) if _namespace_pid(pid) == 2)
            self._pidfd = os.pidfd_open(worker)
            if self._watch:
                paths = [f"/proc/{worker}/stat", f"/proc/{worker}/task/{worker}/children"]
                paths += [f"/proc/{init}/task/{init}/children"] if self._sandboxed else []
                self._files = tuple(os.open(path, os.O_RDONLY | os.O_CLOEXEC) for path in paths)
        except (OSError, IndexError, StopIteration):
            self.close()
            if self._process.poll() is None:  # alive, yet not where a worker is: never leave it running unwatched
                self.refused = f"the worker's process (pid 2 under bubblewrap {self._process.pid}) was not found to stop it"
        self._worker = worker

    def _leftover(self) -> str:
        try:
            stat, children, *init_children = (os.pread(fd, _STAT_BYTES, 0) for fd in self._files)
        except OSError:
            return ""  # gone: the channel says so next
        threads = int(stat.rsplit(b")", 1)[1].split()[NUM_THREADS])
        strays = children.split() + [pid for pid in b" ".join(init_children).split() if int(pid) != self._worker]
        if threads > 1 or strays:
            return f"a thread or process of the program outlived the call ({threads} threads, {len(strays)} other processes)"
        return ""


class PausingReader(FrameReader):
    """The reply channel, stopping the worker as soon as a reply is read (and refusing it when something outlived it)."""

    def __init__(self, fd: int, max_bytes: int, pauser: Pauser) -> None:
        super().__init__(fd, max_bytes)
        self.pauser = pauser

    def read_frame(self, expect_id: int, deadline: float) -> bytes:
        payload = super().read_frame(expect_id, deadline)
        if not self.pauser.pause():
            raise LeftRunning(self.pauser.refused)
        return payload


class LeftRunning(OSError):
    """A thread or process of the program outlived the call (an OSError, so the client takes the worker as died)."""


class ResumingPipe:
    """The worker's stdin: continues the worker with each request. A request that fits in the (empty) pipe is written
    first, so the worker wakes once, to read it; a longer one after, or the write would wait on a stopped reader."""

    def __init__(self, pipe: object, pauser: Pauser) -> None:
        self._pipe, self._pauser = pipe, pauser

    def write(self, data: bytes) -> int:
        if len(data) > PIPE_BYTES:
            self._pauser.resume()
            return self._pipe.write(data)  # type: ignore[attr-defined]
        try:
            return self._pipe.write(data)  # type: ignore[attr-defined]
        finally:
            self._pauser.resume()

    def flush(self) -> None:
        self._pipe.flush()  # type: ignore[attr-defined]

    def close(self) -> None:
        self._pipe.close()  # type: ignore[attr-defined]

    def fileno(self) -> int:
        return self._pipe.fileno()  # type: ignore[attr-defined]


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children", "rb") as children:
        return [int(child) for child in children.read().split()]


def _namespace_pid(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as status:
        line = next(line for line in status if line.startswith("NSpid:"))
    return int(line.split()[-1])
