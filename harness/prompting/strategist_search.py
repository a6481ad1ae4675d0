"""llm-strategist's search: a strategy's alpha-beta searcher, and one self-play game as a worker plays it.

:class:`Searcher` plays a :class:`~harness.prompting.strategist_agent.Strategy`:
its weights in the evaluation and its target share as the utility of finished
games (:func:`~agents.search.endgame.ratio_utility`). :func:`self_play_moves` is a
whole adaptation game of it, both colours, as a worker process plays it
(:mod:`harness.prompting.worker_pool`); :func:`replay` plays those moves again in
the agent process, through the arena. A game's tie-breaking generator is seeded by
the game's index (:func:`~harness.prompting.model_agent.game_rng`), so a game is the
same in any process.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from agents.base import choose, forced_move
from agents.search.api import SearchTables, empties, search_position, solve_position
from agents.search.endgame import ratio_utility
from agents.search.features import weights_array
from engine.protocol.observation import Observation
from harness.play.decisions import MoveDecision
from harness.play.game import play_game_async
from harness.prompting.model_agent import game_rng, named


class StrategyView(Protocol):
    """What the search needs of a :class:`harness.prompting.strategist_agent.Strategy`."""

    @property
    def target_ratio(self) -> float: ...

    def full_weights(self) -> dict[str, float]: ...


class SearchSettings(Protocol):
    """What the search needs of an :class:`harness.prompting.strategist_agent.LlmStrategistConfig`."""

    @property
    def search_depth(self) -> int: ...

    @property
    def endgame(self) -> int: ...


class Searcher:
    """Alpha-beta with a strategy's weights and target utility; ties drawn with the caller's generator."""

    def __init__(self, rules: Any, strategy: StrategyView, config: SearchSettings, tables: SearchTables) -> None:
        self.rules, self.config, self.tables = rules, config, tables
        self.weights = weights_array(strategy.full_weights())
        self.utility = ratio_utility(rules.layout.cells, strategy.target_ratio)

    def move(self, observation: Observation, rng: np.random.Generator) -> int:
        forced = forced_move(observation)
        if forced is not None:
            return forced
        rules, state = observation.rules, observation.state
        if self.config.endgame and empties(rules, state) <= self.config.endgame:
            result = solve_position(rules, state, self.utility, tables=self.tables)
        else:
            result = search_position(rules, state, self.config.search_depth, self.weights, self.utility, tables=self.tables)
        return choose(rng, result.ties)


def self_play_moves(rules: Any, strategy: StrategyView, config: SearchSettings, seed: int, index: int) -> list[int]:
    """The moves the searcher decides in adaptation game ``index`` (both colours), in order; run in a worker."""
    searcher = Searcher(rules, strategy, config, SearchTables(rules.layout))
    rng = game_rng(seed, "adapt", index)
    moves: list[int] = []

    def decide(obs: Observation) -> MoveDecision:
        moves.append(searcher.move(obs, rng))
        return MoveDecision(moves[-1], False, [])

    asyncio.run(play_game_async(rules, None, decide, decide, ("worker", "worker")))
    return moves


def replay(moves: Sequence[int], name: str) -> Callable[[Observation], MoveDecision]:
    """A decider that answers ``moves`` in order (a game searched by a worker, played here)."""
    answers = iter(moves)

    def decide(obs: Observation) -> MoveDecision:
        return MoveDecision(next(answers), False, [])

    return named(decide, name)
