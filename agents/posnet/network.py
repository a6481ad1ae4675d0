"""PosNet (arena paper, Appendix C): a fully convolutional net that turns a layout into a positional table.

Input planes of a layout (``layout_planes``), each ``rows x cols``, colour-blind
so that the planes of a transformed layout are the transformed planes:

0. **playable**: 1 on a playable cell, 0 on an obstacle;
1. **start**: 1 on a cell holding a disc before move one (either colour), else 0.

The planes get a 2-cell padding of obstacles (0 in both planes: an obstacle is
neither playable nor holds a disc), so the 5 x 5 kernel always sees a full
window and the board edge looks exactly like a wall of obstacles.
Architecture: 5 x 5 convolution to ``HIDDEN`` (8) channels with tanh, then a 1 x 1
convolution to one channel: one value per cell; obstacle cells get 0. The
parameters are one flat float64 vector of ``N_PARAMS`` (417) values (see ``unpack``),
so :mod:`agents.evolution` can mutate it directly.

Orientation (C.2): the eight D4 transforms ``0..7`` are ``k = t % 4`` quarter
turns (``np.rot90``) followed, for ``t >= 4``, by a left-right flip; on a
non-square board an odd ``k`` swaps rows and cols. ``value_table`` is Eq. 11,
``F^-1(PosNet(F(L)))``, and ``symmetric_table`` Eq. 12, the mean over all eight.
The ``posnet`` agent plays the 1-ply weighted piece counter of
:class:`agents.heuristic.positional.PositionalAgent` with :func:`posnet_table`: the
shipped trained population ensembled as in B.3. The shipped
``agents/posnet/data/posnet.npz`` is a paper-scale run of :mod:`agents.posnet.train`
(population 200, 1,000 generations, 1,000 layouts, sigma 0.02, seed 0; about
90 s on one core): ``arena train posnet --out agents/posnet/data/posnet.npz``.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import NamedTuple

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from agents.evolution import ensemble_tables
from agents.heuristic.positional import PositionalAgent
from agents.spec import register
from engine.layout import Layout

IN_PLANES = 2
HIDDEN = 8
KERNEL = 5
PAD = KERNEL // 2
N_PARAMS = HIDDEN * IN_PLANES * KERNEL * KERNEL + HIDDEN + HIDDEN + 1
D4_SIZE = 8
POPULATION_KEY = "population"
SHIPPED_WEIGHTS = "data/posnet.npz"


class PosNetWeights(NamedTuple):
    """The parameters of one net (or of a batch: leading axes before these shapes)."""

    conv_kernel: np.ndarray  # (..., HIDDEN, IN_PLANES, KERNEL, KERNEL)
    conv_bias: np.ndarray  # (..., HIDDEN)
    out_weight: np.ndarray  # (..., HIDDEN)
    out_bias: np.ndarray  # (...)


_SIZES = (HIDDEN * IN_PLANES * KERNEL * KERNEL, HIDDEN, HIDDEN, 1)


def unpack(params: np.ndarray) -> PosNetWeights:
    """Split a flat vector (or an array of them, last axis ``N_PARAMS``) into the layers' weights."""
    params = np.asarray(params, dtype=np.float64)
    if params.shape[-1:] != (N_PARAMS,):
        raise ValueError(f"PosNet parameters must have {N_PARAMS} values on the last axis, got shape {params.shape}")
    lead = params.shape[:-1]
    kernel, bias, weight, out_bias = np.split(params, np.cumsum(_SIZES)[:-1], axis=-1)
    return PosNetWeights(kernel.reshape(*lead, HIDDEN, IN_PLANES, KERNEL, KERNEL), bias, weight, out_bias[..., 0])


