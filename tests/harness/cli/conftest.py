"""Shared helpers of the CLI tests: a runner with a wide terminal, and layout files."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli.main import app

WIDE = {"COLUMNS": "200", "NO_COLOR": "1"}

STANDARD_TEXT = """; name: Tiny 6x6
. . . . . .
. . . . . .
. . B W . .
. . W B . .
. . . . . .
. # . . # .
"""


@pytest.fixture
def invoke():
    """Run ``arena ARGS...``; returns the CliRunner result (stdout and stderr mixed in ``output``)."""
    runner = CliRunner()

    def run(*args: str):
        return runner.invoke(app, [str(a) for a in args], env=WIDE)

    return run


@pytest.fixture
def layout_file(tmp_path: Path):
    """Write ``text`` (default: a 6x6 board with two obstacles) to a file and return its path."""

    def write(text: str = STANDARD_TEXT, name: str = "board.txt") -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return write


@pytest.fixture
def user_error():
    """Check a result is a user error: exit code 2, ``error:`` with the given fragments, no traceback."""
    return assert_user_error


def assert_user_error(result, *fragments: str) -> None:
    """Exit code 2, one ``error:`` line naming the problem, no traceback."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "error:" in result.output
    error_lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(error_lines) == 1, result.output
    for fragment in fragments:
        assert fragment in error_lines[0], result.output


@pytest.fixture
def bench_paper_ok():
    """Assert a finished ``arena bench paper`` exited as its output says: 1 with a FAIL target row, else 0."""

    def check(result, out: Path) -> None:
        import json  # noqa: PLC0415 - only here

        checks = json.loads((out / "results.json").read_text())["checks"]
        failing = any(check["passed"] is False for check in checks)
        assert ("  FAIL " in result.output) == failing, result.output
        assert result.exit_code == (1 if failing else 0), result.output

    return check
