"""An audit hook in the worker: refuses and names what generated game code has no reason to do.

The sandbox's walls are the kernel's (bubblewrap, an unprivileged uid of the
worker's own, rlimits, a seccomp filter); this hook is not one of them. It is
there to *name* an attempt: a process (``os.system``, ``subprocess``, ``fork``,
``exec``), a socket, a signal, a write outside /tmp, a read outside /tmp and the
interpreter's own files, a walk of the interpreter's objects (``gc``). The
operation is refused with ``PermissionError`` (errno EPERM) and recorded, so the
call is reported as a ``forbidden`` failure even if the candidate caught the error.

It is advice, so it is made hard to switch off from plain Python: :meth:`Guard.install`
binds everything the hook uses when it is installed (the events it refuses, the
roots, the functions it calls, the record of refusals) into a closure that nothing
else references, and the hook is on for the rest of the process's life. Replacing
the class's methods or attributes, ``builtins`` or ``os`` functions afterwards
changes nothing. Paths are resolved to their real path (symlinks followed with the
``lstat``/``readlink`` bound at install), so a symlink in /tmp does not get past
the check. What it cannot see (ctypes, a path object's ``__fspath__`` that lies)
the kernel's walls still refuse, and the worker and the host classify what the
kernel refused (an errno, a signal). Standard library only: it runs inside the sandbox.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Callable
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
        "gc.get_objects",
        "gc.get_referrers",
        "gc.get_referents",
    }
)
BLOCKED_PREFIXES = ("os.exec", "os.spawn")
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_READABLE_ROOTS = ("/dev/null", "/dev/urandom", "/dev/zero", "/proc/self", "/proc/thread-self")
_MAX_LINKS = 40


class Guard:
    """The hook's configuration: the roots the program may read, its /tmp. :meth:`install` puts the hook in place."""

    def __init__(self, readable: tuple[str, ...] = (), tmp: str = "/tmp") -> None:
        self._readable = tuple(os.path.realpath(p) for p in readable) + _READABLE_ROOTS + (f"/proc/{os.getpid()}",)
        self._tmp = os.path.realpath(tmp)

    def install(self) -> Callable[[], list[str]]:
        """Install the hook for the rest of the process's life; returns ``take``: the refusals since the last take."""
        events: list[str] = []
        hook = _make_hook(events.append, self._tmp, self._readable)
        sys.addaudithook(hook)
        copy, clear = events.copy, events.clear

        def take() -> list[str]:
            taken = copy()
            clear()
            return taken

        return take


def _make_hook(record: Callable[[str], None], tmp: str, readable: tuple[str, ...]) -> Callable[[str, tuple[Any, ...]], None]:
    """The hook, with everything it uses bound now (a program that patches modules later changes nothing)."""
    blocked, prefixes, write_flags = BLOCKED_EVENTS, BLOCKED_PREFIXES, _WRITE_FLAGS
    resolve = _resolver(os.lstat, os.readlink, stat.S_ISLNK, os.getcwd, (OSError, ValueError), _MAX_LINKS)
    fspath, is_instance, text_types, any_of, shown, length, truth = os.fspath, isinstance, (str, bytes), any, repr, len, bool
    refusal, eperm = PermissionError, errno.EPERM  # builtins are bound here too: a program may replace them in builtins
    tmp_prefix = tmp + "/"

    def refuse(event: str, args: tuple[Any, ...]) -> None:
        record(f"{event}({', '.join(shown(a)[:80] for a in args[:2])})")
        raise refusal(eperm, f"sandbox: {event} is not allowed in generated code")

    def check_open(args: tuple[Any, ...]) -> None:
        path = args[0]
        if is_instance(path, int):
            return  # a descriptor the program already holds
        if not is_instance(path, text_types):
            path = fspath(path)
        if is_instance(path, bytes):
            path = path.decode("utf-8", "surrogateescape")
        mode: Any = args[1] if length(args) > 1 else None
        flags = args[2] if length(args) > 2 and is_instance(args[2], int) else 0
        writes = (is_instance(mode, str) and any_of(c in mode for c in "wax+")) or truth(flags & write_flags)
        where = resolve(path)
        if where == tmp or where.startswith(tmp_prefix):
            return
        if not writes and any_of(where == root or where.startswith(root + "/") for root in readable):
            return
        refuse("open for writing" if writes else "open", (where,))

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event in blocked or event.startswith(prefixes):
            refuse(event, args)
        elif event == "open" and args:
            check_open(args)

    return hook


def _resolver(
    lstat: Callable[[str], os.stat_result],
    readlink: Callable[[str], str],
    is_link: Callable[[int], bool],
    getcwd: Callable[[], str],
    errors: tuple[type[Exception], ...],
    max_links: int,
) -> Callable[[str], str]:
    """``realpath`` with the given functions: every symlink followed, ``..`` taken on the real path, the rest lexical."""

    def resolve(path: str) -> str:
        parts = [p for p in (path if path.startswith("/") else getcwd() + "/" + path).split("/") if p and p != "."]
        done, links = "", 0
        while parts:
            part = parts.pop(0)
            if part == "..":
                done = done.rsplit("/", 1)[0]
                continue
            candidate = done + "/" + part
            try:
                link = is_link(lstat(candidate).st_mode)
            except errors:
                link = False  # not there (yet): the rest is lexical
            if not link:
                done = candidate
                continue
            links += 1
            if links > max_links:
                return candidate
            target = readlink(candidate)
            done = "" if target.startswith("/") else done
            parts = [p for p in target.split("/") if p and p != "."] + parts
        return done or "/"

    return resolve
