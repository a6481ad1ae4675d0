"""The transition rules on one layout: legal moves, play, passes, termination.

``Rules`` is what agents may know. It holds no threshold K: outcomes come from
``engine.condition.Condition``, which only the environment holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np

from engine import kernels
from engine.bits import from_words
from engine.geometry import Geometry, geometry_of
from engine.layout import Layout
from engine.state import BLACK, PASS, WHITE, State

_COUNTING_CODES = {"per_player": kernels.COUNT_PER_PLAYER, "total": kernels.COUNT_TOTAL}


class IllegalMoveError(ValueError):
    """A move the rules do not allow in the given state."""


class Replayed(NamedTuple):
    """A move list checked from the initial position: final disc counts and whether the game is over."""

    black: int
    white: int
    finished: bool


@dataclass(frozen=True)
class Rules:
    """Othello on ``layout`` with an optional turn limit (placements per player, or in total)."""

    layout: Layout
    turn_limit: int | None = None
    turn_counting: str = "per_player"

    def __post_init__(self) -> None:
        if self.turn_counting not in _COUNTING_CODES:
            raise ValueError(f"turn_counting={self.turn_counting!r}: choose one of {', '.join(_COUNTING_CODES)}")
        limit = self.turn_limit
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise ValueError(f"turn_limit={self.turn_limit!r}: give a positive integer or None")

    @cached_property
    def geometry(self) -> Geometry:
        return geometry_of(self.layout)

    @property
    def limit_args(self) -> tuple[int, int]:
        """(turn_limit, counting) as the kernels take them."""
        return (self.turn_limit or kernels.NO_LIMIT, _COUNTING_CODES[self.turn_counting])

    def initial_state(self) -> State:
        return State(self.layout.mask(self.layout.black), self.layout.mask(self.layout.white), BLACK)

    def _placement_mask(self, state: State, colour: int) -> int:
        g = self.geometry
        own, opp = state.discs(colour), state.discs(1 - colour)
        moves = kernels.mover_moves(
            g.words(own), g.words(opp), state.placed(colour), state.placed(1 - colour), *self.limit_args, g.kernel_args
        )
        return from_words(moves)

    def legal_mask(self, state: State) -> int:
        """Bitmask of the mover's legal placements (0 when it must pass or the game is over)."""
        return self._placement_mask(state, state.to_move)

    def is_over(self, state: State) -> bool:
        """Neither colour can place (board full, no moves, or the turn limit reached)."""
        return self.legal_mask(state) == 0 and self._placement_mask(state, 1 - state.to_move) == 0

    def legal_moves(self, state: State) -> list[int]:
        """Flat indices of legal placements, ascending; ``[PASS]`` if the mover must pass; ``[]`` at the end."""
        mask = self.legal_mask(state)
        if mask:
            return _bit_indices(mask)
        return [] if self.is_over(state) else [PASS]

    def flips(self, state: State, move: int) -> int:
        """Bitmask of discs a placement at ``move`` would flip (0 if it flips none)."""
        g = self.geometry
        flipped = kernels.flips_of(g.words(state.own), g.words(state.opponent), move, g.kernel_args)
        return from_words(flipped)

    def play(self, state: State, move: int) -> State:
        """The state after the mover plays ``move`` (a flat index, or PASS); checked first."""
        if not (type(move) is int and move >= 0 and self.legal_mask(state) >> move & 1):  # else a legal placement
            legal = self.legal_moves(state)
            if move not in legal:
                raise IllegalMoveError(self._illegal_reason(state, move, legal))
            if move == PASS:
                return state._replace(to_move=1 - state.to_move)
        flipped = self.flips(state, move)
        own = state.own | flipped | (1 << move)
        opp = state.opponent & ~flipped
        if state.to_move == BLACK:
            return State(own, opp, WHITE, state.placed_black + 1, state.placed_white)
        return State(opp, own, BLACK, state.placed_black, state.placed_white + 1)

    def _illegal_reason(self, state: State, move: int, legal: list[int]) -> str:
        from engine.notation import format_move  # local: notation imports nothing from here

        shown = format_move(move, self.layout) if isinstance(move, int) and (move == PASS or 0 <= move < self.layout.cells) else repr(move)
        options = ", ".join(format_move(m, self.layout) for m in legal) or "none (the game is over)"
        return f"illegal move {shown} for {'black' if state.to_move == BLACK else 'white'}; legal moves: {options}"

    def perft(self, state: State, depth: int) -> int:
        """Leaves ``depth`` plies below ``state``: a forced pass is one ply, a finished game one leaf."""
        if not isinstance(depth, int) or depth < 0:
            raise ValueError(f"perft depth {depth!r}: give a whole number >= 0")
        g = self.geometry
        return int(
            kernels.perft(
                g.words(state.own),
                g.words(state.opponent),
                state.placed(state.to_move),
                state.placed(1 - state.to_move),
                depth,
                *self.limit_args,
                g.kernel_args,
            )
        )

    def replay(self, moves: Sequence[int], *, allow_unfinished: bool = False) -> Replayed:
        """Check a whole game's moves (forced passes as PASS) from the initial position, in one kernel call.

        Raises :class:`IllegalMoveError` naming the first illegal ply, or if the game
        is not over after the last move (unless ``allow_unfinished``: a forfeited game).
        """
        if isinstance(moves, (str, bytes)) or any(isinstance(m, bool) or not isinstance(m, int) for m in moves):
            raise IllegalMoveError("a game's moves must be a list of flat move indices (ints, PASS = -1)")
        g = self.geometry
        start = self.initial_state()
        array = np.fromiter((max(-2, min(m, self.layout.cells)) for m in moves), dtype=np.int64, count=len(moves))
        status, ply, black, white = kernels.replay(
            g.words(start.black), g.words(start.white), array, self.layout.cells, *self.limit_args, g.kernel_args
        )
        if status == kernels.REPLAY_ILLEGAL:
            state = self._state_after(moves[:ply])
            raise IllegalMoveError(f"ply {ply}: {self._illegal_reason(state, moves[ply], self.legal_moves(state))}")
        if status == kernels.REPLAY_UNFINISHED and not allow_unfinished:
            raise IllegalMoveError(
                f"the game is not over after its {len(moves)} moves: {'black' if len(moves) % 2 == 0 else 'white'} still has a move to make"
            )
        return Replayed(int(black), int(white), status == kernels.REPLAY_FINISHED)

    def _state_after(self, moves: Sequence[int]) -> State:
        state = self.initial_state()
        for move in moves:
            state = self.play(state, move)
        return state

    def counts(self, state: State) -> tuple[int, int]:
        """(black discs, white discs)."""
        return (state.black.bit_count(), state.white.bit_count())

    def grid(self, state: State, colour: int | None = None) -> np.ndarray:
        """The board as an int8 H x W array from ``colour``'s view (default: the mover's).

        Own discs 1, opponent -1, empty 0, obstacle 2 (paper section 2.3.1).
        """
        colour = state.to_move if colour is None else colour
        layout = self.layout
        own, opp = state.discs(colour), state.discs(1 - colour)
        obstacles, empty = self._obstacle_grid
        if own < 0 or opp < 0:
            raise ValueError(f"a disc mask is a set of cells, never negative: got {own} and {opp}")
        if own & opp or (own | opp) & obstacles or (own | opp).bit_length() > layout.cells:
            grid = empty.copy()  # not a reachable position: the cells are written in turn, as always
            grid[_bit_indices(own)] = 1
            grid[_bit_indices(opp)] = -1
            return grid.reshape(layout.rows, layout.cols)
        words = (layout.cells + 7) // 8
        both = np.frombuffer((own | opp << (8 * words)).to_bytes(2 * words, "little"), dtype=np.uint8)
        bits = np.unpackbits(both, bitorder="little").view(np.int8).reshape(2, 8 * words)
        return (empty + bits[0, : layout.cells] - bits[1, : layout.cells]).reshape(layout.rows, layout.cols)

    @cached_property
    def _obstacle_grid(self) -> tuple[int, np.ndarray]:
        """The obstacle mask and the flat int8 board with 2 on the obstacles, 0 elsewhere (:meth:`grid` starts from it)."""
        obstacles = self.layout.mask(self.layout.obstacles)
        grid = np.zeros(self.layout.cells, dtype=np.int8)
        grid[_bit_indices(obstacles)] = 2
        return obstacles, grid


def _bit_indices(mask: int) -> list[int]:
    indices = []
    while mask:
        low = mask & -mask
        indices.append(low.bit_length() - 1)
        mask ^= low
    return indices
