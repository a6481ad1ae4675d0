"""Systematic straight n-tuple networks (Jaskowski 2014) on the playable cells of any layout.

An n-tuple is a sequence of ``n`` board cells with a look-up table of ``3 ** n``
values; the network's value of a board is the sum of its tuples' table entries.
A cell's code is 0 for an opponent disc, 1 for an empty cell and 2 for an own
disc (the paper's white/empty/black with *board inversion*: the network always
evaluates as the player whose discs are "own", so one set of weights plays both
colours), and a tuple's index is ``sum(code[cell_j] * 3 ** j)``.

Architecture ``all-n`` of a layout (:func:`network_shape`):

- every straight run of ``n`` playable cells along a row, a column or a diagonal
  (obstacles cut lines like the board edge; a tuple never holds an obstacle);
- **symmetric sampling**: the layout's symmetry group is the subset of the eight
  rotations/reflections of D4 (:func:`agents.posnet.network.transform_cells`) that map
  the board shape and the obstacles onto themselves (all eight on plain 8x8, the
  identity alone on a lopsided random board). The tuples are grouped in orbits
  under that group, one look-up table per orbit, and each orbit's *expansions*
  are the distinct ordered images of its first tuple, so the value is exactly
  invariant under the group (a tuple reversed by a symmetry is counted in both
  directions). On plain 8x8, all-2 has 32 orbits (288 weights), as in the paper.

:class:`NTupleNetwork` is a value: the layout, the expansions (``(E, n)`` cell
indices), the orbit of each expansion and the tables ``(orbits, 3 ** n)``. The
numba kernels that evaluate, play and train it are in :mod:`agents.ntuple.kernel`;
the agents (1-ply and alpha-beta) in :mod:`agents.ntuple.agent`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np

from agents.heuristic.positional import mask_cells
from agents.posnet.network import D4_SIZE, transform_cells, transform_grid
from engine.layout import Layout

# Forward directions (d_row, d_col): E, S, SE, SW; a tuple runs from its first cell along one of them.
STRAIGHT_DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))
OPPONENT_CODE, EMPTY_CODE, OWN_CODE = 0, 1, 2
MAX_TUPLE = 4
FORMAT_VERSION = 1
SHIPPED_DIRECTORY = "data"


class NTupleError(ValueError):
    """Weights that do not fit a layout's network, or no weights for a layout."""


@dataclass(frozen=True)
class NetworkShape:
    """The all-n architecture of a layout: expansions ``(E, n)``, their orbit ``(E,)``, the orbit count."""

    n: int
    expansions: np.ndarray
    orbit: np.ndarray
    orbits: int

    @property
    def weights(self) -> int:
        return self.orbits * 3**self.n


@dataclass(frozen=True, eq=False)
class NTupleNetwork:
    """An all-n network on one layout: ``luts[orbit[e], index]`` summed over expansions ``e``."""

    layout: Layout
    shape: NetworkShape
    luts: np.ndarray

    def __post_init__(self) -> None:
        luts = np.ascontiguousarray(self.luts, dtype=np.float64)
        expected = (self.shape.orbits, 3**self.shape.n)
        if luts.shape != expected:
            raise NTupleError(
                f"n-tuple weights of shape {luts.shape} do not fit all-{self.shape.n} on "
                f"{self.layout.name or self.layout.describe()}: expected {expected}"
            )
        luts.flags.writeable = False
        object.__setattr__(self, "luts", luts)

    @property
    def n(self) -> int:
        return self.shape.n

    def value(self, own: int, opponent: int) -> float:
        """The network's value of a position (bitmasks of the evaluating player's and the other's discs)."""
        codes = board_codes(own, opponent, self.layout.cells)
        return float(self.luts[self.shape.orbit, tuple_indices(codes, self.shape.expansions)].sum())


def board_codes(own: int, opponent: int, cells: int) -> np.ndarray:
    """Cell codes (int64, ``cells``): 2 own disc, 0 opponent disc, 1 otherwise."""
    return np.where(mask_cells(own, cells), OWN_CODE, np.where(mask_cells(opponent, cells), OPPONENT_CODE, EMPTY_CODE)).astype(np.int64)


def tuple_indices(codes: np.ndarray, expansions: np.ndarray) -> np.ndarray:
    """Each expansion's table index, ``sum(code[cell_j] * 3 ** j)``."""
    powers = 3 ** np.arange(expansions.shape[1])
    return (codes[expansions] * powers).sum(axis=1)


def layout_symmetries(layout: Layout) -> tuple[np.ndarray, ...]:
    """The cell maps (flat index -> flat index) of the D4 transforms that keep the shape and the obstacles."""
    obstacles = np.zeros(layout.shape, dtype=bool)
    for cell in layout.obstacles:
        obstacles[cell] = True
    maps = []
    for transform in range(D4_SIZE):
        image = transform_grid(obstacles, transform)
        if image.shape == layout.shape and np.array_equal(image, obstacles):
            maps.append(transform_cells(layout.shape, transform))
    return tuple(maps)


