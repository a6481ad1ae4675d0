"""Attack class 4, switching the classifier off from plain Python, and programs that fail at load.

The audit hook is advice, not the wall: it is bound when installed, so replacing the ``Guard`` class's methods,
its ``active`` switch or its ``events`` list changes nothing in the report; it checks real paths, so a symlink in
/tmp does not get a read of /proc/1 past it; and what the kernel refused (an errno the program saw, even
re-raised as another error; a worker killed by SIGSYS, as a seccomp filter does) is classified as well.

A program that fails at load (an exception, a segfault, ``os._exit``, SIGKILL) is remembered as failed: every
later call answers with that failure and the worker is not started again.
"""

from __future__ import annotations

import pytest

from harness.sandbox.client import SandboxWorker
from harness.sandbox.failures import FailureKind

GUARD = "import sys\n_guard = sys.modules['harness.sandbox.guard'].Guard\n"
# Each is run at load, before the attempt: plain-Python ways to switch the classifier off.
PATCHES = {
    "methods": "_guard._hook = _guard._check_open = _guard._refuse = lambda *args: None\n",
    "active": "_guard.active = property(lambda self: False, lambda self, value: None)\n",
    "events": "_guard.events = property(lambda self: [], lambda self, value: None)\n",
}
# Each is forbidden: refused and named by the hook, whatever the program did to it.
ATTEMPTS = {
    "proc-1": "    return open('/proc/1/cmdline', 'rb').read().decode(errors='replace')\n",
    "socket": "    import socket\n    return str(socket.socket(socket.AF_INET, socket.SOCK_STREAM))\n",
    "caught": (
        "    try:\n        open('/proc/1/cmdline', 'rb').read()\n    except OSError:\n        pass\n"
        "    try:\n        import gc\n        [g.events.clear() for g in gc.get_objects() if isinstance(g, _guard)]\n"
        "    except Exception:\n        pass\n    return [1]\n"
    ),
}


def _program(game_source: str, patch: str, attempt: str) -> str:
    return game_source + "\n" + GUARD + patch + "\ndef legal_actions(*args):\n" + attempt


@pytest.mark.parametrize("attempt", list(ATTEMPTS))
@pytest.mark.parametrize("patch", list(PATCHES))
def test_a_patched_classifier_changes_nothing_in_the_report(make_worker, game_source, patch, attempt):
    worker = make_worker(_program(game_source, PATCHES[patch], ATTEMPTS[attempt]))
    result = worker.call("legal_actions", [{"n": 0}])
    assert result.failure is not None and result.failure.kind is FailureKind.FORBIDDEN, result
    assert worker.failures == {"forbidden": 1}


def test_a_symlink_in_tmp_does_not_get_past_the_path_check(make_worker, game_source):
    body = "    os.symlink('/proc/1/cmdline', '/tmp/innocent')\n    return open('/tmp/innocent', 'rb').read().decode(errors='replace')\n"
    worker = make_worker(game_source + "\nimport os\ndef legal_actions(*args):\n" + body)
    result = worker.call("legal_actions", [{"n": 0}])
    assert result.failure is not None and result.failure.kind is FailureKind.FORBIDDEN, result
    assert "/proc/1/cmdline" in result.failure.message


def test_a_refusal_of_the_kernel_re_raised_as_another_error_is_forbidden(make_worker, game_source):
    body = "    try:\n        open('/opt/arena/planted.py', 'w')\n    except OSError:\n        raise ValueError('no luck')\n"
    worker = make_worker(game_source + "\ndef legal_actions(*args):\n" + body, guard=False)
    result = worker.call("legal_actions", [{"n": 0}])
    assert result.failure is not None and result.failure.kind is FailureKind.FORBIDDEN, result


def test_a_worker_killed_by_sigsys_is_forbidden(make_worker, game_source):
    """What a seccomp filter does to a forbidden system call (the kill itself simulated with raise_signal)."""
    body = "    import signal\n    signal.raise_signal(signal.SIGSYS)\n"
    worker = make_worker(game_source + "\ndef legal_actions(*args):\n" + body, guard=False)
    result = worker.call("legal_actions", [{"n": 0}])
    assert result.failure is not None and result.failure.kind is FailureKind.FORBIDDEN, result
    assert "SIGSYS" in result.failure.message
    assert worker.call("initial_state", [None]).value == {"n": 0}  # a fresh worker


LOAD_FAILURES = {
    "exception": "raise RuntimeError('broken at import')\n",
    "segfault": "import ctypes\nctypes.string_at(0)\n",
    "exit": "import os\nos._exit(3)\n",
    "sigkill": "import os, signal\nsignal.raise_signal(signal.SIGKILL)\n",
}


@pytest.mark.parametrize("how", list(LOAD_FAILURES))
def test_a_program_that_fails_at_load_is_remembered_and_never_restarted(sandbox_ready, game_source, how):
    with SandboxWorker(game_source + LOAD_FAILURES[how]) as worker:
        first = worker.start()
        assert first.failure is not None
        later = [worker.call("legal_actions", [{"n": 0}]) for _ in range(3)] + [worker.start()]
        assert all(result.failure == first.failure for result in later), later
        assert worker.restarts == 0 and worker.pid is None
        assert sum(worker.failures.values()) == 1  # counted once, at load
