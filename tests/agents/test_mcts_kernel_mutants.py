"""The MCTS kernel (agents/search/mcts_kernel.py) on tiny positions, fast enough with numba's JIT off.

The "search_kernels" mutation group runs these. Expected values come from outside the kernel: the slow Python
UCT of test_mcts.py (its own backup, per colour) for visit counts and values, and for positions whose outcome is
forced, the exact win rate computed here by an exhaustive search over ``Rules``.
"""

from __future__ import annotations

import numpy as np
import pytest
from search_positions import live_positions
from search_reference import BLOCKED, FOUR, SIX
from test_mcts import FINAL_CHOICE, FINAL_MAJORITY, MODES, WHITE_PASSES, env_on, reference_search, table_of

from agents.search.mcts import search
from agents.search.mcts_kernel import mcts_search
from engine import Condition, Environment
from engine.layout import standard_layout
from engine.rules import Rules
from engine.state import BLACK, PASS, WHITE, State

K_MAJORITY, K_MINORITY, K_DRAWISH = "1.01", "-0.01", "0.7"


def outcomes(env, state: State, colour: int) -> set[float]:
    """Every final result reachable from ``state`` in win-rate units for ``colour`` (1 win, 0.5 draw, 0 loss)."""
    rules = env.rules
    legal = rules.legal_moves(state)
    if not legal:
        mine, theirs = state.discs(colour).bit_count(), state.discs(1 - colour).bit_count()
        return {1.0 if env.condition.wins(mine, theirs) else 0.0 if env.condition.wins(theirs, mine) else 0.5}
    return set().union(*(outcomes(env, rules.play(state, move), colour) for move in legal))


def check_against_reference(env, state: State, n: int, rollout_turns: int, paper_compat: bool, seed: int) -> None:
    got = search(env.rules, table_of(env), state, n, 1.4, rollout_turns, paper_compat, seed)
    root = reference_search(env.rules, env.condition, state, n, 1.4, rollout_turns, paper_compat, seed)
    assert got.moves == tuple(child.move for child in root.children)
    assert got.visits == tuple(child.visits for child in root.children)
    assert got.values == pytest.approx([child.value / child.visits for child in root.children], abs=1e-12)
    assert sum(got.visits) == n


CASES = [  # (layout, K, turn limit, simulations, rollout turns, paper_compat, positions)
    (FOUR, K_MAJORITY, None, 30, -1, False, 2),
    (FOUR, K_MINORITY, None, 30, 3, True, 2),
    (FOUR, K_DRAWISH, 3, 25, -1, False, 2),
    (BLOCKED, "0.6", None, 20, 4, False, 1),
    (SIX, "0.3", None, 25, 2, True, 1),
]


@pytest.mark.parametrize(("layout", "k", "limit", "n", "rollout_turns", "paper_compat", "count"), CASES)
def test_visits_and_values_match_the_python_uct(layout, k, limit, n, rollout_turns, paper_compat, count):
    env = env_on(layout, k, limit)
    states = [env.rules.initial_state(), *live_positions(env.rules, seed=n, count=count, max_plies=10)]
    for index, state in enumerate(states):
        check_against_reference(env, state, n, rollout_turns, paper_compat, seed=77 + index)


def test_a_root_with_many_moves_grows_the_child_pool():
    """A 6x6 position with more moves per node than the pool's first size allows for (8 per slot)."""
    env = env_on(SIX, "0.6")
    rules = env.rules
    state = next(s for s in live_positions(rules, seed=3, count=12, max_plies=16) if len(rules.legal_moves(s)) >= 9)
    check_against_reference(env, state, 12, 1, False, seed=5)


@pytest.mark.parametrize("paper_compat", [False, True])
@pytest.mark.parametrize(
    ("text", "k"), [(FINAL_CHOICE, K_MINORITY), (FINAL_CHOICE, K_MAJORITY), (FINAL_MAJORITY, K_MAJORITY), (FINAL_MAJORITY, K_MINORITY)]
)
def test_forced_outcomes_give_exact_win_rates(make_position, text, k, paper_compat):
    """Every root child whose outcome is forced is worth exactly that outcome, from the root mover's view."""
    env = env_on(FOUR, k)
    state = make_position(env.rules, text)._replace(placed_black=10, placed_white=10)
    n = 40
    result = search(env.rules, table_of(env), state, n, 1.4, -1, paper_compat, 9)
    assert sum(result.visits) == n
    assert sorted(result.moves) == sorted(env.rules.legal_moves(state))
    forced = 0
    for move, visits, value in zip(result.moves, result.visits, result.values):
        reachable = outcomes(env, env.rules.play(state, move), BLACK)
        assert visits >= 1
        assert min(reachable) - 1e-12 <= value <= max(reachable) + 1e-12
        if len(reachable) == 1:
            assert value == reachable.pop()
            forced += 1
    assert forced >= 1


