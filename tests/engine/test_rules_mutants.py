"""The rules' messages and edges the other engine tests left free (mutants of `make mutation MODULES=rules`).

Expected values come from the Python API played step by step (never from the kernel under test)
or are written out by hand.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from engine import PASS, Condition, ConditionError, IllegalMoveError, Rules, format_move, standard_layout
from engine.condition import as_fraction


def rules(**limit) -> Rules:
    return Rules(standard_layout(8, 8), **limit)


def test_an_illegal_move_names_the_move_the_colour_and_every_legal_move():
    r = rules()
    start = r.initial_state()
    legal = r.legal_moves(start)
    expected = ", ".join(format_move(m, r.layout) for m in legal)
    assert r._illegal_reason(start, 0, legal) == f"illegal move a1 for black; legal moves: {expected}"
    assert r._illegal_reason(start, PASS, legal).startswith(f"illegal move {format_move(PASS, r.layout)} for black")
    assert r._illegal_reason(start, 999, legal).startswith("illegal move 999 for black")
    after = r.play(start, legal[0])
    assert r._illegal_reason(after, 0, []) == "illegal move a1 for white; legal moves: none (the game is over)"


def test_replay_names_the_illegal_ply_and_who_still_has_a_move():
    r = rules()
    first = r.legal_moves(r.initial_state())[0]
    with pytest.raises(IllegalMoveError, match=r"^ply 1: illegal move a1 for white; legal moves: "):
        r.replay([first, 0])
    with pytest.raises(IllegalMoveError, match="black still has a move to make"):
        r.replay([])
    with pytest.raises(IllegalMoveError, match="white still has a move to make"):
        r.replay([first])
    with pytest.raises(IllegalMoveError, match=r"flat move indices \(ints, PASS = -1\)"):
        r.replay(["d3"])


def _leaves(r: Rules, state, depth: int) -> int:
    """perft written with the Python API: a forced pass is one ply, a finished game one leaf."""
    if depth == 0 or r.is_over(state):
        return 1
    return sum(_leaves(r, r.play(state, move), depth - 1) for move in r.legal_moves(state))


@pytest.mark.parametrize("counting", ["per_player", "total"])
def test_perft_from_a_midgame_state_counts_each_colours_placements(counting):
    r = rules(turn_limit=3, turn_counting=counting)
    state = r.initial_state()
    for _ in range(3):  # black 2 placements, white 1: the limits bite at different plies for each colour
        state = r.play(state, r.legal_moves(state)[0])
    assert r.perft(state, 4) == _leaves(r, state, 4)


def test_grid_is_int8():
    assert rules().grid(rules().initial_state()).dtype == np.int8


def test_condition_messages_and_the_smallest_turn_limit():
    with pytest.raises(ConditionError, match=r"K='abc' is not a number; give a decimal such as 0.8 or 1.01"):
        as_fraction("abc")
    with pytest.raises(ConditionError, match=r"^K=0.5 is invalid: .*use K > 0.5 \(majority regimes\) or K < 0.5 \(minority"):
        as_fraction(0.5)
    assert Condition(Fraction(4, 5), turn_limit=1).turn_limit == 1
    with pytest.raises(ConditionError, match=r"choose one of per_player, total$"):
        Condition(Fraction(4, 5), turn_counting="each")


def test_rules_checks_and_play_names_the_illegal_move():
    assert rules(turn_limit=1).turn_limit == 1
    with pytest.raises(ValueError, match=r"choose one of per_player, total$"):
        rules(turn_counting="each")
    with pytest.raises(IllegalMoveError, match=r"^illegal move a1 for black; legal moves: "):
        rules().play(rules().initial_state(), 0)


def test_replay_after_two_moves_says_black_and_the_messages_start_as_written():
    r = rules()
    state, moves = r.initial_state(), []
    for _ in range(2):
        moves.append(r.legal_moves(state)[0])
        state = r.play(state, moves[-1])
    with pytest.raises(IllegalMoveError, match="black still has a move to make$"):
        r.replay(moves)
    with pytest.raises(IllegalMoveError, match=r"^a game's moves must be a list of flat move indices \(ints, PASS = -1\)$"):
        r.replay(["d3"])
    k_half = r"^K=0.5 is invalid: .* empty; use K > 0.5 \(majority regimes\) or K < 0.5 \(minority regimes\)$"
    with pytest.raises(ConditionError, match=k_half):
        as_fraction("0.5")
