"""The rule kernels of ``engine/kernels.py`` called directly, against hand-computed positions and the
pure-Python reference (``reference_othello``), never against themselves.

Hand-drawn boards (black ``X`` to move, white ``O``, obstacle ``#``) pin what the mutation run of the
kernels group found unpinned: flips and legal moves across the 64-cell word boundary (a 9 x 8 board,
two words) and across three words (16 x 16), a ray that stops at an empty cell in one word while own
discs lie behind it in the next, obstacle corners and an obstacle inside a line, the longest run
a board allows (the fill loop's ``reach``), forced passes mid-game, turn limits of both kinds, the
end of the game (the boards: ``kernel_positions.py``). Random playouts, perft and ``replay``:
``test_kernels_playouts_mutants.py``. Every test is fast with the JIT on and a few seconds with it off (the
mutation run: ``tests/mutation_run.py``, groups kernels and bits).
"""

from __future__ import annotations

import dataclasses
import random

import pytest
import reference_othello as ref
from kernel_positions import OBSTACLES, PASSES, SIXTEEN, WORD_BOUNDARY, Position, board, cells_of

from engine import kernels
from engine.bits import from_words
from engine.environments import make_env
from engine.layout import Layout, standard_layout

# ------------------------------------------------------------------ hand-drawn positions


@pytest.mark.parametrize(
    ("layout", "black_moves", "white_moves", "flips"),
    [
        (WORD_BOUNDARY, {48, 50, 71}, {39, 44}, {71: {55, 62, 63}, 48: {56, 57}, 50: {57}}),
        (
            SIXTEEN,
            {15, 40, 217, 240},
            {104, 153},
            {240: set(range(16, 225, 16)), 15: set(range(31, 240, 16)), 40: {56, 72}, 217: {185, 201}, 8: set(), 249: set()},
        ),
        (OBSTACLES, {55}, {3, 24, 31}, {55: set(range(49, 55)), 29: set()}),
        (PASSES, set(), {2, 9}, {}),
    ],
    ids=["word-boundary", "sixteen", "obstacles", "passes"],
)
def test_hand_computed_moves_and_flips(layout, black_moves, white_moves, flips):
    position = Position.start(layout)
    assert cells_of(position.legal()) == black_moves
    assert cells_of(position.legal(swap=True)) == white_moves
    for index, expected in flips.items():
        assert cells_of(position.flips(index)) == expected, index
    # the reference agrees with the hand-computed values
    assert set(ref.placements(position.state, ref.BLACK)) == black_moves
    assert set(ref.placements(position.state, ref.WHITE)) == white_moves


# 16 x 16: a ray stopped by an empty cell in one word, a whole word of white discs behind it, black in the word
# after that. Column 3 downwards from row 0: white at row 1, empty at row 2, white rows 3-7 (rows 4-7: all of word 1's
# cells of that column), black row 8 (word 2). Column 12 upwards from row 15 (word 3): the same, mirrored.
GAP_THEN_WORD = board(
    "\n".join(
        "".join(
            "X"
            if (r, c) in {(8, 3), (7, 12)}
            else "O"
            if (c == 3 and r in (1, 3, 4, 5, 6, 7)) or (c == 12 and r in (14, 12, 11, 10, 9, 8))
            else "."
            for c in range(16)
        )
        for r in range(16)
    )
)


def test_a_ray_stays_stopped_after_a_word_without_a_stop():
    position = Position.start(GAP_THEN_WORD)
    assert cells_of(position.flips(3)) == set()  # row 1's white disc is not flanked: row 2 is empty
    assert cells_of(position.flips(35)) == {51, 67, 83, 99, 115}
    assert cells_of(position.flips(252)) == set()
    assert cells_of(position.flips(220)) == {204, 188, 172, 156, 140}
    assert position.legal() == ref.mask(ref.placements(position.state, ref.BLACK))
    assert {35, 220} <= cells_of(position.legal()) and not {3, 252} & cells_of(position.legal())


def test_white_flips_on_the_hand_drawn_boards():
    for layout, expected in [
        (OBSTACLES, {3: {2}, 24: {16, 25}, 31: {23}}),
        (SIXTEEN, {104: {88}, 153: {169}}),
        (WORD_BOUNDARY, {39: {47}, 44: {53}}),
        (PASSES, {2: {1}, 9: {10}}),
    ]:
        state = ref.initial_state(layout)
        position = Position(dataclasses.replace(state, to_move=ref.WHITE), layout)
        for index, cells in expected.items():
            assert cells_of(position.flips(index)) == cells, (layout.rows, index)


