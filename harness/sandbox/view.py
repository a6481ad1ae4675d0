"""What the sandbox shows of the host: the interpreter, its standard library and C libraries, the worker's own modules.

Nothing else is bound: not the virtual environment (its site-packages hold this
project's metadata, the whole README), not the interpreter's own site-packages
(masked by an empty tmpfs), not ``/usr/lib`` beyond the libraries the
interpreter and its extension modules link (found once with ``ldd``). The
worker's modules (``worker.py`` and what it imports of this package, found by
reading their imports) travel as one zip archive that bubblewrap copies into
the sandbox's own root (``--file``: a file, not a bind of a project path, so no
host path shows in ``/proc/self/mountinfo``). Host-wide figures in ``/proc``
(memory, load, uptime, CPUs, the kernel's command line, pressure, sysctls) are
masked with ``/dev/null`` or an empty tmpfs. Host side only.
"""

from __future__ import annotations

import ast
import atexit
import importlib.util
import io
import marshal
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from functools import lru_cache
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
ZIP_NAME = "worker.zip"
ZIP_INSIDE = f"/opt/arena/{ZIP_NAME}"  # where the zip lies inside the sandbox
# host-wide files and directories of /proc: replaced by /dev/null, or hidden under an empty tmpfs
PROC_FILES = (
    "meminfo", "loadavg", "stat", "uptime", "vmstat", "cpuinfo", "cmdline", "diskstats", "interrupts", "softirqs",
    "zoneinfo", "buddyinfo", "pagetypeinfo", "schedstat", "swaps", "partitions", "vmallocinfo", "slabinfo", "iomem",
    "ioports", "kallsyms", "modules", "locks", "key-users", "keys", "crypto", "devices", "misc", "mtrr", "timer_list",
    "sched_debug", "latency_stats", "consoles", "execdomains", "dma", "cgroups", "version", "config.gz", "kmsg",
    "kcore", "kpagecgroup", "kpagecount", "kpageflags", "sysrq-trigger", "filesystems",
)  # fmt: skip
PROC_DIRS = ("pressure", "sys", "irq", "bus", "fs", "driver", "tty", "acpi", "scsi", "dynamic_debug")
MASKED_STDLIB = ("site-packages", "test", "idlelib", "ensurepip", "tkinter", "turtledemo", "lib2to3")


def interpreter() -> str:
    """The base interpreter (the venv's python is a link to it): run with ``-I -S``, it needs no venv."""
    return os.path.realpath(sys.executable)


def _stdlib() -> str:
    return os.path.realpath(sysconfig.get_paths()["stdlib"])


@lru_cache(maxsize=1)
def worker_modules() -> tuple[str, ...]:
    """The modules of this package the worker imports (itself included), by name, found by reading their imports."""
    found: list[str] = []
    pending = ["worker"]
    while pending:
        name = pending.pop()
        if name in found:
            continue
        found.append(name)
        tree = ast.parse((PACKAGE_DIR / f"{name}.py").read_text(encoding="utf-8"))
        pending += [n for n in _imported(tree) if (PACKAGE_DIR / f"{n}.py").exists()]
    return tuple(sorted(found))


def _imported(tree: ast.AST) -> list[str]:
    """Names of this package's modules an module imports (``from harness.sandbox import x``, ``...sandbox.x``, ``.x``)."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if module == "harness.sandbox" or (node.level == 1 and not module):
                names += [alias.name for alias in node.names]
            elif module.startswith("harness.sandbox."):
                names.append(module.split(".")[2])
            elif node.level == 1:
                names.append(module.split(".")[0])
        elif isinstance(node, ast.Import):
            names += [a.name.split(".")[2] for a in node.names if a.name.startswith("harness.sandbox.")]
    return names


@lru_cache(maxsize=1)
def worker_zip() -> bytes:
    """The worker's modules as a zip archive (``harness/sandbox/...``), imported inside from :data:`ZIP_INSIDE`; each
    with its bytecode (an unchecked hash-based ``.pyc``, compiled here once), so a worker does not compile them."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("harness/__init__.py", "")
        archive.writestr("harness/sandbox/__init__.py", "")
        for name in worker_modules():
            source = (PACKAGE_DIR / f"{name}.py").read_bytes()
            member = f"harness/sandbox/{name}.py"
            archive.writestr(member, source)
            archive.writestr(member + "c", _bytecode(source, f"{ZIP_INSIDE}/{member}"))
    return buffer.getvalue()


