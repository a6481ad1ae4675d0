"""Attack class 3, code that runs between calls: nothing of the program may run while no call is in flight.

A program starts work during one call that would go on after its answer: a thread (``threading``, ``_thread``,
``pthread_create`` through ctypes), a process (``os.fork``, ``fork`` through ctypes), a timer signal whose handler
runs in the main thread, or a patched ``os.write`` that keeps the main thread busy once the answer is written. While
no call is in flight, the CPU time of every process of the worker's uid must not grow (read from the host's
``/proc``), and the next call still gets a right answer. With one process allowed (the default) the kernel refuses
every new thread and process; with more allowed, a call that leaves one alive is ``forbidden`` and the worker is
killed. The CPU allowance is per call (``cpu_s``), with a lifetime cap (``lifetime_cpu_s``) as a backstop.
"""

from __future__ import annotations

import dataclasses
import os
import time

import pytest
from sandbox_limits import TEST_LIMITS

from harness.sandbox.failures import FailureKind
from harness.sandbox.limits import Limits

SPIN = "def _spin(*args):\n    while True:\n        _count[0] += 1\n\n_count = [0]\n"

# Each starts work that would outlive the call, then answers at once.
STARTERS = {
    "threading": "import threading\n    threading.Thread(target=_spin, daemon=True).start()\n    return [1]\n",
    "_thread": "import _thread\n    _thread.start_new_thread(_spin, ())\n    return [1]\n",
    "ctypes-thread": (
        "import ctypes\n"
        "    callback = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)(_spin)\n"
        "    _count.append(callback)\n"
        "    tid = ctypes.c_ulong()\n"
        "    return [ctypes.CDLL(None).pthread_create(ctypes.byref(tid), None, callback, None)]\n"
    ),
    "os-fork": "if os.fork() == 0:\n        _spin()\n    return [1]\n",
    "ctypes-fork": "import ctypes\n    if ctypes.CDLL(None).fork() == 0:\n        _spin()\n    return [1]\n",
    "double-fork": (  # the grandchild is left to the sandbox's init, its parent reaped
        "import ctypes\n"
        "    libc = ctypes.CDLL(None)\n"
        "    child = libc.fork()\n"
        "    if child == 0:\n"
        "        if libc.fork() == 0:\n"
        "            _spin()\n"
        "        os._exit(0)\n"
        "    os.waitpid(child, 0)\n"
        "    return [1]\n"
    ),
}
# Work in the worker's own main thread once the answer is written: a timer's handler, a patched os.write.
MAIN_THREAD = {
    "timer-signal": (
        "import signal, time\n"
        "    def tick(signum, frame):\n"
        "        end = time.monotonic() + 0.005\n"
        "        while time.monotonic() < end:\n"
        "            pass\n"
        "    signal.signal(signal.SIGALRM, tick)\n"
        "    signal.setitimer(signal.ITIMER_REAL, 0.01, 0.01)\n"
        "    return [1]\n"
    ),
    "after-the-answer": (
        "import time\n"
        "    real_write = os.write\n"
        "    def write(fd, data):\n"
        "        written = real_write(fd, data)\n"
        "        if fd > 2 and bytes(data[-1:]) == b'\\n':\n"
        "            end = time.monotonic() + 3\n"
        "            while time.monotonic() < end:\n"
        "                pass\n"
        "        return written\n"
        "    os.write = write\n"
        "    return [1]\n"
    ),
}


def _program(game_source: str, body: str) -> str:
    return game_source + "\nimport os\n" + SPIN + "\ndef legal_actions(*args):\n    " + body


def _limits(**changes: object) -> Limits:
    return dataclasses.replace(TEST_LIMITS, **changes)  # type: ignore[arg-type]


def _cpu_ticks(uid: int) -> int:
    """User and system clock ticks of every live process of ``uid`` (all their threads), from the host's /proc."""
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/status", encoding="ascii", errors="replace") as status:
                uids = next(line for line in status if line.startswith("Uid:")).split()[1:3]
            with open(f"/proc/{entry.name}/stat", encoding="ascii", errors="replace") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except (OSError, StopIteration, IndexError):
            continue
        if str(uid) in uids:
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total


def _ran_between_calls(uid: int, seconds: float = 2.0) -> bool:
    """Whether the worker's processes used any CPU while no call was in flight (watched up to ``seconds``)."""
    before = _cpu_ticks(uid)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.1)
        if _cpu_ticks(uid) != before:
            return True
    return False


@pytest.mark.long
@pytest.mark.parametrize("processes", [Limits().processes, 8], ids=["default-processes", "eight-processes"])
@pytest.mark.parametrize("starter", list(STARTERS))
def test_a_thread_or_process_started_in_a_call_does_not_run_after_it(make_worker, game_source, processes, starter):
    guard = starter != "os-fork"  # the audit hook would refuse os.fork itself: this one tests the walls alone
    worker = make_worker(_program(game_source, STARTERS[starter]), _limits(processes=processes), guard=guard)
    uid = worker.uid
    first = worker.call("legal_actions", [{"n": 0}])
    assert not _ran_between_calls(uid)
    if processes > 1:  # it did start: the call is refused and the worker killed
        assert first.failure is not None and first.failure.kind is FailureKind.FORBIDDEN, first
        assert "outlived the call" in first.failure.message
    assert worker.call("initial_state", [None]).value == {"n": 0}


@pytest.mark.long
@pytest.mark.parametrize("attack", list(MAIN_THREAD))
def test_the_main_thread_does_not_run_after_the_answer(make_worker, game_source, attack):
    worker = make_worker(_program(game_source, MAIN_THREAD[attack]), _limits(processes=1))
    first = worker.call("legal_actions", [{"n": 0}])
    assert first.value == [1]
    assert not _ran_between_calls(worker.uid)
    assert worker.call("initial_state", [None]).value == {"n": 0}


BURN = (
    "import time\n"
    "def legal_actions(seconds):\n"
    "    start = time.process_time()\n"
    "    while time.process_time() - start < seconds:\n"
    "        pass\n"
    "    return [1]\n"
)


def test_the_cpu_allowance_is_per_call(make_worker):
    """Three calls of 0.7 s of CPU each, one second allowed per call: all answer (2.1 s in all)."""
    worker = make_worker(BURN, _limits(cpu_s=1, call_s=60.0, processes=1))
    assert [worker.call("legal_actions", [0.7]).value for _ in range(3)] == [[1]] * 3
    assert worker.failures == {} and worker.restarts == 0


def test_the_lifetime_cpu_cap_is_a_backstop(make_worker):
    worker = make_worker(BURN, _limits(cpu_s=1, lifetime_cpu_s=2, call_s=60.0, processes=1))
    results = [worker.call("legal_actions", [0.7]) for _ in range(4)]
    failed = [r.failure for r in results if r.failure is not None]
    assert failed and failed[0].kind is FailureKind.TIMEOUT and "CPU" in failed[0].message