def straight_tuples(layout: Layout, n: int) -> list[tuple[int, ...]]:
    """Every run of ``n`` playable cells along a forward direction, as flat indices, in board order."""
    found = []
    for row in range(layout.rows):
        for col in range(layout.cols):
            for d_row, d_col in STRAIGHT_DIRECTIONS:
                cells = [(row + j * d_row, col + j * d_col) for j in range(n)]
                if all(0 <= r < layout.rows and 0 <= c < layout.cols and (r, c) not in layout.obstacles for r, c in cells):
                    found.append(tuple(layout.index(cell) for cell in cells))
    return found


@lru_cache(maxsize=256)
def network_shape(layout: Layout, n: int = 2, symmetric: bool = True) -> NetworkShape:
    """The all-n architecture of a layout (module docstring); ``symmetric=False``: one table per tuple."""
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_TUPLE:
        raise NTupleError(f"tuple length n={n!r}: give a whole number from 1 to {MAX_TUPLE}")
    maps = layout_symmetries(layout) if symmetric else (np.arange(layout.cells),)
    expansions: list[tuple[int, ...]] = []
    orbit: list[int] = []
    covered: set[frozenset[int]] = set()
    for first in straight_tuples(layout, n):
        if frozenset(first) in covered:
            continue
        images = list(dict.fromkeys(tuple(int(cell_map[cell]) for cell in first) for cell_map in maps))
        covered |= {frozenset(image) for image in images}
        expansions.extend(images)
        orbit.extend([orbit[-1] + 1 if orbit else 0] * len(images))
    if not expansions:
        raise NTupleError(f"{layout.name or layout.describe()} has no straight run of {n} playable cells")
    array = np.array(expansions, dtype=np.int64)
    orbits = np.array(orbit, dtype=np.int64)
    array.flags.writeable = False
    orbits.flags.writeable = False
    return NetworkShape(n, array, orbits, int(orbits[-1]) + 1)


def zero_network(layout: Layout, n: int = 2) -> NTupleNetwork:
    """A network with every weight 0 (its agent plays at random)."""
    shape = network_shape(layout, n)
    return NTupleNetwork(layout, shape, np.zeros((shape.orbits, 3**n)))


# --- weights on disk ----------------------------------------------------------------------------


def layout_key(layout: Layout) -> str:
    """What the weights of a layout depend on: size and obstacles (not the name), as a short hex digest."""
    text = f"{layout.rows}x{layout.cols}:" + ",".join(str(layout.index(c)) for c in sorted(layout.obstacles))
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def shipped_name(layout: Layout) -> str:
    """The file name the shipped weights of a layout have under ``agents/ntuple/data/``."""
    return f"ntuple-{layout.rows}x{layout.cols}-{layout_key(layout)}.npz"


def save_network(network: NTupleNetwork, path: str | Path, **metadata: float | int | str) -> Path:
    """Write the tables with the layout key, n and ``metadata`` (numbers and strings) to an .npz."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays: dict[str, np.ndarray] = {key: np.asarray(value) for key, value in metadata.items()}
    arrays.update(
        luts=network.luts.astype(np.float32),
        n=np.asarray(network.n),
        layout_key=np.asarray(layout_key(network.layout)),
        format_version=np.asarray(FORMAT_VERSION),
    )
    with path.open("wb") as handle:
        np.savez_compressed(handle, **arrays)  # type: ignore[arg-type]
    return path


def load_network(layout: Layout, path: str | Path | None = None) -> NTupleNetwork:
    """The network of ``layout`` from an .npz (default: the shipped file for the layout); NTupleError if none fits."""
    if path is None:
        source = resources.files("agents.ntuple").joinpath(SHIPPED_DIRECTORY, shipped_name(layout))
        if not source.is_file():
            raise NTupleError(
                f"no shipped n-tuple weights for {layout.name or layout.describe()} "
                f"(the 7 benchmark layouts have them): train some with `arena train ntuple`"
            )
    else:
        source = Path(path)
        if not source.is_file():
            raise NTupleError(f"n-tuple weights {str(path)!r}: no such file (give an .npz from `arena train ntuple`)")
    try:
        with source.open("rb") as handle, np.load(handle, allow_pickle=False) as data:
            key, n, luts = str(data["layout_key"]), int(data["n"]), np.asarray(data["luts"], dtype=np.float64)
    except (OSError, ValueError, KeyError) as error:
        raise NTupleError(f"{source}: not n-tuple weights from `arena train ntuple` ({type(error).__name__})") from None
    if key != layout_key(layout):
        raise NTupleError(f"{source}: these weights were trained on another layout than {layout.name or layout.describe()}")
    return NTupleNetwork(layout, network_shape(layout, n), luts)


def load_metadata(path: str | Path) -> dict[str, float | int | str]:
    """Everything but the tables in a saved network, as Python values."""
    with np.load(Path(path), allow_pickle=False) as data:
        return {key: data[key].item() for key in data.files if key != "luts"}


@lru_cache(maxsize=64)
def shipped_network(layout: Layout) -> NTupleNetwork:
    """The shipped network of a layout (cached); NTupleError when the layout has none."""
    return load_network(layout)
