"""Imported once in the agent processes' forkserver (:mod:`harness.referee.launch`): what every agent process needs.

The agent process's modules and the built-in agents' registry; torch and
sb3-contrib where installed (PPO agents: 1.5-2 s of imports otherwise); and one
move of each built-in searching agent on the standard board, which loads the
numba kernels' compiled code from the on-disk cache (about 0.4 s a process
otherwise). Nothing here reads a condition: the moves are played on public
rules, with generators of their own, and no global random state is drawn from.
A failure only costs the speed-up: it is reported on stderr, never raised (an
exception here would end the server, and every agent process with it).
"""

from __future__ import annotations

import gc
import sys

import numpy as np

from agents.base import AgentContext
from engine.layout import standard_layout
from engine.protocol.observation import observe
from engine.rules import Rules
from harness.referee import agent_process  # noqa: F401 - the child's entry point, imported here once
from harness.registry.specs import make_agent

WARM_AGENTS = ("adaptive-minimax", "interval")


def _import_torch() -> None:
    try:
        import torch  # noqa: F401

        import harness.envs.ppo_agent  # noqa: F401
    except ImportError:
        pass


def _first_moves() -> None:
    rules = Rules(standard_layout(8, 8))  # public rules only: no environment, no condition is built here
    observation = observe(rules, rules.initial_state())
    for spec in WARM_AGENTS:
        make_agent(spec, AgentContext(rules), np.random.default_rng(0)).act(observation)


def warm() -> None:
    """Import torch (where installed) and play the first moves; a failure is reported on stderr, not raised."""
    try:
        _import_torch()
        _first_moves()
    except Exception as failure:  # noqa: BLE001 - warming is an optimisation; agent processes start without it
        print(
            f"note: the agent processes' server could not warm up ({type(failure).__name__}: {failure}); agent processes start slower",
            file=sys.stderr,
        )


warm()
gc.freeze()  # what is loaded so far stays: no collection in an agent process walks the preloaded modules' objects
