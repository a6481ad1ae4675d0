"""An audit hook in the worker: blocks and records what generated game code has no reason to do.

The sandbox's walls are the operating system's (bubblewrap, an unprivileged uid,
rlimits); this hook is not one of them and can be got round (ctypes). It is there
to *name* an attempt: a process (``os.system``, ``subprocess``, ``fork``, ``exec``), a
socket, a signal, a write outside /tmp, a read outside /tmp and the interpreter's
own files. The operation is refused with ``PermissionError`` and recorded, so the
call is reported as a ``forbidden`` failure even if the candidate caught the error.
Standard library only: it runs inside the sandbox.
"""

from __future__ import annotations

import os
import sys
from typing import Any

BLOCKED_EVENTS = frozenset(
    {
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "os.kill",
        "os.killpg",
        "subprocess.Popen",
        "pty.spawn",
        "socket.__new__",
        "socket.connect",
        "socket.bind",
        "socket.sendto",
        "socket.sendmsg",
        "socket.getaddrinfo",
        "signal.pthread_kill",
        "sys.addaudithook",
    }
)
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_READABLE_ROOTS = ("/dev/null", "/dev/urandom", "/dev/zero", "/proc/self")


class Guard:
    """The hook's state: whether it is on, and the blocked events of the current call."""

    def __init__(self, readable: tuple[str, ...] = ()) -> None:
        self.active = False
        self.events: list[str] = []
        self._tmp = "/tmp"
        self._readable = tuple(os.path.realpath(p) for p in readable) + _READABLE_ROOTS

    def install(self) -> None:
        sys.addaudithook(self._hook)

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.active:
            return
        if event in BLOCKED_EVENTS or event.startswith("os.exec") or event.startswith("os.spawn"):
            self._refuse(event, args)
        elif event == "open" and args and isinstance(args[0], str | bytes):
            self._check_open(args)

    def _check_open(self, args: tuple[Any, ...]) -> None:
        path = os.fsdecode(args[0])
        mode = args[1] if len(args) > 1 else None
        flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
        writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or bool(flags & _WRITE_FLAGS)
        where = os.path.abspath(path)
        if where == self._tmp or where.startswith(self._tmp + "/"):
            return
        if not writes and any(where == root or where.startswith(root + "/") for root in self._readable):
            return
        self._refuse("open for writing" if writes else "open", (where,))

    def _refuse(self, event: str, args: tuple[Any, ...]) -> None:
        shown = ", ".join(repr(a)[:80] for a in args[:2])
        self.events.append(f"{event}({shown})")
        raise PermissionError(f"sandbox: {event} is not allowed in generated code")
