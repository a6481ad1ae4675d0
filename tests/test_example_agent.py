"""The example agent of CONTRIBUTING.md: the file the guide shows, registered from outside the project, played."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.base import AgentContext
from agents.spec import AgentSpecError
from engine import make_env
from engine.protocol.policy import RandomPolicy
from engine.state import BLACK, PASS
from harness.play.arena import Arena
from harness.play.game import play_game
from harness.registry import specs

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "agents" / "fewest_replies.py"


@pytest.fixture(scope="module")
def registered():
    sys.path.insert(0, str(EXAMPLE.parent))
    try:
        specs.add_family_module("fewest_replies")
        yield specs.registry()["fewest-replies"]
    finally:
        sys.path.remove(str(EXAMPLE.parent))


def test_the_guide_shows_the_file_that_is_tested():
    guide = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", guide, re.DOTALL)
    assert EXAMPLE.read_text(encoding="utf-8") in blocks


@pytest.mark.parametrize("env_id", [0, 4, 26, 54])
def test_the_example_plays_legal_games_as_both_colours(registered, env_id):
    env = make_env(env_id)
    agent = specs.make_agent("fewest-replies:pass_is_zero=false", AgentContext(env.rules), np.random.default_rng(1))
    assert agent.name == "fewest-replies:pass_is_zero=false" and agent.pass_is_zero is False
    random = RandomPolicy(np.random.default_rng(2))
    for black, white in ((agent, random), (random, agent)):
        record = play_game(env.rules, env.condition, black, white)  # raises on an illegal proposal
        assert record.plies == len(record.moves) > 0
        assert {record.black_policy, record.white_policy} == {"fewest-replies:pass_is_zero=false", "random"}


def test_the_example_minimises_the_opponents_replies(registered):
    env = make_env(0)
    rules = env.rules
    agent = specs.make_agent("fewest-replies", AgentContext(rules), np.random.default_rng(0))
    arena = Arena(env, budget=1)
    record = arena.play(agent, RandomPolicy(np.random.default_rng(3)))

    def replies(state, move):
        after = rules.legal_moves(rules.play(state, move))
        return 0 if after == [PASS] else len(after)

    choices = [(obs, move) for obs, move in record.trajectory if obs.colour == BLACK and len(obs.legal_moves) > 1]
    assert len(choices) > 10 and arena.games_played == 1
    for obs, move in choices:
        assert replies(obs.state, move) == min(replies(obs.state, m) for m in obs.legal_moves)


def test_a_taken_name_a_missing_module_or_one_without_agents_is_refused(registered, tmp_path, monkeypatch):
    with pytest.raises(AgentSpecError, match="declares no agent"):
        specs.add_family_module("engine.notation")
    with pytest.raises(AgentSpecError, match="cannot import agent module 'no_such_agents'"):
        specs.add_family_module("no_such_agents")
    (tmp_path / "impostor.py").write_text(
        "from agents.spec import register\n"
        "@register('greedy', 'a second greedy')\n"
        "def impostor(context, rng):\n"
        "    raise AssertionError('never built')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(AgentSpecError, match="agent name 'greedy' .* is taken"):
        specs.add_family_module("impostor")
    assert specs.registry()["fewest-replies"] is registered
    assert specs.registry()["greedy"].factory.__module__ == "agents.heuristic.simple"
