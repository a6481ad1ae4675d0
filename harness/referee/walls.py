"""Agent processes behind the sandbox's walls: warm servers under bubblewrap that fork them, one at a time.

Every agent process (a classical or plugin agent adapting for ``arena run`` or a
``bench paper`` pair, a tournament's or match's player process, a model agent's
process) starts through :func:`start_process`. Where bubblewrap works (root, the
generated-code sandbox's probe: :func:`harness.sandbox.command.bubblewrap_problem`)
it is forked by an *agent server* (:mod:`harness.referee.walled_server`) that
runs inside:

- its own PID namespace: the agent sees the server and nothing else of the
  machine (no referee, no CLI process, no other run);
- a mount view (:mod:`harness.referee.agent_view`) of ``/usr``, the interpreter,
  the virtual environment, the project's packages, the numba cache (read-only),
  the plugin files named on the command line, a private ``/tmp``, its own
  ``/proc`` with the host-wide figures masked; not the run directory, not the
  sealed suites, not the working directory, not ``/etc`` (a model agent's server
  gets the few files name resolution and TLS need);
- a uid of its own (leased, :mod:`harness.sandbox.uids`), every capability
  dropped, no new privileges, the sandbox's seccomp filter (no ptrace, no
  reading another process's memory, no new namespaces, no mounts);
- no network namespace of the host unless it serves model agents
  (``network=True``), which must reach their model;
- no descriptor but its control socket; each child only its wire.

The server is started once and reused by the next agent of this process whose
network flag matches (the previous child must have exited), so an agent's start
costs a fork, as with the forkserver it replaces. Without bubblewrap
(:func:`walls_problem` says why) agent processes start as before, by
``multiprocessing`` (:func:`start_unwalled`), and the callers mark the run's
agent processes as not isolated (plugins then need ``--unsandboxed-agents``).
"""

from __future__ import annotations

import atexit
import fcntl
import json
import os
import select
import signal
import socket
import subprocess
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from harness.referee import walled_server
from harness.referee.agent_view import SAFE_VARIABLES, WRITABLE_ENV, bwrap_options, host_filter, server_argv, writable_dir
from harness.referee.walled_server import CACHE_LINKS
from harness.registry.importing import PLUGINS_ENV
from harness.registry.outside import DESCRIBED_ENV, OUTSIDE_ENV, REFEREE_ENV
from harness.sandbox import command, uids, view

START_SECONDS = 120.0
_lock = threading.Lock()
_servers: list[AgentServer] = []


def _filled_pipe(data: bytes) -> int:
    """The read end of a pipe holding ``data``, its write end closed."""
    read, write = os.pipe()
    fcntl.fcntl(write, fcntl.F_SETPIPE_SZ, max(65536, 1 << max(0, len(data) - 1).bit_length()))
    try:
        view.write_all(write, data)
    finally:
        os.close(write)
    return read


def walls_problem() -> str | None:
    """None when agent processes can start behind the walls here, else why not (bubblewrap's probe)."""
    return command.bubblewrap_problem()


class ServerGone(RuntimeError):
    """The agent server exited or did not answer."""


class AgentServer:
    """One warm server under bubblewrap; :meth:`start` forks a child there (one at a time)."""

    def __init__(self, network: bool, binds: tuple[str, ...], writable: tuple[str, ...] = ()) -> None:
        self.network, self.binds, self.writable = network, binds, (writable_dir(), *writable)
        self.lease = uids.acquire()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        control = theirs.detach()
        filter_fd = _filled_pipe(host_filter())
        options = bwrap_options(network, binds, filter_fd, writable)
        args_fd = _filled_pipe(b"".join(word.encode() + b"\0" for word in options))
        try:
            argv = server_argv(self.lease.uid, control, args_fd)
            passed = (control, args_fd, filter_fd)
            self.popen = subprocess.Popen(argv, pass_fds=passed, stdin=subprocess.DEVNULL, env={}, start_new_session=True)
        except BaseException:
            self.lease.release()
            raise
        finally:
            for descriptor in (control, args_fd, filter_fd):
                os.close(descriptor)
        self.control = ours
        self.current: WalledProcess | None = None

    def usable(self, network: bool, binds: tuple[str, ...], writable: tuple[str, ...] = ()) -> bool:
        idle = self.current is None or self.current.exitcode is not None
        same_view = self.network == network and set(binds) <= set(self.binds) and self.writable == (writable_dir(), *writable)
        return same_view and idle and self.popen.poll() is None

    def start(
        self, target: Callable[..., Any], args: tuple[Any, ...], environ: dict[str, str], paths: tuple[str, ...]
    ) -> tuple[Connection, WalledProcess]:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        status_r, status_w = os.pipe()
        try:
            socket.send_fds(self.control, [json.dumps({"op": "start"}).encode()], [theirs.fileno(), status_w])
        finally:
            theirs.close()
            os.close(status_w)
        reply = self._reply()
        if reply.get("op") != "started":
            os.close(status_r)
            ours.close()
            raise ServerGone(f"the agent server refused to start a process: {reply}")
        connection = Connection(ours.detach())
        connection.send_bytes(walled_server.target_payload(target, args, environ, paths))
        self.current = WalledProcess(self, status_r)
        return connection, self.current

    def _reply(self) -> dict[str, Any]:
        ready, _, _ = select.select([self.control], [], [], START_SECONDS)
        message = self.control.recv(4096) if ready else b""
        if not message:
            raise ServerGone(f"the agent server did not answer (exit code {self.popen.poll()}); see its stderr above")
        decoded = json.loads(message)
        return decoded if isinstance(decoded, dict) else {}

    def signal(self, number: int) -> None:
        try:
            self.control.send(json.dumps({"op": "signal", "signal": int(number)}).encode())
        except OSError:
            pass

    def close(self) -> None:
        """End the server and every process of its sandbox; its uid is freed once none of them is left."""
        self.control.close()
        try:
            self.popen.wait(10)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()
        self.lease.end()


