"""The paper's figures from an ``arena bench paper`` run: PNG files in the run directory (matplotlib, no display).

- ``convergence.png`` (Figure 2): win rate against the number of games played at
  each checkpoint, averaged over the environments of a condition; one line per
  condition, one column per adaptive agent, one row per checkpoint opponent.
- ``posnet-tables.png`` (Figure 1): PosNet's value table on each benchmark
  layout of the run (drawn by ``harness.bench.posnet_plot`` when that exists).
- ``weights-<agent>-mean.png`` and ``-L1``/``-L2`` (Figures 6, 7): WeightNet's four
  weights against the disc share rho at fixed progress, one column per condition,
  averaged over layouts, and on layouts 1 and 2 alone.

Every panel labels its axes with units; the convergence lines carry Wilson 95%
bands on the checkpoint games pooled over layouts, the weight curves ± 1 std
over layouts. :func:`redraw_figures` draws them again from a recorded run
(``arena bench replot DIR``), playing nothing.

Figures are drawn on :class:`matplotlib.figure.Figure` objects (Agg canvas),
never through pyplot's global state, so worker threads and tests stay clean.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from engine.environments import layouts
from harness.bench.paper_plan import WEIGHT_RHOS, EnvAgentResult, paper_order
from harness.bench.paper_run import read_plan, read_results
from harness.bench.paper_summary import PaperSummary, summarise
from harness.tournaments.plan import TournamentError
from harness.tournaments.results import agent_label
from harness.tournaments.stats import wilson

WEIGHT_NAMES = ("PosScore", "mobility", "corner", "discDiff")
DPI = 110


def write_plots(summary: PaperSummary, run_dir: Path) -> tuple[list[str], list[str]]:
    """Draw every figure the run has data for; returns the PNG paths and notes on what was left out."""
    paths: list[str] = []
    notes: list[str] = []
    for draw in (plot_convergence, plot_posnet_tables, plot_weight_curves):
        made, note = draw(summary, run_dir)
        paths += made
        notes += [note] if note else []
    return paths, notes


def plot_convergence(summary: PaperSummary, run_dir: Path) -> tuple[list[str], str | None]:
    """Figure 2: mean win rate at each checkpoint, a line per condition; agents in columns, opponents in rows."""
    figure = convergence_figure(summary)
    if figure is None:
        return [], "convergence plot left out: no checkpoint results"
    return [_save(figure, run_dir / "convergence.png")], None


def convergence_figure(summary: PaperSummary) -> Figure | None:
    """The convergence figure, with a Wilson 95% band per line where the summary has the pooled counts."""
    agents = [a for a in summary.plan.agents if summary.convergence.get(a)]
    opponents = summary.plan.checkpoint_opponents
    if not agents or not opponents:
        return None
    figure = Figure(figsize=(max(6.5, 5 * len(agents)), 3.6 * len(opponents)), layout="constrained")
    axes = np.atleast_2d(figure.subplots(len(opponents), len(agents), squeeze=False))
    banded = False
    for column, agent in enumerate(agents):
        counts = summary.convergence_counts.get(agent, {})
        for row, opponent in enumerate(opponents):
            ax = axes[row, column]
            for condition, by_opponent in _in_paper_order(summary.convergence[agent]):
                points = sorted(by_opponent.get(opponent.label, {}).items())
                if not points:
                    continue
                games = [g for g, _ in points]
                (line,) = ax.plot(games, [s.mean for _, s in points], marker="o", label=condition)
                pooled = counts.get(condition, {}).get(opponent.label, {})
                if all(g in pooled for g in games):
                    low, high = zip(*(wilson(pooled[g].wins, pooled[g].games) for g in games))
                    ax.fill_between(games, [100 * v for v in low], [100 * v for v in high], color=line.get_color(), alpha=0.15, linewidth=0)
                    banded = True
            ax.set(
                title=f"{agent} vs {agent_label(opponent.label, opponent.privileged)}",
                xlabel="games played in adaptation (count)",
                ylabel="win rate (%)",
                ylim=(-3, 103),
                xticks=summary.plan.checkpoints,
            )
            ax.grid(alpha=0.3)
    axes[0, -1].legend(title="condition", fontsize="small", title_fontsize="small", loc="best")
    band = ";\nbands: Wilson 95% interval, games pooled over layouts" if banded else ""
    figure.suptitle(f"Figure 2: win rate at each checkpoint\nlines: mean over layouts{band}", fontsize="medium")
    return figure


def plot_posnet_tables(summary: PaperSummary, run_dir: Path) -> tuple[list[str], str | None]:
    """Figure 1: PosNet's value table on each layout of the run, if PosNet and its plotter exist."""
    try:
        from agents.posnet.network import posnet_table
        from harness.bench.posnet_plot import plot_value_tables
    except ImportError as error:
        return [], f"PosNet value tables (Figure 1) not plotted: {error} (agents.posnet.network / harness.bench.posnet_plot)"
    indices = sorted({env_id % len(layouts()) for env_id in summary.plan.env_ids if isinstance(env_id, int)})
    chosen = [layouts()[i] for i in indices]
    path = run_dir / "posnet-tables.png"
    try:
        tables = {f"L{i + 1}: {layouts()[i].name}": np.asarray(posnet_table(layouts()[i])) for i in indices}
        plot_value_tables(tables, chosen, path)
    except Exception as error:  # noqa: BLE001 - a figure must not cost the run its report
        return [], f"PosNet value tables (Figure 1) not plotted: {type(error).__name__}: {error}"
    return [str(path)], None


