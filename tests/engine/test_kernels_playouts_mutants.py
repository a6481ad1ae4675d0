"""The random-playout, perft and replay kernels of ``engine/kernels.py`` called directly, against the
pure-Python reference (``reference_othello``) and hand-computed games, never against themselves.

The random-playout kernel is compared, seed by seed, with a playout that uses the reference's rules and
its own xorshift64* (written out below from the generator's definition), so the chosen moves, passes,
placements and the returned seed must all agree; perft through forced passes and turn limits equals the
reference's; ``replay``'s statuses, plies and counts are checked on hand-drawn games. Split from
``test_kernels_mutants.py`` (the same mutation groups: ``tests/mutation_run.py``, kernels and bits).
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest
import reference_othello as ref
from kernel_positions import MASK64, OBSTACLES, PASSES, SIXTEEN, Position, board

from engine import kernels
from engine.layout import Layout, standard_layout

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


@pytest.mark.parametrize(
    ("max_turns", "expected"),
    [(0, (2, 2, 0)), (1, (2, 2, 0)), (2, (1, 4, 1)), (3, (1, 4, 1)), (4, (0, 6, 2)), (6, (0, 6, 2)), (-1, (0, 6, 2))],
)
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
    [
        (standard_layout(8, 8), (3, 4), -1),
        (standard_layout(9, 8), (5,), -1),
        (OBSTACLES, (6, 7), -1),
        (standard_layout(16, 16), (8,), 24),
        (standard_layout(8, 8), (9, 10, 11), 5),
    ],
    ids=["8x8", "9x8", "obstacles", "16x16-24-turns", "8x8-5-turns"],
)
def test_playouts_equal_the_reference_playout_seed_by_seed(layout, seeds, max_turns):
    position = Position.start(layout)
    for seed in seeds:
        assert position.playout(seed, max_turns) == reference_playout(position.state, seed, max_turns)


@pytest.mark.parametrize(
    ("turn_limit", "counting", "placed", "plies"),
    [
        (2, "per_player", (0, 0), 4),
        (3, "total", (0, 0), 3),
        (2, "per_player", (1, 2), 1),
        (3, "per_player", (2, 3), 1),
        (4, "total", (1, 2), 1),
        (3, "per_player", (3, 1), 2),
        (6, "total", (0, 3), 3),
    ],
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
    total = kernels.random_games(
        position.words(position.own), position.words(position.opp), *position.placed, 3, *position.limit_args, position.geo, np.uint64(31)
    )
    assert int(total) == expected


# ------------------------------------------------------------------ perft


@pytest.mark.parametrize(
    ("layout", "turn_limit", "counting", "placed", "depth"),
    [
        (PASSES, None, "per_player", (0, 0), 6),
        (standard_layout(9, 8), None, "per_player", (0, 0), 3),
        (OBSTACLES, None, "per_player", (0, 0), 3),
        (SIXTEEN, None, "per_player", (0, 0), 2),
        (standard_layout(8, 8), 3, "per_player", (2, 1), 4),
        (standard_layout(8, 8), 5, "total", (1, 2), 4),
    ],
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
    limited = Position(dataclasses.replace(ref.initial_state(standard_layout(8, 8), 2, "per_player"), placed=(1, 2)), standard_layout(8, 8))
    assert [limited.perft(d) for d in range(4)] == [1, 4, 4, 4]


# ------------------------------------------------------------------ replay


def _replay(layout: Layout, moves: list[int], turn_limit: int | None = None, counting: str = "per_player"):
    position = Position.start(layout, turn_limit, counting)
    black, white = ref.mask(ref.discs(position.state, ref.BLACK)), ref.mask(ref.discs(position.state, ref.WHITE))
    status, ply, black_count, white_count = kernels.replay(
        position.words(black), position.words(white), np.array(moves, dtype=np.int64), layout.cells, *position.limit_args, position.geo
    )
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
