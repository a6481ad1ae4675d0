"""The privileged simulator's reward table, and simulator grants outside an arena (evaluation)."""

import numpy as np
import pytest

from engine import Condition, make_env
from engine.protocol.arena import PrivilegeRefused
from harness.play.arena import Arena
from harness.play.grants import EvaluationGrants, PrivilegedSimulator, evaluation_simulator

K_08_ON_12x10 = 18  # condition 2 (K = 0.8) on layout 4


@pytest.mark.parametrize("env_id", [0, 7, K_08_ON_12x10, 27, 38, 55])
def test_reward_table_is_the_outcome_rule(env_id):
    env = make_env(env_id)
    table = evaluation_simulator(env, "test").reward_table()
    cells = env.layout.cells
    assert table.dtype == np.int8 and table.shape == (cells + 1, cells + 1)
    assert not table.flags.writeable
    for own in range(cells + 1):
        for opp in range(cells + 1 - own):
            assert table[own, opp] == env.condition.rewards(own, opp)[0], (own, opp)
    assert (table[np.triu_indices(cells + 1, 1)] == -table.T[np.triu_indices(cells + 1, 1)]).all()


def test_reward_table_is_exact_at_the_interval_ends():
    env = make_env(K_08_ON_12x10)  # I(K) = (0.5, 0.8), open at both ends
    table = Arena(env, privileged=True).grant_simulator("test").reward_table()
    assert table[40, 10] == 0 and table[39, 10] == 1 and table[10, 40] == 0 and table[10, 39] == -1
    assert table[20, 20] == 0 and table[21, 20] == 1 and table[0, 0] == 0
    assert Condition("0.8").wins(39, 10) and not Condition("0.8").wins(40, 10)


def test_reward_table_use_is_recorded_in_the_arena_ledger():
    arena = Arena(make_env(0), budget=1, privileged=True)
    sim = arena.grant_simulator("MCTS rollouts")
    sim.reward_table()
    sim.rewards(10, 5)
    usage = arena.privileged_uses
    assert (usage.table_calls, usage.rewards_calls, usage.uses) == (1, 1, 2)
    assert sim.usage == usage == arena.ledger.privileged


def test_evaluation_grants_keep_their_own_record():
    env = make_env(K_08_ON_12x10)
    grants = EvaluationGrants(env)
    assert not grants.usage.privileged and grants.usage.uses == 0
    first = grants.grant_simulator("MCTS rollouts")
    second = grants.grant_simulator("  second agent ")
    assert isinstance(first, PrivilegedSimulator) and first.rules == env.rules
    first.reward_table()
    second.reward_table()
    second.rollout(env.rules.initial_state(), seed=3)
    usage = grants.usage
    assert usage.grants == ("MCTS rollouts", "second agent") and usage.privileged
    assert (usage.table_calls, usage.rollout_calls, usage.uses) == (2, 1, 3)
    assert first.usage == second.usage == usage
    other = evaluation_simulator(env, "lone")
    other.reward_table()
    assert other.usage.grants == ("lone",) and other.usage.table_calls == 1
    assert grants.usage == usage, "separate grantors keep separate records"
    with pytest.raises(ValueError, match="reason"):
        grants.grant_simulator(" ")
    with pytest.raises(ValueError, match="reason"):
        evaluation_simulator(env, "")


def test_evaluation_grants_do_not_show_the_condition():
    env = make_env(K_08_ON_12x10)
    grants = EvaluationGrants(env)
    grants.grant_simulator("x")
    shown = repr(grants) + grants.usage.model_dump_json()
    assert env.condition.label not in shown and "0.8" not in shown and "Majority" not in shown
    public = [name for name in dir(grants) if not name.startswith("_")]
    assert set(public) == {"usage", "grant_simulator", "for_rules"}  # for_rules: a constructor


def test_an_arena_not_configured_privileged_refuses_the_grant_and_records_the_request():
    arena = Arena(make_env(0), budget=1)
    with pytest.raises(PrivilegeRefused, match="not registered as privileged"):
        arena.grant_simulator("peek at K")
    with pytest.raises(PrivilegeRefused):
        arena.grant_simulator("again")
    usage = arena.privileged_uses
    assert usage.refused == ("peek at K", "again")
    assert usage.grants == () and not usage.privileged and usage.uses == 0
