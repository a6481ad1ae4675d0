"""The learning curve of an n-tuple training run: League score against training games (and seconds).

Drawn on a :class:`matplotlib.figure.Figure` (Agg canvas), never through pyplot's global state.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from matplotlib.figure import Figure

from agents.ntuple.train import CurvePoint


def plot_learning_curve(curve: Sequence[CurvePoint], title: str, path: str | Path) -> Path:
    """A PNG at ``path``: the League score (0-1) of each curve point against training games played."""
    if not curve:
        raise ValueError("an empty learning curve has nothing to draw")
    figure = Figure(figsize=(6.4, 4.0), layout="constrained")
    axis = figure.subplots()
    axis.plot([point.games for point in curve], [point.score for point in curve], marker=".", linewidth=1)
    axis.axhline(0.9, color="grey", linestyle="--", linewidth=0.8, label="0.90")
    axis.set_ylim(0.0, 1.0)
    axis.set_xlabel(f"training games (last point after {curve[-1].seconds:.0f} s)")
    axis.set_ylabel("League score vs WPC player (eps = 0.1)")
    axis.set_title(title, fontsize=9)
    axis.legend(loc="lower right")
    axis.grid(alpha=0.3)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    return path
