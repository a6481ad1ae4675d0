"""The layout text format: round trips, comments, every error message, files, examples."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.environments import layouts
from engine.layout import Layout, LayoutError, standard_layout
from engine.layout_text import format_layout, load_layout, parse_layout, validate_playable
from engine.rules import Rules
from engine.state import PASS

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "layouts"

STANDARD_4X4 = """\
. . . .
. B W .
. W B .
. . . .
"""


def _error(text: str) -> str:
    with pytest.raises(LayoutError) as info:
        parse_layout(text)
    return str(info.value)


@pytest.mark.parametrize("layout", layouts(), ids=lambda layout: layout.name)
def test_benchmark_layouts_round_trip(layout: Layout) -> None:
    text = format_layout(layout)
    assert parse_layout(text) == layout
    assert text.splitlines()[0] == f"; name: {layout.name}"
    assert len(text.splitlines()) == layout.rows + 1


def test_format_draws_each_symbol() -> None:
    layout = standard_layout(4, 5, [(0, 0), (3, 4)], "Tiny")
    assert format_layout(layout) == "; name: Tiny\n# . . . .\n. B W . .\n. W B . .\n. . . . #\n"


def test_unnamed_layout_has_no_header_and_round_trips() -> None:
    layout = standard_layout(6, 4, [(0, 1)])
    text = format_layout(layout)
    assert not text.startswith(";")
    assert parse_layout(text) == layout


def test_whitespace_inside_rows_is_ignored() -> None:
    packed = "....\n.BW.\n.WB.\n....\n"
    ragged_spacing = " .  . ..\n\t.B W .\n.W\tB.   \n. . . .\n"
    assert parse_layout(packed) == parse_layout(STANDARD_4X4) == parse_layout(ragged_spacing)
    assert parse_layout(packed) == standard_layout(4, 4)


def test_comments_blank_lines_and_crlf_are_ignored() -> None:
    text = "\n; name: Commented\n; another comment\n\n. . . .\r\n  ; indented comment\n. B W .\n\n. W B .\n. . . .\n; trailer\n"
    layout = parse_layout(text)
    assert layout == standard_layout(4, 4, name="Commented")


def test_name_header_only_before_the_board_and_first_wins() -> None:
    assert parse_layout("; name: First\n; name: Second\n" + STANDARD_4X4).name == "First"
    assert parse_layout("; a remark\n;NAME:  Spaced out  \n" + STANDARD_4X4).name == "Spaced out"
    assert parse_layout(STANDARD_4X4 + "; name: Too late\n").name == ""


def test_name_argument_overrides_header() -> None:
    assert parse_layout("; name: In file\n" + STANDARD_4X4, name="Given").name == "Given"
    assert parse_layout(STANDARD_4X4, name="Given").name == "Given"


def test_discs_need_not_be_in_the_centre() -> None:
    layout = parse_layout("B W . . .\n. . . . .\n. . . . #\n. . . . .\n")
    assert layout.black == {(0, 0)} and layout.white == {(0, 1)} and layout.obstacles == {(2, 4)}
    assert Rules(layout).legal_moves(Rules(layout).initial_state()) == [2]


def test_unknown_symbol_names_char_place_and_allowed_set() -> None:
    message = _error(". . . .\n. B W .\n. W B x\n. . . .\n")
    assert "'x'" in message and "line 3, column 7" in message
    for symbol in ("'.'", "'#'", "'B'", "'W'"):
        assert symbol in message


def test_lower_case_disc_gets_a_case_hint() -> None:
    message = _error(". . . .\n. b W .\n. W B .\n. . . .\n")
    assert "'b'" in message and "line 2, column 3" in message and "case-sensitive" in message and "'B'" in message


def test_inline_comment_is_explained() -> None:
    message = _error(". . . . ; top\n. B W .\n. W B .\n. . . .\n")
    assert "';'" in message and "line 1, column 9" in message and "line of its own" in message


def test_ragged_rows_name_line_and_counts() -> None:
    message = _error("; name: Ragged\n. . . .\n. B W .\n. W B . .\n. . . .\n")
    assert "line 4" in message and "board row 3" in message
    assert "has 5 cells" in message and "line 2) has 4" in message and "same number of cells" in message


@pytest.mark.parametrize("text", ["", "\n\n  \n", "; name: Nothing\n; just comments\n"])
def test_empty_text(text: str) -> None:
    message = _error(text)
    assert "empty layout" in message and "no board rows" in message and "'#'" in message


def _board(rows: int, cols: int) -> str:
    """Standard start on rows x cols, drawn as text (sizes outside 4-16 included)."""
    grid = [["."] * cols for _ in range(rows)]
    r0, c0 = rows // 2 - 1, cols // 2 - 1
    grid[r0][c0] = grid[r0 + 1][c0 + 1] = "B"
    grid[r0][c0 + 1] = grid[r0 + 1][c0] = "W"
    return "\n".join(" ".join(row) for row in grid) + "\n"


@pytest.mark.parametrize(
    ("rows", "cols", "expected"),
    [
        (17, 8, "the board has 17 rows (lines 1-17); it needs 4 to 16 rows"),
        (3, 8, "the board has 3 rows (lines 1-3); it needs 4 to 16 rows"),
        (8, 17, "the board has 17 columns"),
        (6, 3, "the board has 3 columns"),
    ],
)
def test_board_size_limits(rows: int, cols: int, expected: str) -> None:
    message = _error(_board(rows, cols))
    assert expected in message
    if "columns" in expected:
        assert "it needs 4 to 16 columns" in message


def test_largest_and_smallest_boards_parse() -> None:
    assert parse_layout(_board(16, 16)).shape == (16, 16)
    assert parse_layout(_board(4, 16)).shape == (4, 16)
    assert parse_layout(_board(16, 4)).shape == (16, 4)


@pytest.mark.parametrize(
    ("text", "missing"),
    [
        (". . . .\n. B B .\n. B B .\n. . . .\n", "no white discs ('W')"),
        (". . . .\n. W . .\n. . W .\n. . . .\n", "no black discs ('B')"),
        (". . . .\n. . # .\n. . . .\n. . . .\n", "no black discs ('B') and no white discs ('W')"),
    ],
)
def test_missing_colour(text: str, missing: str) -> None:
    message = _error(text)
    assert missing in message and "both colours need at least one disc" in message


def test_no_legal_first_move_for_black() -> None:
    message = _error("; name: Stuck\nB . . .\n. . . .\n. . . .\n. . . W\n")
    assert "no legal first move for black" in message and "'Stuck'" in message
    assert "remove an obstacle" in message


def test_centre_start_with_every_opening_blocked() -> None:
    text = ". . # .\n. B W #\n# W B .\n. # . .\n"
    assert "no legal first move for black" in _error(text)


def test_validate_playable_directly() -> None:
    for layout in layouts():
        validate_playable(layout)
    blocked = standard_layout(4, 4, [(0, 2), (1, 3), (2, 0), (3, 1)])
    with pytest.raises(LayoutError, match="no legal first move for black on 4x4, 4 obstacles"):
        validate_playable(blocked)
    rules = Rules(blocked)
    assert rules.legal_moves(rules.initial_state()) in ([], [PASS])


def test_black_must_pass_is_not_playable() -> None:
    # White in the corner cannot be flanked; white could play c1, so black must pass.
    layout = Layout(4, 4, frozenset(), frozenset({(0, 1)}), frozenset({(0, 0)}))
    rules = Rules(layout)
    assert rules.legal_moves(rules.initial_state()) == [PASS]
    with pytest.raises(LayoutError, match="no legal first move for black"):
        validate_playable(layout)


def test_name_with_line_break_cannot_be_formatted() -> None:
    with pytest.raises(LayoutError, match="line break"):
        format_layout(standard_layout(4, 4, name="two\nlines"))


def test_load_layout_reads_file_and_names_it_after_the_file(tmp_path: Path) -> None:
    path = tmp_path / "my_board.txt"
    path.write_text(STANDARD_4X4)
    assert load_layout(path) == standard_layout(4, 4, name="my_board")
    path.write_text("; name: Named inside\n" + STANDARD_4X4)
    assert load_layout(str(path)).name == "Named inside"


def test_load_layout_accepts_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "bom.txt"
    path.write_bytes("\ufeff; name: BOM\n".encode() + STANDARD_4X4.encode())
    assert load_layout(path).name == "BOM"


def test_load_layout_file_errors_name_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "missing.txt"
    with pytest.raises(LayoutError, match="does not exist") as info:
        load_layout(missing)
    assert str(missing) in str(info.value)
    with pytest.raises(LayoutError, match="is a directory") as info:
        load_layout(tmp_path)
    assert str(tmp_path) in str(info.value)
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"\xff\xfe\x00\x80 not text")
    with pytest.raises(LayoutError, match="not UTF-8 text") as info:
        load_layout(binary)
    assert str(binary) in str(info.value)


def test_load_layout_content_errors_name_the_path(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    path.write_text(". . . .\n. B W .\n. W B ?\n. . . .\n")
    with pytest.raises(LayoutError) as info:
        load_layout(path)
    message = str(info.value)
    assert message.startswith(f"{path}: line 3, column 7") and "'?'" in message


def test_example_files_exist() -> None:
    assert len(sorted(EXAMPLES.glob("*.txt"))) >= 2


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.txt")), ids=lambda path: path.name)
def test_example_layouts_parse_and_round_trip(path: Path) -> None:
    layout = load_layout(path)
    assert layout.name and layout.obstacles
    validate_playable(layout)
    assert parse_layout(format_layout(layout)) == layout


def test_example_shapes() -> None:
    shapes = {path.name: load_layout(path).shape for path in EXAMPLES.glob("*.txt")}
    assert shapes["pinwheel_ring_6x6.txt"] == (6, 6)
    assert shapes["tall_10x6.txt"] == (10, 6)
