"""The game state: an immutable value."""

from __future__ import annotations

from typing import NamedTuple

BLACK = 0
WHITE = 1
PASS = -1
COLOUR_NAMES = ("black", "white")


class State(NamedTuple):
    """Discs as Python-int bitmasks (bit r*cols+c), the colour to move and placements made.

    ``placed`` counts the discs each colour has put down (not the four initial
    ones); the turn limit of the rules reads it.
    """

    black: int
    white: int
    to_move: int = BLACK
    placed_black: int = 0
    placed_white: int = 0

    def discs(self, colour: int) -> int:
        return self.black if colour == BLACK else self.white

    def placed(self, colour: int) -> int:
        return self.placed_black if colour == BLACK else self.placed_white

    @property
    def own(self) -> int:
        return self.discs(self.to_move)

    @property
    def opponent(self) -> int:
        return self.discs(1 - self.to_move)
