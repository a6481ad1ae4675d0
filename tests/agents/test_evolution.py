"""Survival-only evolution: Eq. 6 selection, mutation, shuffle, pairing, B.3 ensembling."""

import numpy as np
import pytest

from agents.evolution import ensemble_tables, ensemble_weights, evolve, match_outcome, next_generation, play_generation, select_survivors


def population(rows: int) -> np.ndarray:
    return np.arange(rows, dtype=np.float64)[:, None] * np.ones((1, 3))


def test_eq6_winner_duplicated_draw_keeps_both():
    pop = population(6)  # pairs (0,3) (1,4) (2,5)
    selected = select_survivors(pop, np.array([1, -1, 0]))
    assert sorted(selected[:, 0].tolist()) == [0, 0, 2, 4, 4, 5]


@pytest.mark.parametrize("rewards, outcome", [((1, 1), 1), ((1, 0), 1), ((1, -1), 0), ((0, 0), 0), ((-1, 0), -1), ((-1, -1), -1)])
def test_match_outcome_is_sign_of_summed_rewards(rewards, outcome):
    assert match_outcome(rewards) == outcome


def test_selection_rejects_bad_outcomes_and_odd_population():
    with pytest.raises(ValueError, match="outcomes"):
        select_survivors(population(4), np.array([2, 0]))
    with pytest.raises(ValueError, match="2N"):
        select_survivors(population(3), np.array([1]))


def test_next_generation_is_a_shuffled_mutated_selection():
    rng = np.random.default_rng(0)
    pop = population(8)
    new = next_generation(pop, np.array([1, 1, 1, 1]), 0.0, rng)
    assert sorted(new[:, 0].tolist()) == [0, 0, 1, 1, 2, 2, 3, 3]
    noisy = next_generation(pop, np.array([0, 0, 0, 0]), 0.5, np.random.default_rng(1))
    assert noisy.shape == pop.shape and not np.allclose(np.sort(noisy[:, 0]), np.arange(8))


def test_play_generation_pairs_i_with_i_plus_n_and_evolve_counts_games():
    calls = []

    def play_pair(first, second):
        calls.append((first[0], second[0]))
        return (1, 1) if first[0] > second[0] else (-1, -1)

    outcomes = play_generation(population(6), play_pair)
    assert calls == [(0, 3), (1, 4), (2, 5)] and outcomes.tolist() == [-1, -1, -1]
    calls.clear()
    seen = []
    final = evolve(population(6), 4, 0.0, np.random.default_rng(0), play_pair, lambda g, p: seen.append(g))
    assert len(calls) == 12 and seen == [1, 2, 3, 4]
    assert final.shape == (6, 3)


def test_survival_pressure_moves_population_towards_winners():
    # the larger parameter always wins: the mean must grow over generations
    def play_pair(first, second):
        return (1, 1) if first.sum() > second.sum() else (-1, -1)

    start = np.random.default_rng(0).normal(size=(40, 2))
    final = evolve(start, 10, 0.05, np.random.default_rng(1), play_pair)
    assert final.mean() > start.mean() + 1.0


def test_ensembling_rules_of_b3():
    tables = np.array([[0.0, 5.0, 10.0], [2.0, 2.0, 2.0], [-1.0, 1.0, 0.0]])
    assert np.allclose(ensemble_tables(tables), [(-1 + 0 - 1) / 3, (0 + 0 + 1) / 3, (1 + 0 + 0) / 3])
    weights = np.array([[1.0, -1.0, 2.0, 0.0], [0.0, 0.0, 0.0, 4.0]])
    assert np.allclose(ensemble_weights(weights), [0.125, -0.125, 0.25, 0.5])
