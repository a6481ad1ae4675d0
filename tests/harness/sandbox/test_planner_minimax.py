"""``planner.minimax``: alpha-beta on a code world model, in the sandbox and in this process, against known answers."""

from __future__ import annotations

import random
import types

import pytest

from agents.search.api import solve_position
from agents.search.endgame import outcome_utility
from engine import make_env
from harness.cwm.world import state_json
from harness.sandbox import planner
from harness.sandbox.failures import FailureKind
from harness.sandbox.reference_program import layout_json, reference_source

# Nim as a CWM: take 1-3 stones, whoever takes the last one wins. The mover loses exactly when n % 4 == 0.
NIM = """
def initial_state(layout):
    return {"n": layout["n"], "p": 0}
def current_player(state):
    return state["p"]
def legal_actions(state):
    return [take for take in (1, 2, 3) if take <= state["n"]]
def apply_action(state, action):
    return {"n": state["n"] - action, "p": 1 - state["p"]}
def is_terminal(state):
    return state["n"] == 0
def returns(state):
    return [1.0, -1.0] if state["p"] == 1 else [-1.0, 1.0]
"""


def _board(rows: str) -> list[int]:
    return [".BWX".index(cell) for cell in rows.split()]


def _state(rows: str, player: int) -> dict[str, object]:
    return {"rows": 4, "cols": 4, "board": _board(rows), "player": player, "placed": [0, 0], "limit": None, "counting": "per_player"}


# Black to move. 0 (a1) flips b2 on the diagonal to c3: white keeps only d4, a corner nobody can flank, and
# no one can move: over, black 9 - white 1, a black win (share 0.9 in (0.5, 1.01)). 1 (b1) and 4 (a2) also
# flip b2, but then white plays a1 (a1-b2-c3-d4), so the game goes on.
ONE_PLY_WIN = _state(". . . B  . W B B  . B B B  . B . W", player=0)
# White to move with one disc next to black's corner: white cannot flank anything, black can (c1), so
# white must pass; black then takes b1 and white has no disc left: a loss for white.
FORCED_PASS = _state("B W . .  . . . .  . . . .  . . . .", player=1)
OVER = _state("B B . .  . . . .  . . . .  . . . .", player=0)


def _nim() -> types.ModuleType:
    module = types.ModuleType("nim")
    exec(NIM, module.__dict__)  # our own toy game, run in this process: the planner is plain Python
    return module


@pytest.mark.parametrize("stones", range(1, 13))
def test_nim_exact_minimax(stones):
    nim = _nim()
    result = planner.minimax(nim, nim.initial_state({"n": stones}), 20, seed=stones)
    assert result["solved"] and result["stopped"] == "solved"
    if stones % 4:
        assert result["value"] == 1.0 and result["action"] == stones % 4  # leave a multiple of 4
    else:
        assert result["value"] == -1.0 and sorted(result["values"]) == [-1.0] * len(result["actions"])


def test_nim_depth_one_sees_only_the_immediate_win():
    nim = _nim()
    result = planner.minimax(nim, nim.initial_state({"n": 6}), 1)
    assert result["depth"] == 1 and not result["solved"] and result["values"] == [0.0, 0.0, 0.0]
    assert planner.minimax(nim, nim.initial_state({"n": 6}), 3)["action"] == 2


def test_ties_are_broken_by_the_seed_and_a_seed_repeats():
    nim = _nim()
    state = nim.initial_state({"n": 8})  # every move loses: a three-way tie
    picks = {planner.minimax(nim, state, 20, seed=seed)["action"] for seed in range(20)}
    assert picks == {1, 2, 3}
    assert planner.minimax(nim, state, 20, seed=7) == planner.minimax(nim, state, 20, seed=7)


