"""Agents written for the paper's reference environment (planes + mask -> flat index) play through the adapter."""

from __future__ import annotations

import numpy as np
import pytest

from agents.base import Agent, AgentContext
from agents.reference.adapter import ReferenceAgentAdapter
from engine import PASS, make_env
from engine.protocol.observation import observe
from engine.state import BLACK
from harness.play.game import IllegalProposalError, play_game
from harness.registry.specs import make_agent


class FirstLegal:
    """A reference-style agent: the first index the mask allows; records what it was shown."""

    def __init__(self) -> None:
        self.calls: list[tuple[np.ndarray, np.ndarray]] = []
        self.frozen = False

    def act(self, obs_planes: np.ndarray, action_mask: np.ndarray) -> int:
        self.calls.append((obs_planes, action_mask))
        return np.flatnonzero(action_mask)[0]  # a numpy integer, as such agents often return

    def freeze(self) -> None:
        self.frozen = True


@pytest.mark.parametrize("env_id", [0, 4, 5, 13, 48])
def test_a_reference_agent_plays_whole_games(env_id):
    env = make_env(env_id)
    inner = FirstLegal()
    adapter = ReferenceAgentAdapter(inner, name="first-legal")
    opponent = make_agent("random", AgentContext(env.rules), np.random.default_rng(env_id))
    record = play_game(env.rules, env.condition, adapter, opponent)
    assert record.black_policy == "first-legal"
    rows, cols = env.layout.shape
    mine = [(obs, move) for obs, move in record.trajectory if obs.colour == BLACK]
    assert len(mine) == len(inner.calls) > 0
    for (obs, move), (planes, mask) in zip(mine, inner.calls, strict=True):
        assert type(move) is int
        assert move == min(m for m in obs.legal_moves if m != PASS)
        assert planes.dtype == np.float32 and planes.shape == (3, rows, cols)
        assert mask.dtype == np.int8 and mask.shape == (rows * cols,)
        assert np.array_equal(planes[0], obs.grid == 1) and np.array_equal(planes[1], obs.grid == -1)
        assert np.array_equal(planes[2], obs.grid == 2)
        assert set(np.flatnonzero(mask)) == set(obs.legal_moves)


def test_an_all_zero_mask_passes_without_asking(make_position):
    rules = make_env(0).rules
    state = make_position(rules, "W B . . . . . .\n" + ". . . . . . . .\n" * 7, BLACK)
    obs = observe(rules, state)
    assert obs.must_pass
    inner = FirstLegal()
    assert ReferenceAgentAdapter(inner).act(obs) == PASS
    assert inner.calls == []


def test_the_adapter_is_an_agent_named_after_its_inner_agent():
    inner = FirstLegal()
    adapter = ReferenceAgentAdapter(inner)
    assert isinstance(adapter, Agent) and adapter.name == "FirstLegal"
    adapter.freeze()
    assert adapter.frozen and inner.frozen


def test_an_illegal_index_is_caught_by_the_harness():
    class Stubborn:
        def act(self, obs_planes, action_mask):
            return 0  # a1: never legal at the start

    env = make_env(0)
    opponent = make_agent("random", AgentContext(env.rules), np.random.default_rng(0))
    with pytest.raises(IllegalProposalError, match="stubborn"):
        play_game(env.rules, env.condition, ReferenceAgentAdapter(Stubborn(), name="stubborn"), opponent)


def test_an_inner_object_without_act_is_refused():
    with pytest.raises(TypeError, match="act"):
        ReferenceAgentAdapter(object())
