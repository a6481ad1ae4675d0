"""``arena show``: the board in the terminal, coloured or plain, with optional legal moves."""

from __future__ import annotations

import re

from engine import make_env
from engine.layout_text import parse_layout
from harness.cli.board import board_plain


def _board_rows(output: str) -> list[str]:
    """The drawing's rows: lines that start with a row number."""
    return [line for line in output.splitlines() if re.match(r"^\s*\d+ ", line)]


def test_show_standard_board(invoke):
    result = invoke("show", "0")
    assert result.exit_code == 0, result.output
    rows = _board_rows(result.output)
    assert len(rows) == 8
    board = "\n".join(rows)
    assert board.count("●") == 2 and board.count("○") == 2
    assert board.count("·") == 60 and "■" not in board
    assert "a b c d e f g h" in result.output


def test_show_env_4_draws_12x10_with_24_obstacles(invoke):
    result = invoke("show", "4")
    assert result.exit_code == 0, result.output
    rows = _board_rows(result.output)
    assert len(rows) == 12
    assert [row.split()[0] for row in rows] == [str(n) for n in range(1, 13)]
    assert all(len(row.split()) == 11 for row in rows)  # row number + 10 cells
    assert "\n".join(rows).count("■") == 24
    assert "a b c d e f g h i j" in result.output


def test_show_plain_uses_layout_symbols(invoke):
    result = invoke("show", "4", "--plain")
    assert result.exit_code == 0, result.output
    board = "\n".join(_board_rows(result.output))
    assert board.count("#") == 24 and board.count("B") == 2 and board.count("W") == 2
    for glyph in "●○■·":
        assert glyph not in result.output


def test_show_moves_marks_legal_first_moves(invoke):
    result = invoke("show", "0", "--moves", "--plain")
    assert result.exit_code == 0, result.output
    board = "\n".join(_board_rows(result.output))
    assert board.count("*") == 4
    assert "legal first moves for black (4): e3, f4, c5, d6" in result.output


def test_show_layout_file(invoke, layout_file):
    result = invoke("show", "--layout", layout_file())
    assert result.exit_code == 0, result.output
    assert "Tiny 6x6" in result.output
    rows = _board_rows(result.output)
    assert len(rows) == 6
    assert "\n".join(rows).count("■") == 2


def test_plain_drawing_without_coordinates_is_layout_text():
    layout = make_env(4).layout
    again = parse_layout(board_plain(layout, coordinates=False))
    assert (again.rows, again.cols) == (layout.rows, layout.cols)
    assert (again.obstacles, again.black, again.white) == (layout.obstacles, layout.black, layout.white)
