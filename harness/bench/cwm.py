"""``arena bench cwm``: does the code-world-model agent pin K down and win with its program, family by family?

For each case (a benchmark environment, or a seeded random layout with a K value
outside the benchmark's eight), a fresh :class:`~harness.cwm.agent.CwmAgent` with
an offline model (``mock/coder`` by default: real programs, a threshold derived
only from the evidence in its prompt) adapts within ``budget`` games, is frozen,
and plays ``games`` evaluation games against Random, colours alternating. A row
holds the true K (this is a benchmark: it is shown), the feasible set of K the
agent's own outcomes allow, the K interval the final program's reward code
implies and whether it holds the true K, the model calls, the steered
exploration games, the path its final program planned on (``engine``: the
project's kernels with the program's returns table; ``program``: search on the
program in the sandbox), and the wins, draws and losses against Random and
against ``mcts:n=100`` (privileged: the true K through a simulator grant) with
Wilson 95% intervals.

Every random stream is seeded by (seed, case), so a row is the same on every
machine; the agent's programs run in the sandbox (bubblewrap), or, with
``unsandboxed``, with rlimits only (and the table says so).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from agents.base import Agent, AgentContext
from agents.heuristic.simple import RandomAgent
from agents.search.mcts import MctsAgent
from engine import make_env
from engine.condition import Condition
from engine.env_spec import seed_word
from engine.environments import Environment
from engine.layout_gen import random_layouts
from harness.cwm.agent import CwmAgent
from harness.cwm.config import CwmConfig
from harness.cwm.refine import RefineConfig
from harness.models.client import ModelClient
from harness.play.arena import Arena
from harness.play.game import from_policy, play_game_sync
from harness.play.grants import EvaluationGrants
from harness.tournaments.stats import wilson

FAMILY_ENVS = (5, 19, 40, 12, 47)  # one per condition family on the smallest board: K>1, 0.5<K<1, 0<K<0.5, K<0, blitz
RANDOM_KS = (Fraction(7, 10), Fraction(3, 10), Fraction(-1, 2), Fraction(3, 2))  # none of the benchmark's eight
RANDOM_ENV_BASE = 1000  # ids of the random cases (outside 0-55)
WIN_TARGET = 0.9  # the target against Random
MCTS_OPPONENT_N = 100  # the second opponent: mcts:n=100 (privileged)


@dataclass(frozen=True)
class CwmCase:
    """One environment to adapt on: a benchmark one, or a random layout with a K of its own."""

    env: Environment
    source: str  # "benchmark" or "random"

    @property
    def label(self) -> str:
        return f"env {self.env.id}" if self.source == "benchmark" else self.env.layout.name


@dataclass(frozen=True)
class CwmBenchRow:
    """What one case showed."""

    case: CwmCase
    feasible: str
    code_interval: str | None
    contains_k: bool
    model_calls: int
    steered: int
    wins: int
    draws: int
    games: int
    adapt_s: float
    path: str | None = None  # engine or program: where the final program planned
    mcts_wins: int = 0  # against mcts:n=100
    mcts_draws: int = 0
    mcts_games: int = 0

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0

    @property
    def wilson(self) -> tuple[float, float]:
        return wilson(self.wins, self.games)


def benchmark_cases(env_ids: Sequence[int]) -> list[CwmCase]:
    return [CwmCase(make_env(env_id), "benchmark") for env_id in env_ids]


def random_cases(count: int, seed: int) -> list[CwmCase]:
    """``count`` seeded random layouts (5-8 a side, some obstacles), each with a K of :data:`RANDOM_KS` in turn."""
    layouts = random_layouts(seed, count, rows=(5, 8), cols=(5, 8), obstacle_density=(0.0, 0.15))
    return [
        CwmCase(Environment(RANDOM_ENV_BASE + i, layout, Condition(RANDOM_KS[i % len(RANDOM_KS)])), "random")
        for i, layout in enumerate(layouts)
    ]


def run_case(
    case: CwmCase, *, model: str, budget: int, games: int, config: CwmConfig, seed: int, clock: Callable[[], float], mcts_games: int = 0
) -> CwmBenchRow:
    """Adapt a fresh agent on ``case``, then ``games`` games against Random; the agent's worker is always stopped."""
    env = case.env
    agent = CwmAgent(
        AgentContext(env.rules),
        np.random.default_rng([seed, seed_word(env.id)]),
        ModelClient(model),
        budget=budget,
        seed=seed,
        config=config,
    )
    try:
        start = clock()
        asyncio.run(agent.adapt_async(Arena(env, budget=budget)))
        adapt_s = clock() - start
        agent.freeze()
        wins, draws = games_against_random(agent, env, games, seed)
        mcts_wins, mcts_draws = games_against_mcts(agent, env, mcts_games, seed) if mcts_games else (0, 0)
        counts = agent.counts()
        return CwmBenchRow(
            case,
            agent.feasible.describe(),
            counts["k_interval"],
            agent.interval is not None and agent.interval.contains(env.condition.k),
            counts["model_calls"],
            counts["steered_games"],
            wins,
            draws,
            games,
            adapt_s,
            counts.get("path"),
            mcts_wins,
            mcts_draws,
            mcts_games,
        )
    finally:
        agent.close()


