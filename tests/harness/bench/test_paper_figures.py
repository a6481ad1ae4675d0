"""The bench-paper figures people read: axis labels, colour bars, board coordinates, confidence bands, and the redraw.

A small synthetic run (two layouts, one condition each, two agents) stands in for
a benchmark: nothing is played.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from matplotlib.collections import PolyCollection
from typer.testing import CliRunner

from engine.environments import layouts, make_env
from harness.bench.paper_plan import (
    SCHEMA,
    WEIGHT_PROGRESS,
    WEIGHT_RHOS,
    Checkpoint,
    EnvAgentResult,
    Outcome,
    PaperPlan,
    condition_label,
    make_paper_plan,
)
from harness.bench.paper_plots import convergence_figure, redraw_figures, weights_figure
from harness.bench.paper_summary import WinCount, summarise
from harness.bench.posnet_plot import COLOUR_BAR_LABEL, value_tables_figure
from harness.cli.main import app
from harness.tournaments.stats import wilson

ENV_IDS = (5, 12)  # layout 6 under two conditions: one environment per condition


def _outcome(opponent: str, win: int, draw: int, lose: int) -> Outcome:
    return Outcome(
        opponent=opponent,
        spec=opponent.lower(),
        privileged=False,
        win=win,
        draw=draw,
        lose=lose,
        rewards=(1,) * win + (0,) * draw + (-1,) * lose,
    )


def _plan() -> PaperPlan:
    return make_paper_plan(ENV_IDS, ["adaptive-minimax:population=10"], budget=40, games=4, checkpoint_games=4)


def _results(plan: PaperPlan) -> list[EnvAgentResult]:
    results = []
    for index, env_id in enumerate(plan.env_ids):
        env = make_env(env_id)
        checkpoints = tuple(
            Checkpoint(
                planned_games=games,
                games_played=games,
                source="adapting",
                outcomes=tuple(
                    _outcome(o.label, win=min(4, step + index), draw=0, lose=4 - min(4, step + index)) for o in plan.checkpoint_opponents
                ),
            )
            for step, games in enumerate(plan.checkpoints)
        )
        curves = {f"{p:g}": (np.outer(WEIGHT_RHOS, [1.0, 0.5, 2.0, -1.0]) * (1 + index)).tolist() for p in WEIGHT_PROGRESS}
        results.append(
            EnvAgentResult(
                env_id=env_id,
                env_name=env.name,
                layout=env_id % 7,
                condition=condition_label(env.condition),
                agent=plan.agents[0],
                status="ok",
                budget=plan.budget,
                games_used=plan.budget,
                checkpoints=checkpoints,
                final=tuple(_outcome(o.label, 2, 1, 1) for o in plan.opponents),
                weight_curves=curves,
            )
        )
    return results


def _bands(ax) -> list[PolyCollection]:  # noqa: ANN001 - a matplotlib Axes
    return [c for c in ax.collections if isinstance(c, PolyCollection)]


def test_the_summary_pools_checkpoint_counts_over_environments() -> None:
    plan = _plan()
    summary = summarise(plan, _results(plan), paper_table2=None)
    agent, first = plan.agents[0], plan.checkpoints[0]
    by_games = next(iter(summary.convergence_counts[agent].values()))["Random"]
    # one environment per condition here: 4 games each, wins = step + environment index
    assert by_games[first] in (WinCount(wins=0, games=4), WinCount(wins=1, games=4))
    assert sorted(by_games) == sorted(plan.checkpoints)


def test_convergence_figure_has_labelled_axes_a_legend_and_wilson_bands() -> None:
    plan = _plan()
    summary = summarise(plan, _results(plan), paper_table2=None)
    figure = convergence_figure(summary)
    assert figure is not None
    axes = figure.axes
    assert len(axes) == len(plan.checkpoint_opponents)
    for ax in axes:
        assert ax.get_xlabel() == "games played in adaptation (count)"
        assert ax.get_ylabel() == "win rate (%)"
        assert len(_bands(ax)) == len(ax.get_lines()) == 2  # a band around each condition's line
    assert axes[0].get_legend() is not None
    assert "Wilson 95%" in figure.get_suptitle()
    # the band of the first line at the first checkpoint is the Wilson interval of its pooled counts
    counts = summary.convergence_counts[plan.agents[0]]
    condition = axes[0].get_lines()[0].get_label()
    pooled = counts[condition]["Random"][plan.checkpoints[0]]
    low, high = wilson(pooled.wins, pooled.games)
    ys = _bands(axes[0])[0].get_paths()[0].vertices[:, 1]
    assert min(ys) == pytest.approx(100 * low) and max(ys) >= 100 * high - 1e-9


def test_a_summary_without_counts_draws_lines_without_bands() -> None:
    plan = _plan()
    summary = summarise(plan, _results(plan), paper_table2=None).model_copy(update={"convergence_counts": {}})
    figure = convergence_figure(summary)
    assert figure is not None
    assert all(not _bands(ax) and ax.get_lines() for ax in figure.axes)
    assert "Wilson" not in figure.get_suptitle()


def test_weight_curves_have_labelled_axes_a_legend_and_spread_bands() -> None:
    plan = _plan()
    results = _results(plan)
    figure = weights_figure(results, "weights")
    first_column = [ax for ax in figure.axes if ax.get_ylabel()]
    assert first_column and all(ax.get_ylabel() == "weight (WeightNet output)" for ax in first_column)
    assert figure.axes[-1].get_xlabel() == "rho: own disc share (0-1)"
    assert figure.axes[0].get_legend() is not None
    # two conditions with one layout each: no spread to draw; pool them under one condition and bands appear
    assert not any(_bands(ax) for ax in figure.axes)
    same = [r.model_copy(update={"condition": results[0].condition}) for r in results]
    pooled = weights_figure(same, "weights")
    assert all(len(_bands(ax)) == 4 for ax in pooled.axes)


def test_value_tables_have_colour_bars_and_board_coordinates() -> None:
    chosen = [layouts()[0], layouts()[5]]
    tables = {layout.name: np.linspace(-1.0, 2.0, layout.cells) for layout in chosen}
    figure = value_tables_figure(tables, chosen)
    bars = [ax for ax in figure.axes if ax.get_ylabel() == COLOUR_BAR_LABEL]
    boards = [ax for ax in figure.axes if ax.get_title() in tables]
    assert len(bars) == len(boards) == 2
    for board, layout in zip(boards, chosen):
        columns = [t.get_text() for t in board.get_xticklabels()]
        rows = [t.get_text() for t in board.get_yticklabels()]
        assert columns == list("abcdefghijklmnop"[: layout.cols]) and rows == [str(r + 1) for r in range(layout.rows)]
        assert board.get_xlabel() == "column" and board.get_ylabel() == "row"
    low, high = bars[0].get_ylim()
    assert (low, high) == pytest.approx((-2.0, 2.0))  # the scale is centred on 0 and reaches the largest |value|


def test_redraw_from_a_run_directory_plays_nothing_and_writes_every_figure(tmp_path: Path) -> None:
    plan = _plan()
    manifest = {"schema_version": SCHEMA, "kind": "bench-paper", "plan": plan.model_dump(mode="json")}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    lines = "".join(result.model_dump_json() + "\n" for result in _results(plan))
    (tmp_path / "results.jsonl").write_text(lines, encoding="utf-8")
    result = CliRunner().invoke(app, ["bench", "replot", str(tmp_path)])
    assert result.exit_code == 0, result.output
    names = {path.name for path in tmp_path.glob("*.png")}
    assert {"convergence.png", "posnet-tables.png", "weights-adaptive-minimax-population=10-mean.png"} <= names
    assert "wrote" in result.output


def test_redraw_refuses_a_directory_that_is_not_a_run(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["bench", "replot", str(tmp_path)])
    assert result.exit_code == 2
    assert "no manifest.json" in result.output
    with pytest.raises(ValueError, match="no finished pair"):
        manifest = {"schema_version": SCHEMA, "kind": "bench-paper", "plan": _plan().model_dump(mode="json")}
        (tmp_path / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
        redraw_figures(tmp_path)


def test_the_summary_tables_at_80_columns_cut_no_name_and_no_figure(monkeypatch) -> None:
    """Too wide for 80 columns, a table's figure columns go over stacked tables (issue 16): every agent and
    opponent name and every cell is printed whole."""
    import io

    from rich.console import Console

    from harness.cli import bench_paper

    plan = _plan()
    summary = summarise(plan, _results(plan), paper_table2=None)
    out = io.StringIO()
    monkeypatch.setattr(bench_paper, "stdout_console", lambda: Console(width=80, file=out, no_color=True))
    bench_paper.print_summary(summary, Path("run"), [])
    text = out.getvalue()
    assert "…" not in text
    assert all(len(line) <= 80 for line in text.splitlines())
    lines = text.splitlines()
    for name in (*plan.agents, *(o.label for o in plan.opponents)):
        assert any(name in line for line in lines), name
    headers = [line for line in lines if line.strip().startswith("C ") and "agent" in line and "envs" in line]
    assert len(headers) > 1  # the per-condition table is stacked at this width
    shown = {label.rstrip("*") for line in headers for label in line.split()} & {o.label for o in plan.opponents}
    assert shown == {o.label for o in plan.opponents}  # every opponent's column is in one of the stacked parts
