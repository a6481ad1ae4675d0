"""Host memory stays bounded by the limits: memory a program could hold outside its address space is refused.

RLIMIT_AS bounds what a worker maps, not what the kernel holds for it elsewhere:
System V shared memory kept after detaching, a tmpfs mounted inside a user
namespace the program makes, memfd files grown with ``write``. Each attack runs
with the audit hook off (the kernel's walls are what holds) while a sampler reads
the host's ``/proc/meminfo``: Shmem may not rise, nor MemAvailable fall, by more
than the worker's address-space limit plus its /tmp, during the call and while
the worker sits idle afterwards. The seccomp filter (``harness/sandbox/seccomp.py``)
kills the program with SIGSYS; the cgroup, where the machine has one, is a second
wall under the same limits.
"""

from __future__ import annotations

import ctypes
import dataclasses
import errno
import fcntl
import os
import subprocess
import threading
import time
import uuid

import pytest
from sandbox_limits import TEST_LIMITS

from harness.sandbox import cgroup, command, seccomp, uids
from harness.sandbox.failures import FailureKind
from harness.sandbox.limits import MIB, Limits

LIMITS = dataclasses.replace(TEST_LIMITS, memory_bytes=256 * MIB, call_s=60.0, open_files=64)
BOUND = LIMITS.memory_bytes + LIMITS.tmp_bytes  # what a worker may hold of the host's memory
ATTACK_BYTES = 1024 * MIB  # each attack tries to hold four times the bound
SAMPLER_LOCK = "/tmp/arena-sandbox-meminfo.lock"
HOST_NOISE_BYTES = 64 * MIB

_LIBC = "\nimport ctypes, os\nlibc = ctypes.CDLL('libc.so.6', use_errno=True)\n"
SHM_ATTACK = (
    _LIBC
    + f"""
libc.shmat.restype = ctypes.c_void_p
def initial_state(state):
    held = 0
    while held < {ATTACK_BYTES}:
        segment = libc.shmget(0, 64 << 20, 0o1600)  # IPC_PRIVATE, IPC_CREAT | 0600
        if segment < 0:
            raise OSError(ctypes.get_errno(), 'shmget')
        address = libc.shmat(segment, None, 0)
        ctypes.memset(address, 1, 64 << 20)
        libc.shmdt(ctypes.c_void_p(address))  # detached, the segment (and its memory) stays
        held += 64 << 20
    return held
"""
)
USERNS_TMPFS_ATTACK = (
    _LIBC
    + f"""
def initial_state(state):
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(0x10000000 | 0x00020000) != 0:  # CLONE_NEWUSER | CLONE_NEWNS
        raise OSError(ctypes.get_errno(), 'unshare')
    open('/proc/self/setgroups', 'w').write('deny')
    open('/proc/self/uid_map', 'w').write(f'0 {{uid}} 1')
    open('/proc/self/gid_map', 'w').write(f'0 {{gid}} 1')
    os.makedirs('/tmp/hoard', exist_ok=True)
    if libc.mount(b'none', b'/tmp/hoard', b'tmpfs', 0, b'size=4g') != 0:
        raise OSError(ctypes.get_errno(), 'mount')
    chunk, held = b'x' * (8 << 20), 0
    while held < {ATTACK_BYTES}:
        with open(f'/tmp/hoard/{{held}}', 'wb') as out:  # files under the file-size limit, many of them
            out.write(chunk)
        held += len(chunk)
    return held
"""
)
MEMFD_ATTACK = f"""
import os
kept = []
def initial_state(state):
    chunk, held = b'x' * (8 << 20), 0
    while held < {ATTACK_BYTES}:
        fd = os.memfd_create('hoard')
        os.write(fd, chunk)  # a write, not a mapping: nothing of it is in the address space
        kept.append(fd)
        held += len(chunk)
    return held
"""
# the attacks, and the syscalls (by name, for ctypes) that would take a program out of its walls
SYSCALLS = {
    "mount": "libc.mount(b'none', b'/tmp', b'tmpfs', 0, None)",
    "umount2": "libc.umount2(b'/tmp', 2)",
    "unshare-user": "libc.unshare(0x10000000)",
    "unshare-net": "libc.unshare(0x40000000)",
    "clone-newuser": "libc.syscall(56, 0x10000000 | 17, 0, 0, 0, 0)",
    "setns": "libc.setns(0, 0)",
    "pivot_root": "libc.syscall(155, b'/tmp', b'/tmp')",
    "chroot": "libc.chroot(b'/tmp')",
    "keyctl": "libc.syscall(250, 0, 0, 0, 0, 0)",
    "add_key": "libc.syscall(248, b'user', b'x', b'y', 1, -2)",
    "bpf": "libc.syscall(321, 0, 0, 0)",
    "perf_event_open": "libc.syscall(298, 0, 0, -1, -1, 0)",
    "userfaultfd": "libc.syscall(323, 0)",
    "ptrace": "libc.ptrace(16, 1, 0, 0)",
    "memfd_create": "libc.syscall(319, b'x', 0)",
    "io_uring_setup": "libc.syscall(425, 8, None)",
    "msgget": "libc.msgget(0, 0o1600)",
    "mq_open": "libc.syscall(240, b'q', 0o100 | 2, 0o600, None)",
    "process_vm_readv": "libc.syscall(310, 1, 0, 0, 0, 0, 0)",
    "large-shmget": "libc.shmget(0, 1 << 20, 0o1600)",
}


