"""The Davidson-Bradley-Terry fit on constructed tournaments with known strengths."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.sweep.rating import SCALE, Game, fit_ratings


def _tournament(strengths: dict[str, float], nu: float, rounds: int, seed: int) -> list[Game]:
    """Every pair plays ``rounds`` games drawn from Davidson's model (strengths on the rating scale)."""
    rng = np.random.default_rng(seed)
    names, games = list(strengths), []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            pa, pb = math.exp(strengths[a] / SCALE), math.exp(strengths[b] / SCALE)
            tie = nu * math.sqrt(pa * pb)
            draws = rng.choice(3, size=rounds, p=np.array([pa, tie, pb]) / (pa + pb + tie))
            games += [Game(a, b, (1.0, 0.5, 0.0)[d]) for d in draws]
    return games


def _check(strengths: dict[str, float], games: list[Game]) -> None:
    fit = fit_ratings(games, bootstrap=40, seed=1)
    assert fit.converged and fit.anchor == "Random"
    assert [r.agent for r in fit.ratings] == sorted(strengths, key=lambda a: -strengths[a])  # the order
    for rating in fit.ratings:  # each true gap to Random within its interval
        assert rating.low <= strengths[rating.agent] <= rating.high, rating


def test_known_strengths_are_recovered_within_their_intervals() -> None:
    strengths = {"Random": 0.0, "weak": 150.0, "middle": 400.0, "strong": 800.0}
    _check(strengths, _tournament(strengths, nu=0.0, rounds=150, seed=0))


def test_thirty_percent_draws_are_fitted_by_davidson() -> None:
    strengths = {"Random": 0.0, "weak": 150.0, "middle": 400.0, "strong": 700.0}
    games = _tournament(strengths, nu=1.2, rounds=150, seed=2)
    share = sum(g.score == 0.5 for g in games) / len(games)
    assert 0.25 <= share <= 0.35
    _check(strengths, games)
    assert fit_ratings(games, bootstrap=0).draw_nu == pytest.approx(1.2, rel=0.25)


def test_near_separable_pool_still_converges() -> None:
    """One agent wins nearly everything: the rating is far out, but finite, ordered and covered."""
    strengths = {"Random": 0.0, "middle": 300.0, "dominant": 1300.0}
    games = _tournament(strengths, nu=0.0, rounds=200, seed=3)
    assert sum(g.score == 0 for g in games if g.a == "dominant") + sum(g.score == 1 for g in games if g.b == "dominant") <= 3
    _check(strengths, games)


def test_two_agents_match_the_exact_solution() -> None:
    """199 wins to 1: the maximum-likelihood gap is ln(199) on the natural scale (the weak prior moves it a little)."""
    games = [Game("A", "Random", 1.0)] * 199 + [Game("A", "Random", 0.0)]
    top = fit_ratings(games, bootstrap=0).ratings[0]
    assert top.agent == "A" and top.rating == pytest.approx(SCALE * math.log(199), abs=15)


def test_an_anchor_that_never_played_is_named() -> None:
    with pytest.raises(ValueError, match="anchor 'nobody' played no game"):
        fit_ratings([Game("A", "B", 1.0)], anchor="nobody")
