"""The rule kernels of ``engine/kernels.py`` called directly, against hand-computed positions and the
pure-Python reference (``reference_othello``), never against themselves.

Hand-drawn boards (black ``X`` to move, white ``O``, obstacle ``#``) pin what the mutation run of the
kernels group found unpinned: flips and legal moves across the 64-cell word boundary (a 9 x 8 board,
two words) and across three words (16 x 16), a ray that stops at an empty cell in one word while own
discs lie behind it in the next, obstacle corners and an obstacle inside a line, the longest run
a board allows (the fill loop's ``reach``), forced passes mid-game, turn limits of both kinds, the
end of the game, and ``replay``'s statuses and counts. The random-playout kernel is compared,
seed by seed, with a playout that uses the reference's rules and its own xorshift64* (written out
below from the generator's definition), so the chosen moves, passes, placements and the returned
seed must all agree. Every test is fast with the JIT on and a few seconds with it off (the
mutation run: ``tests/mutation_run.py``, groups kernels and bits).
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest
import reference_othello as ref

from engine import kernels
from engine.bits import from_words, to_words
from engine.environments import make_env
from engine.geometry import geometry_of
from engine.layout import Layout, standard_layout

MASK64 = (1 << 64) - 1
COUNTING = {"per_player": kernels.COUNT_PER_PLAYER, "total": kernels.COUNT_TOTAL}


def board(picture: str) -> Layout:
    """A layout from rows of ``X`` (black), ``O`` (white), ``#`` (obstacle) and ``.`` (empty)."""
    rows = picture.split()
    cells = {kind: frozenset((r, c) for r, row in enumerate(rows) for c, ch in enumerate(row) if ch == kind) for kind in "XO#"}
    return Layout(len(rows), len(rows[0]), obstacles=cells["#"], black=cells["X"], white=cells["O"])


def cells_of(mask: int) -> set[int]:
    return {i for i in range(mask.bit_length()) if mask >> i & 1}


class Position:
    """A reference state and the kernels' arguments for it (own = the mover's discs)."""

    def __init__(self, state: ref.RefState, layout: Layout) -> None:
        self.state, self.layout = state, layout
        self.geometry = geometry_of(layout)
        self.geo = self.geometry.kernel_args
        self.own = ref.mask(ref.discs(state, state.to_move))
        self.opp = ref.mask(ref.discs(state, 1 - state.to_move))
        limit = state.board.turn_limit
        self.limit_args = (limit or kernels.NO_LIMIT, COUNTING[state.board.counting])
        self.placed = (state.placed[state.to_move], state.placed[1 - state.to_move])

    @classmethod
    def start(cls, layout: Layout, turn_limit: int | None = None, counting: str = "per_player") -> Position:
        return cls(ref.initial_state(layout, turn_limit, counting), layout)

    def words(self, bits: int) -> tuple[np.uint64, ...]:
        return to_words(bits, self.geometry.n_words)

    def legal(self, swap: bool = False) -> int:
        own, opp = (self.opp, self.own) if swap else (self.own, self.opp)
        return from_words(kernels.legal_moves(self.words(own), self.words(opp), self.geo))

    def flips(self, index: int) -> int:
        return from_words(kernels.flips_of(self.words(self.own), self.words(self.opp), index, self.geo))

    def playout(self, seed: int, max_turns: int = -1) -> tuple[int, int, int, int]:
        own, opp, plies, new_seed = kernels.random_playout(
            self.words(self.own), self.words(self.opp), *self.placed, *self.limit_args, self.geo, np.uint64(seed), max_turns)
        return int(own), int(opp), int(plies), int(new_seed)

    def perft(self, depth: int) -> int:
        return int(kernels.perft(self.words(self.own), self.words(self.opp), *self.placed, depth, *self.limit_args, self.geo))


# ------------------------------------------------------------------ hand-drawn positions

# 9 x 8 = 72 cells: cells 0-63 in word 0, 64-71 in word 1 (row 8).
WORD_BOUNDARY = board("""
........
........
........
........
........
.......X
.....X.O
OO....OO
X.X.....
""")

