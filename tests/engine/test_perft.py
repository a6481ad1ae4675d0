"""Perft (leaf counts of the game tree) of the fast kernel, against published vectors and the reference.

Convention everywhere: a forced pass is one ply, a finished game one leaf, depth 0 one leaf.
"""

from __future__ import annotations

import random

import pytest
import reference_othello as ref

from engine import kernels
from engine.environments import layouts, reference_data
from engine.geometry import geometry_of
from engine.layout import Layout, standard_layout
from engine.rules import Rules

COUNTING_CODES = {"per_player": kernels.COUNT_PER_PLAYER, "total": kernels.COUNT_TOTAL}
BENCHMARK_LAYOUTS = layouts()


def kernel_perft(layout: Layout, depth: int, turn_limit: int | None = None, counting: str = "per_player") -> int:
    """``engine.kernels.perft`` from the start of ``layout`` (black to move, no placements yet)."""
    g = geometry_of(layout)
    return int(
        kernels.perft(
            g.words(layout.mask(layout.black)),
            g.words(layout.mask(layout.white)),
            0,
            0,
            depth,
            turn_limit or kernels.NO_LIMIT,
            COUNTING_CODES[counting],
            g.kernel_args,
        )
    )


def random_layout(rows: int, cols: int, seed: int, density: float = 0.15) -> Layout:
    """A seeded random layout on which black has a first move."""
    rng = random.Random(seed)
    while True:
        obstacles = {(r, c) for r in range(rows) for c in range(cols) if rng.random() < density}
        layout = standard_layout(rows, cols, obstacles, f"random {rows}x{cols} #{seed}")
        if ref.placements(ref.initial_state(layout), ref.BLACK):
            return layout


EXTRA_LAYOUTS = [
    standard_layout(16, 16, name="open 16x16"),
    random_layout(16, 16, seed=1),
    random_layout(5, 13, seed=2),
    random_layout(13, 5, seed=3),
    random_layout(4, 4, seed=4, density=0.0),
    random_layout(9, 15, seed=5, density=0.25),
    random_layout(11, 7, seed=6, density=0.3),
]
ALL_LAYOUTS = list(BENCHMARK_LAYOUTS) + EXTRA_LAYOUTS
LAYOUT_IDS = [layout.name.replace(" ", "_") for layout in ALL_LAYOUTS]


@pytest.mark.parametrize("depth", range(0, 11))
def test_standard_8x8_perft(depth: int) -> None:
    """Published Othello perft 1..10 (depth 10: 24,571,284 leaves) on the standard board."""
    expected = [1] + reference_data()["perft_standard_8x8"][1:]
    assert kernel_perft(BENCHMARK_LAYOUTS[0], depth) == expected[depth]


@pytest.mark.parametrize("index", range(len(BENCHMARK_LAYOUTS)))
def test_perft_9_of_each_benchmark_layout(index: int) -> None:
    expected = reference_data()["perft_9"]["by_layout_index"][index]
    assert kernel_perft(BENCHMARK_LAYOUTS[index], 9) == expected


def test_reference_perft_matches_published_vector() -> None:
    """The reference itself reproduces the published 8x8 counts (so it can judge the kernel)."""
    start = ref.initial_state(BENCHMARK_LAYOUTS[0])
    assert [ref.perft(start, depth) for depth in range(7)] == reference_data()["perft_standard_8x8"][:7]


@pytest.mark.parametrize("layout", ALL_LAYOUTS, ids=LAYOUT_IDS)
def test_kernel_perft_equals_reference(layout: Layout) -> None:
    start = ref.initial_state(layout)
    assert [kernel_perft(layout, depth) for depth in range(5)] == [ref.perft(start, depth) for depth in range(5)]


TURN_LIMIT_LAYOUTS = [BENCHMARK_LAYOUTS[0], BENCHMARK_LAYOUTS[5], EXTRA_LAYOUTS[2], EXTRA_LAYOUTS[1], EXTRA_LAYOUTS[4]]


@pytest.mark.parametrize("counting", ["per_player", "total"])
@pytest.mark.parametrize("layout", TURN_LIMIT_LAYOUTS, ids=[lay.name.replace(" ", "_") for lay in TURN_LIMIT_LAYOUTS])
def test_kernel_perft_under_turn_limit_equals_reference(layout: Layout, counting: str) -> None:
    """A turn limit of 3, down to depth 13, where every line has ended (finished games are leaves)."""
    start = ref.initial_state(layout, 3, counting)
    depths = [*range(1, 8), 13]
    expected = [ref.perft(start, depth) for depth in depths]
    assert [kernel_perft(layout, depth, 3, counting) for depth in depths] == expected


def test_turn_limit_countings_differ() -> None:
    """Per player, 3 + 3 placements; in total, 3: the trees differ from depth 4 on."""
    layout = BENCHMARK_LAYOUTS[0]
    published = reference_data()["perft_standard_8x8"]
    assert kernel_perft(layout, 6, 3, "per_player") == published[6]
    assert kernel_perft(layout, 7, 3, "per_player") == published[6]
    assert kernel_perft(layout, 7, 3, "total") == published[3]


MIDGAME_LAYOUTS = [BENCHMARK_LAYOUTS[0], BENCHMARK_LAYOUTS[4], EXTRA_LAYOUTS[1]]


@pytest.mark.parametrize("counting", ["per_player", "total"])
@pytest.mark.parametrize("layout", MIDGAME_LAYOUTS, ids=["8x8", "12x10", "16x16"])
def test_rules_perft_from_midgame_positions(layout: Layout, counting: str) -> None:
    """``Rules.perft`` from positions after random play, just before the turn limit bites.

    The placements made so far decide who may still place, so a wrapper that mixed up
    the mover's and the opponent's counts would change these numbers.
    """
    rng = random.Random(7)
    for turn_limit in (None, 4, 9, 12):
        rules = Rules(layout, turn_limit, counting)
        state, ref_state = rules.initial_state(), ref.initial_state(layout, turn_limit, counting)
        if turn_limit is None:
            plies = rng.randint(8, 30)
        else:  # per player: black has used its last placement, white has one left
            plies = 2 * turn_limit - 1 if counting == "per_player" else turn_limit - 2
        for _ in range(plies):
            moves = ref.legal_moves(ref_state)
            if not moves:
                break
            move = rng.choice(moves)
            state, ref_state = rules.play(state, move), ref.play(ref_state, move)
        assert [rules.perft(state, depth) for depth in range(5)] == [ref.perft(ref_state, depth) for depth in range(5)]
