"""The exact endgame solver against a brute-force search of the whole remaining game tree.

The brute force below is written independently of ``agents/search``: a
max/min recursion in absolute terms (the root mover maximises the utility, its
opponent minimises it) on the engine's rule kernels, checked itself against the
pure-Python reference engine on small positions.

"Hits a requested disc count" is tested as: with ``utility = -|own_final - target|``
the solver's value is 0 exactly when brute force says the root mover can force
the game to end with ``target`` discs against every reply; and then, when the
root mover plays the solver's moves (re-solving at each of its turns, any tie)
and the opponent plays either perfectly against it or at random, the game ends
with exactly ``target`` discs for the root mover.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import reference_othello as ref
from numba import njit
from search_positions import empties, late_positions, layout_named, live_positions

from agents.search.api import solve_endgame, solve_position
from agents.search.endgame import disc_difference_utility, outcome_utility, target_utility
from engine.bits import bb_any, bb_count
from engine.condition import Condition
from engine.kernels import mover_moves, place
from engine.rules import Rules
from engine.state import PASS, State


@njit(cache=True)
def _brute(a, b, placed_a, placed_b, root_turn, turn_limit, counting, geo, utility):
    """Value for the root mover (discs ``a``) of the whole tree below; ``root_turn``: the root mover is to move."""
    if root_turn:
        moves = mover_moves(a, b, placed_a, placed_b, turn_limit, counting, geo)
        other = mover_moves(b, a, placed_b, placed_a, turn_limit, counting, geo)
    else:
        moves = mover_moves(b, a, placed_b, placed_a, turn_limit, counting, geo)
        other = mover_moves(a, b, placed_a, placed_b, turn_limit, counting, geo)
    if not bb_any(moves):
        if not bb_any(other):
            return utility[bb_count(a), bb_count(b)]
        return _brute(a, b, placed_a, placed_b, not root_turn, turn_limit, counting, geo, utility)
    best = -np.inf if root_turn else np.inf
    for index in range(len(a) * 64):
        if (moves[index >> 6] >> np.uint64(index & 63)) & np.uint64(1) == np.uint64(0):
            continue
        if root_turn:
            new_a, new_b = place(a, b, index, geo)
            best = max(best, _brute(new_a, new_b, placed_a + 1, placed_b, not root_turn, turn_limit, counting, geo, utility))
        else:
            new_b, new_a = place(b, a, index, geo)
            best = min(best, _brute(new_a, new_b, placed_a, placed_b + 1, not root_turn, turn_limit, counting, geo, utility))
    return best


def brute_force(rules: Rules, state: State, utility: np.ndarray) -> float:
    """Exact value of ``state`` for its mover, by visiting every line of play."""
    g = rules.geometry
    mover = state.to_move
    return float(
        _brute(
            g.words(state.own),
            g.words(state.opponent),
            state.placed(mover),
            state.placed(1 - mover),
            True,
            *rules.limit_args,
            g.kernel_args,
            utility,
        )
    )


def reference_value(state: ref.RefState, root: int, utility: np.ndarray) -> float:
    """Pure-Python minimax over the reference engine (tiny positions only)."""
    moves = ref.legal_moves(state)
    if not moves:
        counts = ref.counts(state)
        return float(utility[counts[root], counts[1 - root]])
    values = [reference_value(ref.play(state, move), root, utility) for move in moves]
    return max(values) if state.to_move == root else min(values)


def to_reference(rules: Rules, state: State) -> ref.RefState:
    board = ref.initial_state(rules.layout, rules.turn_limit, rules.turn_counting)
    cells = list(board.cells)
    for index in range(rules.layout.cells):
        if state.black >> index & 1:
            cells[index] = ref.BLACK
        elif state.white >> index & 1:
            cells[index] = ref.WHITE
        elif cells[index] != ref.OBSTACLE:
            cells[index] = ref.EMPTY
    return ref.RefState(board.board, tuple(cells), state.to_move, (state.placed_black, state.placed_white))


def utilities(cells: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [
        disc_difference_utility(cells),
        outcome_utility(cells, "1.01"),
        outcome_utility(cells, "0.2"),
        outcome_utility(cells, "0.6"),
        target_utility(cells, cells // 3),
        rng.integers(-9, 10, size=(cells + 1, cells + 1)).astype(np.float64),
    ]


CASES = [  # (layout, turn limit, counting, max empties, positions)
    ("plain 4x4", None, "per_player", 10, 30),
    ("plain 4x5", None, "per_player", 10, 30),
    ("plain 5x5", None, "per_player", 10, 20),
    ("random 5x7", None, "per_player", 10, 20),
    ("Random Board 2 (6x8)", None, "per_player", 9, 20),
    ("Partial C-Squares", None, "per_player", 9, 20),
    ("Standard 8x8", None, "per_player", 10, 30),
]


def test_the_brute_force_agrees_with_the_reference_engine():
    rules = Rules(layout_named("plain 4x4"))
    for i, state in enumerate(late_positions(rules, seed=1, count=12, max_empties=7)):
        utility = utilities(rules.layout.cells, i)[i % 6]
        assert brute_force(rules, state, utility) == reference_value(to_reference(rules, state), state.to_move, utility)


@pytest.mark.parametrize(("name", "limit", "counting", "max_empties", "count"), CASES)
def test_the_solver_equals_brute_force(name: str, limit: int | None, counting: str, max_empties: int, count: int):
    rules = Rules(layout_named(name), limit, counting)
    cells = rules.layout.cells
    for i, state in enumerate(late_positions(rules, seed=len(name), count=count, max_empties=max_empties)):
        utility = utilities(cells, i)[i % 6]
        expected = brute_force(rules, state, utility)
        result = solve_position(rules, state, utility)
        assert result.value == expected, (name, i)
        assert solve_position(rules, state, utility, use_tt=False).value == expected
        assert result.move in rules.legal_moves(state)
        assert result.depth == empties(rules, state)


@pytest.mark.parametrize(("limit", "counting"), [(5, "per_player"), (7, "per_player"), (11, "total")])
def test_the_solver_respects_turn_limits(limit: int, counting: str):
    """Games that the limit ends with empty cells left: many empties, few placements to go."""
    rules = Rules(layout_named("Random Board 2 (6x8)"), limit, counting)
    cells = rules.layout.cells
    states = [
        s
        for s in live_positions(rules, seed=limit, count=60, max_plies=2 * limit)
        if s.placed_black + s.placed_white >= (limit - 5 if counting == "total" else 2 * limit - 7)
    ]
    assert len(states) >= 10
    for i, state in enumerate(states):
        utility = utilities(cells, i)[i % 6]
        assert solve_position(rules, state, utility).value == brute_force(rules, state, utility)


def test_every_root_value_is_exact_on_ties_and_an_upper_bound_otherwise():
    rules = Rules(layout_named("plain 5x5"))
    utility = disc_difference_utility(rules.layout.cells)  # symmetric: the child's mover sees the same table
    for state in late_positions(rules, seed=7, count=15, max_empties=9):
        result = solve_position(rules, state, utility)
        for move, value in zip(result.moves, result.values):
            true_value = -brute_force(rules, rules.play(state, move), utility)
            if value == result.value:
                assert true_value == value
            else:
                assert true_value <= value < result.value


def _opponent_view(utility: np.ndarray) -> np.ndarray:
    """The zero-sum table seen by the other player: ``-utility[b, a]``."""
    return -utility.T.copy()


def _play_out(rules: Rules, state: State, utility: np.ndarray, opponent: str, rng: np.random.Generator) -> int:
    """Final discs of ``state``'s mover when it plays solver moves (random ties) against ``opponent``."""
    root = state.to_move
    while moves := rules.legal_moves(state):
        if moves == [PASS]:
            move = PASS
        elif state.to_move == root:
            move = int(rng.choice(solve_position(rules, state, utility).ties))
        elif opponent == "perfect":
            move = int(rng.choice(solve_position(rules, state, _opponent_view(utility)).ties))
        else:
            move = moves[int(rng.integers(len(moves)))]
        state = rules.play(state, move)
    return state.discs(root).bit_count()


