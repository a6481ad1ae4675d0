"""``RemoteArena.play_moves``: a recorded game's moves go to the referee unplayed; it re-plays, checks, charges, scores."""

from __future__ import annotations

import threading
from multiprocessing import Pipe

import pytest

from engine import make_env
from engine.protocol.arena import BudgetExhausted, Ledger
from harness.envs.ppo_shared import replay
from harness.referee.referee import Referee
from harness.referee.remote_arena import GameRejected, RemoteArena
from harness.referee.wire import AgentProcessGone, Wire
from tests.harness.referee.test_referee import random_game


def _served(env_id: int, budget: int) -> tuple[RemoteArena, Referee]:
    """A RemoteArena whose referee answers in a thread of this process, as the bench worker does over its pipe."""
    env = make_env(env_id)
    referee = Referee(env, budget)
    ours, theirs = Pipe()
    referee_wire = Wire(theirs)

    def serve() -> None:
        try:
            while True:
                referee_wire.send(**referee.answer(referee_wire.recv()))
        except (AgentProcessGone, EOFError, OSError):
            pass

    threading.Thread(target=serve, daemon=True).start()
    return RemoteArena(Wire(ours), env.rules, Ledger(layout=env.layout.name, budget=budget)), referee


@pytest.mark.parametrize("env_id", [7, 46])  # minority; a 12x10 board with a turn limit
def test_recorded_games_are_scored_by_the_referee_and_charged_up_to_the_budget(env_id: int) -> None:
    arena, referee = _served(env_id, budget=2)
    env = make_env(env_id)
    games = [random_game(env.rules, seed) for seed in range(3)]
    for moves in games[:2]:
        record = arena.play_moves(moves)
        black, white, _ = env.rules.replay(moves)
        assert (record.black, record.white) == (black, white) and record.rewards == env.condition.rewards(black, white)
    assert arena.ledger.records == referee.ledger.records  # the agent's copy of the ledger: the referee's records
    assert referee.games_played == arena.games_played == 2
    with pytest.raises(BudgetExhausted):
        arena.play_moves(games[2])
    assert referee.games_played == 2 and referee.refused_games == 1


def test_an_illegal_recorded_game_is_rejected_and_not_charged() -> None:
    arena, referee = _served(14, budget=3)
    moves = random_game(make_env(14).rules, 4)
    with pytest.raises(GameRejected):
        arena.play_moves([moves[1], *moves[1:]])
    with pytest.raises(GameRejected):
        arena.play_moves(moves[:-1])  # unfinished
    assert referee.games_played == arena.games_played == 0 and len(referee.rejected) == 2


def test_a_shared_training_replayed_through_the_referee_refuses_a_reward_it_scores_differently() -> None:
    arena, referee = _served(14, budget=3)  # K = 0.8: a majority under 80% wins
    env = make_env(14)
    moves = random_game(env.rules, 5)
    true = env.condition.rewards(*env.rules.replay(moves)[:2])[0]
    replay(arena, [(moves, true)])
    with pytest.raises(ValueError, match="training game 1 scores"):
        replay(arena, [(moves, -true if true else 1)])
    assert referee.games_played == 2  # each game was charged before its reward was compared
