"""The agent server: runs inside the sandbox's walls and forks one agent process at a time.

:mod:`harness.referee.walls` starts it under bubblewrap (its own PID, IPC and UTS
namespaces, a mount view without the run directory or the referee's files, a uid
of its own, no network unless it serves model agents, the sandbox's seccomp
filter). It imports what every agent process needs once (:data:`PRELOAD`), then
answers requests on its control socket, descriptor ``control_fd`` (a
``SOCK_SEQPACKET`` pair; the host holds the other end):

- ``start`` with two descriptors (the agent's end of its wire, the write end of a
  status pipe): every process left by an earlier agent of this server is killed,
  ``/tmp`` is emptied but for the numba cache's links, and a child is forked. The
  child becomes non-dumpable (no process of the same uid can read its memory,
  its descriptors or its environment), reads its target and arguments (a
  pickle the trusted host wrote) as the first message of its wire, takes the
  environment variables and ``sys.path`` folders it carries, and runs
  ``target(connection, *args)``. When it exits the server writes its exit code
  (negative: the signal that ended it) to the status pipe and closes it;
- ``signal`` sends a signal to the running child (the host cannot: it does not
  know the child's pid in this namespace);
- the end of the control socket (the host exited or let go) ends every process
  of the sandbox.
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import pickle
import selectors
import signal
import socket
import stat
import struct
import sys
import traceback
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

PRELOAD = ("harness.referee.warm", "harness.referee.players", "harness.referee.model_process")
CACHE_LINKS = "/tmp/.numba-cache"  # the numba cache inside: links into the host's read-only cache
PR_SET_DUMPABLE = 4
STATUS = struct.Struct("i")


def link_cache(source: str, target: str) -> None:
    """A tree of links at ``target`` to every file under ``source``: numba reads the host's compiled kernels through
    them and writes new ones beside them, in the private ``/tmp`` (``source`` itself is read-only)."""
    for directory, _subdirs, files in os.walk(source):
        inside = os.path.join(target, os.path.relpath(directory, source))
        os.makedirs(inside, exist_ok=True)
        for name in files:
            os.symlink(os.path.join(directory, name), os.path.join(inside, name))


def link_in_tree_caches(roots: list[str], target: str) -> None:
    """Without a cache folder on the host (no ``NUMBA_CACHE_DIR``), numba keeps compiled kernels in ``__pycache__``
    beside their sources, read-only here: links to them at ``target``, laid out as numba's cache folder lays them out
    (``<folder>_<sha1 of its path>``), so the server loads them instead of compiling every kernel again."""
    from numba.core.caching import _CacheLocator

    for root in roots:
        for directory, _subdirs, files in os.walk(root):
            compiled = [name for name in files if name.endswith((".nbi", ".nbc"))]
            if os.path.basename(directory) != "__pycache__" or not compiled:
                continue
            source_dir = os.path.dirname(directory)
            inside = os.path.join(target, _CacheLocator.get_suitable_cache_subpath(os.path.join(source_dir, "x.py")))
            os.makedirs(inside, exist_ok=True)
            for name in compiled:
                os.symlink(os.path.join(directory, name), os.path.join(inside, name))


def preload() -> None:
    """Import what every agent process needs (a failure only costs speed: each child imports what it lacks)."""
    for module in PRELOAD:
        try:
            __import__(module)
        except Exception as failure:  # noqa: BLE001 - reported; the children import it again and fail there, visibly
            print(f"note: the agent server could not preload {module}: {type(failure).__name__}: {failure}", file=sys.stderr)


class Server:
    """The loop: one child at a time, its exit code to its status pipe, leftovers killed before the next."""

    def __init__(self, control: socket.socket) -> None:
        self.control = control
        self.child: tuple[int, int] | None = None  # (pid, status descriptor)
        self.wake_r, wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(wake_w, False)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    def serve(self) -> None:
        selector = selectors.DefaultSelector()
        selector.register(self.control, selectors.EVENT_READ)
        selector.register(self.wake_r, selectors.EVENT_READ)
        while True:
            for key, _events in selector.select():
                if key.fileobj == self.wake_r:
                    self._drain_wakeups()
                    self._reap()
                elif not self._handle():
                    return

    def _drain_wakeups(self) -> None:
        try:
            while os.read(self.wake_r, 512):
                pass
        except BlockingIOError:
            pass

    def _reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if self.child is not None and pid == self.child[0]:
                code = os.waitstatus_to_exitcode(status)
                _write_status(self.child[1], code)
                self.child = None

    def _handle(self) -> bool:
        message, fds, _flags, _address = socket.recv_fds(self.control, 4096, 4)
        if not message:
            return False
        request = json.loads(message)
        if request.get("op") == "start" and len(fds) == 2:
            self._start(fds[0], fds[1])
        elif request.get("op") == "signal" and self.child is not None:
            try:
                os.kill(self.child[0], int(request.get("signal", signal.SIGKILL)))
            except ProcessLookupError:
                pass
        else:
            for descriptor in fds:
                os.close(descriptor)
        return True

    def _start(self, wire_fd: int, status_fd: int) -> None:
        if self.child is not None:  # the host starts one child at a time: a second start is refused
            _write_status(status_fd, -int(signal.SIGKILL))
            os.close(wire_fd)
            self.control.send(json.dumps({"op": "busy"}).encode())
            return
        _clear_leftovers()
        pid = os.fork()
        if pid == 0:
            self.control.close()
            os.close(status_fd)
            os.close(self.wake_r)
            _child(wire_fd)
        os.close(wire_fd)
        self.child = (pid, status_fd)
        self.control.send(json.dumps({"op": "started", "pid": pid}).encode())


def _write_status(descriptor: int, code: int) -> None:
    try:
        os.write(descriptor, STATUS.pack(code))
    except OSError:
        pass
    os.close(descriptor)


def _clear_leftovers() -> None:
    """Kill every process an earlier child left (all but this server and the namespace's init), empty ``/tmp``."""
    try:
        os.kill(-1, signal.SIGKILL)
    except ProcessLookupError:
        pass
    while True:
        try:
            if os.waitpid(-1, 0)[0] == 0:
                break
        except ChildProcessError:
            break
    _empty(Path("/tmp"), os.lstat("/tmp").st_dev)


def _empty(directory: Path, device: int) -> None:
    """Remove what an agent wrote under ``directory``: never a host path bound there (another device: a plugin file,
    a folder made writable for agents), never the cache's links, never the folders that lead to a bound path."""
    for entry in directory.iterdir():
        try:
            info = entry.lstat()
            if info.st_dev != device or str(entry) == CACHE_LINKS:
                continue
            if stat.S_ISDIR(info.st_mode):
                _empty(entry, device)
                entry.rmdir()
            else:
                entry.unlink()
        except OSError:  # a folder that leads to a bound path stays; so does anything the kernel refuses
            continue


def _child(wire_fd: int) -> None:
    """The agent process: non-dumpable, default signals, then its target; never returns."""
    code = 1
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.closerange(3, wire_fd)  # the server's selector and wake-up pipe: the child keeps its wire only
        os.closerange(wire_fd + 1, os.sysconf("SC_OPEN_MAX"))
        connection = Connection(wire_fd)
        target, args, environ, paths = pickle.loads(connection.recv_bytes())
        os.environ.clear()
        os.environ.update(environ)
        sys.path[:0] = paths
        target(connection, *args)
        code = 0
    except SystemExit as ended:
        code = ended.code if isinstance(ended.code, int) else 1
    except (BrokenPipeError, ConnectionResetError, EOFError, KeyboardInterrupt):  # the referee stops the run, or left
        code = 0
    except Exception as failure:  # noqa: BLE001 - the wire's own errors mean the same: end quietly
        if type(failure).__name__ not in ("AgentProcessGone", "ProtocolViolation"):
            traceback.print_exc()
    except BaseException:  # noqa: BLE001 - the agent process's last word goes to its stderr, as a process's would
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def main(control_fd: int, cache_source: str | None = None, source_roots: tuple[str, ...] = ()) -> None:
    """The server's whole life (see the module docstring)."""
    os.closerange(3, control_fd)  # bubblewrap's options and filter, or anything else inherited: only the control stays
    os.closerange(control_fd + 1, os.sysconf("SC_OPEN_MAX"))
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # its memory, descriptors, environment: its own
    if cache_source is not None and os.path.isdir(cache_source):
        link_cache(cache_source, CACHE_LINKS)
    elif source_roots:
        link_in_tree_caches(list(source_roots), CACHE_LINKS)
    preload()
    gc.freeze()
    control = socket.socket(fileno=control_fd)
    try:
        Server(control).serve()
    except OSError:  # the host went away (its end of the control socket closed mid-request): end quietly
        pass
    finally:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass


def boot_code(control_fd: int, cache_source: str | None, source_roots: tuple[str, ...] = ()) -> str:
    """The ``python -c`` program that starts the server."""
    return f"from harness.referee.walled_server import main; main({control_fd}, {cache_source!r}, {source_roots!r})"


def target_payload(target: Any, args: tuple[Any, ...], environ: dict[str, str], paths: tuple[str, ...]) -> bytes:
    """What the host writes as the first message of a child's wire: its target and arguments, its environment
    variables, the folders it puts first on ``sys.path`` (a plugin module's)."""
    return pickle.dumps((target, args, environ, list(paths)), protocol=pickle.HIGHEST_PROTOCOL)


def probe(connection: Connection, paths: tuple[str, ...] = ()) -> None:
    """What an agent process sees of the machine, sent on its wire (the walls' tests and ``arena bench`` use it)."""
    pids = sorted(int(name) for name in os.listdir("/proc") if name.isdigit())
    with open("/proc/net/dev", encoding="utf-8") as devices:
        interfaces = sorted(line.split(":")[0].strip() for line in devices.readlines()[2:])
    facts = {
        "uid": os.getuid(),
        "pid": os.getpid(),
        "pids": pids,
        "interfaces": interfaces,
        "descriptors": sorted(int(fd) for fd in os.listdir("/proc/self/fd")),
        "visible": {path: os.path.exists(path) for path in paths},
        "environ": dict(os.environ),
        "argv": sys.argv,
    }
    connection.send_bytes(json.dumps(facts).encode())
