"""Positions for the search tests: reached by seeded random play on the benchmark's and other layouts."""

from __future__ import annotations

import numpy as np

from engine.environments import layouts
from engine.layout import Layout, standard_layout
from engine.layout_gen import random_layout
from engine.rules import Rules
from engine.state import State


def layout_named(name: str) -> Layout:
    """A benchmark layout by (the start of) its name, or a generated one: 'random 5x7', 'plain RxC'."""
    if name == "random 5x7":
        return random_layout(np.random.default_rng(57), rows=5, cols=7, obstacle_density=(0.1, 0.2))
    if name.startswith("plain "):
        rows, cols = (int(part) for part in name.removeprefix("plain ").split("x"))
        return standard_layout(rows, cols)
    return next(layout for layout in layouts() if layout.name.startswith(name))


def empties(rules: Rules, state: State) -> int:
    return (rules.layout.playable_mask & ~(state.black | state.white)).bit_count()


def random_walk(rules: Rules, rng: np.random.Generator, plies: int, state: State | None = None) -> State:
    """Up to ``plies`` random moves (forced passes included) from ``state`` (default: the start)."""
    state = rules.initial_state() if state is None else state
    for _ in range(plies):
        moves = rules.legal_moves(state)
        if not moves:
            break
        state = rules.play(state, moves[int(rng.integers(len(moves)))])
    return state


def live_positions(rules: Rules, seed: int, count: int, max_plies: int = 60) -> list[State]:
    """``count`` unfinished positions after a random number of random plies."""
    rng = np.random.default_rng(seed)
    found: list[State] = []
    while len(found) < count:
        state = random_walk(rules, rng, int(rng.integers(0, max_plies)))
        if rules.legal_moves(state):
            found.append(state)
    return found


def late_positions(rules: Rules, seed: int, count: int, max_empties: int, min_empties: int = 1) -> list[State]:
    """``count`` unfinished positions with ``min_empties..max_empties`` empty cells (random play)."""
    rng = np.random.default_rng(seed)
    found: list[State] = []
    while len(found) < count:
        target = int(rng.integers(min_empties, max_empties + 1))
        state = rules.initial_state()
        while empties(rules, state) > target and rules.legal_moves(state):
            state = random_walk(rules, rng, 1, state)
        if rules.legal_moves(state) and empties(rules, state) <= max_empties:
            found.append(state)
    return found
