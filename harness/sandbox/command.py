"""The worker's command line: bubblewrap around an unprivileged Python, or (asked for) Python with rlimits only.

Inside bubblewrap the worker sees: the interpreter's prefix and the virtual
environment (read-only, at their own paths, every parent directory created 0755
so an unprivileged uid can traverse it), ``/usr/lib`` for the C libraries,
``setpriv``, this package at ``/opt/arena/harness/sandbox``, a minimal ``/dev``,
its own ``/proc``, and a private writable ``/tmp`` of a fixed size; nothing else
(no ``/etc``, no home, no project files, no ``/usr/bin`` shell). It runs as root
without a user namespace (a user namespace would map the fork limit back to
root) with no network, PID, IPC or UTS namespace of the host, then ``setpriv``
drops to a uid of its own with every capability gone and no new privileges; the
worker sets its own rlimits before reading the candidate.
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import subprocess
import sys
import time
from functools import lru_cache
from pathlib import Path

SANDBOX_ROOT = "/opt/arena"
PACKAGE_DIR = Path(__file__).resolve().parent
HARNESS_INIT = PACKAGE_DIR.parent / "__init__.py"
INSTALL_HINT = (
    "bubblewrap is not installed or cannot run here: install the Debian package 'bubblewrap' "
    "(as root: apt-get install -y bubblewrap; `make install` does it), or run generated code "
    "without a sandbox, rlimits only, with --unsandboxed (the manifest and report then say UNSANDBOXED)"
)
UID_BASE = 200_000  # each worker gets its own uid above this, so one worker's processes never count against another's
_uids = itertools.count()
# numerical libraries start a thread per core on import; each counts against the process limit
_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS")


def boot_code(root: str) -> str:
    """The ``python -c`` program that starts the worker, with ``root`` holding the ``harness`` package."""
    return f"import sys; sys.path.insert(0, {root!r}); from harness.sandbox.worker import main; main()"


def python_flags() -> list[str]:
    """Isolated mode (no environment variables, no user site, no script directory), no bytecode writes, unbuffered."""
    return ["-I", "-B", "-u", "-X", "utf8"]


def next_uid() -> int:
    """A uid for the next worker: distinct between the workers of this process, and between processes by pid."""
    return UID_BASE + ((os.getpid() & 0xFFFF) << 8 | next(_uids) & 0xFF)


@lru_cache(maxsize=1)
def bubblewrap_problem() -> str | None:
    """None when bubblewrap and setpriv work here (tried once: a trivial sandbox), else what is wrong."""
    bwrap, setpriv = shutil.which("bwrap"), shutil.which("setpriv")
    if bwrap is None or setpriv is None:
        return f"{'bwrap' if bwrap is None else 'setpriv'} not found on PATH"
    if os.geteuid() != 0:
        return "the sandbox runs bubblewrap as root (it drops to an unprivileged uid inside): run as root"
    try:
        probe = subprocess.run(sandbox_argv(next_uid(), 1 << 20) + ["-c", "pass"], capture_output=True, timeout=30, env={}, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bubblewrap failed to start: {error}"
    if probe.returncode != 0:
        return f"bubblewrap failed: {probe.stderr.decode(errors='replace').strip()[:300]}"
    return None


def readable_roots() -> list[str]:
    """What the worker may read: the interpreter, the virtual environment, the C libraries, this package."""
    roots = [os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix), "/usr/lib", "/usr/lib64", SANDBOX_ROOT]
    return list(dict.fromkeys(roots))


def _dirs_to(path: str, made: set[str]) -> list[str]:
    """``--perms 0755 --dir`` for each parent of ``path`` not made yet (bubblewrap would make them 0700)."""
    args: list[str] = []
    parts = Path(path).parts
    for depth in range(2, len(parts)):
        parent = str(Path(*parts[:depth]))
        if parent not in made:
            made.add(parent)
            args += ["--perms", "0755", "--dir", parent]
    return args


def _binds() -> list[str]:
    made: set[str] = {"/tmp"}  # the private tmpfs, mounted first: a venv under /tmp is bound over it, not hidden by it
    args: list[str] = []
    prefixes = [os.path.realpath(sys.base_prefix)]
    venv = os.path.realpath(sys.prefix)
    if not any(venv == p or venv.startswith(p + "/") for p in prefixes):
        prefixes.append(venv)
    for source in prefixes + ["/usr/lib"] + (["/usr/lib64"] if os.path.isdir("/usr/lib64") else []):
        args += _dirs_to(source, made) + ["--ro-bind", source, source]
    for link, target in (("/lib", "usr/lib"), ("/lib64", "usr/lib64")):
        if os.path.islink(link):
            args += ["--symlink", target, link]
        elif os.path.isdir(link):
            args += ["--ro-bind", link, link]
    setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
    args += _dirs_to(setpriv, made) + ["--ro-bind", setpriv, setpriv]
    package = f"{SANDBOX_ROOT}/harness/sandbox"
    args += _dirs_to(package, made)
    args += ["--ro-bind", str(HARNESS_INIT), f"{SANDBOX_ROOT}/harness/__init__.py", "--ro-bind", str(PACKAGE_DIR), package]
    return args


def sandbox_argv(uid: int, tmp_bytes: int) -> list[str]:
    """bubblewrap, setpriv and the interpreter, up to (not including) the ``-c`` program."""
    python = os.path.join(os.path.realpath(sys.prefix), "bin", "python3")
    if not os.path.exists(python):
        python = os.path.realpath(sys.executable)
    return [
        shutil.which("bwrap") or "bwrap",
        "--unshare-net",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
        "--setenv",
        "HOME",
        "/tmp",
        "--setenv",
        "PATH",
        "/nonexistent",
        "--setenv",
        "LANG",
        "C.UTF-8",
        *(arg for name in _THREAD_VARIABLES for arg in ("--setenv", name, "1")),
        "--size",
        str(tmp_bytes),
        "--perms",
        "1777",
        "--tmpfs",
        "/tmp",
        *_binds(),
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--chdir",
        "/tmp",
        "--hostname",
        "sandbox",
        "--",
        shutil.which("setpriv") or "/usr/bin/setpriv",
        f"--reuid={uid}",
        f"--regid={uid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
        "--",
        python,
        *python_flags(),
    ]


def worker_argv(uid: int, tmp_bytes: int) -> list[str]:
    """The sandboxed worker's full command line."""
    return sandbox_argv(uid, tmp_bytes) + ["-c", boot_code(SANDBOX_ROOT)]


def unsandboxed_argv() -> list[str]:
    """The worker without bubblewrap: this interpreter, isolated mode, rlimits only."""
    return [sys.executable, *python_flags(), "-c", boot_code(str(PACKAGE_DIR.parent.parent))]


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
    """SIGKILL every process of a worker's own ``uid`` until none is left (or ``seconds`` pass); what is left."""
    deadline = time.monotonic() + seconds
    while (left := processes_of(uid)) and time.monotonic() < deadline:
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.01)
    return left
