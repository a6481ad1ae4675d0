"""Survival-only evolution (arena paper, Appendix B, Algorithm 1): selection by head-to-head outcomes only.

A population is a float64 array of shape ``(2N, P)``: one parameter vector per
row. Each generation pairs row ``i`` with row ``i + N``; the pair plays two
games with colours swapped, and the match outcome from ``i``'s side is the
sign of its summed terminal rewards (+1 win, 0 draw, -1 defeat). Selection
(Eq. 6) duplicates the winner and keeps both on a draw; every selected vector
is mutated with Gaussian noise (Eq. 7) and the population is shuffled (Eq. 8).

There is no fitness function anywhere: the only signal is who survived a
match. The ensembling rules of Appendix B.3 are here too: value tables are
rescaled to [-1, 1] and averaged; weight vectors are L1-normalised and averaged.

The (mu + lambda) evolution strategy of the n-tuple paper (Jaskowski 2014), which
does select by a fitness, is here as well: :func:`plus_offspring` and
:func:`plus_selection` (used by :mod:`agents.ntuple.train`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from agents.spec import whole_number

# play_pair(first, second) -> (reward of first as black, reward of first as white): two games, colours swapped.
PlayPair = Callable[[np.ndarray, np.ndarray], tuple[int, int]]


def check_population(population: np.ndarray) -> np.ndarray:
    """The population as a 2-D float64 array with an even, positive number of rows; ValueError otherwise."""
    array = np.asarray(population, dtype=np.float64)
    if array.ndim != 2 or array.shape[0] == 0 or array.shape[0] % 2:
        raise ValueError(f"population of shape {array.shape}: give a (2N, parameters) array with N >= 1")
    return array


def match_outcome(rewards: tuple[int, int]) -> int:
    """A match of two games from the first individual's side: the sign of its summed rewards (1, 0 or -1)."""
    return int(np.sign(sum(rewards)))


def select_survivors(population: np.ndarray, outcomes: np.ndarray) -> np.ndarray:
    """Eq. 6: for each pair (i, i+N), the winner twice, or both on a draw (``outcomes[i]`` from i's side)."""
    population = check_population(population)
    pairs = population.shape[0] // 2
    outcomes = np.asarray(outcomes)
    if outcomes.shape != (pairs,) or not np.isin(outcomes, (-1, 0, 1)).all():
        raise ValueError(f"outcomes must be {pairs} values in {{-1, 0, 1}}, got {outcomes!r}")
    first, second = population[:pairs], population[pairs:]
    keep_first = np.where((outcomes >= 0)[:, None], first, second)
    keep_second = np.where((outcomes <= 0)[:, None], second, first)
    return np.concatenate([keep_first, keep_second])


def mutate(population: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """Eq. 7: every vector plus independent N(0, sigma^2) noise."""
    if not sigma >= 0:
        raise ValueError(f"sigma={sigma!r}: give a mutation scale >= 0")
    return population + rng.normal(0.0, sigma, size=population.shape)


def next_generation(population: np.ndarray, outcomes: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """Select (Eq. 6), mutate (Eq. 7) and shuffle (Eq. 8)."""
    mutated = mutate(select_survivors(population, outcomes), sigma, rng)
    return mutated[rng.permutation(mutated.shape[0])]


def play_generation(population: np.ndarray, play_pair: PlayPair) -> np.ndarray:
    """The match outcome of every pair (i, i+N), from i's side, in pair order."""
    population = check_population(population)
    pairs = population.shape[0] // 2
    return np.array([match_outcome(play_pair(population[i], population[i + pairs])) for i in range(pairs)], dtype=np.int64)


def evolve(
    population: np.ndarray,
    generations: int,
    sigma: float,
    rng: np.random.Generator,
    play_pair: PlayPair,
    on_generation: Callable[[int, np.ndarray], None] | None = None,
) -> np.ndarray:
    """Algorithm 1: ``generations`` rounds of paired matches, selection, mutation and shuffle.

    ``on_generation(g, population)`` is called after generation ``g`` (1-based)
    with the new population. Returns the final population.
    """
    whole_number("generations", generations, 0)
    population = check_population(population)
    for generation in range(1, generations + 1):
        population = next_generation(population, play_generation(population, play_pair), sigma, rng)
        if on_generation is not None:
            on_generation(generation, population)
    return population


def ensemble_tables(tables: np.ndarray) -> np.ndarray:
    """B.3 for value tables: rescale each row affinely to [-1, 1] (constant rows to 0), then average."""
    tables = np.asarray(tables, dtype=np.float64)
    low = tables.min(axis=-1, keepdims=True)
    high = tables.max(axis=-1, keepdims=True)
    span = np.where(high > low, high - low, 1.0)
    scaled = np.where(high > low, 2.0 * (tables - low) / span - 1.0, 0.0)
    return scaled.mean(axis=0)


def ensemble_weights(weights: np.ndarray) -> np.ndarray:
    """B.3 for weight vectors: divide each row by the sum of its absolute values, then average."""
    weights = np.asarray(weights, dtype=np.float64)
    norms = np.abs(weights).sum(axis=-1, keepdims=True)
    return (weights / np.where(norms > 0, norms, 1.0)).mean(axis=0)


def plus_selection(population: np.ndarray, fitness: np.ndarray, parents: int) -> tuple[np.ndarray, np.ndarray]:
    """(mu + lambda) selection: the ``parents`` fittest rows and their fitness, fittest first (ties: lower row)."""
    population = np.asarray(population, dtype=np.float64)
    fitness = np.asarray(fitness, dtype=np.float64)
    if population.ndim != 2 or fitness.shape != (population.shape[0],) or not 1 <= parents <= population.shape[0]:
        raise ValueError(
            f"plus_selection: {population.shape[0]} rows with {fitness.shape} fitness values, "
            f"parents={parents}: give one fitness per row and 1 <= parents <= rows"
        )
    order = np.argsort(-fitness, kind="stable")[:parents]
    return population[order], fitness[order]


def plus_offspring(parents: np.ndarray, offspring: int, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """(mu + lambda) variation: ``offspring`` mutated copies, parent ``i % mu`` for child ``i``, after the parents."""
    parents = np.asarray(parents, dtype=np.float64)
    children = mutate(parents[np.arange(offspring) % parents.shape[0]], sigma, rng)
    return np.concatenate([parents, children])
