"""Seeded random layouts, e.g. the 1,000 boards PosNet meta-learns its spatial prior on.

The distribution of ``random_layout`` (every draw from the generator passed in):

1. Size: ``rows`` and ``cols`` independently uniform over the integers of their ranges
   (inclusive; default 4-16 each, so most boards are not square). An int fixes the side.
2. Density: ``d`` uniform over ``obstacle_density`` (default 0.0-0.25; the benchmark's
   random boards have 0.17-0.2). The obstacle count ``n`` is the count nearest to
   ``d * rows * cols`` that the symmetry allows and whose density ``n / (rows * cols)``
   lies in the requested range (nearest overall if none does, e.g. a narrow range on a
   small board, or more obstacles than there are free cells).
3. Cells: the four centre discs sit where ``engine.layout.standard_layout`` puts them and
   are never obstacles. With ``symmetric='point'`` (180-degree rotation) or ``'mirror'``
   (left-right reflection) the cells are grouped with their images and a group whose
   image touches a centre disc stays free; the obstacles are then a uniformly random set
   of groups holding exactly ``n`` cells (for ``'none'``, ``n`` uniformly random cells).
4. Rejection: step 3 is redrawn (size and count kept) until black has a legal first
   move (``engine.layout_text.validate_playable``), so the size and count distributions
   above hold exactly and only the placement is conditioned on being playable.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from math import comb
from typing import Any

import numpy as np

from engine.layout import MAX_SIDE, MIN_SIDE, Cell, Layout, LayoutError, centre_discs, standard_layout
from engine.layout_text import validate_playable

Range = tuple[int, int]
Orbit = tuple[Cell, ...]

DEFAULT_DENSITY = (0.0, 0.25)
MAX_TRIES = 1000
_EPSILON = 1e-9

_IMAGES: dict[str, Callable[[int, int, int, int], Cell]] = {
    "none": lambda r, c, rows, cols: (r, c),
    "point": lambda r, c, rows, cols: (rows - 1 - r, cols - 1 - c),
    "mirror": lambda r, c, rows, cols: (r, cols - 1 - c),
}


def random_layout(
    rng: np.random.Generator,
    rows: Range | int = (MIN_SIDE, MAX_SIDE),
    cols: Range | int = (MIN_SIDE, MAX_SIDE),
    obstacle_density: tuple[float, float] | float = DEFAULT_DENSITY,
    symmetric: str | None = None,
    name: str = "",
    max_tries: int = MAX_TRIES,
) -> Layout:
    """A random playable layout drawn from the distribution in the module docstring.

    ``symmetric`` is None/'none', 'point' or 'mirror'. The name defaults to
    ``"Random RxC"``. LayoutError if ``max_tries`` placements all leave black without
    a first move (only with very dense obstacles); ValueError on bad arguments.
    """
    row_range, col_range = _side_range("rows", rows), _side_range("cols", cols)
    density = _density_range(obstacle_density)
    orbits = _orbits_for(symmetric)
    n_rows = int(rng.integers(row_range[0], row_range[1], endpoint=True))
    n_cols = int(rng.integers(col_range[0], col_range[1], endpoint=True))
    groups = orbits(n_rows, n_cols)
    count = _obstacle_count(float(rng.uniform(*density)), density, n_rows * n_cols, groups)
    label = name or f"Random {n_rows}x{n_cols}"
    for _ in range(max_tries):
        layout = standard_layout(n_rows, n_cols, _pick_obstacles(rng, groups, count), label)
        try:
            validate_playable(layout)
        except LayoutError:
            continue
        return layout
    raise LayoutError(
        f"no playable {n_rows}x{n_cols} layout with {count} obstacles in {max_tries} tries; lower obstacle_density or raise max_tries"
    )


def random_layouts(seed: int, count: int, **kw: Any) -> list[Layout]:
    """``count`` random layouts, the same for the same seed and keywords (see ``random_layout``).

    A shorter list for the same seed is a prefix of a longer one. Unless ``name`` is
    given, layout ``i`` is named ``"Random <seed>:<i> (RxC)"``.
    """
    if count < 0:
        raise ValueError(f"count={count!r}: give a number of layouts >= 0")
    rng = np.random.default_rng(seed)
    layouts = []
    for i in range(count):
        layout = random_layout(rng, **kw)
        if not kw.get("name"):
            layout = replace(layout, name=f"Random {seed}:{i} ({layout.rows}x{layout.cols})")
        layouts.append(layout)
    return layouts


def symmetric_image(cell: Cell, rows: int, cols: int, symmetric: str) -> Cell:
    """Where ``symmetric`` ('none', 'point', 'mirror') maps ``cell`` on a rows x cols board."""
    return _IMAGES[_symmetry_name(symmetric)](cell[0], cell[1], rows, cols)


def _side_range(label: str, value: Range | int) -> Range:
    low, high = (value, value) if isinstance(value, (int, np.integer)) else tuple(value)
    if not MIN_SIDE <= low <= high <= MAX_SIDE:
        raise ValueError(f"{label}={value!r}: give an int or a (low, high) pair with {MIN_SIDE} <= low <= high <= {MAX_SIDE}")
    return int(low), int(high)


def _density_range(value: tuple[float, float] | float) -> tuple[float, float]:
    low, high = (value, value) if isinstance(value, (int, float, np.floating)) else tuple(value)
    if not 0.0 <= low <= high <= 1.0:
        raise ValueError(f"obstacle_density={value!r}: give a fraction or a (low, high) pair with 0 <= low <= high <= 1")
    return float(low), float(high)


def _symmetry_name(symmetric: str | None) -> str:
    key = "none" if symmetric is None else symmetric
    if key not in _IMAGES:
        raise ValueError(f"symmetric={symmetric!r}: choose None or one of {', '.join(map(repr, _IMAGES))}")
    return key


def _orbits_for(symmetric: str | None) -> Callable[[int, int], list[Orbit]]:
    """A function giving the obstacle candidates (a cell with its image) of a board size."""
    key = _symmetry_name(symmetric)

    def orbits(rows: int, cols: int) -> list[Orbit]:
        black, white = centre_discs(rows, cols)
        centre = black | white
        groups = {tuple(sorted({(r, c), _IMAGES[key](r, c, rows, cols)})) for r in range(rows) for c in range(cols)}
        return sorted(group for group in groups if centre.isdisjoint(group))

    return orbits


def _achievable_counts(groups: list[Orbit]) -> list[int]:
    """Every total cell count some set of groups (sizes 1 and 2) can have."""
    singles = sum(len(g) == 1 for g in groups)
    pairs = len(groups) - singles
    return sorted({k + 2 * j for k in range(singles + 1) for j in range(pairs + 1)})


def _obstacle_count(density: float, bounds: tuple[float, float], cells: int, groups: list[Orbit]) -> int:
    """The achievable count nearest ``density * cells``, inside the density bounds if one is."""
    counts = _achievable_counts(groups)
    inside = [n for n in counts if bounds[0] - _EPSILON <= n / cells <= bounds[1] + _EPSILON]
    target = density * cells
    return min(inside or counts, key=lambda n: (abs(n - target), n))


def _pick_obstacles(rng: np.random.Generator, groups: list[Orbit], count: int) -> list[Cell]:
    """Cells of a uniformly random set of groups holding exactly ``count`` cells."""
    singles = [g for g in groups if len(g) == 1]
    pairs = [g for g in groups if len(g) == 2]
    # Weight each possible number of single cells by how many obstacle sets use it.
    options = [k for k in range(min(len(singles), count) + 1) if (count - k) % 2 == 0 and (count - k) // 2 <= len(pairs)]
    weights = np.array([comb(len(singles), k) * comb(len(pairs), (count - k) // 2) for k in options], dtype=float)
    n_singles = int(rng.choice(options, p=weights / weights.sum()))
    chosen = [singles[i] for i in rng.choice(len(singles), n_singles, replace=False)]
    chosen += [pairs[i] for i in rng.choice(len(pairs), (count - n_singles) // 2, replace=False)]
    return [cell for group in chosen for cell in group]
