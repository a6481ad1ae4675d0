"""Figure-1 style pictures of positional value tables: one heat map per layout, obstacles greyed out.

Red is a high value, blue a low one (the paper's colours); each panel has its
own colour scale, centred on 0, shown by a labelled colour bar beside it, and
prints the value in every playable cell. The board's edges carry the engine's
move notation (:mod:`engine.notation`): column letters ``a``, ``b``, ... and row
numbers from 1, ``a1`` top-left. Drawn on a :class:`matplotlib.figure.Figure`
(Agg canvas), never through pyplot's global state.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure

from engine.layout import Layout
from engine.notation import COLUMN_LETTERS

PANELS_PER_ROW = 4
OBSTACLE_COLOUR = "#404040"
COLOUR_BAR_LABEL = "positional value (PosNet output)"


def plot_value_tables(tables: dict[str, np.ndarray], layouts: Sequence[Layout], path: str | Path) -> Path:
    """Draw each flat table (title -> ``rows * cols`` values) on its layout, in order, to a PNG at ``path``.

    ``layouts[i]`` is the layout of the i-th table. Returns the path written.
    """
    figure = value_tables_figure(tables, layouts)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    return path


def value_tables_figure(tables: dict[str, np.ndarray], layouts: Sequence[Layout]) -> Figure:
    """The figure :func:`plot_value_tables` saves: one heat map with its colour bar per table."""
    if len(tables) != len(layouts) or not tables:
        raise ValueError(f"give one layout per table: {len(tables)} tables, {len(layouts)} layouts")
    columns = min(PANELS_PER_ROW, len(tables))
    rows = -(-len(tables) // columns)
    figure = Figure(figsize=(4.0 * columns, 3.8 * rows), layout="constrained")
    axes = figure.subplots(rows, columns, squeeze=False)
    for axis, (title, table), layout in zip(axes.flat, tables.items(), layouts):
        _draw_table(figure, axis, title, np.asarray(table, dtype=np.float64), layout)
    for axis in axes.flat[len(tables) :]:
        axis.set_axis_off()
    figure.suptitle("PosNet value tables (red high, blue low; grey: obstacle; colour scale per panel)")
    return figure


def _draw_table(figure: Figure, axis: Axes, title: str, table: np.ndarray, layout: Layout) -> None:
    if table.shape != (layout.cells,):
        raise ValueError(f"table {title!r} has shape {table.shape}; its layout has {layout.cells} cells")
    grid = table.reshape(layout.shape)
    obstacles = np.zeros(layout.shape, dtype=bool)
    for cell in layout.obstacles:
        obstacles[cell] = True
    span = float(np.abs(grid[~obstacles]).max(initial=0.0)) or 1.0
    image = axis.imshow(np.ma.masked_array(grid, obstacles), cmap="coolwarm", vmin=-span, vmax=span)
    axis.imshow(np.ma.masked_array(np.ones(layout.shape), ~obstacles), cmap=ListedColormap([OBSTACLE_COLOUR]))
    font = max(4.0, 8.0 - 0.3 * max(layout.shape))
    for (row, col), value in np.ndenumerate(grid):
        if not obstacles[row, col]:
            axis.text(col, row, f"{value:.2f}", ha="center", va="center", fontsize=font)
    axis.set_title(title, fontsize=9)
    rows, cols = layout.shape
    axis.set_xticks(range(cols), list(COLUMN_LETTERS[:cols]), fontsize=7)
    axis.set_yticks(range(rows), [str(row + 1) for row in range(rows)], fontsize=7)
    axis.tick_params(length=0, top=True, labeltop=True, bottom=False, labelbottom=False)
    axis.set_xlabel("column")
    axis.xaxis.set_label_position("top")
    axis.set_ylabel("row")
    bar = figure.colorbar(image, ax=axis, fraction=0.046, pad=0.04)
    bar.set_label(COLOUR_BAR_LABEL, fontsize=7)
    bar.ax.tick_params(labelsize=6)
