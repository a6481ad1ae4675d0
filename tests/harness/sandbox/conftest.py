"""Sandbox fixtures: a worker factory that always kills its workers, skipped only where bubblewrap cannot run."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from sandbox_limits import TEST_LIMITS

from harness.sandbox import uids
from harness.sandbox.client import SandboxWorker
from harness.sandbox.command import bubblewrap_problem
from harness.sandbox.limits import Limits

# The CWM functions of a trivial game, for programs that only need to load and answer.
GAME = """
def initial_state(layout):
    return {"n": 0}
def current_player(state):
    return state["n"] % 2
def legal_actions(state):
    return [1, 2]
def apply_action(state, action):
    return {"n": state["n"] + action}
def is_terminal(state):
    return state["n"] >= 10
def returns(state):
    return [1, -1] if state["n"] % 2 else [-1, 1]
"""


@pytest.fixture
def sandbox_ready() -> None:
    problem = bubblewrap_problem()
    if problem is not None:
        pytest.skip(f"bubblewrap cannot run here ({problem}): install the Debian package bubblewrap, as root")


@pytest.fixture
def make_worker(sandbox_ready: None) -> Iterator[Callable[..., SandboxWorker]]:
    """``make_worker(source, limits=..., **options)``: a started worker, killed at the end of the test."""
    workers: list[SandboxWorker] = []

    def make(source: str, limits: Limits = TEST_LIMITS, **options: object) -> SandboxWorker:
        worker = SandboxWorker(source, limits, **options)  # type: ignore[arg-type]
        workers.append(worker)
        started = worker.start()
        assert started.ok, started.failure
        return worker

    yield make
    for worker in workers:
        worker.close()


@pytest.fixture
def game_source() -> str:
    return GAME


@pytest.fixture
def processes_of() -> Callable[[int], list[int]]:
    """Live processes running as a uid (a sandboxed worker has a uid of its own)."""
    return uids.processes_of
