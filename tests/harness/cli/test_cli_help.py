"""``arena --help`` documents every command."""

from __future__ import annotations

import pytest


def test_help_lists_every_command(invoke):
    result = invoke("--help")
    assert result.exit_code == 0, result.output
    for command in ("envs", "show", "perft", "bench", "demo"):
        assert command in result.output


def test_bench_help_lists_engine(invoke):
    result = invoke("bench", "--help")
    assert result.exit_code == 0, result.output
    assert "engine" in result.output


@pytest.mark.parametrize("command", [["envs"], ["show"], ["perft"], ["demo"], ["bench", "engine"]])
def test_each_command_has_help(invoke, command):
    result = invoke(*command, "--help")
    assert result.exit_code == 0, result.output
    assert "Usage" in result.output
