"""Alpha-beta search: same values as plain minimax, with and without the transposition table.

Values are compared exactly (==): the three searches add the same floats in the
same order at the leaves, and pruning or the table may only skip work, never
change a value. Positions come from seeded random play on the benchmark's
layouts (plain 8x8, No Corners, the 12x10 and 6x8 random boards), a generated
5x7 board with obstacles, and turn-limited rules.
"""

from __future__ import annotations

import numpy as np
import pytest
from search_positions import layout_named, live_positions, random_walk

from agents.base import AgentContext
from agents.search.api import minimax_value, search, search_position, shared_tables, solve_endgame
from agents.search.endgame import outcome_utility, target_utility
from agents.search.features import DEFAULT_WEIGHTS, FEATURES
from agents.search.minimax import MinimaxAgent
from agents.search.ttable import child_key, root_key
from agents.spec import AgentSpecError
from engine.protocol.observation import observe
from engine.rules import Rules
from engine.state import PASS
from harness.registry.specs import make_agent

LAYOUTS = ["Standard 8x8", "No Corners", "Random Board 1 (12x10)", "Random Board 2 (6x8)", "random 5x7"]
DEPTHS = {"Standard 8x8": 4, "No Corners": 3, "Random Board 1 (12x10)": 3, "Random Board 2 (6x8)": 4, "random 5x7": 4}


def rules_for(name: str, turn_limit: int | None = None, counting: str = "per_player") -> Rules:
    return Rules(layout_named(name), turn_limit, counting)


@pytest.mark.parametrize("name", LAYOUTS)
def test_alpha_beta_equals_plain_minimax_with_and_without_the_table(name: str):
    rules = rules_for(name)
    compared = 0
    for i, state in enumerate(live_positions(rules, seed=len(name), count=48)):
        depth = 1 + i % DEPTHS[name]
        reference = minimax_value(rules, state, depth)
        with_table = search_position(rules, state, depth)
        without_table = search_position(rules, state, depth, use_tt=False)
        assert with_table.value == without_table.value == reference, (depth, state)
        assert with_table.depth == depth
        assert with_table.move in rules.legal_moves(state)
        compared += 1
    assert compared == 48


@pytest.mark.parametrize(("limit", "counting"), [(6, "per_player"), (10, "total"), (9, "per_player")])
def test_alpha_beta_equals_minimax_under_a_turn_limit(limit: int, counting: str):
    rules = rules_for("Random Board 2 (6x8)", limit, counting)
    ends_within_reach = 0
    for i, state in enumerate(live_positions(rules, seed=limit, count=20, max_plies=2 * limit)):
        depth = 2 + i % 3
        reference = minimax_value(rules, state, depth)
        assert search_position(rules, state, depth).value == reference
        assert search_position(rules, state, depth, use_tt=False).value == reference
        placed = state.placed_black + state.placed_white
        left = limit - placed if counting == "total" else 2 * limit - placed
        ends_within_reach += left <= depth
    assert ends_within_reach >= 3  # the limit ends some games inside the horizon


def test_other_weights_and_utilities_keep_the_equality():
    rng = np.random.default_rng(5)
    rules = rules_for("random 5x7")
    cells = rules.layout.cells
    utilities = [
        outcome_utility(cells, "0.2"),
        outcome_utility(cells, "1.01"),
        target_utility(cells, 12),
        rng.integers(-5, 6, size=(cells + 1, cells + 1)).astype(float),
    ]
    for i, state in enumerate(live_positions(rules, seed=9, count=24, max_plies=30)):
        weights = rng.normal(size=len(FEATURES)) * 5
        utility = utilities[i % len(utilities)]
        depth = 1 + i % 4
        reference = minimax_value(rules, state, depth, weights, utility)
        assert search_position(rules, state, depth, weights, utility).value == reference
        assert search_position(rules, state, depth, weights, utility, use_tt=False).value == reference


def test_ties_are_exact_and_the_other_moves_are_bounded():
    """Each root move's value: exact when it ties the best, else an upper bound below the best."""
    rules = rules_for("Standard 8x8")
    for i, state in enumerate(live_positions(rules, seed=3, count=12, max_plies=40)):
        depth = 2 + i % 3
        result = search_position(rules, state, depth)
        assert result.move in result.ties
        for move, value in zip(result.moves, result.values):
            true_value = -minimax_value(rules, rules.play(state, move), depth - 1)  # disc difference is symmetric
            if value == result.value:
                assert true_value == value
            else:
                assert true_value <= value < result.value


def test_zobrist_keys_update_incrementally():
    rules = rules_for("Random Board 1 (12x10)", 9, "per_player")
    tables = shared_tables(rules.layout)
    zob, g = tables.zobrist, rules.geometry
    cells = rules.layout.cells
    for state in live_positions(rules, seed=4, count=20, max_plies=14):
        own, opp = g.words(state.own), g.words(state.opponent)
        placed, other = state.placed(state.to_move), state.placed(1 - state.to_move)
        key = np.uint64(root_key(own, opp, placed, other, True, zob))
        for move in rules.legal_moves(state):
            if move == PASS:
                continue
            child = rules.play(state, move)
            flipped = g.words(rules.flips(state, move))
            mover_after = child.discs(state.to_move)
            expected = root_key(g.words(mover_after), g.words(child.discs(child.to_move)), placed + 1, other, True, zob) ^ zob[2 * cells]
            assert np.uint64(child_key(key, move, flipped, np.int64(0), placed, True, zob)) == expected


