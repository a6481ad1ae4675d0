"""Python entry points to the random-playout kernels (used by the bench and by MCTS), and a position as kernels take it."""

from __future__ import annotations

import numpy as np

from engine import kernels
from engine.rules import Rules
from engine.state import State


def kernel_position(rules: Rules, state: State) -> tuple[tuple[np.uint64, ...], tuple[np.uint64, ...], int, int]:
    """A position as the kernels take it: the mover's and the opponent's words, then their placed counts."""
    g = rules.geometry
    return g.words(state.own), g.words(state.opponent), state.placed(state.to_move), state.placed(1 - state.to_move)


def random_games(rules: Rules, state: State, games: int, seed: int) -> int:
    """Play ``games`` uniformly random games from ``state``; returns the placements made in all."""
    return int(
        kernels.random_games(
            *kernel_position(rules, state), games, *rules.limit_args, rules.geometry.kernel_args, np.uint64(seed or 0x9E3779B97F4A7C15)
        )
    )


def random_playout(rules: Rules, state: State, seed: int, max_turns: int = -1) -> tuple[int, int, int]:
    """One random game from ``state`` (at most ``max_turns`` turns if >= 0).

    Returns (mover's final discs, opponent's final discs, new seed).
    """
    own, opp, _, new_seed = kernels.random_playout(
        *kernel_position(rules, state), *rules.limit_args, rules.geometry.kernel_args, np.uint64(seed or 0x9E3779B97F4A7C15), max_turns
    )
    return int(own), int(opp), int(new_seed)
