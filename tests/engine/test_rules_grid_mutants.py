"""``Rules.grid`` on hand-drawn boards, ``Rules.play``'s fast path and ``perft``'s mover count (survivors of the
second `make mutation` run of `rules`).

A reachable position is read in one vectorised pass (never cell by cell); an unreachable one (discs on an
obstacle, on both colours, off the board) is written cell by cell: obstacle 2, then own 1, then opponent -1
over it, and a disc off the board is an IndexError. Boards are drawn as text: ``B`` black, ``W`` white,
``#`` obstacle, ``.`` empty; the expected grids are written by hand.
"""

from __future__ import annotations

import numpy as np
import pytest

import engine.rules as rules_module
from engine.layout import Layout, standard_layout
from engine.rules import IllegalMoveError, Rules
from engine.state import BLACK, WHITE, State

# 4 rows x 6 columns, two obstacles; the last cell (index 23) is occupied.
PICTURE = """
B . W . . #
. W B B . .
# . . W . .
. . . . B W
"""
BLACK_VIEW = [[1, 0, -1, 0, 0, 2], [0, -1, 1, 1, 0, 0], [2, 0, 0, -1, 0, 0], [0, 0, 0, 0, 1, -1]]


def drawn(picture: str, to_move: int = BLACK) -> tuple[Rules, State]:
    rows = [line.split() for line in picture.strip().splitlines()]
    cells = [(r, c, mark) for r, row in enumerate(rows) for c, mark in enumerate(row)]
    layout = Layout(len(rows), len(rows[0]), frozenset((r, c) for r, c, mark in cells if mark == "#"))
    black = sum(1 << layout.index((r, c)) for r, c, mark in cells if mark == "B")
    white = sum(1 << layout.index((r, c)) for r, c, mark in cells if mark == "W")
    return Rules(layout), State(black, white, to_move)


def negated_discs(grid: list[list[int]]) -> list[list[int]]:
    return [[-v if v in (1, -1) else v for v in row] for row in grid]


