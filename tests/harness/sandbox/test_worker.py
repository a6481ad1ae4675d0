"""The worker's behaviour on programs that work: answers checked against the true engine, batches, planning, restarts."""

from __future__ import annotations

import random

import pytest

from engine import make_env
from harness.sandbox import command
from harness.sandbox.client import SandboxWorker
from harness.sandbox.failures import CandidateFailed, FailureKind, SandboxUnavailable
from harness.sandbox.reference_program import layout_json, reference_source


def _as_engine(rules, state):
    """The program's JSON state as the engine's ``State``."""
    board = state["board"]
    black = sum(1 << i for i, v in enumerate(board) if v == 1)
    white = sum(1 << i for i, v in enumerate(board) if v == 2)
    return type(rules.initial_state())(black, white, state["player"], *state["placed"])


@pytest.mark.parametrize("env_id", [0, 13, 51], ids=["8x8", "10x10-obstacles", "blitz"])
def test_reference_program_agrees_with_the_engine(make_worker, env_id):
    env = make_env(env_id)
    rules, condition = env.rules, env.condition
    worker = make_worker(reference_source(float(condition.k)))
    state = worker.call("initial_state", [layout_json(env.layout, rules.turn_limit, rules.turn_counting)]).unwrap()
    truth = rules.initial_state()
    rng = random.Random(env_id)
    while True:
        legal, terminal, player = (
            r.unwrap() for r in worker.call_many([("legal_actions", [state]), ("is_terminal", [state]), ("current_player", [state])])
        )
        assert _as_engine(rules, state) == truth
        assert sorted(legal) == rules.legal_moves(truth) and player == truth.to_move
        assert terminal == rules.is_over(truth)
        if terminal:
            break
        move = rng.choice(legal)
        state, truth = worker.call("apply_action", [state, move]).unwrap(), rules.play(truth, move)
    assert tuple(worker.call("returns", [state]).unwrap()) == condition.rewards(*rules.counts(truth))


def test_planning_inside_the_worker_picks_a_legal_move(make_worker):
    env = make_env(0)
    worker = make_worker(reference_source())
    state = worker.call("initial_state", [layout_json(env.layout)]).unwrap()
    planned = worker.plan("mcts", state=state, simulations=30, seed=3).unwrap()
    assert planned["action"] in env.rules.legal_moves(env.rules.initial_state())
    assert sum(planned["visits"]) == 30
    played = worker.plan("playouts", state=state, count=3, seed=1).unwrap()
    assert played["playouts"] == 3 and played["plies"] >= 3 * 56


def test_a_program_that_does_not_load_answers_every_call_with_its_failure(sandbox_ready):
    with SandboxWorker("def legal_actions(state):\n    return [\n") as worker:
        first = worker.start()
        assert first.failure is not None and first.failure.kind is FailureKind.CRASH
        assert "SyntaxError" in first.failure.message
        again = worker.call("legal_actions", [{}])
        assert again.failure == first.failure and worker.restarts == 0 and worker.pid is None


def test_crash_and_non_json_results_are_classified_and_the_worker_lives_on(make_worker, game_source):
    worker = make_worker(game_source + "\ndef returns(state):\n    return {1, 2} if state else 1 / 0\n")
    crash, garbage = worker.call("returns", [{}]), worker.call("returns", [{"n": 1}])
    assert crash.failure.kind is FailureKind.CRASH and "ZeroDivisionError" in crash.failure.message
    assert "<candidate>" in crash.failure.traceback
    assert garbage.failure.kind is FailureKind.BAD_OUTPUT
    with pytest.raises(CandidateFailed):
        crash.unwrap()
    pid = worker.pid
    assert worker.call("legal_actions", [{"n": 0}]).value == [1, 2] and worker.pid == pid  # same worker
    assert worker.failures == {"crash": 1, "bad_output": 1}


def test_a_failure_in_a_batch_is_that_call_s_alone(make_worker, game_source):
    worker = make_worker(game_source)
    results = worker.call_many([("legal_actions", [{"n": 0}]), ("no_such_function", []), ("is_terminal", [{"n": 11}])])
    assert [r.ok for r in results] == [True, False, True] and results[2].value is True


def test_without_bubblewrap_it_refuses_unless_unsandboxed(monkeypatch, game_source):
    monkeypatch.setattr(command, "bubblewrap_problem", lambda: "bwrap not found on PATH")
    with pytest.raises(SandboxUnavailable, match="bubblewrap.*--unsandboxed"):
        SandboxWorker(game_source)
    with SandboxWorker(game_source, unsandboxed=True) as worker:
        assert worker.sandboxed is False
        assert worker.call("apply_action", [{"n": 1}, 2]).value == {"n": 3}
        assert worker.call("legal_actions", [{"n": 0}]).value == [1, 2]
