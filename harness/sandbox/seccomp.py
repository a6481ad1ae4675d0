"""The worker's seccomp filter: a classic-BPF program, built here with ``struct``, loaded by bubblewrap (``--seccomp FD``).

It kills the process (SIGSYS) on a system call that would hold host memory
outside the address-space limit or take the program out of its walls:
System V shared memory beyond one page, semaphores and message queues, POSIX
message queues, ``memfd_create``, mounts, new namespaces (``unshare``, ``setns``,
``clone`` with a namespace flag), ``pivot_root``/``chroot``, keyrings, ``bpf``,
``perf_event_open``, ``userfaultfd``, ``io_uring``, ``ptrace`` and reading or
writing another process's memory, modules, ``kexec``, swap, reboot. ``clone3``
answers ENOSYS (its flags are in memory the filter cannot read), so the C
library falls back to ``clone``, whose flags it can. A call from another
architecture (i386 through ``int 0x80``, the x32 ABI) is killed too.

Why kill rather than EPERM: none of these has a use in a game's rules, so the
call is an attack, and a kill is a verdict the kernel gives whatever the
program does next (it cannot catch it and carry on, and a patched in-process
classifier cannot hide it); the client reports the SIGSYS death as
``forbidden``. Standard library only; runs on the host, never imported inside.
"""

from __future__ import annotations

import platform
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
RET_ALLOW = 0x7FFF0000
ENOSYS = 38
SHM_PAGE = 4096  # the largest System V segment allowed: 4,096 segments (shmmni) of a page are the /tmp's 16 MiB
X32_SYSCALL_BIT = 0x40000000
# namespace flags of clone(2) and unshare(2); CLONE_NEWTIME (0x80) is a signal number's bits in clone's flags
CLONE_NAMESPACES = 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x00020000
UNSHARE_NAMESPACES = CLONE_NAMESPACES | 0x00000080

# seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6] (little-endian on both architectures)
_NR, _ARCH, _ARGS = 0, 4, 16
_LD_ABS, _RET, _JEQ, _JGT, _JGE, _JSET = 0x20, 0x06, 0x15, 0x25, 0x35, 0x45

KILLED = (
    "mount", "umount2", "pivot_root", "chroot", "setns", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount",
    "fspick", "mount_setattr", "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd", "ptrace",
    "process_vm_readv", "process_vm_writev", "pidfd_getfd", "process_madvise", "memfd_create", "memfd_secret",
    "msgget", "semget", "mq_open", "io_uring_setup", "io_uring_enter", "io_uring_register", "kexec_load",
    "kexec_file_load", "init_module", "finit_module", "delete_module", "swapon", "swapoff", "reboot", "syslog", "acct",
    "quotactl", "name_to_handle_at", "open_by_handle_at", "fanotify_init", "lookup_dcookie", "vhangup",
    "settimeofday", "iopl", "ioperm", "uselib",
)  # fmt: skip


@dataclass(frozen=True)
class Arch:
    """An architecture's audit number and its system call numbers (the ones the filter names)."""

    name: str
    audit_arch: int
    numbers: Mapping[str, int]
    x32: bool = False  # x86_64 also takes the x32 ABI's calls, marked by a high bit of the number


