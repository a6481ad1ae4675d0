"""``arena demo``: a short greedy-vs-random match with Wilson intervals."""

from __future__ import annotations

import re

import numpy as np

from engine import make_env, parse_move
from harness.cli.demo import greedy_factory
from harness.observation import observe


def test_demo_prints_the_table(invoke):
    result = invoke("demo", "--games", "6")
    assert result.exit_code == 0, result.output
    for word in ("greedy", "random", "overall", "as black", "as white", "win", "draw", "lose", "Wilson"):
        assert word in result.output
    assert re.search(r"overall\s+6\s+\d+% \[\d+-\d+\] \(\d\)", result.output), result.output
    assert "env 0" in result.output


def test_greedy_takes_the_most_flips():
    rules = make_env(0).rules
    state = rules.initial_state()
    for move in ("e3", "f3"):  # black e3, white f3 ...
        state = rules.play(state, parse_move(move, rules.layout))
    obs = observe(rules, state)
    best = max(rules.flips(state, m).bit_count() for m in obs.legal_moves)
    make_greedy = greedy_factory(rules)
    for seed in range(5):
        move = make_greedy(np.random.default_rng(seed)).act(obs)
        assert rules.flips(state, move).bit_count() == best
