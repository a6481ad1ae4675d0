"""Arena: the budget, the ledger, what agents can see, and the privileged simulator."""

import dataclasses

import numpy as np
import pytest
from pydantic import ValidationError

from engine import BLACK, Condition, Environment, IllegalMoveError, make_env
from engine.playouts import random_playout
from engine.protocol.arena import DEFAULT_BUDGET, BudgetExhausted, Ledger
from engine.protocol.policy import FunctionPolicy, RandomPolicy
from harness.play.arena import Arena
from harness.play.grants import PrivilegedSimulator

K_08_ON_12x10 = 18  # condition 2 (K = 0.8, label "Majority<80%") on layout 4


def random_policy(seed=0):
    return RandomPolicy(np.random.default_rng(seed))


def test_budget_is_exactly_enforced():
    arena = Arena(make_env(0), budget=5)
    policy = random_policy()
    records = [arena.play(policy, policy) for _ in range(5)]
    assert arena.games_played == 5 and arena.remaining == 0
    with pytest.raises(BudgetExhausted, match="budget of 5 games used up: 5 games played"):
        arena.play(policy, policy)
    with pytest.raises(BudgetExhausted):
        arena.play(policy, policy)
    assert arena.ledger.games_played == 5
    assert list(arena.ledger.records) == records


def test_default_budget_and_zero_budget():
    assert Arena(make_env(0)).budget == DEFAULT_BUDGET == 2000
    with pytest.raises(BudgetExhausted):
        Arena(make_env(0), budget=0).play(random_policy(), random_policy())
    with pytest.raises(ValueError, match="budget"):
        Arena(make_env(0), budget=-1)


def test_play_returns_trajectory_and_rewards():
    env = make_env(K_08_ON_12x10)
    arena = Arena(env, budget=3)
    record = arena.play(random_policy(1), random_policy(2))
    assert record.trajectory and record.rewards == env.condition.rewards(record.black, record.white)
    assert arena.ledger.records[0] == record and arena.ledger.records[0].trajectory == ()


def test_ledger_is_an_immutable_snapshot():
    arena = Arena(make_env(0), budget=3)
    policy = random_policy()
    arena.play(policy, policy)
    snapshot = arena.ledger
    arena.play(policy, policy)
    assert snapshot.games_played == 1 and arena.ledger.games_played == 2
    with pytest.raises(ValidationError):
        snapshot.records = ()  # type: ignore[misc]
    with pytest.raises(AttributeError):
        arena.ledger = snapshot  # type: ignore[misc]
    with pytest.raises(AttributeError):
        arena.games_played = 0  # type: ignore[misc]


def test_aborted_game_is_not_counted():
    arena = Arena(make_env(0), budget=2)
    cheat = FunctionPolicy(lambda obs: 0, name="cheat")
    with pytest.raises(IllegalMoveError, match="cheat"):
        arena.play(cheat, random_policy())
    assert arena.games_played == 0 and arena.remaining == 2
    arena.play(random_policy(), random_policy())
    arena.play(random_policy(), random_policy())
    assert arena.games_played == 2


def test_nested_play_is_refused_and_not_counted():
    arena = Arena(make_env(0), budget=5)
    inner = random_policy()

    def sneaky(obs):
        arena.play(inner, inner)
        return obs.legal_moves[0]

    with pytest.raises(RuntimeError, match="one at a time"):
        arena.play(FunctionPolicy(sneaky), inner)
    assert arena.games_played == 0


def test_public_attributes_do_not_expose_the_condition():
    env = make_env(K_08_ON_12x10)
    arena = Arena(env, budget=2)
    policy = random_policy()
    arena.play(policy, policy)
    public = [name for name in dir(arena) if not name.startswith("_")]
    assert set(public) >= {"rules", "layout", "budget", "games_played", "remaining", "ledger", "play"}
    for name in public:
        value = getattr(arena, name)
        assert not isinstance(value, Condition | Environment), name
    for banned in ("condition", "env", "environment", "env_id", "id", "k", "name"):
        assert not hasattr(arena, banned), banned
    assert not any(isinstance(v, Condition) for v in vars(arena.rules).values())
    shown = repr(arena) + arena.ledger.model_dump_json()
    assert env.condition.label not in shown and "Majority" not in shown


def test_policies_see_no_condition_during_play():
    arena = Arena(make_env(K_08_ON_12x10), budget=1)
    inner = random_policy()
    seen = []

    def inspect(obs):
        fields = {field.name: getattr(obs, field.name) for field in dataclasses.fields(obs)}
        seen.append(any(isinstance(value, Condition | Environment) for value in fields.values()))
        return inner.act(obs)

    policy = FunctionPolicy(inspect)
    arena.play(policy, policy)
    assert seen and not any(seen)


def test_self_play_with_one_object():
    arena = Arena(make_env(32), budget=1)
    policy = random_policy()
    record = arena.play(policy, policy)
    assert record.black + record.white > 4


