"""PettingZoo's own parallel_api_test on all 56 environments and a custom layout; the parallel face's turns and rewards."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test

from engine.state import COLOUR_NAMES
from harness.envs.parallel import OthelloParallel, parallel_env
from harness.play.arena import Arena
from tests.harness.envs.envs_helpers import ENV_KEYS, environment


@pytest.mark.parametrize("key", ENV_KEYS)
def test_parallel_api_test_passes(key: int | str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # its style hints (dict observations)
        parallel_api_test(parallel_env(environment(key), budget=None), num_cycles=300)


def test_only_the_mover_places_and_a_game_ends_with_the_rules_rewards() -> None:
    env = environment(13)
    arena = Arena(env, budget=1)
    parallel = OthelloParallel(arena=arena)
    observations, _ = parallel.reset(seed=0)
    rng = np.random.default_rng(1)
    while parallel.agents:
        mover = parallel.to_move
        assert mover is not None
        other = COLOUR_NAMES[1 - COLOUR_NAMES.index(mover)]
        assert observations[mover]["action_mask"].any() and not observations[other]["action_mask"].any()
        legal = np.flatnonzero(observations[mover]["action_mask"])
        observations, rewards, terminated, truncated, _ = parallel.step({mover: int(rng.choice(legal)), other: 0})
        assert not any(truncated.values()) and len(set(terminated.values())) == 1
    assert arena.games_played == 1 and parallel.to_move is None
    record = arena.ledger.records[0]
    assert (rewards["black"], rewards["white"]) == tuple(float(r) for r in record.rewards)
    with pytest.raises(RuntimeError, match="call reset"):
        parallel.step({"black": 0})


def test_a_missing_or_illegal_action_of_the_mover_is_refused_by_name() -> None:
    parallel = OthelloParallel(0, budget=None)
    parallel.reset()
    with pytest.raises(ValueError, match="black is to move: illegal action None"):
        parallel.step({"white": 19})
    with pytest.raises(ValueError, match="black is to move: illegal action a1"):
        parallel.step({"black": 0})
