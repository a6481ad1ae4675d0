"""What an agent server sees of the host, and its command line (:mod:`harness.referee.walls`).

Read-only: ``/usr`` (the C libraries torch and numpy link), the interpreter's
own prefix, the virtual environment, the project's packages (``engine``,
``agents``, ``harness``) and ``prompts/``, the numba cache (at
:data:`CACHE_INSIDE`; the server links it into its private ``/tmp``), and the
plugin files of the run; a model agent's server also gets the files name
resolution and TLS read under ``/etc``. Writable: a private ``/tmp`` of
:data:`TMP_BYTES`. Nothing else of the host: not the project's other folders
(``runs/``, ``tests/``), not the working directory, not the home directory.
The bubblewrap options travel on a pipe (``--args``), the seccomp filter on
another, so neither shows on a command line; the launching code closes every
descriptor but the control socket (:mod:`harness.referee.walled_server`).
"""

from __future__ import annotations

import os
import shutil
import sys
from functools import lru_cache
from pathlib import Path

import agents
import engine
import harness
from harness.referee.walled_server import CACHE_LINKS, boot_code
from harness.registry.outside import REFEREE_ENV
from harness.sandbox import seccomp, view

CACHE_INSIDE = "/opt/arena/numba-cache"
INSIDE = "\0"  # in a bind: "HOST\0INSIDE", a host file shown at another place inside (a relative path's, under /tmp)
TMP_BYTES = 1 << 30
NETWORK_FILES = (
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/nsswitch.conf",
    "/etc/host.conf",
    "/etc/gai.conf",
    "/etc/ssl",
    "/etc/ca-certificates",
)
WRITABLE_ENV = "ARENA_AGENT_WRITABLE"  # a host folder every agent process may write to (the test suite's reports)
SAFE_VARIABLES = ("LANG", "LC_ALL", "LC_CTYPE", "TZ", "PYTHONHASHSEED", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


@lru_cache(maxsize=1)
def project_paths() -> tuple[str, ...]:
    """The project's packages and its prompt templates, as installed (a clone's folders, or site-packages)."""
    packages = [str(Path(module.__file__ or "").resolve().parent) for module in (engine, agents, harness)]
    prompts = Path(harness.__file__ or "").resolve().parents[1] / "prompts"
    return tuple(dict.fromkeys([*packages, *([str(prompts)] if prompts.is_dir() else [])]))


def readable_paths(network: bool, binds: tuple[str, ...]) -> tuple[str, ...]:
    """Every host path bound read-only at its own place."""
    roots = ["/usr", os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix), *project_paths(), *binds]
    if network:
        roots += [path for path in NETWORK_FILES if os.path.exists(path)]
    return tuple(dict.fromkeys(os.path.realpath(path) for path in roots if os.path.exists(path)))


def writable_dir() -> str | None:
    """The folder :data:`WRITABLE_ENV` names, bound writable into every agent sandbox (unset in a real run: an agent
    then writes nothing on the host, and sends what it must keep over its wire)."""
    directory = os.environ.get(WRITABLE_ENV)
    return os.path.realpath(directory) if directory and os.path.isdir(directory) else None


def cache_source() -> str | None:
    """The host's numba cache, when the environment names one."""
    directory = os.environ.get("NUMBA_CACHE_DIR")
    return os.path.realpath(directory) if directory and os.path.isdir(directory) else None


def _binds(network: bool, binds: tuple[str, ...], writable: tuple[str, ...] = ()) -> list[str]:
    made: set[str] = {"/tmp"}
    args: list[str] = []
    for link in ("/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"):
        if os.path.islink(link):
            args += ["--symlink", os.readlink(link), link]
            made.add(link)
    for path in readable_paths(network, tuple(b for b in binds if INSIDE not in b)):
        args += view.dirs_to(path, made) + ["--ro-bind", path, path]
        made.add(path)
    for pair in (b for b in binds if INSIDE in b):  # "HOST\0INSIDE": a host file shown at another place
        source, target = pair.split(INSIDE)
        args += view.dirs_to(target, made) + ["--ro-bind", source, target]
    for folder in (writable_dir(), *writable):
        if folder is not None:
            args += view.dirs_to(folder, made) + ["--bind", folder, folder]
    cache = cache_source()
    if cache is not None:
        args += view.dirs_to(CACHE_INSIDE, made) + ["--ro-bind", cache, CACHE_INSIDE]
    return args


def environment_options(network: bool) -> list[str]:
    """The server's environment: none of the host's but the harmless variables (a model agent's process receives
    the parent's, with its keys, from its job)."""
    variables = {name: os.environ[name] for name in SAFE_VARIABLES if name in os.environ}
    variables |= {"HOME": "/tmp", "TMPDIR": "/tmp", "PATH": "/usr/bin:/bin", "LANG": variables.get("LANG", "C.UTF-8")}
    variables |= {"LITELLM_LOCAL_MODEL_COST_MAP": "True", REFEREE_ENV: "1"}  # the server's preload imports no outside code
    variables["NUMBA_CACHE_DIR"] = CACHE_LINKS  # links to the host's compiled kernels (a cache folder, or in-tree)
    return [word for name, value in sorted(variables.items()) for word in ("--setenv", name, value)]


def bwrap_options(network: bool, binds: tuple[str, ...], filter_fd: int, writable: tuple[str, ...] = ()) -> list[str]:
    """Everything bubblewrap is told, but the command."""
    return [
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        *([] if network else ["--unshare-net"]),
        "--new-session",
        "--clearenv",
        *environment_options(network),
        "--size",
        str(TMP_BYTES),
        "--perms",
        "1777",
        "--tmpfs",
        "/tmp",
        *_binds(network, binds, writable),
        *view.private_system(filter_fd, keep=("cpuinfo",)),  # torch picks its CPU kernels from it
    ]


def interpreter() -> str:
    """The virtual environment's python (its ``pyvenv.cfg`` puts the installed packages on the path)."""
    return os.path.join(sys.prefix, "bin", "python")


def server_argv(uid: int, control_fd: int, args_fd: int) -> list[str]:
    """bubblewrap (its options, :func:`bwrap_options`, on ``args_fd``), setpriv down to ``uid``, the interpreter
    running the agent server."""
    setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
    drop = [f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs"]
    source = cache_source()
    boot = boot_code(control_fd, CACHE_INSIDE if source is not None else None, () if source is not None else project_paths())
    return [shutil.which("bwrap") or "bwrap", "--args", str(args_fd), "--", setpriv, *drop, "--", interpreter(), "-I", "-B", "-c", boot]


def host_filter() -> bytes:
    """The sandbox's seccomp filter (the generated-code sandbox's own)."""
    program = seccomp.host_filter()
    if program is None:
        raise RuntimeError(f"no seccomp filter for this architecture ({os.uname().machine})")
    return program
