"""``Rules.replay``: a whole game's moves checked in one kernel call, against the move-by-move rules.

Random games on every layout and turn limit, the generated layouts of
``layout_gen`` included; every kind of damage (an illegal ply, a pass that was not
forced, a move off the board, a missing last move, a move after the end) is found
at its ply, and an unfinished game passes only when allowed (a forfeit).
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import make_env
from engine.layout_gen import random_layout
from engine.rules import IllegalMoveError, Rules
from engine.state import PASS


def random_game(rules: Rules, rng: random.Random) -> tuple[list[int], tuple[int, int]]:
    """Moves of a uniformly random game (forced passes as PASS) and its final counts, by the move-by-move rules."""
    state, moves = rules.initial_state(), []
    while legal := rules.legal_moves(state):
        move = rng.choice(legal)
        state = rules.play(state, move)
        moves.append(move)
    return moves, rules.counts(state)


@pytest.mark.parametrize("env_id", [0, 6, 13, 20, 41, 48, 55])
def test_replay_agrees_with_the_rules_on_random_games(env_id):
    rules = make_env(env_id).rules
    rng = random.Random(env_id)
    for _ in range(30):
        moves, (black, white) = random_game(rules, rng)
        assert rules.replay(moves) == (black, white, True)


@given(seed=st.integers(0, 2**32 - 1), limit=st.sampled_from([None, 3, 10]))
def test_replay_agrees_on_generated_layouts(seed, limit):
    layout = random_layout(np.random.default_rng(seed))
    rules = Rules(layout, limit)
    moves, counts = random_game(rules, random.Random(seed + 1))
    assert rules.replay(moves) == (*counts, True)
    if moves:
        assert rules.replay(moves[:-1], allow_unfinished=True).finished is False


@given(seed=st.integers(0, 2**32 - 1), data=st.data())
def test_every_damaged_game_is_refused_at_the_ply_that_breaks_it(seed, data):
    rules = make_env(seed % 56).rules
    moves, _ = random_game(rules, random.Random(seed))
    ply = data.draw(st.integers(0, len(moves) - 1))
    state = rules.initial_state()
    for move in moves[:ply]:
        state = rules.play(state, move)
    legal = set(rules.legal_moves(state))
    bad = data.draw(st.sampled_from([m for m in (PASS, -7, rules.layout.cells, 10**9, *range(rules.layout.cells)) if m not in legal]))
    damaged = [*moves[:ply], bad, *moves[ply + 1 :]]
    with pytest.raises(IllegalMoveError, match=rf"^ply {ply}: "):
        rules.replay(damaged)


def test_a_missing_last_move_and_a_move_after_the_end_are_refused():
    rules = make_env(14).rules
    moves, _ = random_game(rules, random.Random(3))
    with pytest.raises(IllegalMoveError, match="not over after its"):
        rules.replay(moves[:-1])
    with pytest.raises(IllegalMoveError, match=rf"^ply {len(moves)}: .*none \(the game is over\)"):
        rules.replay([*moves, PASS])


@pytest.mark.parametrize("moves", [[True], ["d3"], [1.0], "d3"])
def test_replay_refuses_moves_that_are_not_ints(moves):
    with pytest.raises(IllegalMoveError, match="list of flat move indices"):
        make_env(0).rules.replay(moves)
