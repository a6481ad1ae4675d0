"""``arena perft``: leaf counts with timing, --divide, layout files, turn limits."""

from __future__ import annotations

import re

import pytest

from engine import Rules, make_env, standard_layout
from harness.cli.perft import divide_counts

STANDARD = [1, 4, 12, 56, 244, 1396]


def _total(output: str) -> int:
    match = re.search(r"perft\((\d+)\) = (\d+)", output)
    assert match, output
    return int(match.group(2))


@pytest.mark.parametrize("depth", [0, 1, 4, 5])
def test_perft_standard_board(invoke, depth):
    result = invoke("perft", "0", "--depth", depth)
    assert result.exit_code == 0, result.output
    assert _total(result.output) == STANDARD[depth]
    assert re.search(r"\d m?s +[\d,]+ nodes/s", result.output), result.output


def test_perft_divide_splits_the_total(invoke):
    result = invoke("perft", "0", "--depth", "4", "--divide")
    assert result.exit_code == 0, result.output
    parts = dict(re.findall(r"│ ([a-p]\d+|pass)\s*│\s*(\d+) │", result.output))
    assert sorted(parts) == ["c5", "d6", "e3", "f4"]
    assert sum(int(v) for v in parts.values()) == 244 == _total(result.output)


def test_perft_env_4_matches_reference_vector(invoke):
    result = invoke("perft", "4", "-d", "5")
    assert result.exit_code == 0, result.output
    import reference_othello

    layout = make_env(4).layout
    assert _total(result.output) == reference_othello.perft(reference_othello.initial_state(layout), 5)


def test_perft_layout_file(invoke, layout_file):
    result = invoke("perft", "--layout", layout_file(), "--depth", "3", "--divide")
    assert result.exit_code == 0, result.output
    import reference_othello

    from engine.layout_text import load_layout

    expected = reference_othello.perft(reference_othello.initial_state(load_layout(layout_file())), 3)
    assert _total(result.output) == expected


def test_perft_respects_the_turn_limit():
    rules = Rules(standard_layout(8, 8), turn_limit=1)
    state = rules.initial_state()
    # One placement each, then the game is over: every depth-2 node is a finished game.
    assert rules.perft(state, 5) == 12
    assert sum(n for _, n in divide_counts(rules, state, 5)) == 12


def test_divide_at_depth_zero_is_empty():
    rules = make_env(0).rules
    assert divide_counts(rules, rules.initial_state(), 0) == []