class WalledProcess:
    """The host's handle on an agent process in a server: what ``multiprocessing.Process`` offered the callers."""

    def __init__(self, server: AgentServer, status_fd: int) -> None:
        self._server, self._status_fd = server, status_fd
        self._code: int | None = None
        self.pid: int | None = None  # its pid is the server's namespace's: signals go through the server

    @property
    def exitcode(self) -> int | None:
        if self._code is None and self._status_fd >= 0:
            ready, _, _ = select.select([self._status_fd], [], [], 0)
            if ready:
                self._read_status()
        return self._code

    def _read_status(self) -> None:
        data = os.read(self._status_fd, walled_server.STATUS.size)
        os.close(self._status_fd)
        self._status_fd = -1
        self._code = walled_server.STATUS.unpack(data)[0] if len(data) == walled_server.STATUS.size else -int(signal.SIGKILL)

    def is_alive(self) -> bool:
        return self.exitcode is None

    def join(self, timeout: float | None = None) -> None:
        if self._code is None and self._status_fd >= 0:
            ready, _, _ = select.select([self._status_fd], [], [], timeout)
            if ready:
                self._read_status()

    def send_signal(self, number: int) -> None:
        if self.is_alive():
            self._server.signal(number)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)


def start_walled(
    target: Callable[..., Any],
    args: tuple[Any, ...],
    *,
    network: bool,
    outside: bool = False,
    binds: tuple[str, ...] = (),
    paths: tuple[str, ...] = (),
    writable: tuple[str, ...] = (),
) -> tuple[Connection, WalledProcess]:
    """``target(connection, *args)`` in an agent process behind the walls; the host's end of its wire and its handle.

    ``outside``: the process may import outside code (plugins, installed entry points; otherwise it serves only the
    project's agents and imports none); ``binds``: host files it may read besides the view's (plugin files);
    ``paths``: folders put first on its ``sys.path`` (a plugin module's); ``writable``: host folders made for it to
    write in (a shared PPO training; never given to a process that imports outside code). Its environment:
    :func:`child_environment`.
    """
    if writable and outside:
        raise ValueError("a folder to write in is never given to a process that imports outside code")
    with _lock:
        _servers[:] = [server for server in _servers if server.popen.poll() is None]
        server = next((s for s in _servers if s.usable(network, binds, writable)), None)
        if server is None:
            server = AgentServer(network, binds, writable)
            _servers.append(server)
        server.current = None
        return server.start(target, args, child_environment(network, outside), paths)


AGENT_ENV = "OTHELLO_ARENA_AGENT_ENV"  # names (comma-separated) of variables agent processes get besides the harmless


def child_environment(network: bool, outside: bool) -> dict[str, str]:
    """An agent process's environment variables: a model agent's process gets this process's (its model's keys,
    proxies), any other only the harmless ones; the plugin list only where ``outside``; inside, HOME, TMPDIR, PATH and
    the numba cache are the sandbox's."""
    named = tuple(name.strip() for name in os.environ.get(AGENT_ENV, "").split(",") if name.strip())
    safe = (*SAFE_VARIABLES, PLUGINS_ENV, WRITABLE_ENV, AGENT_ENV, *named)
    variables = dict(os.environ) if network else {name: os.environ[name] for name in safe if name in os.environ}
    for name in (REFEREE_ENV, DESCRIBED_ENV, *(() if outside else (PLUGINS_ENV,))):
        variables.pop(name, None)
    variables |= {"HOME": "/tmp", "TMPDIR": "/tmp", "PATH": "/usr/bin:/bin", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    variables[OUTSIDE_ENV] = "1" if outside else "0"
    variables["NUMBA_CACHE_DIR"] = CACHE_LINKS  # the server's links to the host's compiled kernels
    return variables


def start_unwalled(target: Callable[..., Any], args: tuple[Any, ...], context: Any) -> tuple[Connection, Any]:
    """``target(connection, *args)`` in a ``multiprocessing`` process of ``context``, as before the walls."""
    ours, theirs = context.Pipe(duplex=True)
    process = context.Process(target=target, args=(theirs, *args), daemon=True, name="arena-agent")
    process.start()
    theirs.close()
    return ours, process


def send_signal(process: Any, number: int) -> None:
    """Signal an agent process, walled (through its server) or not."""
    if isinstance(process, WalledProcess):
        process.send_signal(number)
    elif process.pid is not None and process.is_alive():
        os.kill(process.pid, number)


def _forget_servers() -> None:
    """In a child forked from this process: the servers are the parent's, which alone may talk to them."""
    _servers.clear()


os.register_at_fork(after_in_child=_forget_servers)


@atexit.register
def _close_servers() -> None:
    with _lock:
        for server in _servers:
            server.close()
        _servers.clear()
