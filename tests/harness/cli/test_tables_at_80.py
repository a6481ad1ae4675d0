"""Main tables in a non-terminal at 80 columns: `arena demo`'s comparison (every agent and opponent named whole, no
legend) and `arena agents` (stacked, one block an agent, when its table would squeeze the names)."""

from __future__ import annotations

import io
from dataclasses import dataclass

from rich.console import Console
from typer.testing import CliRunner

from engine import make_env
from harness.cli.demo import BASELINES, OPPONENTS, demo_table
from harness.cli.main import app
from harness.registry.specs import registry


@dataclass(frozen=True)
class Tally:
    wins: int
    draws: int
    games: int

    def count(self, outcome: str) -> int:
        return {"win": self.wins, "draw": self.draws}[outcome]


@dataclass(frozen=True)
class Result:
    overall: Tally


def render(width: int) -> str:
    console = Console(width=width, file=io.StringIO(), record=True, force_terminal=False)
    rate = {"count": 10}
    metrics = {"evaluation": {o: {"win": rate, "draw": {"count": 0}, "games": 10} for o in OPPONENTS}}
    baselines = {spec: {o: Result(Tally(0, 10, 10)) for o in OPPONENTS} for spec in BASELINES}
    table, legend = demo_table(make_env(14), "llm-strategist", metrics, baselines, console)  # type: ignore[arg-type]
    console.print(table)
    for line in legend:
        console.print(line)
    return console.export_text()


def test_at_80_columns_every_name_is_whole_and_no_legend_is_needed():
    text = render(80)
    assert "#1" not in text and "…" not in text, text
    for name in ("llm-strategist", *BASELINES, *(f"vs {o}" for o in OPPONENTS)):
        assert name in text, f"{name!r} not whole in:\n{text}"
    assert "100% [72-100]" in text and "100% draws" in text  # the cells stacked: the win rate over the draw rate
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 80


def test_a_wide_console_keeps_each_cell_on_one_line():
    assert "100% [72-100] / 0%" in render(120)


def test_a_console_too_narrow_for_the_names_falls_back_to_a_legend():
    text = render(50)
    assert "#1 = llm-strategist" in text and "…" not in text


def test_agents_at_80_columns_lists_every_name_whole_one_block_an_agent():
    result = CliRunner().invoke(app, ["agents"], env={"COLUMNS": "80", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    assert "…" not in result.output and max(len(line.rstrip()) for line in result.output.splitlines()) <= 80
    for name, entry in registry().items():
        assert f"{name}  privileged: {'yes' if entry.privileged else 'no'}" in result.output, name
    assert "    n=100 (int)" in result.output  # mcts's parameter, under its agent
