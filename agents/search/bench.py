"""Speed figures of the search (numba compilation excluded): not tests, nothing is asserted here.

- :func:`bench_minimax`: mean milliseconds per move of Minimax (``depth``, exact
  endgame at 12 empties by default, as the agent plays) over whole games on the
  plain 8x8 board against uniformly random moves, the agent taking black and
  white in turn.
- :func:`bench_endgame`: seconds to solve (disc difference, exact value and
  move) 8x8 positions with ``empties`` empty cells reached by random play.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from agents.base import AgentContext
from agents.minimax import MinimaxAgent
from agents.search.api import empties as empty_cells
from agents.search.api import solve_position
from engine.environments import layouts
from engine.protocol.observation import observe
from engine.rules import Rules
from engine.state import State


@dataclass(frozen=True)
class Timing:
    """Per-item times in seconds, with what was timed."""

    label: str
    seconds: tuple[float, ...]
    nodes: tuple[int, ...] = ()

    @property
    def mean_ms(self) -> float:
        return 1000.0 * float(np.mean(self.seconds)) if self.seconds else float("nan")

    @property
    def max_ms(self) -> float:
        return 1000.0 * float(np.max(self.seconds)) if self.seconds else float("nan")

    def render(self) -> str:
        nodes = f", {np.mean(self.nodes):.0f} nodes on average" if self.nodes else ""
        return f"{self.label}: n={len(self.seconds)}, mean {self.mean_ms:.2f} ms, max {self.max_ms:.2f} ms{nodes}"


def _plain_8x8() -> Rules:
    return Rules(next(layout for layout in layouts() if layout.shape == (8, 8) and not layout.obstacles))


def _warm_up(rules: Rules) -> None:
    """Compile (or load) every kernel the timed code uses: a short search and a small solve."""
    agent = MinimaxAgent(AgentContext(rules), np.random.default_rng(0), depth=2, endgame=6)
    agent.analyse(observe(rules, rules.initial_state()))
    agent.analyse(observe(rules, _positions_with_empties(rules, 6, 1, seed=0)[0]))


def bench_minimax(depth: int = 5, games: int = 4, seed: int = 0, endgame: int = 12) -> Timing:
    """Time every move the Minimax agent is asked for over ``games`` games against random play."""
    rules = _plain_8x8()
    _warm_up(rules)
    rng = np.random.default_rng(seed)
    seconds: list[float] = []
    for game in range(games):
        agent = MinimaxAgent(AgentContext(rules), np.random.default_rng([seed, game]), depth=depth, endgame=endgame)
        colour = game % 2
        state = rules.initial_state()
        while moves := rules.legal_moves(state):
            if state.to_move == colour:
                observation = observe(rules, state)
                start = time.perf_counter()
                move = agent.act(observation)
                seconds.append(time.perf_counter() - start)
            else:
                move = moves[int(rng.integers(len(moves)))]
            state = rules.play(state, move)
    return Timing(f"minimax depth {depth}, endgame {endgame}, 8x8 vs random, per move", tuple(seconds))


def _positions_with_empties(rules: Rules, empties: int, count: int, seed: int) -> list[State]:
    rng = np.random.default_rng(seed)
    found: list[State] = []
    while len(found) < count:
        state = rules.initial_state()
        while empty_cells(rules, state) > empties and (moves := rules.legal_moves(state)):
            state = rules.play(state, moves[int(rng.integers(len(moves)))])
        if empty_cells(rules, state) == empties and rules.legal_moves(state):
            found.append(state)
    return found


def bench_endgame(empties: int = 14, positions: int = 10, seed: int = 0) -> Timing:
    """Time exact solves of 8x8 positions with ``empties`` empty cells (disc difference)."""
    rules = _plain_8x8()
    _warm_up(rules)
    seconds: list[float] = []
    nodes: list[int] = []
    for state in _positions_with_empties(rules, empties, positions, seed):
        start = time.perf_counter()
        result = solve_position(rules, state)
        seconds.append(time.perf_counter() - start)
        nodes.append(result.nodes)
    return Timing(f"endgame solver, 8x8, {empties} empties, per position", tuple(seconds), tuple(nodes))


if __name__ == "__main__":
    print(bench_minimax().render())
    print(bench_endgame().render())