@pytest.mark.parametrize(("name", "min_reachable"), [("plain 4x5", 10), ("random 5x7", 5), ("Standard 8x8", 1)])
def test_the_solver_hits_a_requested_disc_count_when_it_is_reachable(name: str, min_reachable: int):
    rules = Rules(layout_named(name))
    cells = rules.layout.cells
    rng = np.random.default_rng(3)
    reachable = unreachable = 0
    for state in late_positions(rules, seed=17, count=12, max_empties=8, min_empties=3):
        for target in range(state.own.bit_count(), state.own.bit_count() + empties(rules, state) + 2):
            utility = target_utility(cells, target)
            forced = brute_force(rules, state, utility) == 0.0
            value, move = solve_endgame(rules, state, utility)
            assert (value == 0.0) == forced and move in rules.legal_moves(state)
            if not forced:
                unreachable += 1
                continue
            reachable += 1
            for opponent in ("perfect", "random"):
                assert _play_out(rules, state, utility, opponent, rng) == target, (target, opponent)
    assert reachable >= min_reachable and unreachable >= 20


def test_outcome_utility_follows_the_exact_rule():
    cells = 48
    for k in ("1.01", "-0.01", "0.8", "0.6", "0.4", "0.2"):
        table = outcome_utility(cells, k)
        condition = Condition(k)
        pairs = [(a, b) for a in range(cells + 1) for b in range(cells + 1 - a)]
        for a, b in random.Random(k).sample(pairs, 300):
            expected = 1.0 if condition.wins(a, b) else (-1.0 if condition.wins(b, a) else 0.0)
            assert table[a, b] == expected
    assert target_utility(cells, 10)[13, 2] == -3.0
    assert disc_difference_utility(cells)[30, 18] == 12.0
