"""Steps per second of the environments with random masked actions, beside the bare engine (``arena bench env``).

Every measurement plays uniformly random legal placements for about ``seconds`` of wall
time after a warm-up (numba compiles on first use), on a free-experimentation
environment (a budgeted one would stop after 2,000 games). An env-step is one placement
(a forced pass is played inside the step). The bare engine is the random-playout kernel
(``engine.playouts.random_games``), one core. The clock is wall time, or (``"cpu"``) this
process's CPU seconds, all its threads together: on a shared, loaded machine the env's own
cost, which wall time hides behind the other jobs.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from engine.environments import make_env
from engine.playouts import random_games
from harness.envs.aec import OthelloAEC
from harness.envs.games import worker_threads
from harness.envs.gym_env import OthelloGym
from harness.envs.vector import OthelloVector


@dataclass(frozen=True)
class Speed:
    """One measurement: what ran, env-steps per second, finished games per second."""

    env_id: int
    face: str
    steps_per_second: float
    games_per_second: float
    note: str = ""


Clock = Callable[[], float]
CLOCKS: dict[str, Clock] = {"wall": time.perf_counter, "cpu": time.process_time}  # cpu: this process's CPU seconds


def _timed(one: Callable[[], tuple[int, int]], seconds: float, clock: Clock) -> tuple[float, float]:
    """Steps and games per second of ``one()`` (a unit of work: its steps and games) repeated for ``seconds`` of ``clock``."""

    def run_for(limit: float) -> tuple[int, int]:
        steps = games = 0
        end = clock() + limit
        while clock() < end:
            unit_steps, unit_games = one()
            steps, games = steps + unit_steps, games + unit_games
        return steps, games

    run_for(min(0.2, seconds))  # warm-up: compile, fill caches
    start = clock()
    steps, games = run_for(seconds)
    elapsed = clock() - start
    return steps / elapsed, games / elapsed


def bare_engine(env_id: int, seconds: float, clock: Clock = time.perf_counter) -> Speed:
    rules = make_env(env_id).rules
    start_state = rules.initial_state()
    seeds = itertools.count(1)

    def one() -> tuple[int, int]:
        return random_games(rules, start_state, 200, next(seeds)), 200

    steps, games = _timed(one, seconds, clock)
    return Speed(env_id, "bare engine", steps, games, "random-playout kernel, 1 core")


def aec(env_id: int, seconds: float, clock: Clock = time.perf_counter) -> Speed:
    env = OthelloAEC(env_id, budget=None)
    rng = np.random.default_rng(0)

    def one() -> tuple[int, int]:
        steps = 0
        env.reset()
        for _agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            legal = np.flatnonzero(observation["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
            steps += 1
        return steps, 1

    steps, games = _timed(one, seconds, clock)
    return Speed(env_id, "PettingZoo AEC", steps, games, "agent_iter/last/step, both agents random")


def gymnasium(env_id: int, seconds: float, clock: Clock = time.perf_counter) -> Speed:
    env = OthelloGym(env_id, budget=None)
    rng = np.random.default_rng(0)
    env.reset(seed=0)

    def one() -> tuple[int, int]:
        steps = 0
        env.reset()
        done = False
        while not done:
            legal = np.flatnonzero(env.action_masks())
            _, _, done, _, _ = env.step(int(legal[rng.integers(len(legal))]))
            steps += 1
        return steps, 1

    steps, games = _timed(one, seconds, clock)
    return Speed(env_id, "Gymnasium", steps, games, "learner steps (the random opponent's moves inside them not counted)")


def vector(env_id: int, seconds: float, clock: Clock = time.perf_counter, num_envs: int = 4096) -> Speed:
    env = OthelloVector(env_id, num_envs, budget=None)
    env.reset(seed=0)

    def one() -> tuple[int, int]:
        _, _, terminated, _, _ = env.step(env.random_actions())
        return num_envs, int(terminated.sum())

    steps, games = _timed(one, seconds, clock)
    return Speed(env_id, "vector env", steps, games, f"{num_envs} games, {worker_threads()} threads, actions drawn in the kernel")


FACES: dict[str, Callable[..., Speed]] = {"engine": bare_engine, "aec": aec, "gym": gymnasium, "vector": vector}
