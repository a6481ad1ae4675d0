"""``arena bench referee``: what the referee costs, one agent's adaptation in-process vs through the referee.

Both runs build the same agent from the same seed and adapt it on the same
environment for the same budget, so they play the same games (the ledgers are
compared and the answer printed); the two alternate ``repeats`` times and the
medians are compared. Timed: the agent's whole ``adapt`` call, each
in a fresh spawned interpreter, so both pay the same first-call costs (numba
kernels loaded from the cache). In-process: an :class:`Arena` in that
interpreter; through the referee: the agent process's own clock around the same
call. Starting the interpreter and building the agent (paid once per agent, not
per game) is reported apart, as the refereed session's wall time.
"""

from __future__ import annotations

import multiprocessing
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np

from agents.base import AgentContext
from engine import make_env
from engine.protocol.record import GameRecord
from harness.play.arena import Arena
from harness.referee.agent_process import AgentJob, adapt
from harness.referee.session import AgentSession
from harness.registry.specs import make_agent

TARGET_RATIO = 1.10


@dataclass(frozen=True)
class RefereeBench:
    """Seconds of one adaptation both ways, and whether the two ledgers hold the same games."""

    env_id: int
    agent: str
    games: int
    in_process_seconds: float  # the median over the repeats
    referee_seconds: float  # the median over the repeats
    session_seconds: float  # the referee runs' median wall time, agent process start included
    same_games: bool
    repeats: int = 1
    samples: tuple[tuple[float, float], ...] = ()  # (in-process, referee) seconds of each repeat

    @property
    def ratio(self) -> float:
        return self.referee_seconds / self.in_process_seconds if self.in_process_seconds > 0 else float("inf")

    @property
    def passed(self) -> bool:
        return self.ratio <= TARGET_RATIO and self.same_games


def bench_referee(env_id: int, agent: str, budget: int, seed: int, repeats: int = 1) -> RefereeBench:
    """Adapt ``agent`` on ``env_id`` for ``budget`` games in-process, then through the referee, ``repeats`` times.

    The two ways alternate, and the medians are compared, so a noisy machine moves both.
    """
    runs = [_once(env_id, agent, budget, seed) for _ in range(repeats)]
    return RefereeBench(
        env_id=env_id,
        agent=agent,
        games=runs[0].games,
        repeats=repeats,
        in_process_seconds=statistics.median(r.in_process_seconds for r in runs),
        referee_seconds=statistics.median(r.referee_seconds for r in runs),
        session_seconds=statistics.median(r.session_seconds for r in runs),
        same_games=all(r.same_games for r in runs),
        samples=tuple((r.in_process_seconds, r.referee_seconds) for r in runs),
    )


def _once(env_id: int, agent: str, budget: int, seed: int) -> RefereeBench:
    env = make_env(env_id)
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as fresh:
        in_process, records = fresh.submit(_adapt_in_process, env_id, agent, budget, seed).result()

    started = time.perf_counter()
    with AgentSession(env, AgentJob(agent=agent, rules=env.rules, budget=budget, seed=seed)) as session:
        adapted = session.adapt(lambda _played: False, lambda _agent, _played: None)
        if adapted.error is not None:
            raise RuntimeError(f"{agent} failed to adapt through the referee: {adapted.error}")
        ledger = session.referee.ledger
    return RefereeBench(
        env_id=env_id,
        agent=agent,
        games=ledger.games_played,
        in_process_seconds=in_process,
        referee_seconds=adapted.seconds,
        session_seconds=time.perf_counter() - started,
        same_games=ledger.records == records,
    )


def _adapt_in_process(env_id: int, agent: str, budget: int, seed: int) -> tuple[float, tuple[GameRecord, ...]]:
    """In a fresh interpreter: seconds of ``adapt`` through an in-process arena, and the games it played."""
    env = make_env(env_id)
    built = make_agent(agent, AgentContext(env.rules), np.random.default_rng(seed))
    arena = Arena(env, budget)
    started = time.perf_counter()
    adapt(built, arena, lambda *_args, **_kwargs: None)
    return time.perf_counter() - started, arena.ledger.records