# 16 x 16, four words (cells 0-63, 64-127, 128-191, 192-255). Columns 0 and 15: a run of 14 white discs
# (the longest a 16-cell line holds) through all four words. Column 8: white at rows 1, 3, 4, empty at
# rows 0 and 2, black at row 5 (word 1). Column 9: black at row 10, white at rows 11, 12 and 14, empty
# at rows 13 and 15 (words 2 and 3).
SIXTEEN = board("\n".join(
    "".join(
        "X" if (r, c) in {(0, 0), (15, 15), (5, 8), (10, 9)}
        else "O" if (c in (0, 15) and 1 <= r <= 14) or (c == 8 and r in (1, 3, 4)) or (c == 9 and r in (11, 12, 14))
        else "."
        for c in range(16)
    )
    for r in range(16)
))

# 8 x 8 with obstacle corners: the obstacles at a1 (0) and h1 (7) and d4 (27) would be legal for black if
# they were empty cells; white's run b7-g7 (49-54) is six long, the longest line of this layout holds.
OBSTACLES = board("""
#OX....#
O......O
X......X
.XO#O...
........
........
XOOOOOO.
#......#
""")

# 4 x 4: black cannot move, white can (c1 = 2 or b3 = 9); after either, black must pass again.
PASSES = board("""
OX..
....
..XO
....
""")


