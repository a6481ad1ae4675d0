"""What the privileged simulators left free (survivors of `make mutation MODULES=play`).

Pinned here: grants made for a privileged agent's own process (``for_rules``), the refusal texts
whole (no reason, not registered as privileged, an outcome asked of an unfinished game) and the
seeds a rollout takes (0 .. 2**64 - 1 as ints, never a bool or a float).
"""

from __future__ import annotations

import pytest

from engine import make_env
from harness.play.grants import EvaluationGrants, checked_reason, evaluation_simulator, refusal_message

ENV = make_env(0)


def test_grants_for_an_agent_s_own_process_use_the_rules_and_condition_given():
    rules = ENV.rules
    grants = EvaluationGrants.for_rules(rules, ENV.condition)
    simulator = grants.grant_simulator(" MCTS rollouts ")
    assert simulator.rules is rules
    assert simulator.rewards(40, 24) == ENV.condition.rewards(40, 24) == (1, -1)
    assert grants.usage.grants == ("MCTS rollouts",) and grants.usage.rewards_calls == 1


def test_a_grant_without_a_reason_is_refused_in_words():
    for reason in ("", "  ", None):
        with pytest.raises(ValueError) as refused:
            checked_reason(reason)
        assert str(refused.value) == "grant_simulator needs a reason (e.g. 'MCTS baseline rollouts'); it is recorded"
    assert checked_reason("  why ") == "why"


def test_the_refusal_of_an_agent_not_registered_as_privileged_says_what_to_do():
    assert refusal_message("peek") == (
        "simulator request 'peek' refused: this agent is not registered as privileged, so it may not see the true "
        "outcome rule; the request is recorded in the ledger (privileged.refused) and shown in reports. Agents that "
        "need the simulator declare privileged=True in their registry entry."
    )


def test_an_outcome_needs_a_finished_game():
    simulator = evaluation_simulator(ENV, "test")
    with pytest.raises(ValueError) as refused:
        simulator.outcome(ENV.rules.initial_state())
    assert str(refused.value) == ("outcome() needs a finished game (rules.is_over(state)); use rollout() from other states")
    assert simulator.usage.outcome_calls == 0


@pytest.mark.parametrize("seed", [0, 1, 2**64 - 1])
def test_a_rollout_takes_every_64_bit_seed(seed):
    simulator = evaluation_simulator(ENV, "test")
    rollout = simulator.rollout(ENV.rules.initial_state(), seed)
    assert rollout.black + rollout.white <= 64 and rollout.rewards == ENV.condition.rewards(rollout.black, rollout.white)
    assert simulator.usage.rollout_calls == 1


@pytest.mark.parametrize("seed", [-1, 2**64, 3**41, True, 1.5])
def test_a_rollout_refuses_other_seeds_before_counting_a_use(seed):
    simulator = evaluation_simulator(ENV, "test")
    with pytest.raises(ValueError) as refused:
        simulator.rollout(ENV.rules.initial_state(), seed)
    assert str(refused.value) == f"seed={seed!r}: give an int in [0, 2**64)"
    assert simulator.usage.rollout_calls == 0