def games_against_random(agent: CwmAgent, env: Environment, games: int, seed: int) -> tuple[int, int]:
    """(wins, draws) of the frozen ``agent`` in ``games`` games against Random, colours alternating (black first)."""
    return games_against(agent, env, games, lambda game: RandomAgent(AgentContext(env.rules), _rng(seed, env, game)))


def games_against_mcts(agent: CwmAgent, env: Environment, games: int, seed: int) -> tuple[int, int]:
    """(wins, draws) against ``mcts:n=100``, which reads the true K through a simulator grant (privileged)."""
    grants = EvaluationGrants(env)
    context = AgentContext(env.rules, grant_simulator=grants.grant_simulator)
    return games_against(agent, env, games, lambda game: MctsAgent(context, _rng(seed, env, game), n=MCTS_OPPONENT_N))


def _rng(seed: int, env: Environment, game: int) -> np.random.Generator:
    return np.random.default_rng([seed, seed_word(env.id), game])


def games_against(agent: CwmAgent, env: Environment, games: int, opponent: Callable[[int], Agent]) -> tuple[int, int]:
    """(wins, draws) of the frozen ``agent`` against ``opponent(game)``, colours alternating (black first)."""
    wins = draws = 0
    for game in range(games):
        other = from_policy(opponent(game))
        mine = agent.decider("eval", game)
        sides = (mine, other) if game % 2 == 0 else (other, mine)
        verified, _ = play_game_sync(env.rules, env.condition, *sides)
        reward = verified.record.rewards[game % 2]
        wins, draws = wins + (reward == 1), draws + (reward == 0)
    return wins, draws


def bench_cwm(
    cases: Sequence[CwmCase],
    *,
    model: str = "mock/coder",
    budget: int = 24,
    games: int = 20,
    simulations: int = 1000,
    mode: str = "tree",
    seed: int = 0,
    unsandboxed: bool = False,
    clock: Callable[[], float] | None = None,
    progress: Callable[[CwmBenchRow], None] | None = None,
    mcts_games: int | None = None,
) -> list[CwmBenchRow]:
    """One row per case (module docstring); ``progress`` after each."""
    import time

    config = CwmConfig(
        explore_games=min(20, budget),
        heldout_transitions=500,
        max_calls=6,
        simulations=simulations,
        refine=RefineConfig(mode=mode, unsandboxed=unsandboxed),
    )
    rows = []
    for case in cases:
        row = run_case(
            case,
            model=model,
            budget=budget,
            games=games,
            config=config,
            seed=seed,
            clock=clock or time.perf_counter,
            mcts_games=games if mcts_games is None else mcts_games,
        )
        rows.append(row)
        if progress is not None:
            progress(row)
    return rows