X86_64 = Arch(
    "x86_64",
    0xC000003E,
    {
        "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "unshare": 272, "setns": 308, "clone": 56,
        "clone3": 435, "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
        "fspick": 433, "mount_setattr": 442, "keyctl": 250, "add_key": 248, "request_key": 249, "bpf": 321,
        "perf_event_open": 298, "userfaultfd": 323, "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311,
        "pidfd_getfd": 438, "process_madvise": 440, "memfd_create": 319, "memfd_secret": 447, "shmget": 29,
        "msgget": 68, "semget": 64, "mq_open": 240, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427, "kexec_load": 246, "kexec_file_load": 320, "init_module": 175, "finit_module": 313,
        "delete_module": 176, "swapon": 167, "swapoff": 168, "reboot": 169, "syslog": 103, "acct": 163,
        "quotactl": 179, "name_to_handle_at": 303, "open_by_handle_at": 304, "fanotify_init": 300,
        "lookup_dcookie": 212, "vhangup": 153, "settimeofday": 164, "iopl": 172, "ioperm": 173, "uselib": 134,
    },
    x32=True,
)  # fmt: skip
AARCH64 = Arch(
    "aarch64",
    0xC00000B7,
    {
        "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51, "unshare": 97, "setns": 268, "clone": 220,
        "clone3": 435, "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
        "fspick": 433, "mount_setattr": 442, "keyctl": 219, "add_key": 217, "request_key": 218, "bpf": 280,
        "perf_event_open": 241, "userfaultfd": 282, "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271,
        "pidfd_getfd": 438, "process_madvise": 440, "memfd_create": 279, "memfd_secret": 447, "shmget": 194,
        "msgget": 186, "semget": 190, "mq_open": 180, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427, "kexec_load": 104, "kexec_file_load": 294, "init_module": 105, "finit_module": 273,
        "delete_module": 106, "swapon": 224, "swapoff": 225, "reboot": 142, "syslog": 116, "acct": 89,
        "quotactl": 60, "name_to_handle_at": 264, "open_by_handle_at": 265, "fanotify_init": 262,
        "lookup_dcookie": 18, "vhangup": 58, "settimeofday": 170,
    },
)  # fmt: skip
ARCHES = {"x86_64": X86_64, "amd64": X86_64, "aarch64": AARCH64, "arm64": AARCH64}


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k)


def _load(offset: int) -> bytes:
    return _op(_LD_ABS, offset)


def _killed(number: int) -> bytes:
    """If the call is ``number``: kill."""
    return _op(_JEQ, number, 0, 1) + _op(_RET, RET_KILL_PROCESS)


def _flags_checked(number: int, mask: int) -> bytes:
    """If the call is ``number``: kill when its first argument has a bit of ``mask`` (a namespace flag), else allow."""
    return _op(_JEQ, number, 0, 4) + _load(_ARGS) + _op(_JSET, mask, 0, 1) + _op(_RET, RET_KILL_PROCESS) + _op(_RET, RET_ALLOW)


def _size_checked(number: int, argument: int, largest: int) -> bytes:
    """If the call is ``number``: kill when its 64-bit argument ``argument`` is over ``largest``, else allow."""
    offset = _ARGS + 8 * argument
    return (
        _op(_JEQ, number, 0, 6)
        + _load(offset + 4)
        + _op(_JEQ, 0, 0, 2)
        + _load(offset)
        + _op(_JGT, largest, 0, 1)
        + _op(_RET, RET_KILL_PROCESS)
        + _op(_RET, RET_ALLOW)
    )


def filter_program(arch: Arch) -> bytes:
    """The filter for ``arch``: an array of ``struct sock_filter`` as bubblewrap's ``--seccomp`` reads it."""
    numbers = arch.numbers
    program = _load(_ARCH) + _op(_JEQ, arch.audit_arch, 1, 0) + _op(_RET, RET_KILL_PROCESS) + _load(_NR)
    if arch.x32:
        program += _op(_JGE, X32_SYSCALL_BIT, 0, 1) + _op(_RET, RET_KILL_PROCESS)
    program += _op(_JEQ, numbers["clone3"], 0, 1) + _op(_RET, RET_ERRNO | ENOSYS)
    program += _flags_checked(numbers["clone"], CLONE_NAMESPACES)
    program += _flags_checked(numbers["unshare"], UNSHARE_NAMESPACES)
    program += _size_checked(numbers["shmget"], 1, SHM_PAGE)
    program += b"".join(_killed(numbers[name]) for name in KILLED if name in numbers)
    return program + _op(_RET, RET_ALLOW)


def host_arch() -> Arch | None:
    """This machine's architecture, if the filter knows its system call numbers."""
    return ARCHES.get(platform.machine().lower())


@lru_cache(maxsize=1)
def host_filter() -> bytes | None:
    """The filter for this machine, or None on an architecture it does not know (the sandbox then runs without)."""
    arch = host_arch()
    return filter_program(arch) if arch is not None else None
