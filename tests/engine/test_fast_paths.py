"""The engine's fast paths give exactly what the plain code gives: ``Rules.grid``, ``Rules.play``, ``to_words``."""

from __future__ import annotations

import numpy as np
import pytest

from engine import make_env
from engine.bits import to_words
from engine.rules import IllegalMoveError, Rules
from engine.state import PASS, State


def _reference_grid(rules: Rules, state: State, colour: int) -> list[int]:
    """Cell by cell: obstacle 2, then own 1, then opponent -1 written over it (the order of the plain code)."""
    layout = rules.layout
    cells = [0] * layout.cells
    for index in range(layout.cells):
        if layout.cell(index) in layout.obstacles:
            cells[index] = 2
        if state.discs(colour) >> index & 1:
            cells[index] = 1
        if state.discs(1 - colour) >> index & 1:
            cells[index] = -1
    return cells


def _random_states(rules: Rules, rng: np.random.Generator, games: int) -> list[State]:
    states = []
    for _ in range(games):
        state = rules.initial_state()
        while legal := rules.legal_moves(state):
            states.append(state)
            state = rules.play(state, int(legal[rng.integers(len(legal))]))
        states.append(state)
    return states


@pytest.mark.parametrize("env_id", [0, 8, 32, 40, 48])
def test_grid_and_play_match_the_plain_code_along_random_games(env_id: int) -> None:
    rules = make_env(env_id).rules
    rng = np.random.default_rng(env_id)
    for state in _random_states(rules, rng, 3):
        for colour in (0, 1):
            grid = rules.grid(state, colour)
            assert grid.dtype == np.int8 and grid.shape == rules.layout.shape
            assert grid.ravel().tolist() == _reference_grid(rules, state, colour)
        for move in rules.legal_moves(state):
            played = rules.play(state, move)
            if move == PASS:
                assert played == state._replace(to_move=1 - state.to_move)
            else:
                flipped = rules.flips(state, move)
                assert flipped and played.to_move == 1 - state.to_move
                assert played.discs(state.to_move) == state.own | flipped | 1 << move
                assert played.discs(played.to_move) == state.opponent & ~flipped
                assert played.placed(state.to_move) == state.placed(state.to_move) + 1


def test_grid_of_overlapping_or_out_of_board_discs_is_written_in_turn_as_before() -> None:
    rules = make_env(8).rules  # No Corners: obstacles in the corners
    corner = rules.layout.index(next(iter(rules.layout.obstacles)))
    overlapping = State(black=0b111 | 1 << corner, white=0b110, to_move=0)
    assert rules.grid(overlapping).ravel().tolist() == _reference_grid(rules, overlapping, 0)
    with pytest.raises(IndexError):
        rules.grid(State(black=1 << rules.layout.cells, white=0, to_move=0))


def test_play_refuses_what_it_refused() -> None:
    rules = make_env(0).rules
    state = rules.initial_state()
    for move in (0, -5, PASS, rules.layout.cells, True):
        with pytest.raises(IllegalMoveError):
            rules.play(state, move)


@pytest.mark.parametrize("bits", [0, 1, 0xFFFF_FFFF_FFFF_FFFF, 1 << 63, 1 << 64, (1 << 100) | 5])
@pytest.mark.parametrize("n_words", [1, 2])
def test_to_words_one_word_path_matches_the_general_one(bits: int, n_words: int) -> None:
    mask = (1 << 64) - 1
    expected = tuple(np.uint64((bits >> (64 * i)) & mask) for i in range(n_words))
    got = to_words(bits, n_words)
    assert got == expected and all(type(word) is np.uint64 for word in got)
