"""A cgroup per worker where the machine allows one: the kernel's bound on its memory (all of it) and its processes.

RLIMIT_AS bounds what one process maps; the memory cgroup charges everything
the worker's processes make the kernel hold (page cache, tmpfs, shared memory,
kernel memory) and kills within the group past its limit; the pids cgroup caps
its tasks. cgroup v2 where the unified hierarchy has the controllers, else the
v1 ``memory`` and ``pids`` hierarchies. Groups are made under this process's own
cgroup (never outside it) as ``arena-sandbox/<pid>-<name>``, so a worker never
escapes a limit its parent is under; a group is reused by the next worker of the
same name (uid), and removed by :func:`WorkerCgroup.remove` or at exit. The
launch command (``command.launch_argv``) writes the shell's pid into the group
before it becomes bubblewrap, so nothing of the worker runs outside it.
"""

from __future__ import annotations

import atexit
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from harness.sandbox.limits import MIB, Limits

MOUNTS = Path("/sys/fs/cgroup")
PARENT = "arena-sandbox"
SLACK_BYTES = 64 * MIB  # bubblewrap's two processes, page tables and the kernel's own, above the address space and /tmp
SLACK_PROCESSES = 4  # bubblewrap's monitor and its pid 1, above the worker's own limit


@dataclass(frozen=True)
class WorkerCgroup:
    """One worker's group: a directory in each hierarchy (v2: one; v1: memory and pids)."""

    directories: tuple[str, ...]

    @property
    def procs_files(self) -> tuple[str, ...]:
        """The files a process joins the group by (writing its pid)."""
        return tuple(f"{directory}/cgroup.procs" for directory in self.directories)

    def oom_kills(self) -> int:
        """How many processes the kernel killed in the group for its memory limit (so far, in the group's life)."""
        events = "memory.events" if len(self.directories) == 1 else "memory.oom_control"
        try:
            lines = Path(f"{self.directories[0]}/{events}").read_text().splitlines()
        except OSError:
            return 0
        counts = dict(line.split()[:2] for line in lines if len(line.split()) >= 2)
        return int(counts.get("oom_kill", 0))

    def peak_bytes(self) -> int | None:
        """The most memory the kernel charged to the group (v1 ``max_usage_in_bytes``, v2 ``memory.peak``), if it says."""
        name = "memory.peak" if len(self.directories) == 1 else "memory.max_usage_in_bytes"
        try:
            return int(Path(f"{self.directories[0]}/{name}").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def remove(self) -> None:
        """Remove the group (the kernel refuses while a process is in it; then it stays for the next worker)."""
        for directory in self.directories:
            try:
                os.rmdir(directory)
            except OSError:
                pass


def worker_limits(limits: Limits) -> tuple[int, int]:
    """The group's memory (the address space, the /tmp and a slack) and its number of tasks."""
    return limits.memory_bytes + limits.tmp_bytes + SLACK_BYTES, limits.processes + SLACK_PROCESSES


def for_worker(uid: int, limits: Limits) -> WorkerCgroup | None:
    """The group of the worker running as ``uid``, its limits set; None where the machine allows none (``problem``)."""
    if problem() is not None:
        return None
    return create(str(uid), *worker_limits(limits))


def create(name: str, memory_bytes: int, processes: int) -> WorkerCgroup | None:
    """A group ``<pid>-<name>`` with those limits (made, or reused and reset); None if the machine refuses."""
    parents = _parents()
    if parents is None:
        return None
    _collect_dead(parents)
    directories = tuple(f"{parent}/{os.getpid()}-{name}" for parent in parents)
    for _ in range(2):  # a reused group whose old charges refuse the new limit is removed and made anew
        try:
            for directory in directories:
                os.makedirs(directory, exist_ok=True)
            _set_limits(directories, memory_bytes, processes)
        except OSError:
            WorkerCgroup(directories).remove()
            continue
        _made.add(directories)
        return WorkerCgroup(directories)
    return None


@lru_cache(maxsize=1)
def problem() -> str | None:
    """None when worker groups can be made here (tried once), else why not."""
    if os.geteuid() != 0:
        return "not root"
    if _parents() is None:
        return f"no writable memory and pids cgroup under {MOUNTS} (v2 with both controllers, or v1 hierarchies)"
    probe = create(f"probe-{os.getpid()}", 64 * MIB, 8)
    if probe is None:
        return "making a cgroup and setting its limits failed"
    probe.remove()
    return None


def version() -> int | None:
    """2 or 1: the cgroup version the groups use; None without one."""
    parents = _parents()
    return None if parents is None else (2 if len(parents) == 1 else 1)


def _set_limits(directories: tuple[str, ...], memory_bytes: int, processes: int) -> None:
    if len(directories) == 1:  # v2
        _write(f"{directories[0]}/memory.max", memory_bytes)
        _write(f"{directories[0]}/memory.swap.max", 0, optional=True)
        _write(f"{directories[0]}/pids.max", processes)
        return
    memory, pids = directories
    _write(f"{memory}/memory.limit_in_bytes", memory_bytes)
    _write(f"{memory}/memory.memsw.limit_in_bytes", memory_bytes, optional=True)  # no swap beyond it
    _write(f"{pids}/pids.max", processes)


def _write(path: str, value: int | str, optional: bool = False) -> None:
    try:
        with open(path, "w", encoding="ascii") as handle:
            handle.write(str(value))
    except OSError:
        if not optional:
            raise


@lru_cache(maxsize=1)
def _parents() -> tuple[str, ...] | None:
    """The ``arena-sandbox`` directories (made) under this process's own groups: (v2,) or (v1 memory, v1 pids)."""
    own, unified = _own_groups(), _unified_mount()
    try:
        if unified is not None and "" in own and {"memory", "pids"} <= _controllers(unified, own[""]):
            parent = f"{unified}{own['']}/{PARENT}"
            os.makedirs(parent, exist_ok=True)
            _write(f"{unified}{own['']}/cgroup.subtree_control", "+memory +pids", optional=True)
            _write(f"{parent}/cgroup.subtree_control", "+memory +pids")
            return (parent,)
        if all((MOUNTS / c / "cgroup.procs").exists() and c in own for c in ("memory", "pids")):
            parents = tuple(f"{MOUNTS}/{c}{own[c]}/{PARENT}" for c in ("memory", "pids"))
            for parent in parents:
                os.makedirs(parent, exist_ok=True)
            return parents
    except OSError:
        return None
    return None


def _own_groups() -> dict[str, str]:
    """This process's group in each hierarchy, by controller (``""`` for v2), from /proc/self/cgroup."""
    groups: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return groups
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            groups[controller] = path.rstrip("/")
    return groups


def _unified_mount() -> str | None:
    for candidate in (MOUNTS, MOUNTS / "unified"):
        if (candidate / "cgroup.controllers").exists():
            return str(candidate)
    return None


def _controllers(mount: str, group: str) -> set[str]:
    """The controllers a child of ``group`` could enable (those of the group itself)."""
    try:
        return set(Path(f"{mount}{group}/cgroup.controllers").read_text().split())
    except OSError:
        return set()


def _collect_dead(parents: tuple[str, ...]) -> None:
    """Remove the empty groups left by processes that have ended (a killed harness cannot remove its own)."""
    for parent in parents:
        try:
            names = os.listdir(parent)
        except OSError:
            continue
        for name in names:
            owner = name.split("-", 1)[0]
            if owner.isdigit() and int(owner) != os.getpid() and not os.path.exists(f"/proc/{owner}"):
                try:
                    os.rmdir(f"{parent}/{name}")
                except OSError:
                    pass


_made: set[tuple[str, ...]] = set()


@atexit.register
def _remove_made() -> None:
    """At exit: this process's groups, then the ``arena-sandbox`` parents if no other process has a group there."""
    for directories in _made:
        WorkerCgroup(directories).remove()
    if _made:
        WorkerCgroup(_parents() or ()).remove()
