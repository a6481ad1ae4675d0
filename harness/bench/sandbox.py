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
  the worker (the program has no ``value``: leaves score 0).

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

from engine import make_env
from engine.rules import Rules
from harness.cwm.world import final_state
from harness.sandbox import command, planner
from harness.sandbox.client import SandboxWorker
from harness.sandbox.limits import Limits
from harness.sandbox.reference_program import layout_json, reference_source

BENCH_ENV = 0  # Standard 8x8, K = 1.01
CALLS_TARGET = 10_000


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
        failures = dict(worker.failures)
    truths = [final_state(engine_game.rules, line) for line in lines]
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
    )


def _timed(count: int, work: Callable[[], object]) -> Rate:
    began = time.perf_counter()
    work()
    return Rate(count, time.perf_counter() - began)


def _replay(worker: SandboxWorker, state: Any, moves: list[int]) -> Any:
    for move in moves:
        state = worker.call("apply_action", [state, move]).unwrap()
    return state