def plot_weight_curves(summary: PaperSummary, run_dir: Path) -> tuple[list[str], str | None]:
    """Figures 6, 7: weights vs rho at fixed progress per condition; mean over layouts, and layouts 1 and 2."""
    paths = []
    for agent in summary.plan.agents:
        pairs = [r for r in summary.pairs if r.agent == agent and r.weight_curves]
        if not pairs:
            continue
        slug = re.sub(r"[^A-Za-z0-9=.-]+", "-", agent).strip("-")
        selections = [("mean", "mean over layouts", pairs)]
        selections += [(f"L{i + 1}", f"layout {i + 1} ({layouts()[i].name})", [r for r in pairs if r.layout == i]) for i in (0, 1)]
        for suffix, title, chosen in selections:
            if chosen:
                figure = weights_figure(chosen, f"{agent}: WeightNet weights vs rho, {title}")
                paths.append(_save(figure, run_dir / f"weights-{slug}-{suffix}.png"))
    return paths, None if paths else "weight plots (Figures 6, 7) left out: no agent reported weight curves"


def weights_figure(pairs: Sequence[EnvAgentResult], title: str) -> Figure:
    """Rows: progress values; columns: conditions; in each panel the four weights against rho."""
    curves: dict[str, dict[str, list[np.ndarray]]] = defaultdict(lambda: defaultdict(list))
    for pair in pairs:
        for progress, curve in (pair.weight_curves or {}).items():
            curves[pair.condition][progress].append(np.asarray(curve, dtype=float))
    conditions = [c for c, _ in _in_paper_order(curves)]
    progresses = sorted({p for c in curves.values() for p in c}, key=float)
    figure = Figure(figsize=(max(5.5, 2.6 * len(conditions) + 1), 2.2 * len(progresses) + 0.8), layout="constrained")
    axes = figure.subplots(len(progresses), len(conditions), squeeze=False, sharex=True)
    rhos = np.asarray(WEIGHT_RHOS)
    banded = False
    for column, condition in enumerate(conditions):
        for row, progress in enumerate(progresses):
            ax = axes[row, column]
            stacked = curves[condition].get(progress)
            if stacked:
                mean, spread = np.mean(stacked, axis=0), np.std(stacked, axis=0, ddof=1 if len(stacked) > 1 else 0)
                x = rhos[: len(mean)]
                for index, name in enumerate(WEIGHT_NAMES):
                    (line,) = ax.plot(x, mean[:, index], label=name)
                    if len(stacked) > 1:
                        ax.fill_between(
                            x,
                            mean[:, index] - spread[:, index],
                            mean[:, index] + spread[:, index],
                            color=line.get_color(),
                            alpha=0.15,
                            linewidth=0,
                        )
                        banded = True
            ax.axhline(0.0, color="grey", linewidth=0.5)
            ax.set_title(f"{condition}, game progress {progress}", fontsize="small")
            if row == len(progresses) - 1:
                ax.set_xlabel("rho: own disc share (0-1)")
            if column == 0:
                ax.set_ylabel("weight (WeightNet output)")
            ax.grid(alpha=0.3)
    axes[0, 0].legend(title="weight", fontsize="x-small", title_fontsize="x-small")
    band = "; bands: ± 1 std over layouts" if banded else ""
    figure.suptitle(f"{title}\nlines: mean over layouts{band}", fontsize="medium")
    return figure


def _in_paper_order(by_condition: dict) -> list[tuple[str, object]]:
    return [(condition, by_condition[condition]) for condition in paper_order(by_condition)]


def _save(figure: Figure, path: Path) -> str:
    figure.savefig(path, dpi=DPI)
    return str(path)


def redraw_figures(run_dir: Path) -> tuple[list[str], list[str]]:
    """Draw the figures of a recorded ``arena bench paper`` run again, from its manifest and ``results.jsonl``.

    Nothing is played; the PNGs in ``run_dir`` are replaced. Returns the PNG paths and notes, as :func:`write_plots`.
    """
    if not (run_dir / "manifest.json").is_file():
        raise TournamentError(f"cannot redraw {str(run_dir)!r}: no manifest.json there (not a bench-paper run?)")
    plan = read_plan(run_dir)
    recorded = read_results(run_dir)
    results = [recorded[task.key] for task in plan.tasks() if task.key in recorded]
    if not results:
        raise TournamentError(f"nothing to draw in {str(run_dir)!r}: its results.jsonl holds no finished pair")
    return write_plots(summarise(plan, results, paper_table2=None), run_dir)
