"""Figure-1 style pictures of positional value tables: one heat map per layout, obstacles greyed out.

Red is a high value, blue a low one (the paper's colours); each panel has its
own colour scale, centred on 0, and prints the value in every playable cell.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from engine.layout import Layout

PANELS_PER_ROW = 4
OBSTACLE_COLOUR = "#404040"


def plot_value_tables(tables: dict[str, np.ndarray], layouts: Sequence[Layout], path: str | Path) -> Path:
    """Draw each flat table (title -> ``rows * cols`` values) on its layout, in order, to a PNG at ``path``.

    ``layouts[i]`` is the layout of the i-th table. Returns the path written.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if len(tables) != len(layouts) or not tables:
        raise ValueError(f"give one layout per table: {len(tables)} tables, {len(layouts)} layouts")
    columns = min(PANELS_PER_ROW, len(tables))
    rows = -(-len(tables) // columns)
    figure, axes = plt.subplots(rows, columns, figsize=(3.4 * columns, 3.6 * rows), squeeze=False)
    for axis, (title, table), layout in zip(axes.flat, tables.items(), layouts):
        _draw_table(axis, title, np.asarray(table, dtype=np.float64), layout)
    for axis in axes.flat[len(tables):]:
        axis.set_axis_off()
    figure.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def _draw_table(axis, title: str, table: np.ndarray, layout: Layout) -> None:
    from matplotlib.colors import ListedColormap

    if table.shape != (layout.cells,):
        raise ValueError(f"table {title!r} has shape {table.shape}; its layout has {layout.cells} cells")
    grid = table.reshape(layout.shape)
    obstacles = np.zeros(layout.shape, dtype=bool)
    for cell in layout.obstacles:
        obstacles[cell] = True
    span = float(np.abs(grid[~obstacles]).max(initial=0.0)) or 1.0
    axis.imshow(np.ma.masked_array(grid, obstacles), cmap="coolwarm", vmin=-span, vmax=span)
    axis.imshow(np.ma.masked_array(np.ones(layout.shape), ~obstacles), cmap=ListedColormap([OBSTACLE_COLOUR]))
    font = max(4.0, 8.0 - 0.3 * max(layout.shape))
    for (row, col), value in np.ndenumerate(grid):
        if not obstacles[row, col]:
            axis.text(col, row, f"{value:.2f}", ha="center", va="center", fontsize=font)
    axis.set_title(title, fontsize=9)
    axis.set_xticks([])
    axis.set_yticks([])
