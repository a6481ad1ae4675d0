"""Move notation for people and models: column letter then row number, ``a1`` top-left; ``pass``."""

from __future__ import annotations

import re

from engine.layout import Layout
from engine.state import PASS

COLUMN_LETTERS = "abcdefghijklmnop"
_MOVE_PATTERN = re.compile(r"^\s*([a-pA-P])\s*(\d{1,2})\s*$")


class NotationError(ValueError):
    """Text that is not a move on the given layout."""


def format_move(move: int, layout: Layout) -> str:
    """``d3`` for a flat index, ``pass`` for PASS."""
    if move == PASS:
        return "pass"
    if not 0 <= move < layout.cells:
        raise NotationError(f"move index {move} is off the {layout.rows} x {layout.cols} board")
    row, col = divmod(move, layout.cols)
    return f"{COLUMN_LETTERS[col]}{row + 1}"


def parse_move(text: str, layout: Layout) -> int:
    """Flat index of ``d3``/``D3``, or PASS for ``pass``; NotationError otherwise."""
    if text.strip().lower() == "pass":
        return PASS
    match = _MOVE_PATTERN.match(text)
    last_col = COLUMN_LETTERS[layout.cols - 1]
    if not match:
        raise NotationError(
            f"{text!r} is not a move: write a column letter a-{last_col} and a row number 1-{layout.rows} (e.g. d3), or 'pass'"
        )
    col = COLUMN_LETTERS.index(match.group(1).lower())
    row = int(match.group(2)) - 1
    if col >= layout.cols or not 0 <= row < layout.rows:
        raise NotationError(f"{text!r} is off the {layout.rows} x {layout.cols} board: columns a-{last_col}, rows 1-{layout.rows}")
    return row * layout.cols + col