def _bytecode(source: bytes, filename: str) -> bytes:
    """A ``.pyc`` of ``source``: magic, flags (hash-based, not checked against the source), the source's hash, code."""
    code = compile(source, filename, "exec", dont_inherit=True)
    return importlib.util.MAGIC_NUMBER + (1).to_bytes(4, "little") + importlib.util.source_hash(source) + marshal.dumps(code)


@lru_cache(maxsize=1)
def shared_libraries() -> tuple[str, ...]:
    """The C libraries the interpreter, its extension modules and ``setpriv`` link (the dynamic loader included), from
    ``ldd``."""
    lib_dynload = Path(_stdlib()) / "lib-dynload"
    linked = [interpreter(), *(str(p) for p in sorted(lib_dynload.glob("*.so")) if "tkinter" not in p.name)]
    linked += [path for path in [shutil.which("setpriv")] if path is not None]
    ldd = shutil.which("ldd")
    if ldd is None:
        return ()
    listing = subprocess.run([ldd, *linked], capture_output=True, text=True, timeout=60, check=False).stdout
    found: set[str] = set()
    for line in listing.splitlines():
        words = line.split()
        path = words[2] if len(words) >= 3 and words[1] == "=>" else (words[0] if words and words[0].startswith("/") else "")
        if path.startswith("/") and os.path.exists(path):
            found.add(path)
    return tuple(sorted(found))


def dirs_to(path: str, made: set[str]) -> list[str]:
    """``--perms 0755 --dir`` for each parent of ``path`` not made yet (bubblewrap would make them 0700)."""
    args: list[str] = []
    parts = Path(path).parts
    for depth in range(2, len(parts)):
        parent = str(Path(*parts[:depth]))
        if parent not in made:
            made.add(parent)
            args += ["--perms", "0755", "--dir", parent]
    return args


def _inside(path: str) -> str:
    """Where a host file shows inside: its directory resolved (``/lib`` is a link to ``usr/lib`` there too)."""
    return os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))


def interpreter_binds(made: set[str]) -> list[str]:
    """Read-only binds of the interpreter, its standard library (site-packages and the test suite masked), its libraries."""
    args: list[str] = []
    for link, target in (("/lib", "usr/lib"), ("/lib64", "usr/lib64")):
        if os.path.islink(link):
            args += ["--symlink", target, link]
            made.add(link)
    stdlib = _stdlib()
    for source in (interpreter(), stdlib, *shared_libraries()):
        target = _inside(source)
        args += dirs_to(target, made) + ["--ro-bind", os.path.realpath(source), target]
    for name in MASKED_STDLIB:
        if os.path.isdir(os.path.join(stdlib, name)):
            args += ["--perms", "0555", "--size", "4096", "--tmpfs", os.path.join(stdlib, name)]
    return args


def proc_masks(keep: tuple[str, ...] = ()) -> list[str]:
    """After ``--proc /proc``: the host-wide files emptied (``/dev/null``), the host-wide directories emptied (tmpfs);
    but those named in ``keep``."""
    args: list[str] = []
    for name in PROC_FILES:
        if os.path.isfile(f"/proc/{name}") and name not in keep:
            args += ["--ro-bind", "/dev/null", f"/proc/{name}"]
    for name in PROC_DIRS:
        if os.path.isdir(f"/proc/{name}"):
            args += ["--perms", "0555", "--size", "4096", "--tmpfs", f"/proc/{name}"]
    return args


@lru_cache(maxsize=1)
def staging() -> Path:
    """A private (0700) host directory for the launch's files: the filter, the zip, each launch's arguments."""
    directory = Path(tempfile.mkdtemp(prefix="arena-sandbox-"))
    atexit.register(shutil.rmtree, directory, True)
    return directory


def staged(name: str, data: bytes) -> str:
    """``data`` written to the staging directory as ``name`` (0600); its path."""
    path = staging() / name
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        write_all(descriptor, data)
    finally:
        os.close(descriptor)
    return str(path)


def write_all(descriptor: int, data: bytes) -> None:
    """Every byte of ``data`` to ``descriptor`` (a write may take only part)."""
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view) :]


def private_system(filter_fd: int, keep: tuple[str, ...] = ()) -> list[str]:
    """bubblewrap's options after the binds, the same for every sandbox: a minimal ``/dev``, its own ``/proc`` with
    the host-wide figures masked (but ``keep``), ``/tmp`` as working directory, its own host name, the seccomp filter
    on ``filter_fd``."""
    masks = proc_masks(keep)
    return ["--dev", "/dev", "--proc", "/proc", *masks, "--chdir", "/tmp", "--hostname", "sandbox", "--seccomp", str(filter_fd)]
