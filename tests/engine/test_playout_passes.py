"""The random-playout kernel, checked against the pure-Python reference where passes happen.

From endgame positions whose game tree holds forced passes, the reference computes
the exact distribution of final counts under uniformly random play (each legal move
equally likely; a forced pass is not a choice). The kernel's playouts over many
seeds must land only on those final counts and match their frequencies. A kernel
that ends the game at a pass, forgets to hand the move over, or lets the passing
side place would produce counts the reference never reaches or the wrong mix.
"""

from __future__ import annotations

import random
from collections import Counter
from fractions import Fraction

import pytest
import reference_othello as ref

from engine.environments import make_env
from engine.playouts import random_playout
from engine.state import PASS

SAMPLES = 3000


def final_distribution(state: ref.RefState, mover: int) -> dict[tuple[int, int], Fraction]:
    """P(final (mover's discs, opponent's discs)) under uniform random play, exactly."""
    moves = ref.legal_moves(state)
    if not moves:
        black, white = ref.counts(state)
        return {(black, white) if mover == ref.BLACK else (white, black): Fraction(1)}
    out: dict[tuple[int, int], Fraction] = {}
    for move in moves:
        for counts, p in final_distribution(ref.play(state, move), mover).items():
            out[counts] = out.get(counts, Fraction(0)) + p / len(moves)
    return out


def has_pass(state: ref.RefState) -> bool:
    moves = ref.legal_moves(state)
    return moves == [PASS] or any(has_pass(ref.play(state, m)) for m in moves)


def endgame_with_passes(env_id: int, empties: int, seed: int):
    """An engine state and the same reference state, ``empties`` empty cells before the end, with passes ahead."""
    env = make_env(env_id)
    rules, layout = env.rules, env.layout
    rng = random.Random(seed)
    for _ in range(500):
        state, mirror = rules.initial_state(), ref.initial_state(layout)
        while ref.legal_moves(mirror):
            empty = sum(cell == ref.EMPTY for cell in mirror.cells)
            if empty <= empties and has_pass(mirror) and ref.legal_moves(mirror) != [PASS]:
                return rules, state, mirror
            move = rng.choice(ref.legal_moves(mirror))
            state, mirror = rules.play(state, move), ref.play(mirror, move)
            assert tuple(rules.legal_moves(state)) == tuple(ref.legal_moves(mirror))
    raise AssertionError(f"no endgame with a pass found on env {env_id}")


@pytest.mark.parametrize(("env_id", "seed"), [(0, 1), (0, 2), (1, 3), (2, 4), (3, 5), (5, 6), (6, 7)])
def test_playouts_through_passes_match_the_reference_distribution(env_id, seed):
    rules, state, mirror = endgame_with_passes(env_id, empties=7, seed=seed)
    exact = final_distribution(mirror, mirror.to_move)
    seen: Counter[tuple[int, int]] = Counter()
    kernel_seed = 1000 + seed
    for _ in range(SAMPLES):
        mover, opponent, kernel_seed = random_playout(rules, state, kernel_seed)
        seen[(mover, opponent)] += 1
    assert set(seen) <= set(exact), f"counts the reference never reaches: {set(seen) - set(exact)}"
    distance = sum(abs(seen[c] / SAMPLES - float(p)) for c, p in exact.items()) / 2
    assert distance < 0.06, (distance, exact, seen)