class MeminfoSampler:
    """Samples the host's /proc/meminfo in a thread: the largest rise of Shmem and fall of MemAvailable since start.

    The figures are host-wide: while it samples, it holds a lock that every sampler takes (across test processes,
    xdist workers included), so two of these tests never measure each other's memory."""

    def __init__(self, period_s: float = 0.02) -> None:
        self.period_s = period_s
        self.shmem_rise = self.available_fall = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._lock = -1

    def __enter__(self) -> MeminfoSampler:
        self._lock = os.open(SAMPLER_LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self._lock, fcntl.LOCK_EX)
        self.baseline = _meminfo()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        os.close(self._lock)  # releases the lock

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.period_s)

    def sample(self) -> None:
        now = _meminfo()
        self.shmem_rise = max(self.shmem_rise, now["Shmem"] - self.baseline["Shmem"])
        self.available_fall = max(self.available_fall, self.baseline["MemAvailable"] - now["MemAvailable"])


def _meminfo() -> dict[str, int]:
    with open("/proc/meminfo", encoding="ascii") as meminfo:
        fields = (line.split() for line in meminfo)
        return {parts[0].rstrip(":"): int(parts[1]) * 1024 for parts in fields if len(parts) >= 2}


def _held_while_idle(worker, sampler: MeminfoSampler, idle_s: float = 1.0) -> None:
    """Let the worker (or what is left of it) sit idle while the sampler watches."""
    deadline = time.monotonic() + idle_s
    while time.monotonic() < deadline:
        time.sleep(0.05)
    sampler.sample()


def _refused(result) -> bool:
    """The call failed because the kernel refused it: killed by the seccomp filter (SIGSYS) or a permission error."""
    failure = result.failure
    if failure is None:
        return False
    if failure.kind is FailureKind.FORBIDDEN:
        return True
    return failure.kind is FailureKind.WORKER_DIED and "SIGSYS" in failure.message


@pytest.mark.parametrize(
    "source", [SHM_ATTACK, USERNS_TMPFS_ATTACK, MEMFD_ATTACK], ids=["sysv-shm", "tmpfs-in-user-namespace", "memfd-write"]
)
def test_memory_outside_the_address_space_is_refused_and_host_memory_stays_bounded(make_worker, game_source, source):
    worker = make_worker(game_source + source, LIMITS, guard=False)
    with MeminfoSampler() as sampler:
        result = worker.call("initial_state", [{"n": 0}])
        _held_while_idle(worker, sampler)
    held = f"Shmem +{sampler.shmem_rise >> 20} MiB, MemAvailable -{sampler.available_fall >> 20} MiB"
    assert sampler.shmem_rise <= BOUND, f"{held}; the call gave {result}"
    # MemAvailable moves with whatever else the machine runs (a parallel suite): half the attack's size tells an
    # attack that held its memory from that noise; Shmem, above, is the precise figure
    assert sampler.available_fall < ATTACK_BYTES // 2, f"{held}; the call gave {result}"
    assert _refused(result), result
    assert worker.call("is_terminal", [{"n": 3}]).value is False  # a fresh worker serves the next call


@pytest.mark.long
@pytest.mark.parametrize("name", sorted(SYSCALLS))
def test_syscalls_that_leave_the_walls_are_refused_by_the_kernel(make_worker, game_source, name):
    body = _LIBC + f"def initial_state(state):\n    return [{SYSCALLS[name]}, ctypes.get_errno()]\n"
    worker = make_worker(game_source + body, LIMITS, guard=False)
    result = worker.call("initial_state", [{"n": 0}])
    assert _refused(result), f"{name}: {result}"


