"""A plain-text format for layouts, so that people can draw their own boards.

One board row per line, top row first::

    ; name: Pinwheel ring 6x6
    . . . . . .
    . # # . # .
    . # B W . .
    . . W B # .
    . # . # # .
    . . . . . .

Cells: ``.`` empty, ``#`` obstacle, ``B`` black disc, ``W`` white disc (upper case).
Whitespace inside a line is ignored, so ``..#BW`` and ``. . # B W`` are the same row.
Blank lines and lines whose first non-blank character is ``;`` are comments. A comment
``; name: ...`` before the first board row names the layout. Discs may stand anywhere,
not only in the centre; the board must be 4-16 cells on each side, hold discs of both
colours and give black (who moves first) at least one legal placement.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from engine.layout import MAX_SIDE, MIN_SIDE, Cell, Layout, LayoutError
from engine.rules import Rules
from engine.state import PASS

EMPTY, OBSTACLE, BLACK_DISC, WHITE_DISC = ".", "#", "B", "W"
SYMBOLS: dict[str, str] = {EMPTY: "empty", OBSTACLE: "obstacle", BLACK_DISC: "black disc", WHITE_DISC: "white disc"}
COMMENT = ";"
NAME_KEY = "name:"
_ALLOWED = ", ".join(f"'{symbol}' ({meaning})" for symbol, meaning in SYMBOLS.items())


@dataclass(frozen=True)
class _Row:
    """One board row as read: its 1-based line number and its symbols, whitespace removed."""

    line: int
    cells: str


def parse_layout(text: str, name: str = "") -> Layout:
    """The layout drawn in ``text``; LayoutError saying what is wrong and where otherwise.

    ``name``, when given, overrides a ``; name:`` comment in the text.
    """
    header_name, rows = _read_rows(text)
    _check_shape(rows)
    layout = _build(rows, name or header_name)
    _check_discs(layout)
    validate_playable(layout)
    return layout


def format_layout(layout: Layout) -> str:
    """The text of ``layout`` (``parse_layout`` reads it back to an equal layout)."""
    if "\n" in layout.name or "\r" in layout.name:
        raise LayoutError(f"layout name {layout.name!r} contains a line break; a name must fit on one line")
    lines = [f"{COMMENT} {NAME_KEY} {layout.name}"] if layout.name.strip() else []
    lines += [" ".join(_symbol(layout, (r, c)) for c in range(layout.cols)) for r in range(layout.rows)]
    return "\n".join(lines) + "\n"


def load_layout(path: str | os.PathLike[str]) -> Layout:
    """The layout in the text file at ``path``; named after the file unless it names itself.

    Every error, unreadable file or bad content, is a LayoutError that names the path.
    """
    path = Path(path)
    text = _read_text(path)
    try:
        layout = parse_layout(text)
    except LayoutError as err:
        raise LayoutError(f"{path}: {err}") from err
    return layout if layout.name else replace(layout, name=path.stem)


def validate_playable(layout: Layout) -> None:
    """Raise LayoutError unless black, who moves first, has a legal placement at the start."""
    rules = Rules(layout)
    moves = rules.legal_moves(rules.initial_state())
    if moves and moves != [PASS]:
        return
    label = f"'{layout.name}' ({layout.describe()})" if layout.name else layout.describe()
    raise LayoutError(
        f"no legal first move for black on {label}: black moves first and needs an empty cell "
        f"from which a straight line of white discs ends at a black disc (obstacles and the edge "
        f"break such a line); move a disc or remove an obstacle so that black has such a cell"
    )


def _read_rows(text: str) -> tuple[str, list[_Row]]:
    """(name from a header comment, board rows) of the text; symbols checked, shape not yet."""
    name, rows = "", list[_Row]()
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith(COMMENT):
            if not rows and not name:
                name = _header_name(stripped)
            continue
        rows.append(_Row(number, _row_cells(line, number)))
    return name, rows


def _header_name(comment: str) -> str:
    """The name in a ``; name: ...`` comment, or "" for any other comment."""
    body = comment[len(COMMENT) :].strip()
    if body.lower().startswith(NAME_KEY):
        return body[len(NAME_KEY) :].strip()
    return ""


def _row_cells(line: str, number: int) -> str:
    """The symbols of one board row, whitespace dropped; LayoutError on an unknown symbol."""
    cells = []
    for column, char in enumerate(line, start=1):
        if char.isspace():
            continue
        if char not in SYMBOLS:
            raise LayoutError(
                f"line {number}, column {column}: unknown symbol {char!r}; a cell must be one of {_ALLOWED}{_symbol_hint(char)}"
            )
        cells.append(char)
    return "".join(cells)


def _symbol_hint(char: str) -> str:
    if char.upper() in (BLACK_DISC, WHITE_DISC):
        return f" (symbols are case-sensitive: write {char.upper()!r})"
    if char == COMMENT:
        return " (a comment must be a line of its own, starting with ';')"
    return ""


def _check_shape(rows: list[_Row]) -> None:
    """LayoutError for no rows, rows of different lengths, or a size outside 4-16."""
    if not rows:
        raise LayoutError(f"empty layout: no board rows found, only blank lines or comments; draw one line per board row using {_ALLOWED}")
    first, width = rows[0], len(rows[0].cells)
    for index, row in enumerate(rows[1:], start=2):
        if len(row.cells) != width:
            raise LayoutError(
                f"line {row.line} (board row {index}) has {len(row.cells)} cells, but the first "
                f"board row (line {first.line}) has {width}; every row needs the same number of cells"
            )
    span = f"lines {first.line}-{rows[-1].line}"
    if not MIN_SIDE <= len(rows) <= MAX_SIDE:
        raise LayoutError(f"the board has {len(rows)} rows ({span}); it needs {MIN_SIDE} to {MAX_SIDE} rows")
    if not MIN_SIDE <= width <= MAX_SIDE:
        raise LayoutError(
            f"the board has {width} columns (cells per row, first row on line {first.line}); it needs {MIN_SIDE} to {MAX_SIDE} columns"
        )


def _build(rows: list[_Row], name: str) -> Layout:
    def cells_of(symbol: str) -> frozenset[Cell]:
        return frozenset((r, c) for r, row in enumerate(rows) for c, s in enumerate(row.cells) if s == symbol)

    return Layout(len(rows), len(rows[0].cells), cells_of(OBSTACLE), cells_of(BLACK_DISC), cells_of(WHITE_DISC), name)


def _check_discs(layout: Layout) -> None:
    """LayoutError when a colour has no disc on the board."""
    missing = [
        f"{colour} discs ('{symbol}')"
        for colour, symbol, discs in (("black", BLACK_DISC, layout.black), ("white", WHITE_DISC, layout.white))
        if not discs
    ]
    if missing:
        raise LayoutError(
            f"the board has no {' and no '.join(missing)}; both colours need at least one disc "
            f"at the start (the benchmark boards start with two of each in the centre)"
        )


def _symbol(layout: Layout, cell: Cell) -> str:
    if cell in layout.obstacles:
        return OBSTACLE
    if cell in layout.black:
        return BLACK_DISC
    return WHITE_DISC if cell in layout.white else EMPTY


def _read_text(path: Path) -> str:
    """The file's text (UTF-8, a byte-order mark allowed); LayoutError naming the path otherwise."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise LayoutError(f"layout file {str(path)!r} does not exist; give the path of a layout text file") from None
    except IsADirectoryError:
        raise LayoutError(f"layout path {str(path)!r} is a directory; give the path of a layout text file") from None
    except UnicodeDecodeError as err:
        raise LayoutError(
            f"layout file {str(path)!r} is not UTF-8 text (byte {err.start}: {err.reason}); save it as plain UTF-8 text"
        ) from None
    except OSError as err:
        raise LayoutError(f"cannot read layout file {str(path)!r}: {err.strerror or err}") from None
