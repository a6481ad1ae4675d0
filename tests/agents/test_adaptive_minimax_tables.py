"""Adaptive Minimax's count-indexed weight table: the flat-index fill writes exactly the fancy-indexed table."""

from __future__ import annotations

import numpy as np
import pytest

from agents.adaptive_minimax.agent import _TERM_FEATURES, AdaptiveMinimaxAgent, weightnet
from agents.base import AgentContext
from agents.search.features import FEATURES
from engine import make_env


@pytest.mark.parametrize("env_id", [0, 32, 40])
def test_kernel_table_is_the_fancy_indexed_table_bit_for_bit(env_id: int) -> None:
    agent = AdaptiveMinimaxAgent(AgentContext(make_env(env_id).rules), np.random.default_rng(env_id), population=6)
    utility = agent.utility
    own, opp = utility.pairs.T
    for parameters in agent.population:
        outputs = weightnet(parameters, utility.inputs, agent.hidden)[0]
        expected = np.zeros((utility.size, utility.size, len(FEATURES)))
        expected[own[:, None], opp[:, None], _TERM_FEATURES] = outputs * utility.scale
        table = utility.kernel_table(outputs)
        assert table.shape == expected.shape and table.dtype == np.float64 and table.flags.c_contiguous
        assert np.array_equal(table.view(np.uint64), expected.view(np.uint64))
