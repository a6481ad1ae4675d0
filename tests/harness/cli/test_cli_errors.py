"""Every user error: one red ``error:`` line, exit code 2, no traceback."""

from __future__ import annotations

import pytest

BAD_SYMBOL = """. . . . . .
. . . . . .
. . B W . .
. . W B x .
. . . . . .
. . . . . .
"""


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["show", "99"], "unknown environment id 99"),
        (["show", "abc"], "is not a spec: give an id 0-55"),
        (["show"], "give an environment id"),
        (["perft", "56", "--depth", "2"], "unknown environment id 56"),
        (["perft", "0", "--depth", "-1"], "--depth must be 0 or more"),
        (["perft", "--layout", "missing.txt", "--depth", "2"], "does not exist"),
        (["demo", "--env", "77"], "unknown environment id 77"),
        (["demo", "--games", "0"], "--games must be 1 or more"),
        (["bench", "engine", "--envs", "3-1"], "runs backwards"),
        (["bench", "engine", "--envs", "0-56"], "ids are 0-55"),
        (["bench", "engine", "--envs", "x"], "not an id or a range"),
        (["bench", "engine", "--seconds", "0"], "--seconds must be more than 0"),
        (["run", "--model", "nosuchprovider/x", "--env", "0"], "unknown model 'nosuchprovider/x'"),
        (["run", "--model", "mock/nope", "--env", "0"], "unknown mock model 'mock/nope'; valid: "),
        (["run", "--model", "mock/first-legal", "--env", "0", "--budget", "-1"], "--budget -1: input should be greater"),
        (["run", "--model", "mock/first-legal", "--env", "0", "--hint", "x"], "--hint 'x': input should be 'none'"),
        (["run", "--model", "mock/first-legal", "--env", "0", "--checkpoints", "5,x"], "--checkpoints '5,x'"),
        (["run", "--model", "mock/first-legal", "--env", "0", "--budget", "5", "--checkpoints", "9"], "exceeds the budget"),
        (["run", "--model", "mock/first-legal", "--env", "0", "--opponents", "nosuch"], "unknown agent 'nosuch'"),
        (["run", "--model", "mock/first-legal"], "give --model and --env"),
        (["run", "--resume", "no/such/run"], "no/such/run"),
        (["demo", "--model", "mock/nope"], "unknown mock model 'mock/nope'"),
        (["demo", "--budget", "0"], "--budget must be 1 or more"),
    ],
)
def test_bad_arguments(invoke, user_error, args, fragment):
    user_error(invoke(*args), fragment)


def test_layout_file_with_a_bad_symbol(invoke, user_error, layout_file):
    path = layout_file(BAD_SYMBOL)
    user_error(invoke("show", "--layout", path), "unknown symbol 'x'", "line 4")
    user_error(invoke("perft", "--layout", path, "--depth", "1"), "unknown symbol 'x'")


def test_layout_directory(invoke, user_error, tmp_path):
    user_error(invoke("show", "--layout", tmp_path), "directory")


def test_layout_that_is_not_text(invoke, user_error, tmp_path):
    path = tmp_path / "binary.txt"
    path.write_bytes(b"\xff\xfe\x00\x81")
    user_error(invoke("show", "--layout", path), "not UTF-8")


def test_env_and_layout_together(invoke, user_error, layout_file):
    user_error(invoke("show", "0", "--layout", layout_file()), "not both")


def test_error_messages_with_brackets_are_printed_literally(invoke, user_error, layout_file):
    # The message names the layout; "[bold]...[/bold]" must be printed, not read as rich markup.
    text = "; name: [bold]x[/bold]\nB . . .\n. . . .\n. . . .\n. . . W\n"
    user_error(invoke("show", "--layout", layout_file(text)), "no legal first move", "[bold]x[/bold]")