@pytest.mark.parametrize(
    ("layout", "black_moves", "white_moves", "flips"),
    [
        (WORD_BOUNDARY, {48, 50, 71}, {39, 44}, {71: {55, 62, 63}, 48: {56, 57}, 50: {57}}),
        (SIXTEEN, {15, 40, 217, 240}, {104, 153},
         {240: set(range(16, 225, 16)), 15: set(range(31, 240, 16)), 40: {56, 72}, 217: {185, 201}, 8: set(), 249: set()}),
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
GAP_THEN_WORD = board("\n".join(
    "".join(
        "X" if (r, c) in {(8, 3), (7, 12)}
        else "O" if (c == 3 and r in (1, 3, 4, 5, 6, 7)) or (c == 12 and r in (14, 12, 11, 10, 9, 8))
        else "."
        for c in range(16)
    )
    for r in range(16)
))


def test_a_ray_stays_stopped_after_a_word_without_a_stop():
    position = Position.start(GAP_THEN_WORD)
    assert cells_of(position.flips(3)) == set()  # row 1's white disc is not flanked: row 2 is empty
    assert cells_of(position.flips(35)) == {51, 67, 83, 99, 115}
    assert cells_of(position.flips(252)) == set()
    assert cells_of(position.flips(220)) == {204, 188, 172, 156, 140}
    assert position.legal() == ref.mask(ref.placements(position.state, ref.BLACK))
    assert {35, 220} <= cells_of(position.legal()) and not {3, 252} & cells_of(position.legal())


def test_white_flips_on_the_hand_drawn_boards():
    for layout, expected in [(OBSTACLES, {3: {2}, 24: {16, 25}, 31: {23}}), (SIXTEEN, {104: {88}, 153: {169}}),
                             (WORD_BOUNDARY, {39: {47}, 44: {53}}), (PASSES, {2: {1}, 9: {10}})]:
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


# ------------------------------------------------------------------ random playouts


def xorshift64_star(seed: int) -> tuple[int, int]:
    """Marsaglia's xorshift64 (shifts 12, 25, 27) and Vigna's * multiplier: (new state, its top 32 bits)."""
    seed ^= seed >> 12
    seed ^= (seed << 25) & MASK64
    seed ^= seed >> 27
    return seed, ((seed * 0x2545F4914F6CDD1D) & MASK64) >> 32


def reference_playout(state: ref.RefState, seed: int, max_turns: int = -1) -> tuple[int, int, int, int]:
    """The reference's random game: each turn the mover places on its sorted placements[(r * n) >> 32]
    (r: 32 random bits) or passes; two passes in a row end it. (own, opp, placements, seed), as the kernel."""
    mover, turns, passes, plies = state.to_move, 0, 0, 0
    while turns != max_turns and passes < 2:
        turns += 1
        moves = ref.placements(state, state.to_move)
        if moves:
            seed, bits = xorshift64_star(seed)
            state, passes, plies = ref.play(state, moves[(bits * len(moves)) >> 32]), 0, plies + 1
        else:
            state, passes = dataclasses.replace(state, to_move=1 - state.to_move), passes + 1
    black, white = ref.counts(state)
    return (black, white, plies, seed) if mover == ref.BLACK else (white, black, plies, seed)


def test_next_random_is_xorshift64_star():
    assert xorshift64_star(1)[0] == 0x2000001  # 1, then 1 ^ 1 << 25, then unchanged by >> 27: by hand
    for seed in (1, 0x9E3779B97F4A7C15, 0xFFFF_FFFF_FFFF_FFFF, 12345):
        new, bits = kernels.next_random(np.uint64(seed))
        assert (int(new), int(bits)) == xorshift64_star(seed)


@pytest.mark.parametrize(("max_turns", "expected"), [(0, (2, 2, 0)), (1, (2, 2, 0)), (2, (1, 4, 1)), (3, (1, 4, 1)),
                                                     (4, (0, 6, 2)), (6, (0, 6, 2)), (-1, (0, 6, 2))])
def test_playout_through_forced_passes_mid_game(max_turns, expected):
    """Black passes, white places, black passes again, white places, then neither can move: 6 turns."""
    position = Position.start(PASSES)
    own, opp, plies, seed = position.playout(99, max_turns)
    assert (own, opp, plies) == expected
    draws = expected[2]
    assert seed == (99 if draws == 0 else xorshift64_star(99)[0] if draws == 1 else xorshift64_star(xorshift64_star(99)[0])[0])
    assert position.playout(99, max_turns) == reference_playout(position.state, 99, max_turns)


def test_playout_for_white_counts_from_whites_side():
    state = ref.initial_state(PASSES)
    position = Position(dataclasses.replace(state, to_move=ref.WHITE), PASSES)
    assert position.playout(7)[:3] == (6, 0, 2)


@pytest.mark.parametrize(
    ("layout", "seeds", "max_turns"),
    [(standard_layout(8, 8), (3, 4), -1), (standard_layout(9, 8), (5,), -1), (OBSTACLES, (6, 7), -1),
     (standard_layout(16, 16), (8,), 24), (standard_layout(8, 8), (9, 10, 11), 5)],
    ids=["8x8", "9x8", "obstacles", "16x16-24-turns", "8x8-5-turns"],
)
def test_playouts_equal_the_reference_playout_seed_by_seed(layout, seeds, max_turns):
    position = Position.start(layout)
    for seed in seeds:
        assert position.playout(seed, max_turns) == reference_playout(position.state, seed, max_turns)


@pytest.mark.parametrize(
    ("turn_limit", "counting", "placed", "plies"),
    [(2, "per_player", (0, 0), 4), (3, "total", (0, 0), 3), (2, "per_player", (1, 2), 1), (3, "per_player", (2, 3), 1),
     (4, "total", (1, 2), 1), (3, "per_player", (3, 1), 2), (6, "total", (0, 3), 3)],
)
def test_playouts_stop_at_the_turn_limit(turn_limit, counting, placed, plies):
    state = dataclasses.replace(ref.initial_state(standard_layout(8, 8), turn_limit, counting), placed=placed)
    position = Position(state, standard_layout(8, 8))
    result = position.playout(21)
    assert result[2] == plies
    assert result == reference_playout(state, 21)


@pytest.mark.parametrize(("counting", "per_game"), [("per_player", 9), ("total", 4)])
def test_random_games_total_the_placements_of_chained_playouts(counting, per_game):
    state = dataclasses.replace(ref.initial_state(standard_layout(8, 8), 5, counting), placed=(1, 0))
    position = Position(state, standard_layout(8, 8))
    seed, expected = 31, 0
    for _ in range(3):
        *_, plies, seed = reference_playout(state, seed)
        expected += plies
    # per player: black may place 4 more times, white 5; in total: 4 more; neither side runs out of moves that early
    assert expected == 3 * per_game
    total = kernels.random_games(position.words(position.own), position.words(position.opp), *position.placed, 3,
                                 *position.limit_args, position.geo, np.uint64(31))
    assert int(total) == expected


# ------------------------------------------------------------------ perft


@pytest.mark.parametrize(
    ("layout", "turn_limit", "counting", "placed", "depth"),
    [(PASSES, None, "per_player", (0, 0), 6), (standard_layout(9, 8), None, "per_player", (0, 0), 3),
     (OBSTACLES, None, "per_player", (0, 0), 3), (SIXTEEN, None, "per_player", (0, 0), 2),
     (standard_layout(8, 8), 3, "per_player", (2, 1), 4), (standard_layout(8, 8), 5, "total", (1, 2), 4)],
    ids=["passes", "9x8", "obstacles", "sixteen", "per-player-limit", "total-limit"],
)
def test_perft_equals_the_reference(layout, turn_limit, counting, placed, depth):
    state = dataclasses.replace(ref.initial_state(layout, turn_limit, counting), placed=placed)
    position = Position(state, layout)
    assert [position.perft(d) for d in range(depth + 1)] == [ref.perft(state, d) for d in range(depth + 1)]


# 4 x 4, black to move: black has no placement, white has (a1 = 0 among them), and after a1 black has one again.
PASS_THEN_BOTH = board("""
.XXO
.XXO
XXXO
OO.O
""")


@pytest.mark.parametrize(("turn_limit", "counting"), [(1, "total"), (2, "total"), (1, "per_player"), (2, "per_player")])
def test_perft_through_a_pass_under_a_turn_limit_equals_the_reference(turn_limit, counting):
    unlimited = ref.initial_state(PASS_THEN_BOTH)
    assert ref.legal_moves(unlimited) == [ref.PASS] and ref.placements(ref.play(ref.play(unlimited, ref.PASS), 0), ref.BLACK)
    state = ref.initial_state(PASS_THEN_BOTH, turn_limit, counting)
    position = Position(state, PASS_THEN_BOTH)
    assert [position.perft(d) for d in range(5)] == [ref.perft(state, d) for d in range(5)]


def test_perft_by_hand_through_passes_and_the_end():
    position = Position.start(PASSES)
    # pass; c1 or b3; pass; the other one; the game is over (a leaf at any depth from there)
    assert [position.perft(d) for d in range(7)] == [1, 1, 2, 2, 2, 2, 2]
    # the mover has one placement left and the other none: one move, then a pass, then the end
    limited = Position(dataclasses.replace(ref.initial_state(standard_layout(8, 8), 2, "per_player"), placed=(1, 2)),
                       standard_layout(8, 8))
    assert [limited.perft(d) for d in range(4)] == [1, 4, 4, 4]


# ------------------------------------------------------------------ replay


def _replay(layout: Layout, moves: list[int], turn_limit: int | None = None, counting: str = "per_player"):
    position = Position.start(layout, turn_limit, counting)
    black, white = ref.mask(ref.discs(position.state, ref.BLACK)), ref.mask(ref.discs(position.state, ref.WHITE))
    status, ply, black_count, white_count = kernels.replay(
        position.words(black), position.words(white), np.array(moves, dtype=np.int64), layout.cells,
        *position.limit_args, position.geo)
    return int(status), int(ply), int(black_count), int(white_count)


ONE_MOVE_GAME = board("""
XO..
....
....
....
""")


@pytest.mark.parametrize(
    ("layout", "moves", "expected"),
    [
        (PASSES, [-1, 2, -1, 9], (kernels.REPLAY_FINISHED, 4, 0, 6)),
        (PASSES, [-1, 9, -1, 2], (kernels.REPLAY_FINISHED, 4, 0, 6)),
        (PASSES, [-1, 2, -1], (kernels.REPLAY_UNFINISHED, 3, 1, 4)),  # white to move after an odd count
        (PASSES, [-1, 2], (kernels.REPLAY_UNFINISHED, 2, 1, 4)),
        (PASSES, [], (kernels.REPLAY_UNFINISHED, 0, 2, 2)),
        (PASSES, [2], (kernels.REPLAY_ILLEGAL, 0, 2, 2)),  # black has no move: only a pass
        (PASSES, [-1, -1], (kernels.REPLAY_ILLEGAL, 1, 2, 2)),  # white has moves: no pass
        (PASSES, [-1, 2, -1, 9, -1], (kernels.REPLAY_ILLEGAL, 4, 0, 6)),  # the game is over: no pass either
        (PASSES, [-1, 2, 3], (kernels.REPLAY_ILLEGAL, 2, 1, 4)),  # a placement that flips nothing
        (PASSES, [-1, 16], (kernels.REPLAY_ILLEGAL, 1, 2, 2)),  # off the board (cells = 16)
        (PASSES, [-1, -2], (kernels.REPLAY_ILLEGAL, 1, 2, 2)),
        (ONE_MOVE_GAME, [2], (kernels.REPLAY_FINISHED, 1, 3, 0)),  # odd: white would be to move
        (ONE_MOVE_GAME, [2, 3], (kernels.REPLAY_ILLEGAL, 1, 3, 0)),
        (ONE_MOVE_GAME, [0], (kernels.REPLAY_ILLEGAL, 0, 1, 1)),  # an occupied cell
    ],
)
def test_replay_statuses_plies_and_counts(layout, moves, expected):
    assert _replay(layout, moves) == expected


def test_replay_refuses_a_negative_move_where_its_wrapped_cell_would_be_legal():
    # g8 (62) is black's only move, and -2 & 63 == 62: -2 must not reach it through a negative index
    layout = board("""
........
........
........
........
........
........
........
....XO..
""")
    assert ref.placements(ref.initial_state(layout), ref.BLACK) == [62]
    assert _replay(layout, [-2])[:2] == (kernels.REPLAY_ILLEGAL, 0)
    assert _replay(layout, [62])[0] == kernels.REPLAY_FINISHED


@pytest.mark.parametrize(("turn_limit", "counting", "plies"), [(2, "per_player", 4), (3, "total", 3), (5, "total", 5)])
def test_replay_ends_at_the_turn_limit(turn_limit, counting, plies):
    layout = standard_layout(8, 8)
    rng, state = random.Random(3), ref.initial_state(layout, turn_limit, counting)
    moves = []
    while legal := ref.legal_moves(state):
        moves.append(rng.choice(legal))
        state = ref.play(state, moves[-1])
    assert len(moves) == plies
    assert _replay(layout, moves, turn_limit, counting) == (kernels.REPLAY_FINISHED, plies, *ref.counts(state))
    assert _replay(layout, moves[:-1], turn_limit, counting)[0] == kernels.REPLAY_UNFINISHED
    assert _replay(layout, moves, turn_limit + 1, counting)[0] == kernels.REPLAY_UNFINISHED
    # after the limit neither may place: a pass is refused (no one has a move), and so is a placement that the
    # board alone would allow (the mover has not used its own turns under a total limit)
    assert _replay(layout, [*moves, -1], turn_limit, counting)[:2] == (kernels.REPLAY_ILLEGAL, plies)
    unlimited = ref.initial_state(layout)
    for move in moves:
        unlimited = ref.play(unlimited, move)
    extra = ref.placements(unlimited, unlimited.to_move)[0]
    assert _replay(layout, [*moves, extra], turn_limit, counting)[:2] == (kernels.REPLAY_ILLEGAL, plies)


def test_replay_of_a_whole_reference_game_on_two_words():
    layout = standard_layout(9, 8)
    rng, state, moves = random.Random(12), ref.initial_state(layout), []
    while legal := ref.legal_moves(state):
        moves.append(rng.choice(legal))
        state = ref.play(state, moves[-1])
    assert _replay(layout, moves) == (kernels.REPLAY_FINISHED, len(moves), *ref.counts(state))
    assert _replay(layout, moves[:-1])[:2] == (kernels.REPLAY_UNFINISHED, len(moves) - 1)