def test_resume_from_a_ledger():
    env = make_env(0)
    arena = Arena(env, budget=5)
    for seed in range(3):
        arena.play(random_policy(seed), random_policy(seed))
    saved = Ledger.model_validate_json(arena.ledger.model_dump_json())
    assert saved == arena.ledger
    resumed = Arena(env, budget=5, ledger=saved)
    assert resumed.games_played == 3 and resumed.remaining == 2
    resumed.play(random_policy(), random_policy())
    resumed.play(random_policy(), random_policy())
    with pytest.raises(BudgetExhausted):
        resumed.play(random_policy(), random_policy())
    with pytest.raises(ValueError, match="cannot resume"):
        Arena(make_env(1), budget=5, ledger=saved)
    with pytest.raises(ValueError, match="cannot resume"):
        Arena(env, budget=6, ledger=saved)


def test_privileged_simulator_records_grants_and_uses():
    env = make_env(K_08_ON_12x10)
    arena = Arena(env, budget=1, privileged=True)
    assert not arena.privileged_uses.privileged and arena.privileged_uses.uses == 0
    sim = arena.grant_simulator("MCTS baseline rollouts")
    assert isinstance(sim, PrivilegedSimulator)
    assert arena.privileged_uses.grants == ("MCTS baseline rollouts",) and arena.privileged_uses.privileged

    start = env.rules.initial_state()
    rollout = sim.rollout(start, seed=12345)
    mover, opponent, next_seed = random_playout(env.rules, start, 12345)
    assert (rollout.black, rollout.white, rollout.seed) == (mover, opponent, next_seed)  # black moves first
    assert rollout.rewards == env.condition.rewards(rollout.black, rollout.white)
    assert sim.rewards(40, 10) == env.condition.rewards(40, 10) == (0, 0)  # rho 0.8 is outside the open (0.5, 0.8)
    assert sim.rewards(30, 10) == (1, -1) and sim.rewards(20, 20) == (0, 0)

    record = arena.play(random_policy(), random_policy())
    final = start
    for move in record.moves:
        final = env.rules.play(final, move)
    assert sim.outcome(final) == record.rewards
    with pytest.raises(ValueError, match="finished game"):
        sim.outcome(start)  # refused, not counted
    with pytest.raises(ValueError, match="seed"):
        sim.rollout(start, seed=-1)

    usage = arena.privileged_uses
    assert (usage.rollout_calls, usage.rewards_calls, usage.outcome_calls, usage.uses) == (1, 3, 1, 5)
    arena.grant_simulator("second opinion")
    assert arena.privileged_uses.grants == ("MCTS baseline rollouts", "second opinion")
    assert arena.ledger.privileged == arena.privileged_uses
    with pytest.raises(ValueError, match="reason"):
        arena.grant_simulator("  ")


def test_rollout_from_white_to_move_and_from_the_end():
    env = make_env(0)
    sim = Arena(env, privileged=True).grant_simulator("test")
    start = env.rules.initial_state()
    white_to_move = env.rules.play(start, env.rules.legal_moves(start)[0])
    rollout = sim.rollout(white_to_move, seed=7)
    mover, opponent, _ = random_playout(env.rules, white_to_move, 7)
    assert (rollout.white, rollout.black) == (mover, opponent)
    assert white_to_move.to_move != BLACK


def test_play_verified_counts_against_the_budget():
    import asyncio

    from harness.play.game import from_policy

    arena = Arena(make_env(0), budget=2)
    decide = from_policy(random_policy())
    for _ in range(2):
        game, decisions = asyncio.run(arena.play_verified(decide, decide))
        assert decisions and game.forfeit is None
    assert arena.games_played == 2 and arena.ledger.records[-1] == game.record
    with pytest.raises(BudgetExhausted):
        asyncio.run(arena.play_verified(decide, decide))


def test_a_forfeited_game_is_counted_scored_as_a_loss_and_uses_budget():
    import asyncio

    from harness.play.decisions import MoveDecision
    from harness.play.game import from_policy

    arena = Arena(make_env(K_08_ON_12x10), budget=2)
    plays = from_policy(random_policy(4))
    calls = {"n": 0}

    def white_gives_up_at_its_third_decision(obs):
        calls["n"] += 1
        return MoveDecision(None, True, []) if calls["n"] == 3 else plays(obs)

    game, decisions = asyncio.run(arena.play_verified(plays, white_gives_up_at_its_third_decision, ("b", "w")))
    assert game.forfeit is not None and game.forfeit.colour == 1 and game.forfeit_by == 1
    assert game.record.rewards == (1, -1) and decisions[-1].decision.forfeited
    assert game.record.plies == game.forfeit.ply == len(game.record.moves) == 5  # b, w, b, w, b, then white forfeits
    assert game.failures[1].forfeits == 1 and game.failures[0].forfeits == 0
    assert arena.games_played == 1 and arena.remaining == 1 and arena.ledger.records == (game.record,)
    arena.play(random_policy(5), random_policy(6))
    assert arena.remaining == 0
    with pytest.raises(BudgetExhausted):
        asyncio.run(arena.play_verified(plays, plays))
    assert arena.games_played == 2
