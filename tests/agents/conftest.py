"""Helpers of the agent tests: positions drawn as text, positions taken along random games."""

from __future__ import annotations

import numpy as np
import pytest

from engine.layout import Layout
from engine.rules import Rules
from engine.state import BLACK, PASS, State


def position(layout: Layout, text: str, to_move: int = BLACK) -> State:
    """A state from rows of ``B`` (black), ``W`` (white), ``.`` (empty) or ``#`` (obstacle, checked)."""
    rows = [line.split() for line in text.strip().splitlines()]
    assert [len(row) for row in rows] == [layout.cols] * layout.rows, "text does not match the layout's shape"
    black = white = 0
    for r, row in enumerate(rows):
        for c, symbol in enumerate(row):
            assert (symbol == "#") == ((r, c) in layout.obstacles), f"obstacle mismatch at {(r, c)}"
            if symbol == "B":
                black |= 1 << layout.index((r, c))
            elif symbol == "W":
                white |= 1 << layout.index((r, c))
    return State(black, white, to_move)


@pytest.fixture
def make_position():
    """``make_position(rules, text, to_move=BLACK)``: a state drawn as text on ``rules.layout``."""

    def make(rules: Rules, text: str, to_move: int = BLACK) -> State:
        return position(rules.layout, text, to_move)

    return make


def random_positions_along_games(rules: Rules, count: int, seed: int) -> list[State]:
    """``count`` positions with a placement to choose, taken along random games (reproducible by seed)."""
    rng = np.random.default_rng(seed)
    found: list[State] = []
    while len(found) < count:
        state = rules.initial_state()
        while (legal := rules.legal_moves(state)) and len(found) < count:
            if legal != [PASS] and rng.random() < 0.3:
                found.append(state)
            state = rules.play(state, legal[int(rng.integers(len(legal)))])
    return found


@pytest.fixture
def random_positions():
    """``random_positions(rules, count, seed)``: positions with a placement to choose, along random games."""
    return random_positions_along_games