def test_place_flips_and_puts_the_disc_down_across_words():
    position = Position.start(SIXTEEN)
    for index in (240, 217, 40):
        own, opp = kernels.place(position.words(position.own), position.words(position.opp), index, position.geo)
        after = ref.play(position.state, index)
        assert (from_words(own), from_words(opp)) == (ref.mask(ref.discs(after, ref.BLACK)), ref.mask(ref.discs(after, ref.WHITE)))


# ------------------------------------------------------------------ the reference, position by position


def _sample_positions(layout: Layout, seed: int, every: int, turn_limit: int | None = None, counting: str = "per_player"):
    """Positions of one seeded reference game, every ``every`` plies, and the final one."""
    rng, state = random.Random(seed), ref.initial_state(layout, turn_limit, counting)
    ply = 0
    while moves := ref.legal_moves(state):
        if ply % every == every - 1:
            yield Position(state, layout)
        state = ref.play(state, rng.choice(moves))
        ply += 1
    yield Position(state, layout)


REFERENCE_BOARDS = [
    (standard_layout(9, 8), 1, 9),  # two words, the boundary between rows 7 and 8
    (standard_layout(8, 9), 2, 9),  # two words, the boundary inside row 7
    (standard_layout(5, 13), 3, 7),  # 65 cells: one cell in the second word
    (make_env(1).layout, 4, 8),  # no corners
    (make_env(4).layout, 5, 16),  # 12 x 10 with 24 obstacles, two words
    (make_env(6).layout, 6, 12),  # 10 x 10 with 20 obstacles, two words
]


@pytest.mark.parametrize(("layout", "seed", "every"), REFERENCE_BOARDS, ids=["9x8", "8x9", "5x13", "no-corners", "12x10", "10x10"])
def test_legal_moves_and_flips_of_every_empty_cell_equal_the_reference(layout, seed, every):
    for position in _sample_positions(layout, seed, every):
        state = position.state
        assert position.legal() == ref.mask(ref.placements(state, state.to_move))
        assert position.legal(swap=True) == ref.mask(ref.placements(state, 1 - state.to_move))
        for index, content in enumerate(state.cells):
            if content == ref.EMPTY:
                assert position.flips(index) == ref.mask(ref.flips(state, index)), index


def test_sixteen_by_sixteen_positions_equal_the_reference():
    rng, state = random.Random(6), ref.initial_state(standard_layout(16, 16))
    for ply in range(120):
        if ply % 40 == 39:
            position = Position(state, standard_layout(16, 16))
            assert position.legal() == ref.mask(ref.placements(state, state.to_move))
            for move in ref.placements(state, state.to_move):
                assert position.flips(move) == ref.mask(ref.flips(state, move))
        state = ref.play(state, rng.choice(ref.legal_moves(state)))


# ------------------------------------------------------------------ turn limits


@pytest.mark.parametrize(
    ("placed_mover", "placed_other", "limit", "counting", "allowed"),
    [
        (5, 9, kernels.NO_LIMIT, kernels.COUNT_PER_PLAYER, True),
        (5, 9, kernels.NO_LIMIT, kernels.COUNT_TOTAL, True),
        (2, 9, 3, kernels.COUNT_PER_PLAYER, True),
        (3, 0, 3, kernels.COUNT_PER_PLAYER, False),
        (1, 1, 3, kernels.COUNT_TOTAL, True),
        (2, 1, 3, kernels.COUNT_TOTAL, False),
        (0, 3, 3, kernels.COUNT_TOTAL, False),
    ],
)
def test_may_place_at_the_turn_limit(placed_mover, placed_other, limit, counting, allowed):
    assert bool(kernels.may_place(placed_mover, placed_other, limit, counting)) is allowed


def test_mover_moves_are_empty_once_the_mover_has_used_its_turns():
    position = Position.start(standard_layout(8, 8))
    own, opp = position.words(position.own), position.words(position.opp)
    opening = ref.mask(ref.placements(position.state, ref.BLACK))
    assert from_words(kernels.mover_moves(own, opp, 1, 4, 2, kernels.COUNT_PER_PLAYER, position.geo)) == opening
    assert from_words(kernels.mover_moves(own, opp, 2, 0, 2, kernels.COUNT_PER_PLAYER, position.geo)) == 0
    assert from_words(kernels.mover_moves(own, opp, 2, 1, 3, kernels.COUNT_TOTAL, position.geo)) == 0
    assert from_words(kernels.mover_moves(own, opp, 1, 1, 3, kernels.COUNT_TOTAL, position.geo)) == opening
    assert from_words(kernels.mover_moves(own, opp, 7, 7, kernels.NO_LIMIT, kernels.COUNT_TOTAL, position.geo)) == opening
