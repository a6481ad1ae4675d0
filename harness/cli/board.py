"""Boards drawn for people: a coloured rich ``Text`` or plain text, from pure data.

Column letters run across the top (``a`` = column 0), row numbers down the left
side (``1`` = row 0), matching the move notation (``a1`` top-left). Cells are:

========  =====  =====
content   rich   plain
========  =====  =====
black     ●      B
white     ○      W
obstacle  ■      #
empty     ·      .
marked    *      *     (an empty cell to highlight, e.g. a legal move)
========  =====  =====

The plain symbols are those of the layout text format, so a plain drawing
without coordinates or marks is a layout file.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.text import Text

from engine.layout import Layout
from engine.notation import COLUMN_LETTERS
from engine.state import State

BLACK_DISC, WHITE_DISC, OBSTACLE, EMPTY, MARK = "black", "white", "obstacle", "empty", "mark"

RICH_SYMBOLS = {BLACK_DISC: "●", WHITE_DISC: "○", OBSTACLE: "■", EMPTY: "·", MARK: "*"}
PLAIN_SYMBOLS = {BLACK_DISC: "B", WHITE_DISC: "W", OBSTACLE: "#", EMPTY: ".", MARK: "*"}

BOARD_BACKGROUND = "on dark_green"
RICH_STYLES = {
    BLACK_DISC: f"bold black {BOARD_BACKGROUND}",
    WHITE_DISC: f"bold bright_white {BOARD_BACKGROUND}",
    OBSTACLE: f"grey50 {BOARD_BACKGROUND}",
    EMPTY: f"green3 {BOARD_BACKGROUND}",
    MARK: f"bold yellow {BOARD_BACKGROUND}",
}
COORDINATE_STYLE = "dim"


def cell_contents(layout: Layout, state: State | None = None, marks: Iterable[int] = ()) -> list[list[str]]:
    """Content name of every cell, row by row: the layout's start position, or ``state``'s discs.

    ``marks`` are flat indices (``row * cols + col``) of cells to highlight;
    indices off the board (such as PASS) are ignored, and a mark never hides a
    disc or an obstacle.
    """
    if state is None:
        black, white = layout.mask(layout.black), layout.mask(layout.white)
    else:
        black, white = state.black, state.white
    obstacles = layout.mask(layout.obstacles)
    marked = {m for m in marks if 0 <= m < layout.cells}
    rows = []
    for r in range(layout.rows):
        row = []
        for c in range(layout.cols):
            index = r * layout.cols + c
            bit = 1 << index
            if obstacles & bit:
                row.append(OBSTACLE)
            elif black & bit:
                row.append(BLACK_DISC)
            elif white & bit:
                row.append(WHITE_DISC)
            else:
                row.append(MARK if index in marked else EMPTY)
        rows.append(row)
    return rows


def board_plain(layout: Layout, state: State | None = None, marks: Iterable[int] = (), coordinates: bool = True) -> str:
    """The board as plain text with B/W/#/. (and ``*`` for marks).

    With coordinates, cells are separated by spaces under a row of column
    letters; without, each row is the bare symbols (the layout text format).
    """
    grid = cell_contents(layout, state, marks)
    if not coordinates:
        return "\n".join("".join(PLAIN_SYMBOLS[cell] for cell in row) for row in grid)
    width = len(str(layout.rows))
    lines = [" " * (width + 1) + " ".join(COLUMN_LETTERS[: layout.cols])]
    for r, row in enumerate(grid):
        lines.append(f"{r + 1:>{width}} " + " ".join(PLAIN_SYMBOLS[cell] for cell in row))
    return "\n".join(lines)


def board_rich(layout: Layout, state: State | None = None, marks: Iterable[int] = (), coordinates: bool = True) -> Text:
    """The board as a coloured rich ``Text`` (●/○/■/·, ``*`` for marks) on a green background."""
    grid = cell_contents(layout, state, marks)
    width = len(str(layout.rows))
    text = Text()
    if coordinates:
        header = " " * (width + 1) + "".join(f" {letter}" for letter in COLUMN_LETTERS[: layout.cols])
        text.append(header + "\n", style=COORDINATE_STYLE)
    for r, row in enumerate(grid):
        if coordinates:
            text.append(f"{r + 1:>{width}} ", style=COORDINATE_STYLE)
        for cell in row:
            text.append(f" {RICH_SYMBOLS[cell]}", style=RICH_STYLES[cell])
        text.append(" ", style=BOARD_BACKGROUND)
        if r < len(grid) - 1:
            text.append("\n")
    return text


def legend(plain: bool = False, mark_label: str | None = None) -> str:
    """One line naming the symbols of a drawing; ``mark_label`` adds the ``*`` entry (e.g. "legal move")."""
    symbols = PLAIN_SYMBOLS if plain else RICH_SYMBOLS
    entries = [(symbols[name], name) for name in (BLACK_DISC, WHITE_DISC, OBSTACLE, EMPTY)]
    if mark_label:
        entries.append((symbols[MARK], mark_label))
    return "  ".join(f"{symbol} {label}" for symbol, label in entries)
