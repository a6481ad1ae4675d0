"""Every registered agent plays only legal moves on all 56 environments (a full game against random).

The agents come from :func:`harness.registry.specs.registry`, so new families are
covered as they register. Expensive agents get cheap parameters (the ones
named in ``CHEAP_PARAMS`` that they actually declare). Privileged agents get a
simulator from :class:`~harness.play.grants.EvaluationGrants` on the environment
(what evaluation matches hand them); every agent is offered one, and only the
privileged ones may take it.
"""

from __future__ import annotations

import numpy as np
import pytest
import reference_othello as ref

from agents.base import AgentContext
from agents.spec import AgentEntry
from engine.environments import N_CONDITIONS, N_LAYOUTS, make_env
from engine.state import BLACK, WHITE
from harness.play.game import play_game
from harness.play.grants import EvaluationGrants
from harness.registry.specs import canonical_spec, make_agent, registry

CHEAP_PARAMS: dict[str, dict[str, object]] = {
    "minimax": {"depth": 1},
    "mcts": {"n": 8},
    "ppo-2k": {"games": 2},  # trains before it plays: two games are enough to check it
    "az": {"simulations": 2},
}
ENV_IDS = range(N_LAYOUTS * N_CONDITIONS)


def cheap_spec(entry: AgentEntry) -> str:
    """The agent's spec with the cheap settings it declares."""
    params = {key: value for key, value in CHEAP_PARAMS.get(entry.name, {}).items() if key in entry.params}
    return entry.name + (":" + ",".join(f"{key}={value}" for key, value in params.items()) if params else "")


SPECS = [cheap_spec(entry) for entry in registry().values() if not entry.model_driven]  # model agents: tests/harness


def test_the_simple_families_are_registered():
    assert {"random", "greedy", "corner", "positional"} <= set(registry())


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize("spec", SPECS)
def test_agent_plays_a_legal_game_against_random(spec: str, env_id: int):
    env = make_env(env_id)
    entries = registry()
    entry = entries[spec.partition(":")[0]]
    grants = EvaluationGrants(env)
    agent = make_agent(spec, AgentContext(env.rules, grants.grant_simulator), np.random.default_rng([env_id, 1]))
    assert agent.name == canonical_spec(spec)
    assert agent.privileged == entry.privileged
    opponent = make_agent("random", AgentContext(env.rules), np.random.default_rng([env_id, 2]))
    colour = BLACK if env_id % 2 == 0 else WHITE  # each layout is played with both colours over its conditions
    black, white = (agent, opponent) if colour == BLACK else (opponent, agent)

    record = play_game(env.rules, env.condition, black, white)  # raises on any illegal proposal

    state = env.rules.initial_state()
    for move in record.moves:
        state = env.rules.play(state, move)
    assert env.rules.is_over(state)
    decisions = [(obs, move) for obs, move in record.trajectory if obs.colour == colour]
    assert decisions, "the agent was never asked for a move"
    assert all(move in obs.legal_moves for obs, move in decisions)
    assert record.rewards == ref.rewards_for_counts(record.black, record.white, env.condition.k)
    assert grants.usage.privileged == entry.privileged, "only privileged agents may take a simulator grant"
