"""The worker's command line: bubblewrap around an unprivileged Python, or (asked for) Python with rlimits only.

Inside bubblewrap the worker sees (``view``): the base interpreter, its standard
library (site-packages and the test suite masked) and the C libraries it links,
read-only at their own paths (every parent directory 0755 so an unprivileged uid
can traverse it); ``setpriv``; the worker's own modules as a zip at
``/opt/arena/worker.zip``; a minimal ``/dev``; its own ``/proc`` with the
host-wide figures masked; a private writable ``/tmp`` of a fixed size; nothing
else (no virtual environment, no ``/etc``, no home, no project files, no shell).
It runs as root without a user namespace (a user namespace would map the fork
limit back to root) with no network, PID, IPC, UTS or cgroup namespace of the
host, under a seccomp filter (``seccomp``: no new namespaces, mounts, shared or
anonymous-file memory, keyrings, bpf, ptrace...), then ``setpriv`` drops to a uid
of its own with every capability gone and no new privileges; the worker sets its
own rlimits before reading the candidate. A shell on the host launches it: it
puts itself in the worker's cgroup (``cgroup``, where the machine has one), opens
the argument file, the filter and the zip as descriptors 3-5, and becomes
bubblewrap, which reads its arguments from descriptor 3 (``--args``), so
``/proc/1/cmdline`` inside is ``bwrap --args 3``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

from harness.sandbox import cgroup, seccomp, uids, view

SANDBOX_ROOT = "/opt/arena"
PACKAGE_DIR = Path(__file__).resolve().parent
WORKER_ZIP = view.ZIP_INSIDE
# descriptors the launching shell opens for bubblewrap: its arguments, the seccomp filter, the worker's zip
ARGS_FD, FILTER_FD, ZIP_FD = 3, 4, 5
LAUNCH_FAILED = 125  # the launching shell's exit status when it cannot join the cgroup or open a file
_LAUNCH = (
    "bwrap=$1 arguments=$2 filter=$3 archive=$4 groups=$5; shift 5; "
    f'while [ "$groups" -gt 0 ]; do echo $$ > "$1" || exit {LAUNCH_FAILED}; shift; groups=$((groups - 1)); done; '
    f'exec {ARGS_FD}<"$arguments" {FILTER_FD}<"$filter" {ZIP_FD}<"$archive" || exit {LAUNCH_FAILED}; '
    f'rm -f "$arguments"; exec "$bwrap" --args {ARGS_FD} -- "$@"'
)
INSTALL_HINT = (
    "bubblewrap is not installed or cannot run here: install the Debian package 'bubblewrap' "
    "(as root: apt-get install -y bubblewrap; `make install` does it), or run generated code "
    "without a sandbox, rlimits only, with --unsandboxed (the manifest and report then say UNSANDBOXED)"
)
# numerical libraries start a thread per core on import; each counts against the process limit
_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS")


def boot_code(root: str) -> str:
    """The ``python -c`` program that starts the worker, with ``root`` holding the ``harness`` package."""
    return f"import sys; sys.path.insert(0, {root!r}); from harness.sandbox.worker import main; main()"


def python_flags() -> list[str]:
    """Isolated mode (no environment variables, no user site, no script directory), no ``site`` (no site-packages on
    the path, no ``.pth`` files run), no bytecode writes, unbuffered."""
    return ["-I", "-S", "-B", "-u", "-X", "utf8"]


@lru_cache(maxsize=1)
def bubblewrap_problem() -> str | None:
    """None when bubblewrap and setpriv work here (tried once: a trivial sandbox), else what is wrong."""
    bwrap, setpriv = shutil.which("bwrap"), shutil.which("setpriv")
    if bwrap is None or setpriv is None:
        return f"{'bwrap' if bwrap is None else 'setpriv'} not found on PATH"
    if os.geteuid() != 0:
        return "the sandbox runs bubblewrap as root (it drops to an unprivileged uid inside): run as root"
    if seccomp.host_filter() is None:
        return f"no seccomp filter for this architecture ({os.uname().machine}; known: x86_64, aarch64)"
    try:
        with uids.acquire() as lease:  # a uid of the probe's own, freed once none of its processes is left
            probe = subprocess.run(launch_argv(sandbox_argv(lease.uid, 1 << 20) + ["-c", "pass"]), capture_output=True, timeout=30, env={})
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bubblewrap failed to start: {error}"
    if probe.returncode != 0:
        return f"bubblewrap failed: {probe.stderr.decode(errors='replace').strip()[:300]}"
    return None


def readable_roots() -> list[str]:
    """What the worker may read: the interpreter, the virtual environment, the C libraries, this package."""
    roots = [os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix), "/usr/lib", "/usr/lib64", SANDBOX_ROOT]
    return list(dict.fromkeys(roots))


def _binds() -> list[str]:
    made: set[str] = {"/tmp"}  # the private tmpfs, mounted first
    args = view.interpreter_binds(made)
    setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
    args += view.dirs_to(setpriv, made) + ["--ro-bind", setpriv, setpriv]
    args += view.dirs_to(WORKER_ZIP, made) + ["--perms", "0444", "--file", str(ZIP_FD), WORKER_ZIP]
    return args


def sandbox_argv(uid: int, tmp_bytes: int) -> list[str]:
    """bubblewrap, setpriv and the interpreter, up to (not including) the ``-c`` program; run it with ``launch_argv``
    (it names descriptors the launching shell opens)."""
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
        *view.private_system(FILTER_FD),
        "--",
        shutil.which("setpriv") or "/usr/bin/setpriv",
        f"--reuid={uid}",
        f"--regid={uid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
        "--",
        view.interpreter(),
        *python_flags(),
    ]


def launch_argv(bwrap_argv: list[str], group: cgroup.WorkerCgroup | None = None) -> list[str]:
    """The host command that runs ``bwrap_argv``: a shell joins ``group``, opens bubblewrap's options (written to a
    private file it removes), the seccomp filter and the worker's zip as descriptors 3-5, and becomes bubblewrap with
    only the command (setpriv, the interpreter) left on its command line."""
    end = bwrap_argv.index("--")
    options = b"".join(a.encode() + b"\0" for a in bwrap_argv[1:end])
    procs = group.procs_files if group is not None else ()
    head = [shutil.which("sh") or "/bin/sh", "-c", _LAUNCH, "sh", bwrap_argv[0], view.staged(f"args-{os.urandom(8).hex()}", options)]
    return head + [_filter_file(), _zip_file(), str(len(procs)), *procs, *bwrap_argv[end + 1 :]]


@lru_cache(maxsize=1)
def _filter_file() -> str:
    return view.staged("seccomp.bpf", seccomp.host_filter() or b"")


@lru_cache(maxsize=1)
def _zip_file() -> str:
    return view.staged(view.ZIP_NAME, view.worker_zip())


def worker_argv(uid: int, tmp_bytes: int, group: cgroup.WorkerCgroup | None = None) -> list[str]:
    """The sandboxed worker's full command line; in ``group`` (``cgroup.for_worker``) when given."""
    return launch_argv(sandbox_argv(uid, tmp_bytes) + ["-c", boot_code(WORKER_ZIP)], group)


def unsandboxed_argv() -> list[str]:
    """The worker without bubblewrap: this interpreter, isolated mode, rlimits only."""
    return [sys.executable, *python_flags(), "-c", boot_code(str(PACKAGE_DIR.parent.parent))]