# Black to move on 4x4: every placement ends the game (the last empty cell) or leaves one forced reply.
@pytest.mark.parametrize(("k", "value"), [(K_MAJORITY, 1.0), ("0.9", 1.0), (K_DRAWISH, 0.5), (K_MINORITY, 0.0)])
@pytest.mark.parametrize("paper_compat", [False, True])
def test_scored_where_they_stand_draws_are_worth_half(k, value, paper_compat):
    """rollout_turns=0 on 4x4 scores each new child as it stands: black's first moves give 4 discs to 1."""
    env = env_on(FOUR, k)
    result = search(env.rules, table_of(env), env.rules.initial_state(), 4, rollout_turns=0, paper_compat=paper_compat, seed=5)
    assert result.visits == (1, 1, 1, 1) and result.values == (value,) * 4


def test_the_opponents_best_reply_decides_with_the_correct_backup(make_position):
    """The MODES position (test_mcts.py): white's a2 draws with best play, b4 loses; only the two-player backup sees it."""
    env = env_on(FOUR, K_MAJORITY)
    state = make_position(env.rules, MODES, WHITE)._replace(placed_black=4, placed_white=3)
    table = table_of(env)
    correct = search(env.rules, table, state, 200, paper_compat=False, seed=1)
    compat = search(env.rules, table, state, 200, paper_compat=True, seed=1)
    assert correct.most_visited() == [4]
    assert compat.most_visited() == [13]
    assert dict(zip(correct.moves, correct.values))[13] < dict(zip(compat.moves, compat.values))[13]


def test_a_finished_root_has_no_children():
    env = env_on(FOUR, K_MAJORITY)
    rules: Rules = env.rules
    state = live_positions(rules, seed=1, count=1, max_plies=1)[0]
    while rules.legal_moves(state):
        state = rules.play(state, rules.legal_moves(state)[0])
    result = search(rules, table_of(env), state, 5, seed=3)
    assert result.moves == () and result.visits == ()


WIDE = standard_layout(8, 10, name="8x10")  # 80 cells: two words per bitboard


def test_total_turn_counting_two_word_boards_and_a_grown_pool():
    """A turn limit on all placements together; an 80-cell board (two words); enough moves to grow the child pool."""
    total = Environment(0, FOUR, Condition(K_DRAWISH, 4, "total"))
    for index, state in enumerate([total.rules.initial_state(), *live_positions(total.rules, seed=4, count=2, max_plies=4)]):
        check_against_reference(total, state, 25, -1, index % 2 == 1, seed=31 + index)
    wide = env_on(WIDE, "0.6")
    state = live_positions(wide.rules, seed=2, count=3, max_plies=40)[2]
    assert len(wide.rules.legal_moves(state)) > 16  # the root alone outgrows a pool of 8 * (1 + 1) slots
    check_against_reference(wide, state, 1, 2, False, seed=13)
    check_against_reference(wide, state, 12, 2, False, seed=13)
    broad = env_on(standard_layout(10, 10), "0.6")
    state = live_positions(broad.rules, seed=5, count=2, max_plies=40)[1]
    check_against_reference(broad, state, 45, 0, True, seed=14)  # 23 moves per node or so: the pool grows


def test_a_forced_pass_at_the_root_is_one_child(make_position):
    env = env_on(FOUR, K_MAJORITY)
    state = make_position(env.rules, WHITE_PASSES, WHITE)
    assert env.rules.legal_moves(state) == [PASS]
    result = search(env.rules, table_of(env), state, 9, seed=4)
    assert result.moves == (PASS,) and result.visits == (9,)
    check_against_reference(env, state, 9, -1, False, seed=4)


def test_the_kernel_returns_integer_moves_and_visits():
    env = env_on(FOUR, K_MAJORITY)
    rules, state = env.rules, env.rules.initial_state()
    geometry = rules.geometry
    moves, visits, values = mcts_search(
        geometry.words(state.own),
        geometry.words(state.opponent),
        0,
        0,
        *rules.limit_args,
        geometry.kernel_args,
        table_of(env),
        6,
        1.4,
        2,
        False,
        np.uint64(3),
    )
    assert moves.dtype == np.int64 and visits.dtype == np.int64 and values.dtype == np.float64
    assert sorted(moves.tolist()) == rules.legal_moves(state) and int(visits.sum()) == 6
