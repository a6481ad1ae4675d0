"""``arena bench sandbox``: what running generated code in the sandbox costs.

Measured with the reference Othello program (``harness.sandbox.reference_program``,
a correct code world model of the kind a model writes) on the standard 8x8 board:

- the worker's start (bubblewrap, interpreter, loading the program);
- ``legal_actions`` calls per second through one persistent worker, one call per
  message (a round trip each) and ``batch`` calls per message (target: 10,000/s);
- MCTS moves per second with the planner inside the worker on the program, next to
  the same planner (``harness.sandbox.planner``) in this process on the true engine,
  and the ratio; random playouts per second both ways;
- minimax (alpha-beta, ``planner.minimax``) moves per second at a fixed depth inside
  the worker (the program has no ``value``: leaves score 0);
- the cwm agent's engine path (:mod:`harness.cwm.engine_path`): the program's returns
  table asked for once, then MCTS in the project's numba kernel and the interval
  agent's alpha-beta on the engine with that table, next to the project's own
  ``mcts:n=N`` (on the true reward table) and ``minimax:depth=D`` on the same positions.

The positions are the initial one and positions after a few random moves, the same
for both sides. The worker is sandboxed when bubblewrap works here, else the bench
runs it unsandboxed and says so.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agents.base import AgentContext
from agents.search.mcts import search as mcts_search
from agents.search.minimax import MinimaxAgent
from engine import make_env
from engine.protocol.observation import observe
from engine.rules import Rules
from harness.cwm.engine_path import EnginePlanner, UtilityTable, utility_table
from harness.cwm.world import final_state
from harness.sandbox import command, planner
from harness.sandbox.client import SandboxWorker
from harness.sandbox.limits import Limits
from harness.sandbox.reference_program import layout_json, reference_source

BENCH_ENV = 0  # Standard 8x8, K = 1.01
CALLS_TARGET = 10_000
ENGINE_MCTS_TARGET = 3.0  # the engine path's MCTS-N: at most this many times the time of mcts:n=N per move


class EngineGame:
    """The true engine and condition behind the CWM API, for the planner in this process."""

    def __init__(self, env_id: int) -> None:
        env = make_env(env_id)
        self.rules: Rules = env.rules
        self._condition = env.condition

    def current_player(self, state: Any) -> int:
        return state.to_move

    def legal_actions(self, state: Any) -> list[int]:
        return self.rules.legal_moves(state)

    def apply_action(self, state: Any, action: int) -> Any:
        return self.rules.play(state, action)

    def is_terminal(self, state: Any) -> bool:
        return self.rules.is_over(state)

    def returns(self, state: Any) -> list[float]:
        return [float(r) for r in self._condition.rewards(*self.rules.counts(state))]


@dataclass(frozen=True)
class Rate:
    """``count`` things done in ``seconds``."""

    count: int
    seconds: float

    @property
    def per_second(self) -> float:
        return self.count / self.seconds if self.seconds > 0 else float("inf")


@dataclass(frozen=True)
class EnginePathRates:
    """The engine path's moves per second beside the project's own agents on the same positions."""

    table: Rate  # the one returns_table call
    mcts: Rate  # MCTS-N in the kernel on the program's table (rollouts to the end)
    own_mcts: Rate  # mcts:n=N (the true table, rollouts capped at 30 turns: the agent's default)
    minimax: Rate  # the interval agent's search on the program's table, from depth D
    own_minimax: Rate  # minimax:depth=D
    depth: int

    @property
    def mcts_ratio(self) -> float:
        """Seconds per move of the engine path over those of mcts:n=N (target: at most 3)."""
        return self.own_mcts.per_second / self.mcts.per_second

    @property
    def minimax_ratio(self) -> float:
        return self.own_minimax.per_second / self.minimax.per_second


@dataclass(frozen=True)
class SandboxBench:
    """The figures of one bench run."""

    sandboxed: bool
    start_seconds: float
    single_calls: Rate
    batched_calls: Rate
    batch: int
    mcts_sandbox: Rate  # moves
    mcts_engine: Rate  # moves
    simulations: int
    playouts_sandbox: Rate
    playouts_engine: Rate
    failures: dict[str, int] = field(default_factory=dict)
    minimax_sandbox: Rate = Rate(0, 0.0)  # moves
    minimax_depth: int = 2
    engine_path: EnginePathRates | None = None

    @property
    def mcts_ratio(self) -> float:
        """How many times faster MCTS runs on the true engine than on the program in the sandbox."""
        return self.mcts_engine.per_second / self.mcts_sandbox.per_second

    @property
    def playout_ratio(self) -> float:
        return self.playouts_engine.per_second / self.playouts_sandbox.per_second

    @property
    def calls_passed(self) -> bool:
        return self.batched_calls.per_second >= CALLS_TARGET


def positions(env_id: int, count: int, seed: int) -> list[list[int]]:
    """``count`` move lists from the initial position (the first empty), random legal moves, games not over."""
    rules = make_env(env_id).rules
    rng = random.Random(seed)
    found: list[list[int]] = [[]]
    while len(found) < count:
        moves, state = [], rules.initial_state()
        for _ in range(rng.randrange(2, 20)):
            legal = rules.legal_moves(state)
            if not legal:
                break
            moves.append(rng.choice(legal))
            state = rules.play(state, moves[-1])
        if rules.legal_moves(state):
            found.append(moves)
    return found[:count]


def bench_sandbox(
    calls: int = 20_000,
    batch: int = 100,
    simulations: int = 200,
    moves: int = 3,
    playouts: int = 20,
    seed: int = 0,
    limits: Limits | None = None,
    minimax_depth: int = 2,
    progress: Callable[[str], None] = lambda step: None,
    engine_depth: int = 4,
) -> SandboxBench:
    """Run the bench (see the module's docstring); ``progress`` is told each step's name as it starts."""
    sandboxed = command.bubblewrap_problem() is None
    env = make_env(BENCH_ENV)
    engine_game = EngineGame(BENCH_ENV)
    lines = positions(BENCH_ENV, moves, seed)
    progress("starting the worker")
    began = time.perf_counter()
    with SandboxWorker(reference_source(float(env.condition.k)), limits or Limits(call_s=600.0), unsandboxed=not sandboxed) as worker:
        worker.start().unwrap()
        start_seconds = time.perf_counter() - began
        initial = worker.call("initial_state", [layout_json(env.layout)]).unwrap()
        states = [_replay(worker, initial, line) for line in lines]
        progress("legal_actions, one call per message")
        single = _timed(calls, lambda: [worker.call("legal_actions", [initial]).unwrap() for _ in range(calls)])
        progress(f"legal_actions, {batch} calls per message")
        rounds = max(1, calls // batch)
        query = [("legal_actions", [initial])] * batch
        batched = _timed(rounds * batch, lambda: [[r.unwrap() for r in worker.call_many(query)] for _ in range(rounds)])
        progress(f"MCTS-{simulations} in the sandbox")
        mcts_sandbox = _timed(
            len(states), lambda: [worker.plan("mcts", state=s, simulations=simulations, seed=seed).unwrap() for s in states]
        )
        progress(f"minimax depth {minimax_depth} in the sandbox")
        minimax_sandbox = _timed(
            len(states), lambda: [worker.plan("minimax", state=s, depth=minimax_depth, seed=seed).unwrap() for s in states]
        )
        progress("random playouts in the sandbox")
        playouts_sandbox = _timed(playouts, lambda: worker.plan("playouts", state=initial, count=playouts, seed=seed).unwrap())
        truths = [final_state(engine_game.rules, line) for line in lines]
        progress("the engine path: the program's returns table, then the kernels on it")
        engine_path = engine_path_rates(worker, env, truths, simulations, engine_depth, seed)
        failures = dict(worker.failures)
    progress(f"MCTS-{simulations} on the true engine")
    mcts_engine = _timed(len(truths), lambda: [planner.mcts(engine_game, s, simulations, seed=seed) for s in truths])
    progress("random playouts on the true engine")
    playouts_engine = _timed(playouts, lambda: planner.playouts(engine_game, truths[0], playouts, seed=seed))
    return SandboxBench(
        sandboxed,
        start_seconds,
        single,
        batched,
        batch,
        mcts_sandbox,
        mcts_engine,
        simulations,
        playouts_sandbox,
        playouts_engine,
        failures,
        minimax_sandbox,
        minimax_depth,
        engine_path,
    )


def engine_path_rates(worker: SandboxWorker, env: Any, states: list[Any], simulations: int, depth: int, seed: int) -> EnginePathRates:
    """Time the cwm engine path on ``states`` beside ``mcts:n=simulations`` and ``minimax:depth=depth`` (each warmed up once)."""
    rules, context = env.rules, AgentContext(env.rules)
    began = time.perf_counter()
    table = utility_table(worker, rules)
    table_rate = Rate(1, time.perf_counter() - began)
    if not isinstance(table, UtilityTable):
        raise RuntimeError(f"the reference program's returns table was refused: {table}")
    cells = rules.layout.cells + 1
    true = np.array([[env.condition.rewards(own, opp)[0] for opp in range(cells)] for own in range(cells)], dtype=np.int8)
    mcts_planner = EnginePlanner(context, table, "mcts", depth, 1.4)
    minimax_planner = EnginePlanner(context, table, "minimax", depth, 1.4)
    own_minimax = MinimaxAgent(context, np.random.default_rng(seed), depth=depth)
    observations = [observe(rules, state) for state in states]

    def engine_moves(planner: EnginePlanner) -> Callable[[], object]:
        return lambda: [planner.move(o, simulations, np.random.default_rng(seed)) for o in observations]

    def own_mcts() -> object:
        return [mcts_search(rules, true, o.state, simulations, 1.4, 30, False, seed + 1) for o in observations]

    def own_minimax_moves() -> object:
        return [own_minimax.act(o) for o in observations]

    rates = []
    for work in (engine_moves(mcts_planner), own_mcts, engine_moves(minimax_planner), own_minimax_moves):
        work()  # compiled kernels loaded, tables built
        rates.append(_timed(len(observations), work))
    mcts, own_mcts_rate, minimax, own_minimax_rate = rates
    return EnginePathRates(table_rate, mcts, own_mcts_rate, minimax, own_minimax_rate, depth)


def _timed(count: int, work: Callable[[], object]) -> Rate:
    began = time.perf_counter()
    work()
    return Rate(count, time.perf_counter() - began)


def _replay(worker: SandboxWorker, state: Any, moves: list[int]) -> Any:
    for move in moves:
        state = worker.call("apply_action", [state, move]).unwrap()
    return state