@pytest.fixture
def per_cell_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Masks the cell-by-cell path is asked to split (``_bit_indices``), from now on."""
    calls: list[int] = []
    real = rules_module._bit_indices

    def spy(mask: int) -> list[int]:
        calls.append(mask)
        return real(mask)

    monkeypatch.setattr(rules_module, "_bit_indices", spy)
    return calls


def test_a_drawn_non_square_board_from_both_views():
    rules, state = drawn(PICTURE)
    grid = rules.grid(state)
    assert grid.dtype == np.int8 and grid.shape == (4, 6)
    assert grid.tolist() == BLACK_VIEW
    assert rules.grid(state, WHITE).tolist() == negated_discs(BLACK_VIEW)
    assert rules.grid(state._replace(to_move=WHITE)).tolist() == negated_discs(BLACK_VIEW)
    assert rules.grid(state._replace(to_move=WHITE), BLACK).tolist() == BLACK_VIEW


def test_a_16_by_16_board_across_the_byte_boundaries():
    rules = Rules(standard_layout(16, 16, obstacles=[(0, 9), (15, 14)]))
    black_cells, white_cells = [0, 7, 8, 15, 16, 127, 128, 247, 255], [1, 6, 9, 14, 63, 64, 129, 248, 254]
    state = State(sum(1 << i for i in black_cells), sum(1 << i for i in white_cells), WHITE)
    expected = [0] * 256
    expected[9], expected[15 * 16 + 14] = 2, 2
    for i in black_cells:
        expected[i] = -1  # white's view: black is the opponent
    for i in white_cells:
        expected[i] = 1
    assert rules.grid(state).shape == (16, 16)
    assert rules.grid(state).ravel().tolist() == expected
    assert rules.grid(state, BLACK).ravel().tolist() == [-v if v in (1, -1) else v for v in expected]


def test_reachable_positions_are_not_written_cell_by_cell(per_cell_calls: list[int]):
    rules, state = drawn(PICTURE)
    rules.grid(state)  # the obstacle grid, built once per Rules, is made here
    per_cell_calls.clear()
    for position in (state, state._replace(black=0), state._replace(white=0), State(0, 0)):
        for colour in (BLACK, WHITE):
            rules.grid(position, colour)
    assert per_cell_calls == []  # the last cell (23) is occupied in `state`: still the fast path
    assert rules.grid(state._replace(black=0)).tolist() == [[2 if v == 2 else min(v, 0) for v in row] for row in BLACK_VIEW]
    assert rules.grid(State(0, 0)).tolist() == [[2 if v == 2 else 0 for v in row] for row in BLACK_VIEW]


def test_a_disc_on_an_obstacle_is_written_over_it():
    rules, state = drawn(PICTURE)
    on_obstacles = state._replace(black=state.black | 1 << 5, white=state.white | 1 << 12)  # (0, 5) and (2, 0)
    expected = [row[:] for row in BLACK_VIEW]
    expected[0][5], expected[2][0] = 1, -1
    assert rules.grid(on_obstacles).tolist() == expected
    assert rules.grid(on_obstacles, WHITE).tolist() == negated_discs(expected)


def test_a_cell_held_by_both_colours_shows_the_opponent():
    rules, state = drawn(PICTURE)
    both = state._replace(black=state.black | 1 << 7, white=state.white | 1 << 0)  # (1, 1) and (0, 0) doubled
    expected = [row[:] for row in BLACK_VIEW]
    expected[0][0] = expected[1][1] = -1
    assert rules.grid(both).tolist() == expected
    assert rules.grid(both, WHITE).tolist() == [
        [-1 if (r, c) in ((0, 0), (1, 1)) else v for c, v in enumerate(row)] for r, row in enumerate(negated_discs(BLACK_VIEW))
    ]


@pytest.mark.parametrize(("rows", "cols", "bit"), [(7, 7, 50), (4, 6, 24), (4, 6, 30)])
def test_a_disc_off_the_board_is_an_index_error(rows, cols, bit):
    rules = Rules(standard_layout(rows, cols))
    start = rules.initial_state()
    with pytest.raises(IndexError):
        rules.grid(start._replace(black=start.black | 1 << bit))
    with pytest.raises(IndexError):
        rules.grid(start._replace(white=start.white | 1 << bit), WHITE)


def test_a_legal_placement_takes_the_fast_path(monkeypatch: pytest.MonkeyPatch):
    asked: list[State] = []
    real = Rules.legal_moves

    def spy(self: Rules, state: State) -> list[int]:
        asked.append(state)
        return real(self, state)

    rules = Rules(standard_layout(4, 4))
    corner = State(black=1 << 2, white=1 << 1)  # B at (0, 2), W at (0, 1): black's only move is cell 0
    eight = Rules(standard_layout(8, 8))
    monkeypatch.setattr(Rules, "legal_moves", spy)
    assert rules.play(corner, 0) == State(0b111, 0, WHITE, 1, 0)
    assert eight.play(eight.initial_state(), 20).black == eight.initial_state().black | 1 << 20 | 1 << 28
    assert asked == []


def test_an_illegal_move_next_to_a_legal_one_is_refused():
    rules = Rules(standard_layout(8, 8))
    start = rules.initial_state()
    assert rules.legal_moves(start) == [20, 29, 34, 43]
    for move in (19, 28, 33, 42):  # each just below a legal move
        with pytest.raises(IllegalMoveError, match=r"^illegal move "):
            rules.play(start, move)


def test_perft_counts_the_movers_own_placements_against_a_per_player_limit():
    rules = Rules(standard_layout(8, 8), turn_limit=1)
    start = rules.initial_state()
    black_done = start._replace(placed_black=1)  # black has used its one placement; white has not
    assert rules.perft(black_done, 1) == 1  # black's forced pass
    assert rules.perft(start._replace(placed_white=1), 1) == 4  # black's four opening moves
    white_done = start._replace(to_move=WHITE, placed_white=1)
    assert rules.perft(white_done, 1) == 1


@pytest.mark.parametrize(("black", "white"), [(-1, 0), (0, -1), (-(1 << 70), 1)])
def test_a_negative_disc_mask_is_refused_not_looped_over(black: int, white: int):
    """A negative mask once sent grid down the cell-by-cell path, whose bit loop never ends on it."""
    rules = Rules(standard_layout(4, 4))
    with pytest.raises(ValueError, match="never negative"):
        rules.grid(State(black, white))
    with pytest.raises(ValueError, match="never negative"):
        rules.grid(State(black, white), WHITE)
