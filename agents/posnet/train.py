"""Meta-learning PosNet by survival-only evolution over random layouts (arena paper, C.3 and Algorithm 1).

Each generation (selection, mutation and shuffle are :mod:`agents.evolution`'s):

1. every individual draws a D4 transform ``F`` (Eq. 11) and every pair
   ``(i, i + N)`` a layout from the training set (``engine.layout_gen.random_layouts``);
2. each individual of a pair gets its table ``F^-1(PosNet(F(L)))`` on the pair's layout,
   and the two play two games with colours swapped (:mod:`agents.posnet.kernel`,
   1-ply weighted piece counters, no turn limit);
3. the condition is the standard one (K > 1): more discs wins a game, equal counts
   draw; the match outcome is the sign of the summed rewards (Eq. 6).

Defaults follow the paper: 1,000 layouts, population 200, 1,000 generations
(200,000 games; about two minutes on one core). Initial weights:
:func:`agents.posnet.network.init_params` (N(0, 1/fan_in) weights, zero biases: 0.14 for
the 5 x 5 kernel, 0.35 for the 1 x 1 layer). Mutation sigma 0.02, a seventh of
the smaller initial scale: of 0.02, 0.05 and 0.1 at paper scale (seed 0), the
0.02 tables beat the 0.05 and 0.1 ones head to head (mean score +0.08 and +0.06
over 400 games on 200 held-out layouts; +0.05 and +0.13 with seed 1) and lose
least to the hand-made positional table. A table's overall scale does not change
a WPC player's moves, so drift in scale costs nothing.

Randomness: the layouts come from ``random_layouts(seed, layouts)``, everything
else (initial population, pairings, transforms, mutation, shuffle) from
``np.random.default_rng([seed, 1])``: a run is a pure function of its config.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from agents.evolution import match_outcome, next_generation
from agents.posnet.kernel import KernelBoard, disc_counts, kernel_board
from agents.posnet.network import D4_SIZE, N_PARAMS, POPULATION_KEY, init_params, value_table
from agents.spec import whole_number
from engine.layout import Layout
from engine.layout_gen import random_layouts

PAPER_POPULATION = 200
PAPER_GENERATIONS = 1000
PAPER_LAYOUTS = 1000
DEFAULT_SIGMA = 0.02
FORMAT_VERSION = 1
METADATA_KEYS = {"population": "population_size"}  # config field -> .npz key ("population" holds the weights)

# on_generation(generation, population): called after each generation (1-based).
GenerationHook = Callable[[int, np.ndarray], None]


class TrainConfigError(ValueError):
    """A training setting that cannot be used (odd population, negative generations, ...)."""


@dataclass(frozen=True)
class TrainConfig:
    """What a training run is a function of; checked on construction (:class:`TrainConfigError`)."""

    population: int = PAPER_POPULATION
    generations: int = PAPER_GENERATIONS
    layouts: int = PAPER_LAYOUTS
    sigma: float = DEFAULT_SIGMA
    seed: int = 0

    def __post_init__(self) -> None:
        _check_int("population", self.population, 2)
        if self.population % 2:
            raise TrainConfigError(f"population={self.population}: give an even number (individuals are paired)")
        _check_int("generations", self.generations, 0)
        _check_int("layouts", self.layouts, 1)
        _check_int("seed", self.seed, 0)
        if isinstance(self.sigma, bool) or not isinstance(self.sigma, (int, float)) or not (math.isfinite(self.sigma) and self.sigma >= 0):
            raise TrainConfigError(f"sigma={self.sigma!r}: give a finite mutation scale >= 0")

    @property
    def games(self) -> int:
        """Games the run plays: two per pair per generation."""
        return self.population // 2 * 2 * self.generations


def _check_int(name: str, value: object, minimum: int) -> None:
    whole_number(name, value, minimum, TrainConfigError)


@dataclass(frozen=True)
class TrainResult:
    """The final population (float64 ``(population, N_PARAMS)``), its config, games played and time taken."""

    population: np.ndarray
    config: TrainConfig
    games: int
    elapsed_seconds: float


@lru_cache(maxsize=4)
def training_layouts(seed: int, count: int) -> tuple[Layout, ...]:
    """The training distribution: ``random_layouts(seed, count)`` (cached: drawing them takes a while)."""
    return tuple(random_layouts(seed, count))


def train_posnet(config: TrainConfig, on_generation: GenerationHook | None = None) -> TrainResult:
    """Evolve a PosNet population as described in the module docstring."""
    start = time.perf_counter()
    layouts = training_layouts(config.seed, config.layouts)
    boards = tuple(kernel_board(layout) for layout in layouts)
    rng = np.random.default_rng([config.seed, 1])
    population = init_params(config.population, rng)
    for generation in range(1, config.generations + 1):
        outcomes = generation_outcomes(population, layouts, boards, rng)
        population = next_generation(population, outcomes, config.sigma, rng)
        if on_generation is not None:
            on_generation(generation, population)
    return TrainResult(population, config, config.games, time.perf_counter() - start)


def generation_outcomes(
    population: np.ndarray, layouts: tuple[Layout, ...], boards: tuple[KernelBoard, ...], rng: np.random.Generator
) -> np.ndarray:
    """Each pair's match outcome from the first's side, on a drawn layout with drawn transforms.

    ``boards[i]`` holds the kernel arguments of ``layouts[i]``.
    """
    pairs = population.shape[0] // 2
    layout_ids = rng.integers(len(layouts), size=pairs)
    transforms = rng.integers(D4_SIZE, size=2 * pairs)
    outcomes = np.empty(pairs, dtype=np.int64)
    for i, layout_id in enumerate(layout_ids):
        layout, board = layouts[layout_id], boards[layout_id]
        first = value_table(population[i], layout, transforms[i])
        second = value_table(population[i + pairs], layout, transforms[i + pairs])
        outcomes[i] = match_outcome((_reward(*disc_counts(board, first, second)), -_reward(*disc_counts(board, second, first))))
    return outcomes


def _reward(black: int, white: int) -> int:
    """Black's reward under K > 1: more discs wins."""
    return int(np.sign(black - white))


def save_result(result: TrainResult, path: str | Path) -> Path:
    """Write the population (float32) and the run's metadata to an .npz; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        np.savez_compressed(
            handle,
            **{POPULATION_KEY: result.population.astype(np.float32)},
            **{METADATA_KEYS.get(key, key): np.asarray(value) for key, value in asdict(result.config).items()},
            games=np.asarray(result.games),
            elapsed_seconds=np.asarray(result.elapsed_seconds),
            n_params=np.asarray(N_PARAMS),
            format_version=np.asarray(FORMAT_VERSION),
        )
    return path


def load_metadata(path: str | Path) -> dict[str, float | int]:
    """The metadata of a saved run (everything but the population), as Python numbers."""
    with np.load(Path(path), allow_pickle=False) as data:
        return {key: data[key].item() for key in data.files if key != POPULATION_KEY}
