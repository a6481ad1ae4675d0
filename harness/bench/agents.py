"""Agent speed: milliseconds per move of Minimax and MCTS, seconds per exact endgame solve.

The targets, all on the standard 8x8 board (env 0, no turn limit):
Minimax depth 5 under 20 ms per move on average over full games against Random;
MCTS-100 under 15 ms per move; the endgame solver under 1 s on every 14-empty
position. Agents are built through the registry and only their own ``act``
calls are timed; a warm-up game (or solve) first compiles the numba kernels, so
no compile time is counted. Everything runs in this process, on one core.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from agents.base import AgentContext
from agents.spec import AgentSpecError
from engine import make_env
from engine.environments import Environment
from engine.protocol.observation import Observation
from engine.rules import Rules
from engine.state import PASS, State
from harness.play.game import play_game
from harness.play.grants import EvaluationGrants
from harness.registry.specs import make_agent, parse_spec

BENCH_ENV = 0  # Standard 8x8 / Majority: full games, no turn limit
MINIMAX_SPEC = "minimax:depth=5"
MCTS_SPEC = "mcts:n=100"
OPPONENT_SPEC = "random"
ENDGAME_EMPTIES = 14
TARGETS = {"minimax": 0.020, "mcts": 0.015, "endgame": 1.0}


@dataclass(frozen=True)
class AgentBenchRow:
    """One measurement: per-sample seconds, the target, and how the target is judged (mean or max)."""

    name: str
    setting: str
    unit: str
    samples: tuple[float, ...]
    target: float
    judged_by: str  # "mean" or "max"
    skipped: str = ""  # why nothing was measured, if so

    @property
    def mean(self) -> float:
        return float(np.mean(self.samples)) if self.samples else float("nan")

    @property
    def p95(self) -> float:
        return float(np.percentile(self.samples, 95)) if self.samples else float("nan")

    @property
    def max(self) -> float:
        return max(self.samples) if self.samples else float("nan")

    @property
    def passed(self) -> bool | None:
        """Whether the judged figure is under the target; None when nothing was measured."""
        if not self.samples:
            return None
        return (self.mean if self.judged_by == "mean" else self.max) < self.target


class TimedAgent:
    """Wraps an agent and records how long each of its ``act`` calls takes."""

    def __init__(self, agent, durations: list[float]) -> None:
        self.agent, self.durations, self.name = agent, durations, agent.name

    def act(self, observation: Observation) -> int:
        started = time.perf_counter()
        move = self.agent.act(observation)
        self.durations.append(time.perf_counter() - started)
        return move


def bench_agents(games: int = 10, seed: int = 0, on_done: Callable[[AgentBenchRow], None] | None = None) -> list[AgentBenchRow]:
    """The three measurements (Minimax, MCTS, endgame), ``games`` games or positions each."""
    env = make_env(BENCH_ENV)
    rows = []
    for measure in (
        lambda: bench_moves("minimax", MINIMAX_SPEC, env, games, seed),
        lambda: bench_moves("mcts", MCTS_SPEC, env, games, seed),
        lambda: bench_endgame_positions(env, games, seed),
    ):
        row = measure()
        rows.append(row)
        if on_done is not None:
            on_done(row)
    return rows


def bench_moves(key: str, spec: str, env: Environment, games: int, seed: int) -> AgentBenchRow:
    """Seconds per ``act`` call of ``spec`` over ``games`` full games against Random, colours alternating."""
    setting = f"vs {OPPONENT_SPEC}, {games} full games"
    try:
        parse_spec(spec)
    except AgentSpecError as error:  # not registered (yet), or without that parameter
        return AgentBenchRow(spec, setting, "ms/move", (), TARGETS[key], "mean", str(error))
    play_timed_games(spec, env, 1, seed + 1_000_003, [])  # warm-up: compiles the kernels
    durations: list[float] = []
    play_timed_games(spec, env, games, seed, durations)
    return AgentBenchRow(spec, setting, "ms/move", tuple(durations), TARGETS[key], "mean")


def play_timed_games(spec: str, env: Environment, games: int, seed: int, durations: list[float]) -> None:
    """Play ``games`` games of ``spec`` against Random (``spec`` black in even games), timing ``spec``'s moves."""
    for index, game_seed in enumerate(np.random.SeedSequence(seed).spawn(games)):
        seed_agent, seed_opponent = game_seed.spawn(2)
        grant = EvaluationGrants(env).grant_simulator if parse_spec(spec)[0].privileged else None
        agent = make_agent(spec, AgentContext(env.rules, grant_simulator=grant), np.random.default_rng(seed_agent))
        opponent = make_agent(OPPONENT_SPEC, AgentContext(env.rules), np.random.default_rng(seed_opponent))
        timed = TimedAgent(agent, durations)
        black, white = (timed, opponent) if index % 2 == 0 else (opponent, timed)
        play_game(env.rules, env.condition, black, white)


def endgame_positions(rules: Rules, count: int, empties: int, seed: int) -> list[State]:
    """``count`` positions with exactly ``empties`` empty cells, the mover to place, reached by random play."""
    rng = np.random.default_rng(seed)
    positions: list[State] = []
    while len(positions) < count:
        state = rules.initial_state()
        while True:
            legal = rules.legal_moves(state)
            if not legal:
                break
            if _empties(rules, state) == empties and legal != [PASS]:
                positions.append(state)
                break
            state = rules.play(state, legal[int(rng.integers(len(legal)))])
    return positions


def _empties(rules: Rules, state: State) -> int:
    return (rules.layout.playable_mask & ~(state.black | state.white)).bit_count()


def bench_endgame_positions(env: Environment, positions: int, seed: int) -> AgentBenchRow:
    """Seconds per exact solve (disc-difference utility) of ``positions`` random 14-empty positions."""
    setting = f"{positions} random positions, {ENDGAME_EMPTIES} empties"
    try:
        from agents.search.api import solve_position
    except ImportError:
        return AgentBenchRow(
            "endgame solver", setting, "s/position", (), TARGETS["endgame"], "max", "agents.search.api.solve_position is not available"
        )
    rules = env.rules
    solve_position(rules, endgame_positions(rules, 1, 8, seed + 1_000_003)[0])  # warm-up: compiles the solver
    durations = []
    for state in endgame_positions(rules, positions, ENDGAME_EMPTIES, seed):
        started = time.perf_counter()
        solve_position(rules, state)
        durations.append(time.perf_counter() - started)
    return AgentBenchRow("endgame solver", setting, "s/position", tuple(durations), TARGETS["endgame"], "max")