def test_a_page_of_shared_memory_is_still_allowed_and_the_ipc_namespace_is_private(make_worker, game_source):
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    key = 0x5A000000 | (os.getpid() & 0xFFFFF)
    host_segment = libc.shmget(key, 4096, 0o1666)  # a segment of the host's IPC namespace, by key
    assert host_segment >= 0, os.strerror(ctypes.get_errno())
    try:
        body = (
            _LIBC + "def initial_state(state):\n"
            f"    found = libc.shmget({key}, 0, 0)\n"
            "    errno_found = ctypes.get_errno()\n"
            "    own = libc.shmget(0, 4096, 0o1600)\n"
            "    return [found, errno_found, own >= 0, open('/proc/sysvipc/shm').read().count(chr(10))]\n"
        )
        worker = make_worker(game_source + body, LIMITS, guard=False)
        found, errno_found, own_made, lines = worker.call("initial_state", [{"n": 0}]).unwrap()
    finally:
        libc.shmctl(host_segment, 0, None)  # IPC_RMID
    assert (found, errno_found) == (-1, errno.ENOENT)  # the host's segment does not exist in its namespace
    assert own_made and lines == 2  # the header and its own one-page segment: nothing of the host's


def test_the_filter_checks_the_architecture_and_the_namespace_flags():
    """The BPF program, run by a small interpreter here: other architectures and x32 are killed, plain threads pass."""
    program = seccomp.filter_program(seccomp.X86_64)
    kill, allow = seccomp.RET_KILL_PROCESS, seccomp.RET_ALLOW
    clone = seccomp.X86_64.numbers["clone"]
    thread_flags = 0x3D0F00  # CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | ...
    assert _run_bpf(program, clone, seccomp.X86_64.audit_arch, [thread_flags]) == allow
    assert _run_bpf(program, clone, seccomp.X86_64.audit_arch, [thread_flags | 0x10000000]) == kill
    assert _run_bpf(program, clone, 0x40000003, [thread_flags]) == kill  # i386 through int 0x80
    assert _run_bpf(program, 0x40000000 | 0, seccomp.X86_64.audit_arch, []) == kill  # the x32 ABI
    assert _run_bpf(program, seccomp.X86_64.numbers["clone3"], seccomp.X86_64.audit_arch, []) == seccomp.RET_ERRNO | errno.ENOSYS
    shmget = seccomp.X86_64.numbers["shmget"]
    assert _run_bpf(program, shmget, seccomp.X86_64.audit_arch, [0, 4096]) == allow
    assert _run_bpf(program, shmget, seccomp.X86_64.audit_arch, [0, 4097]) == kill
    assert _run_bpf(program, shmget, seccomp.X86_64.audit_arch, [0, 1 << 32]) == kill  # the high word counts
    assert _run_bpf(program, 0, seccomp.X86_64.audit_arch, []) == allow  # read
    arm = seccomp.filter_program(seccomp.AARCH64)
    assert _run_bpf(arm, seccomp.AARCH64.numbers["unshare"], seccomp.AARCH64.audit_arch, [0x20000]) == kill
    assert _run_bpf(arm, seccomp.AARCH64.numbers["unshare"], seccomp.X86_64.audit_arch, [0x20000]) == kill


def _run_bpf(program: bytes, nr: int, arch: int, args: list[int]) -> int:
    """A classic-BPF interpreter for the instructions a seccomp filter uses: what it returns for one syscall."""
    words = args + [0] * (6 - len(args))
    data = nr.to_bytes(4, "little") + arch.to_bytes(4, "little") + bytes(8)
    data += b"".join(arg.to_bytes(8, "little") for arg in words)
    instructions = [program[i : i + 8] for i in range(0, len(program), 8)]
    accumulator, pc = 0, 0
    while True:
        code, jt, jf, k = (
            int.from_bytes(instructions[pc][:2], "little"),
            instructions[pc][2],
            instructions[pc][3],
            int.from_bytes(instructions[pc][4:], "little"),
        )
        pc += 1
        if code == 0x20:  # BPF_LD | BPF_W | BPF_ABS
            accumulator = int.from_bytes(data[k : k + 4], "little")
        elif code == 0x06:  # BPF_RET | BPF_K
            return k
        elif code == 0x15:  # BPF_JMP | BPF_JEQ | BPF_K
            pc += jt if accumulator == k else jf
        elif code == 0x25:  # BPF_JMP | BPF_JGT | BPF_K
            pc += jt if accumulator > k else jf
        elif code == 0x35:  # BPF_JMP | BPF_JGE | BPF_K
            pc += jt if accumulator >= k else jf
        elif code == 0x45:  # BPF_JMP | BPF_JSET | BPF_K
            pc += jt if accumulator & k else jf
        elif code == 0x05:  # BPF_JMP | BPF_JA
            pc += k
        else:
            raise AssertionError(f"an instruction the interpreter does not know: {code:#x}")