def test_the_program_s_value_function_scores_the_leaves():
    source = NIM + "\ndef value(state):\n    return [0.5, -0.5] if state['n'] == 2 else [0.0, 0.0]\n"
    module = types.ModuleType("nim_value")
    exec(source, module.__dict__)
    result = planner.minimax(module, module.initial_state({"n": 9}), 1)
    # taking 3 leaves 6, taking 1 leaves 8: value() says 0 for both; none leaves 2, so all tie at 0
    assert result["values"] == [0.0, 0.0, 0.0]
    result = planner.minimax(module, module.initial_state({"n": 5}), 1)
    assert result["action"] == 3 and result["value"] == 0.5  # n = 2 left, white to move: black's view +0.5


def test_one_ply_win_in_the_sandbox(make_worker):
    worker = make_worker(reference_source())
    result = worker.plan("minimax", state=ONE_PLY_WIN, depth=1, seed=0).unwrap()
    assert result["action"] == 0 and result["value"] == 1.0 and sorted(result["actions"]) == [0, 1, 4]
    assert result["values"][1:] == [0.0, 0.0] and result["depth"] == 1
    for seed in range(5):  # whatever the order, the win is found
        assert worker.plan("minimax", state=ONE_PLY_WIN, depth=2, seed=seed).unwrap()["action"] == 0


def test_a_forced_pass_is_the_only_action(make_worker):
    worker = make_worker(reference_source())
    result = worker.plan("minimax", state=FORCED_PASS, depth=4).unwrap()
    assert result["actions"] == [-1] and result["action"] == -1
    assert result["value"] == -1.0 and result["solved"] and result["depth"] == 2


def test_a_finished_game_is_a_model_error(make_worker):
    worker = make_worker(reference_source())
    failed = worker.plan("minimax", state=OVER, depth=2)
    assert failed.failure is not None and failed.failure.kind is FailureKind.CRASH
    assert "ModelError" in failed.failure.message and "finished game" in failed.failure.message
    unknown = worker.plan("alphabeta", state=OVER)
    assert unknown.failure is not None and "mcts, playouts, minimax" in unknown.failure.message


def test_depth_and_node_limits(make_worker):
    env = make_env(0)
    worker = make_worker(reference_source())
    initial = worker.call("initial_state", [layout_json(env.layout)]).unwrap()
    deep = worker.plan("minimax", state=initial, depth=3, max_nodes=100_000).unwrap()
    assert (deep["depth"], deep["stopped"], deep["solved"]) == (3, "depth", False)
    assert sorted(deep["actions"]) == sorted(env.rules.legal_moves(env.rules.initial_state()))
    # 4 root moves (depth 1), then 3 replies each (depth 2): 16 positions; depth 3 would pass 20
    capped = worker.plan("minimax", state=initial, depth=6, max_nodes=20).unwrap()
    assert (capped["depth"], capped["stopped"]) == (2, "nodes") and capped["nodes"] <= 20
    first = worker.plan("minimax", state=initial, depth=6, max_nodes=1).unwrap()
    assert (first["depth"], first["nodes"]) == (1, 4)  # the first iteration always completes
    with pytest.raises(ValueError, match="depth >= 1"):
        planner.minimax(_nim(), {"n": 3, "p": 0}, 0)


def test_agrees_with_the_engine_s_exact_endgame_solver(make_worker):
    env = make_env(0)
    rules, k = env.rules, env.condition.k
    utility = outcome_utility(rules.layout.cells, k)
    worker = make_worker(reference_source(float(k)))
    rng, checked = random.Random(3), 0
    while checked < 4:
        state = rules.initial_state()
        while (legal := rules.legal_moves(state)) and rules.layout.cells - (state.black | state.white).bit_count() > 5:
            state = rules.play(state, rng.choice(legal))
        if not legal or rules.is_over(state):
            continue
        truth = solve_position(rules, state, utility)
        result = worker.plan("minimax", state=state_json(rules, state), depth=12, max_nodes=200_000).unwrap()
        assert result["solved"] and result["value"] == truth.value
        checked += 1
