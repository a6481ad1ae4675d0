"""The referee's answers, its wire, and the agent process: scoring, refusals, and frozen evaluation copies."""

from __future__ import annotations

import contextlib
import pickle
import random
import threading
from multiprocessing import Pipe

import numpy as np
import pytest

from agents.base import AgentContext
from engine import make_env
from engine.protocol.observation import observe
from engine.rules import Rules
from harness.play.arena import Arena
from harness.referee.agent_process import AgentJob, adapt
from harness.referee.referee import Referee
from harness.referee.session import AgentSession
from harness.referee.wire import MAX_MESSAGE_BYTES, ProtocolViolation, Wire
from harness.registry.specs import make_agent


def random_game(rules: Rules, seed: int) -> list[int]:
    rng, state, moves = random.Random(seed), rules.initial_state(), []
    while legal := rules.legal_moves(state):
        moves.append(rng.choice(legal))
        state = rules.play(state, moves[-1])
    return moves


@pytest.mark.parametrize("env_id", [0, 7, 26, 48, 55])
def test_a_legal_game_is_scored_with_the_true_k_and_charged(env_id):
    env = make_env(env_id)
    referee = Referee(env, budget=3)
    moves = random_game(env.rules, env_id)
    reply = referee.answer({"op": "game", "moves": moves, "black": "me", "white": "me"})
    assert reply["op"] == "scored" and reply["games_played"] == 1
    black, white, _ = env.rules.replay(moves)
    assert tuple(reply["rewards"]) == env.condition.rewards(black, white) == referee.ledger.records[0].rewards
    assert (reply["black"], reply["white"]) == (black, white)
    assert referee.ledger.records[0].moves == tuple(moves)


def test_an_illegal_or_unfinished_game_is_rejected_and_never_charged():
    env = make_env(14)
    referee = Referee(env, budget=3)
    moves = random_game(env.rules, 1)
    assert referee.answer({"op": "game", "moves": moves[:-1]})["op"] == "rejected"
    reply = referee.answer({"op": "game", "moves": [moves[1], *moves[1:]]})
    assert reply["op"] == "rejected" and "ply 0" in reply["error"]
    assert referee.games_played == 0 and len(referee.rejected) == 2


def test_a_forfeited_game_is_scored_as_a_loss_for_the_forfeiter():
    env = make_env(14)
    referee = Referee(env, budget=3)
    moves = random_game(env.rules, 2)[:5]
    reply = referee.answer({"op": "game", "moves": moves, "forfeit": 1})
    assert reply["op"] == "scored" and tuple(reply["rewards"]) == (1, -1)


def test_the_budget_holds_whatever_the_agent_sends():
    env = make_env(0)
    referee = Referee(env, budget=2)
    moves = random_game(env.rules, 3)
    for _ in range(2):
        assert referee.answer({"op": "game", "moves": moves})["op"] == "scored"
    assert referee.answer({"op": "game", "moves": moves})["op"] == "refused"
    assert referee.answer({"op": "over_budget"})["op"] == "refused"
    assert referee.games_played == 2 and referee.refused_games == 2


def test_a_simulator_request_is_refused_and_recorded():
    referee = Referee(make_env(0), budget=2)
    reply = referee.answer({"op": "grant", "reason": "peek"})
    assert reply["op"] == "refused" and "not registered as privileged" in reply["error"]
    assert referee.ledger.privileged.refused == ("peek",) and not referee.ledger.privileged.privileged


@pytest.mark.parametrize(
    "message",
    [
        {"op": "reset_ledger"},
        {"op": "set_k", "k": 0.5},
        {"op": "game", "moves": "d3"},
        {"op": "game", "moves": [True, 1]},
        {"op": "game", "moves": list(range(10_000))},
        {"op": "game", "moves": [19], "forfeit": 2},
    ],
)
def test_messages_outside_the_protocol_are_violations(message):
    referee = Referee(make_env(0), budget=2)
    with pytest.raises(ProtocolViolation):
        referee.answer(message)
    assert referee.games_played == 0


@pytest.mark.parametrize("raw", [pickle.dumps({"op": "game"}), b"not json", b"[1, 2]", b'{"no_op": 1}', b'{"op": 3}'])
def test_the_wire_reads_json_objects_only_so_a_pickle_never_runs(raw):
    ours, theirs = Pipe()
    theirs.send_bytes(raw)
    with pytest.raises(ProtocolViolation):
        Wire(ours).recv()


def test_the_wire_refuses_an_oversized_message():
    ours, theirs = Pipe()
    big = b'{"op": "game", "pad": "' + b"x" * MAX_MESSAGE_BYTES + b'"}'

    def send() -> None:  # in a thread: the message is larger than the pipe's buffer
        with contextlib.suppress(OSError):  # the reader refuses it and closes its end
            theirs.send_bytes(big)

    sender = threading.Thread(target=send, daemon=True)
    sender.start()
    with pytest.raises(ProtocolViolation, match="at most"):
        Wire(ours).recv()
    ours.close()  # the sender's write then fails and its thread ends
    sender.join(timeout=30)


@pytest.mark.parametrize("spec,env_id", [("interval", 26), ("adaptive-minimax:population=4,train_depth=1", 12)])
def test_through_the_referee_an_agent_plays_the_same_games_as_in_process(spec, env_id):
    env = make_env(env_id)
    built = make_agent(spec, AgentContext(env.rules), np.random.default_rng(9))
    arena = Arena(env, 12)
    adapt(built, arena, lambda *_a, **_k: None)
    with AgentSession(env, AgentJob(agent=spec, rules=env.rules, budget=12, seed=9)) as session:
        adapted = session.adapt(lambda _played: False, lambda _agent, _played: None)
    assert adapted.error is None
    assert session.referee.ledger.records == arena.ledger.records


def test_checkpoint_evaluations_play_a_frozen_copy_that_changes_nothing_of_the_adaptation():
    """Evaluating at every progress report (many moves asked of the copy) leaves the adaptation's games as they were."""
    env, spec = make_env(12), "adaptive-minimax:population=4,train_depth=1"
    job = AgentJob(agent=spec, rules=env.rules, budget=16, seed=4)
    ledgers, evaluated = [], []

    def evaluate_now(agent, played):
        rules, state = env.rules, env.rules.initial_state()
        while legal := rules.legal_moves(state):  # the copy plays a whole game against itself
            state = rules.play(state, legal[0] if legal == [-1] else agent.act(observe(rules, state, legal)))
        evaluated.append(played)

    for due in (lambda _played: False, lambda _played: True):
        with AgentSession(env, job) as session:
            assert session.adapt(due, evaluate_now).error is None
            ledgers.append(session.referee.ledger.records)
    assert evaluated and ledgers[0] == ledgers[1]
