"""``decision_ply``: the ply of a decision worked out from the mover's own observations, checked against the game loop."""

from __future__ import annotations

import numpy as np
import pytest

from engine import make_env
from engine.condition import Condition
from engine.layout import Layout
from engine.layout_gen import random_layouts
from engine.rules import Rules
from engine.state import PASS
from harness.play.decisions import MoveDecision
from harness.play.game import decision_ply, play_game_sync


def _random_decider(seed: int, plies: list[int]):
    rng = np.random.default_rng(seed)
    previous = None

    def decide(observation) -> MoveDecision:
        nonlocal previous
        ply = decision_ply(previous, observation)
        previous = (ply, observation.move_number)
        plies.append(ply)
        return MoveDecision(int(rng.choice(observation.legal_moves)), False, [])

    return decide


BLACK_PASSES_FIRST = Layout(
    4,
    4,
    obstacles=frozenset({(0, 0), (1, 0), (2, 2)}),
    black=frozenset({(0, 2), (2, 3)}),
    white=frozenset({(0, 3)}),
    name="black passes first",
)  # white's first decision is ply 1
RULES = (
    [make_env(env).rules for env in (0, 3, 6, 13, 30)]
    + [Rules(BLACK_PASSES_FIRST)]
    + [Rules(layout) for layout in random_layouts(seed=11, count=12, rows=(4, 8), cols=(4, 8), obstacle_density=(0.0, 0.35))]
)


def test_black_passes_at_the_first_ply_of_that_layout():
    rules = Rules(BLACK_PASSES_FIRST)
    assert rules.legal_moves(rules.initial_state()) == [PASS]


@pytest.mark.parametrize("rules", RULES, ids=lambda rules: rules.layout.name)
def test_each_colours_plies_match_the_game_loop_including_passes(rules):
    for seed in range(12):
        black_plies, white_plies = [], []
        game, decisions = play_game_sync(
            rules, Condition(k=1), _random_decider(seed, black_plies), _random_decider(seed + 100, white_plies)
        )
        assert black_plies == [d.ply for d in decisions if d.colour == 0]
        assert white_plies == [d.ply for d in decisions if d.colour == 1]


def test_the_check_covers_forced_passes():
    total = 0
    for rules in RULES:
        for seed in range(12):
            game, _ = play_game_sync(rules, Condition(k=1), _random_decider(seed, []), _random_decider(seed + 100, []))
            total += game.record.moves.count(PASS)
    assert total >= 20  # the layouts above do make the movers pass: the formula's pass cases are exercised
