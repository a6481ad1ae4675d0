"""Attack class 5, closing one worker kills another: one uid per live worker, never shared while it lives.

Several hundred workers are started in one process (in batches) and closed in random order while others
answer: every answer stays right and no worker is restarted. Leases are exclusive across processes (a lock
file per uid, held while the worker lives), a uid with live processes of someone else is never handed out,
and closing a worker leaves every process but its own alone.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
import textwrap
import time

import pytest
from sandbox_limits import TEST_LIMITS

from harness.sandbox import uids
from harness.sandbox.client import SandboxWorker

TAGGED = "TAG = {tag}\ndef initial_state(layout):\n    return {{'tag': TAG, 'layout': layout}}\n"


def _answers_right(worker: SandboxWorker, tag: int, layout: int) -> bool:
    return worker.call("initial_state", [layout]).value == {"tag": tag, "layout": layout}


@pytest.mark.long
def test_hundreds_of_workers_closed_in_random_order_while_others_answer(sandbox_ready):
    rng = random.Random(7)
    keep = [SandboxWorker(TAGGED.format(tag=-tag), TEST_LIMITS) for tag in range(1, 9)]  # alive the whole test
    tag = 0
    try:
        assert all(_answers_right(worker, -n, 0) for n, worker in enumerate(keep, 1))
        for batch in range(6):  # 6 x 50 workers, more than the 256 after which uids used to come round again
            workers = {}
            for _ in range(50):
                tag += 1
                workers[tag] = SandboxWorker(TAGGED.format(tag=tag), TEST_LIMITS)
                assert _answers_right(workers[tag], tag, batch)
            live = {worker.uid for worker in workers.values()} | {worker.uid for worker in keep}
            assert len(live) == len(workers) + len(keep)  # one uid each
            for closing in rng.sample(sorted(workers), len(workers)):
                workers.pop(closing).close()
                others = [(n, w) for n, w in workers.items()] + [(-n, w) for n, w in enumerate(keep, 1)]
                for other_tag, other in rng.sample(others, min(3, len(others))):
                    assert _answers_right(other, other_tag, batch), (other_tag, other.failures)
        for n, worker in enumerate(keep, 1):
            assert _answers_right(worker, -n, 99)
            assert worker.restarts == 0 and worker.failures == {}
    finally:
        for worker in keep:
            worker.close()


HOLDER = textwrap.dedent(
    """
    import sys
    from harness.sandbox import uids
    leases = [uids.acquire() for _ in range(200)]
    print(" ".join(str(lease.uid) for lease in leases), flush=True)
    sys.stdin.readline()
    for lease in leases:
        lease.release()
    """
)


def test_leases_are_exclusive_across_processes():
    holders = [subprocess.Popen([sys.executable, "-c", HOLDER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for _ in range(3)]
    try:
        held = [set(map(int, holder.stdout.readline().split())) for holder in holders]  # type: ignore[union-attr]
    finally:
        for holder in holders:
            holder.communicate("\n", timeout=60)
    assert [len(uids_held) for uids_held in held] == [200] * 3
    assert len(held[0] | held[1] | held[2]) == 600


def test_a_lease_is_held_until_released_and_then_free_again():
    lease = uids.acquire()
    other = uids.acquire(start=lease.uid)
    assert other.uid != lease.uid
    other.release()
    lease.release()
    again = uids.acquire(start=lease.uid)
    assert again.uid == lease.uid
    again.release()
    again.release()  # twice is harmless


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="setpriv starts the stranger process")
def test_a_uid_in_use_by_others_is_skipped_and_their_processes_left_alone(sandbox_ready):
    with uids.acquire() as probe:
        stranger_uid = probe.uid
    stranger = subprocess.Popen(["setpriv", f"--reuid={stranger_uid}", f"--regid={stranger_uid}", "--clear-groups", "sleep", "60"])
    try:
        while stranger.pid not in uids.processes_of(stranger_uid):
            time.sleep(0.01)
        lease = uids.acquire(start=stranger_uid)
        assert lease.uid != stranger_uid  # never shared with a process that is not this worker's
        lease.release()
        worker = SandboxWorker(TAGGED.format(tag=1), TEST_LIMITS)
        assert _answers_right(worker, 1, 0)
        worker.close()
        assert stranger.poll() is None and uids.processes_of(stranger_uid) == [stranger.pid]
    finally:
        stranger.kill()
        stranger.wait()
