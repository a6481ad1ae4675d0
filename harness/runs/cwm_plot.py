"""``cwm-accuracy.png``: a cwm run's program accuracy against model calls (like the seed paper's Figure 1).

One point per candidate program the agent tested, at the model call that wrote it:
train transition and outcome accuracy (the unit tests from the games shown to the
model, solid) and test transition and outcome accuracy (held-out games and random
transitions of the true engine, dashed), each in [0, 1]; the best-so-far train
``h`` as a step line. Drawn on a :class:`matplotlib.figure.Figure` (Agg canvas),
never through pyplot's global state.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

PLOT_FILE = "cwm-accuracy.png"
SERIES = (  # (step key, label, line style)
    ("train_transition", "train transitions", "-"),
    ("train_outcome", "train outcomes (weighted)", "-"),
    ("test_transition", "test transitions", "--"),
    ("test_outcome", "test outcomes (weighted)", "--"),
)
DPI = 110


def plot_cwm_accuracy(steps: Sequence[dict[str, Any]], run_dir: Path) -> str | None:
    """Write the plot into ``run_dir``; its file name, or None when no candidate was tested."""
    if not steps:
        return None
    from matplotlib.figure import Figure  # imported when a plot is drawn, not when `arena` starts (~0.3 s)

    figure = Figure(figsize=(7.0, 4.2), layout="constrained")
    ax = figure.subplots()
    calls = [int(step["model_calls"]) for step in steps]
    for key, label, style in SERIES:
        points = [(c, float(step[key])) for c, step in zip(calls, steps) if isinstance(step.get(key), (int, float))]
        if points:
            ax.plot([c for c, _ in points], [v for _, v in points], style, marker="o", label=label)
    best, running = [], 0.0
    for step in steps:
        running = max(running, float(step.get("train_h") or 0.0))
        best.append(running)
    ax.step(calls, best, where="post", color="black", alpha=0.5, label="best train h so far")
    ax.set(title="Code world model: accuracy of each candidate program", xlabel="model calls (cumulative)",
           ylabel="fraction of tests passed", ylim=(-0.03, 1.03), xticks=sorted(set(calls)))
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small", loc="lower right")
    figure.savefig(run_dir / PLOT_FILE, dpi=DPI)
    return PLOT_FILE
