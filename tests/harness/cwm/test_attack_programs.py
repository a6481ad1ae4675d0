"""A cwm run whose model writes programs that attack the sandbox, one per reply: the run completes, and the agent's
counts (what the report prints) hold every failure by kind. The walls themselves are tested in tests/harness/sandbox/."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from agents.base import AgentContext
from engine import make_env
from harness.cwm.agent import CwmAgent
from harness.cwm.config import CwmConfig
from harness.cwm.refine import RefineConfig
from harness.models.client import ModelClient
from harness.models.mock import MockModel
from harness.play.arena import Arena
from harness.sandbox.limits import Limits
from harness.sandbox.reference_program import reference_source

ENV = 19  # K = 4/5 on the 6x8 board
GOOD = reference_source(0.8)


def _override(function: str, body: str) -> str:
    """The reference program with ``function`` replaced by one whose body is ``body`` (indented 4)."""
    lines = "\n".join("    " + line for line in body.strip().splitlines())
    return GOOD + f"\n\ndef {function}(state, *args):\n{lines}\n"


CTYPES = "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
ATTACKS = {  # name -> (program, the failure kinds it may be counted as)
    "an integer past the digit limit": (_override("legal_actions", "return [10 ** 5000]"), {"bad_output"}),
    "nesting past the recursion limit": (
        _override("apply_action", "value = []\nfor _ in range(200_000):\n    value = [value]\nreturn value"),
        {"bad_output", "memory"},
    ),
    "NaN in returns": (_override("legal_actions", "return [float('nan')]"), {"bad_output"}),
    "a number where a list is due": (_override("legal_actions", "return 5"), {"bad_output"}),
    "System V shared memory": (
        _override("legal_actions", CTYPES + "libc.shmget(0, 1 << 30, 0o1000 | 0o600)\nreturn []"),
        {"forbidden", "worker_died"},
    ),
    "a user namespace": (_override("legal_actions", CTYPES + "libc.unshare(0x10000000)\nreturn []"), {"forbidden", "worker_died"}),
    "a thread left running": (
        _override(
            "legal_actions", "import threading\nthreading.Thread(target=lambda: [0 for _ in iter(int, 1)], daemon=True).start()\nreturn []"
        ),
        {"forbidden", "worker_died", "crash"},
    ),
    "a segfault": (_override("legal_actions", CTYPES + "ctypes.string_at(0)\nreturn []"), {"worker_died", "forbidden"}),
}


def _reply(program: str) -> str:
    return f"Here is the program.\n\n```python\n{program}```\n"


@pytest.mark.long
def test_a_run_of_attacking_programs_completes_and_counts_every_failure_by_kind(sandbox_ready):
    env = make_env(ENV)
    replies = [_reply(program) for program, _ in ATTACKS.values()] + [_reply(GOOD)]
    client = ModelClient("mock/scripted", mock=MockModel(replies=replies))
    config = CwmConfig(
        explore_games=3,
        explore_random=3,
        heldout_transitions=20,
        max_calls=len(replies),
        simulations=8,
        adapt_simulations=8,
        refine=RefineConfig(
            mode="conversation", calls_per_episode=len(replies), limits=Limits(call_s=10.0, start_s=20.0, memory_bytes=512 << 20)
        ),
    )
    calls: list[dict] = []
    agent = CwmAgent(AgentContext(env.rules), np.random.default_rng(0), client, budget=5, seed=1, config=config, on_call=calls.append)
    arena = Arena(env, budget=5)
    try:
        asyncio.run(agent.adapt_async(arena))
        counts = agent.counts()
    finally:
        agent.close()
    assert arena.remaining == 0
    assert len(calls) == len(replies) == counts["model_calls"]
    assert agent.best is not None and agent.best.source is not None and agent.best.source.strip() == GOOD.strip()
    failures = counts["sandbox_failures"]
    allowed = set().union(*(kinds for _, kinds in ATTACKS.values()))
    assert set(failures) <= allowed, failures
    assert {"bad_output", "forbidden"} <= set(failures), failures
    assert sum(failures.values()) + counts["code_errors"] >= len(ATTACKS), (failures, counts["code_errors"])
