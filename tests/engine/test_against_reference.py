"""The fast engine (numba bitboards) agrees with the pure-Python reference on random play.

Boards of 1, 2, 3 and 4 machine words (up to 64, 128, 192 and 256 cells) run
through different compilations of the kernels, so every test covers all four.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest
import reference_othello as ref
from hypothesis import assume, event, given
from hypothesis import strategies as st

from engine.condition import Condition
from engine.layout import Layout, standard_layout
from engine.rules import Rules
from engine.state import PASS, State

# Cell counts that need n machine words: 64 * (n - 1) < rows * cols <= 64 * n.
WORD_CELLS = {1: (16, 64), 2: (65, 128), 3: (129, 192), 4: (193, 256)}
HALF = Fraction(1, 2)


def board_sizes(n_words: int) -> list[tuple[int, int]]:
    low, high = WORD_CELLS[n_words]
    return [(r, c) for r in range(4, 17) for c in range(4, 17) if low <= r * c <= high]


def random_obstacles(rows: int, cols: int, density: float, rng: random.Random) -> set[tuple[int, int]]:
    return {(r, c) for r in range(rows) for c in range(cols) if rng.random() < density}


def black_can_open(layout: Layout) -> bool:
    return bool(ref.placements(ref.initial_state(layout), ref.BLACK))


# Random choices come from a random.Random seeded by hypothesis: its own Random
# leans towards 0.0 (every cell an obstacle, always the first move).
seeds = st.integers(0, 2**64 - 1)


@st.composite
def layouts(draw, n_words: int) -> Layout:
    """A random layout needing ``n_words`` words, obstacles at a random density of 0-30%."""
    sizes = board_sizes(n_words)
    if n_words == 4:  # the largest board, 16 x 16, in about half the examples
        rows, cols = draw(st.just((16, 16)) | st.sampled_from(sizes))
    else:
        rows, cols = draw(st.sampled_from(sizes))
    density = draw(st.integers(0, 30)) / 100
    rng = random.Random(draw(seeds))
    layout = standard_layout(rows, cols, random_obstacles(rows, cols, density, rng))
    assume(black_can_open(layout))
    event(f"{n_words} words" + (", 16x16" if (rows, cols) == (16, 16) else ""))
    return layout


turn_limits = st.one_of(
    st.tuples(st.none(), st.just("per_player")), st.tuples(st.integers(1, 40), st.sampled_from(("per_player", "total")))
)
thresholds = st.fractions(min_value=-1, max_value=2, max_denominator=300).filter(lambda k: k != HALF)


def assert_same_state(state: State, ref_state: ref.RefState) -> None:
    assert state.black == ref.mask(ref.discs(ref_state, ref.BLACK))
    assert state.white == ref.mask(ref.discs(ref_state, ref.WHITE))
    assert state.to_move == ref_state.to_move
    assert (state.placed_black, state.placed_white) == ref_state.placed


def compare_position(rules: Rules, state: State, ref_state: ref.RefState, *, play_each: bool = True, every_cell: bool = False) -> list[int]:
    """Assert the engine and the reference agree on ``state``; returns its legal moves.

    Checks the discs, the legal moves, is_over and the flips of every legal move;
    with ``play_each`` the position after each legal move, with ``every_cell`` the
    flips of every empty cell (flips are geometry alone: the turn limit does not enter).
    """
    assert_same_state(state, ref_state)
    moves = rules.legal_moves(state)
    assert moves == ref.legal_moves(ref_state)
    assert rules.is_over(state) == ref.is_over(ref_state) == (moves == [])
    for move in moves:
        if move != PASS:
            assert rules.flips(state, move) == ref.mask(ref.flips(ref_state, move)) != 0
        if play_each:
            assert_same_state(rules.play(state, move), ref.play(ref_state, move))
    if every_cell:
        for cell, content in enumerate(ref_state.cells):
            if content == ref.EMPTY:
                assert rules.flips(state, cell) == ref.mask(ref.flips(ref_state, cell)), cell
    return moves


def compare_outcomes(rules: Rules, state: State, ref_state: ref.RefState, ks: list[Fraction]) -> None:
    black, white = rules.counts(state)
    assert (black, white) == ref.counts(ref_state)
    boundaries = [Fraction(black, black + white), Fraction(white, black + white)] if black + white else []
    for k in ks + [b + d for b in boundaries for d in (Fraction(-1, 1000), 0, Fraction(1, 1000))]:
        if k == HALF:
            continue
        condition = Condition(k)
        assert condition.rewards(black, white) == ref.outcome(ref_state, k), k
        assert condition.wins(black, white) == ref.wins(black, white, k), k


@pytest.mark.parametrize("n_words", [1, 2, 3, 4])
@given(data=st.data())
def test_random_games_match_reference(n_words: int, data: st.DataObject) -> None:
    """Random legal play from the start: the engine agrees with the reference at every ply.

    At one position chosen at a random ply, every empty cell is checked too; the
    finished game's outcome is compared for random thresholds K and K at the edges.
    """
    layout = data.draw(layouts(n_words), label="layout")
    turn_limit, counting = data.draw(turn_limits, label="turn limit")
    rng = random.Random(data.draw(seeds, label="move seed"))
    empty_cells = layout.cells - len(layout.obstacles) - len(layout.black) - len(layout.white)
    deep_check_ply = data.draw(st.integers(0, empty_cells), label="ply checked on every cell")
    rules = Rules(layout, turn_limit, counting)
    state, ref_state = rules.initial_state(), ref.initial_state(layout, turn_limit, counting)
    ply = 0
    while moves := compare_position(rules, state, ref_state, every_cell=ply == deep_check_ply):
        move = rng.choice(moves)
        state, ref_state = rules.play(state, move), ref.play(ref_state, move)
        ply += 1
    compare_outcomes(rules, state, ref_state, data.draw(st.lists(thresholds, max_size=6), label="K"))


def test_ten_thousand_positions_match_reference() -> None:
    """A plain seeded sweep over at least 10,000 positions, on boards of every word count.

    Each game goes to the end; the next board is drawn from the word count with the
    fewest positions so far, and 16 x 16 is half of the four-word boards.
    """
    rng = random.Random(20240611)
    sizes = {n: board_sizes(n) for n in WORD_CELLS}
    positions = {n: 0 for n in WORD_CELLS}
    full_boards = games = 0
    while sum(positions.values()) < 10_000:
        n_words = min(positions, key=positions.get)
        rows, cols = (16, 16) if n_words == 4 and rng.random() < 0.5 else rng.choice(sizes[n_words])
        layout = standard_layout(rows, cols, random_obstacles(rows, cols, rng.uniform(0, 0.3), rng))
        if not black_can_open(layout):
            continue
        turn_limit, counting = (None, "per_player") if rng.random() < 0.75 else (rng.randint(1, 40), rng.choice(("per_player", "total")))
        rules = Rules(layout, turn_limit, counting)
        state, ref_state = rules.initial_state(), ref.initial_state(layout, turn_limit, counting)
        while True:
            moves = compare_position(rules, state, ref_state, play_each=False)
            positions[n_words] += 1
            full_boards += (rows, cols) == (16, 16)
            if not moves:
                break
            move = rng.choice(moves)
            state, ref_state = rules.play(state, move), ref.play(ref_state, move)
        compare_outcomes(rules, state, ref_state, [Fraction(rng.randint(-100, 200), 100) for _ in range(3)])
        games += 1
    total = sum(positions.values())
    assert total >= 10_000
    assert min(positions.values()) >= 2_000, positions
    assert full_boards >= 800
    print(f"compared {total} positions in {games} games: by word count {positions}, 16x16 {full_boards}")


def test_word_ranges_cover_every_size() -> None:
    """The size classes used above partition all boards from 4 x 4 to 16 x 16."""
    every = {(r, c) for r in range(4, 17) for c in range(4, 17)}
    classes = [set(board_sizes(n)) for n in WORD_CELLS]
    assert set().union(*classes) == every
    assert sum(len(c) for c in classes) == len(every)
    for n, sizes in zip(WORD_CELLS, classes, strict=True):
        assert all(math.ceil(r * c / 64) == n for r, c in sizes)