def test_the_cgroup_bounds_memory_and_processes_where_the_machine_has_one(sandbox_ready):
    problem = cgroup.problem()
    if problem is not None:
        pytest.skip(f"no cgroup for workers here: {problem}")
    group = cgroup.create(f"test-{uuid.uuid4().hex[:8]}", memory_bytes=64 * MIB, processes=6)
    assert group is not None
    try:
        hoard = "h = []\nwhile True:\n    h.append(bytearray(8 << 20))\n"  # no rlimits here: only the cgroup holds it
        argv = command.launch_argv(command.sandbox_argv(uids.acquire().uid, LIMITS.tmp_bytes) + ["-c", hoard], group)
        ended = subprocess.run(argv, capture_output=True, timeout=60, env={}, check=False)
        assert ended.returncode in (-9, 128 + 9), ended  # the cgroup's OOM killer, not a MemoryError
        forks = (
            "import os, errno\nmade = 0\nfor _ in range(20):\n    try:\n        pid = os.fork()\n"
            "    except OSError as e:\n        print('EAGAIN' if e.errno == errno.EAGAIN else e)\n        break\n"
            "    if pid == 0:\n        import time; time.sleep(5); os._exit(0)\n    made += 1\nprint(made)\n"
        )
        argv = command.launch_argv(command.sandbox_argv(uids.acquire().uid, LIMITS.tmp_bytes) + ["-c", forks], group)
        ended = subprocess.run(argv, capture_output=True, timeout=60, env={}, check=False)
        lines = ended.stdout.decode().split()
        assert lines[0] == "EAGAIN" and int(lines[1]) < 6, ended
    finally:
        group.remove()


def _run_in_sandbox(code: str, group: cgroup.WorkerCgroup) -> subprocess.CompletedProcess[bytes]:
    """``code`` in the sandbox (bubblewrap, the filter, the view; no worker, no rlimits) inside ``group``."""
    with uids.acquire() as lease:
        argv = command.launch_argv(command.sandbox_argv(lease.uid, LIMITS.tmp_bytes) + ["-c", code], group)
        return subprocess.run(argv, capture_output=True, timeout=60, env={}, check=False)


FORK_HOARD = """
import os, time
def initial_state(state):
    for _ in range(6):
        if os.fork() == 0:
            hoard = bytearray(200 << 20)  # under the address-space limit of each process
            for i in range(0, len(hoard), 4096):
                hoard[i] = 1
            time.sleep(3)
            os._exit(0)
    time.sleep(3)
    return 'held'
"""


def test_forked_processes_hold_one_limit_in_the_cgroup_not_one_each(make_worker, game_source, monkeypatch):
    """RLIMIT_AS is per process: six children could hold six limits. The worker's cgroup holds them all to one."""
    if cgroup.problem() is not None:
        pytest.skip(f"no cgroup for workers here: {cgroup.problem()}")
    limits = dataclasses.replace(LIMITS, processes=8)
    groups: list[cgroup.WorkerCgroup] = []

    def in_a_group(uid: int, tmp_bytes: int, group: cgroup.WorkerCgroup | None = None) -> list[str]:
        group = group or cgroup.for_worker(uid, limits)
        groups.append(group)
        return worker_argv(uid, tmp_bytes, group)

    worker_argv = command.worker_argv
    monkeypatch.setattr(command, "worker_argv", in_a_group)  # the client's launch, in a group whatever it passes
    worker = make_worker(game_source + FORK_HOARD, limits, guard=False)
    with MeminfoSampler() as sampler:
        result = worker.call("initial_state", [None])
        _held_while_idle(worker, sampler)
    memory, _ = cgroup.worker_limits(limits)
    assert all(group is not None for group in groups)
    # the group's limit, and what the kernel holds outside any group (seven processes' page tables, the rest of the
    # host meanwhile): without the group the six children held 1,197 MiB here
    peaks = [group.peak_bytes() for group in groups]
    held = f"MemAvailable -{sampler.available_fall >> 20} MiB, group peaks {peaks}; the call gave {result}"
    assert all(peak is None or peak <= memory for peak in peaks), held  # what the kernel charged the group: its limit
    # the host-wide figure moves with everything else the machine runs (a parallel test suite): checked against what the
    # six children held without the group, not against the group's limit
    assert sampler.available_fall < 6 * (200 << 20), held
    assert sum(group.oom_kills() for group in groups) > 0  # the kernel killed in the group, past its limit


def test_limits_for_the_cgroup_cover_the_address_space_and_tmp():
    memory, processes = cgroup.worker_limits(Limits())
    assert memory >= Limits().memory_bytes + Limits().tmp_bytes and processes > Limits().processes