def init_params(count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` random parameter vectors, shape ``(count, N_PARAMS)``.

    Weights are N(0, 1/fan_in) (fan-in 50 for the 5 x 5 layer, 8 for the 1 x 1
    one) so the tanh units start in their linear range; biases start at 0.
    """
    scales = np.concatenate(
        [np.full(_SIZES[0], (IN_PLANES * KERNEL * KERNEL) ** -0.5), np.zeros(HIDDEN), np.full(HIDDEN, HIDDEN**-0.5), np.zeros(1)]
    )
    return rng.normal(size=(count, N_PARAMS)) * scales


@lru_cache(maxsize=4096)
def layout_planes(layout: Layout) -> np.ndarray:
    """The input planes (playable, start discs) of a layout, float64 ``(IN_PLANES, rows, cols)``, read-only."""
    playable = np.ones(layout.cells)
    playable[[layout.index(cell) for cell in layout.obstacles]] = 0.0
    start = np.zeros(layout.cells)
    start[[layout.index(cell) for cell in layout.black | layout.white]] = 1.0
    planes = np.stack([playable, start]).reshape(IN_PLANES, layout.rows, layout.cols)
    planes.flags.writeable = False
    return planes


def forward(params: np.ndarray, planes: np.ndarray) -> np.ndarray:
    """PosNet on input planes ``(IN_PLANES, rows, cols)``: values ``(..., rows, cols)``, 0 where not playable.

    ``params`` is one flat vector or an array of them (leading axes are kept).
    """
    weights = unpack(params)
    planes = np.asarray(planes, dtype=np.float64)
    _, rows, cols = planes.shape
    padded = np.pad(planes, ((0, 0), (PAD, PAD), (PAD, PAD)))  # obstacles all round: 0 in every plane
    windows = sliding_window_view(padded, (KERNEL, KERNEL), axis=(1, 2))  # (planes, rows, cols, K, K)
    patches = windows.transpose(1, 2, 0, 3, 4).reshape(rows * cols, -1)
    kernel = weights.conv_kernel.reshape(*weights.conv_kernel.shape[:-4], HIDDEN, -1)
    hidden = np.tanh(patches @ np.swapaxes(kernel, -1, -2) + weights.conv_bias[..., None, :])
    values = (hidden @ weights.out_weight[..., :, None])[..., 0] + weights.out_bias[..., None]
    return (values * planes[0].reshape(-1)).reshape(*values.shape[:-1], rows, cols)


# --- the dihedral group D4 on rows x cols grids -------------------------------------------------


def transform_grid(grid: np.ndarray, transform: int) -> np.ndarray:
    """D4 transform ``0..7`` of the last two axes: ``transform % 4`` quarter turns, then a flip if ``>= 4``."""
    turned = np.rot90(grid, k=_check_transform(transform) % 4, axes=(-2, -1))
    return turned[..., ::-1] if transform >= 4 else turned


def inverse_transform(transform: int) -> int:
    """The transform undoing ``transform`` (a reflection is its own inverse)."""
    return (-_check_transform(transform)) % 4 if transform < 4 else transform


def compose_transforms(outer: int, inner: int) -> int:
    """The transform ``t`` with ``transform_grid(g, t) == transform_grid(transform_grid(g, inner), outer)``."""
    return _COMPOSITION[_check_transform(outer)][_check_transform(inner)]


def transform_cells(shape: tuple[int, int], transform: int) -> np.ndarray:
    """For each flat cell of a ``shape`` grid, its flat index after ``transform`` (in the transformed shape)."""
    moved = transform_grid(np.arange(shape[0] * shape[1]).reshape(shape), transform)
    return np.argsort(moved.reshape(-1))


def transform_layout(layout: Layout, transform: int) -> Layout:
    """The layout with its obstacles and discs moved by ``transform`` (rows and cols swap on odd turns)."""
    new_index = transform_cells(layout.shape, transform)
    rows, cols = transform_grid(np.empty(layout.shape), transform).shape

    def moved(cells: frozenset) -> frozenset:
        return frozenset(divmod(int(new_index[layout.index(cell)]), cols) for cell in cells)

    return Layout(rows, cols, moved(layout.obstacles), moved(layout.black), moved(layout.white), layout.name)


def _check_transform(transform: int) -> int:
    if isinstance(transform, bool) or not isinstance(transform, (int, np.integer)) or not 0 <= transform < D4_SIZE:
        raise ValueError(f"transform={transform!r}: give one of the D4 transforms 0-{D4_SIZE - 1}")
    return int(transform)


def _composition_table() -> tuple[tuple[int, ...], ...]:
    probe = np.arange(9).reshape(3, 3)  # D4 acts faithfully on a 3 x 3 grid of distinct values
    images = [transform_grid(probe, t) for t in range(D4_SIZE)]

    def which(grid: np.ndarray) -> int:
        return next(t for t, image in enumerate(images) if np.array_equal(image, grid))

    return tuple(tuple(which(transform_grid(images[inner], outer)) for inner in range(D4_SIZE)) for outer in range(D4_SIZE))


_COMPOSITION = _composition_table()


# --- value tables -------------------------------------------------------------------------------


def value_table(params: np.ndarray, layout: Layout, transform: int) -> np.ndarray:
    """Eq. 11: ``F^-1(PosNet(F(L)))`` as a flat ``rows * cols`` float64 table (``(..., cells)`` for a batch)."""
    values = forward(params, transform_grid(layout_planes(layout), transform))
    restored = transform_grid(values, inverse_transform(transform))
    return restored.reshape(*restored.shape[:-2], layout.cells)


def symmetric_table(params: np.ndarray, layout: Layout) -> np.ndarray:
    """Eq. 12: the mean of ``value_table`` over the eight D4 transforms (flat, or ``(..., cells)``)."""
    return np.mean([value_table(params, layout, t) for t in range(D4_SIZE)], axis=0)


def ensemble_table(population: np.ndarray, layout: Layout) -> np.ndarray:
    """B.3: each individual's symmetric table rescaled to [-1, 1] on the playable cells, averaged; obstacles 0."""
    population = np.asarray(population, dtype=np.float64)
    if population.ndim != 2 or population.shape[0] == 0:
        raise ValueError(f"population of shape {population.shape}: give a (individuals, {N_PARAMS}) array")
    playable = layout_planes(layout)[0].reshape(-1) > 0
    table = np.zeros(layout.cells)
    table[playable] = ensemble_tables(symmetric_table(population, layout)[:, playable])
    return table


def load_population(path: str | Path | None = None) -> np.ndarray:
    """A trained population (float64 ``(individuals, N_PARAMS)``) from an .npz; default: the shipped one."""
    source = resources.files("agents.posnet").joinpath(SHIPPED_WEIGHTS) if path is None else Path(path)
    with source.open("rb") as handle, np.load(handle, allow_pickle=False) as data:
        population = np.asarray(data[POPULATION_KEY], dtype=np.float64)
    if population.ndim != 2 or population.shape[1] != N_PARAMS:
        raise ValueError(f"{source}: population of shape {population.shape}, expected (individuals, {N_PARAMS})")
    return population


@lru_cache(maxsize=1)
def shipped_population() -> np.ndarray:
    """The shipped trained population (read-only)."""
    population = load_population()
    population.flags.writeable = False
    return population


@lru_cache(maxsize=256)
def posnet_table(layout: Layout) -> np.ndarray:
    """The meta-learned table of a layout: :func:`ensemble_table` of the shipped population (read-only)."""
    table = ensemble_table(shipped_population(), layout)
    table.flags.writeable = False
    return table


@register("posnet", "Positional agent with the meta-learned PosNet table (1-ply weighted piece counter)")
class PosNetAgent(PositionalAgent):
    """:class:`PositionalAgent` playing by :func:`posnet_table` instead of the hand-made table."""

    name = "posnet"

    def table_for(self, layout: Layout) -> np.ndarray:
        """The PosNet table of the layout."""
        return posnet_table(layout)