def test_a_forced_pass_is_searched_as_a_ply():
    rules = rules_for("Random Board 2 (6x8)")
    rng = np.random.default_rng(11)
    found = 0
    while found < 3:
        state = random_walk(rules, rng, int(rng.integers(10, 40)))
        if rules.legal_moves(state) != [PASS]:
            continue
        found += 1
        result = search_position(rules, state, 3)
        assert result.move == PASS and result.moves == (PASS,)
        assert result.value == minimax_value(rules, state, 3)


def test_finished_games_dominate_the_heuristic():
    """A one-disc win (utility 1) is worth more than any evaluation, which is at most the weights' sum."""
    rules = rules_for("Standard 8x8")
    result = search_position(rules, rules.initial_state(), 2)
    assert result.scale == 1 + sum(DEFAULT_WEIGHTS.values())
    assert abs(result.value) < result.scale  # no game can end within two plies


def test_the_time_limit_keeps_a_completed_iteration():
    rules = rules_for("Standard 8x8")
    state = live_positions(rules, seed=8, count=1, max_plies=20)[0]
    result = search_position(rules, state, 40, time_limit=1e-4)
    assert 1 <= result.depth < 40
    assert result.move in rules.legal_moves(state)


def test_python_api_returns_legal_moves():
    rules = rules_for("No Corners")
    state = live_positions(rules, seed=2, count=1)[0]
    move, value, nodes = search(rules, state, 3)
    assert move in rules.legal_moves(state) and nodes > 0 and np.isfinite(value)


def test_bad_arguments_are_refused():
    rules = rules_for("Standard 8x8")
    state = rules.initial_state()
    with pytest.raises(ValueError, match="depth"):
        search_position(rules, state, 0)
    with pytest.raises(ValueError, match="valid features"):
        search_position(rules, state, 2, {"mobilty": 1.0})
    with pytest.raises(ValueError, match="utility table"):
        search_position(rules, state, 2, None, np.zeros((3, 3)))


# ---------------------------------------------------------------- the agent


@pytest.mark.parametrize("limit", [None, 8])
def test_the_agent_plays_legal_moves_through_a_whole_game(limit: int | None):
    rules = rules_for("Random Board 2 (6x8)", limit)
    agent = MinimaxAgent(AgentContext(rules), np.random.default_rng(0), depth=3, endgame=8)
    rng = np.random.default_rng(1)
    state = rules.initial_state()
    while moves := rules.legal_moves(state):
        move = agent.act(observe(rules, state)) if state.to_move == 0 else moves[int(rng.integers(len(moves)))]
        assert move in moves
        state = rules.play(state, move)


def test_the_agent_solves_the_endgame_exactly():
    rules = rules_for("Standard 8x8")
    agent = MinimaxAgent(AgentContext(rules), np.random.default_rng(0), endgame=10)
    state = next(
        s
        for s in live_positions(rules, seed=21, count=40, max_plies=70)
        if (rules.layout.playable_mask & ~(s.black | s.white)).bit_count() <= 10 and len(rules.legal_moves(s)) > 1
    )
    agent.act(observe(rules, state))
    value, _ = solve_endgame(rules, state)
    assert agent.last is not None and agent.last.value == value


def test_the_agent_is_registered_with_its_parameters():
    rules = rules_for("Standard 8x8")
    agent = make_agent("minimax:depth=2,time=0.5,endgame=0", AgentContext(rules), np.random.default_rng(0))
    assert isinstance(agent, MinimaxAgent)
    assert (agent.depth, agent.time, agent.endgame) == (2, 0.5, 0)
    with pytest.raises(AgentSpecError, match="valid parameters: depth=<int>, time=<float>, endgame=<int>"):
        make_agent("minimax:deep=3", AgentContext(rules), np.random.default_rng(0))
    with pytest.raises(ValueError, match="depth"):
        MinimaxAgent(AgentContext(rules), np.random.default_rng(0), depth=0)


def test_symmetric_openings_all_tie_and_the_agent_draws_among_them():
    """The four openings of 8x8 are one move up to symmetry: every depth must find all four tied."""
    rules = rules_for("Standard 8x8")
    state = rules.initial_state()
    openings = sorted(rules.legal_moves(state))
    assert len(openings) == 4
    for depth in range(1, 6):
        for use_tt in (True, False):
            result = search_position(rules, state, depth, use_tt=use_tt)
            assert sorted(result.ties) == openings, (depth, use_tt, result.values)
    chosen = {MinimaxAgent(AgentContext(rules), np.random.default_rng(seed), depth=3).act(observe(rules, state)) for seed in range(40)}
    assert chosen == set(openings)


@pytest.mark.parametrize("name", ["random 5x7", "Random Board 2 (6x8)", "Standard 8x8"])
def test_the_tie_set_is_exactly_the_moves_of_best_minimax_value(name: str):
    """Checked against plain minimax of every child: no move missing from the ties, none there by a bound."""
    rules = rules_for(name)
    several = 0
    for i, state in enumerate(live_positions(rules, seed=11, count=60, max_plies=40)):
        depth = 1 + i % 3
        exact = {move: -minimax_value(rules, rules.play(state, move), depth - 1) for move in rules.legal_moves(state)}
        best = max(exact.values())
        for use_tt in (True, False):
            result = search_position(rules, state, depth, use_tt=use_tt)
            assert result.value == best
            assert sorted(result.ties) == sorted(m for m, v in exact.items() if v == best), (depth, exact, result)
        several += len(result.ties) > 1
    assert several >= 1  # a position with more than one best move was checked (the openings test has more)
