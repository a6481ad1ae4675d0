"""One Bradley-Terry fit over many games, draws explicit (Davidson's model), with bootstrap intervals by game.

Davidson (1970): with strengths ``pi_i = exp(theta_i)`` and a draw parameter ``nu``,
``P(i beats j) = pi_i / D``, ``P(draw) = nu * sqrt(pi_i * pi_j) / D``, ``D = pi_i + pi_j +
nu * sqrt(pi_i * pi_j)``; with no draw in the data ``nu = 0`` and it is the plain
Bradley-Terry model. The negative log-likelihood (with its exact gradient) is minimised by
scipy's L-BFGS-B, which, unlike the usual MM iteration, does not stall when one agent wins
nearly every game; a weak Gaussian prior (``RIDGE``: sd 10 in natural units, about 1,700
rating points) keeps the fit finite when one agent wins *every* game. Ratings are
``theta * 400 / ln 10`` (the Elo scale) with the anchor's rating 0 (Random when it played).
Intervals: the 2.5% and 97.5% percentiles of ``bootstrap`` refits on games resampled with
replacement (a multinomial draw over the distinct game outcomes is the same resampling).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SCALE = 400.0 / math.log(10.0)
RIDGE = 0.005  # 0.5 * theta^2 / 10^2 per agent: a prior far wider than any rating gap the data can show
DEFAULT_ANCHOR = "Random"


@dataclass(frozen=True)
class Game:
    """One game between ``a`` and ``b``: ``score`` is a's (1 win, 0.5 draw, 0 loss)."""

    a: str
    b: str
    score: float


@dataclass(frozen=True)
class Rating:
    """An agent's rating (anchor = 0), its bootstrap interval, and its record."""

    agent: str
    rating: float
    low: float
    high: float
    games: int
    wins: int
    draws: int
    losses: int


@dataclass(frozen=True)
class Fit:
    """The ratings (best first), the anchor, the draw parameter and how the fit was made."""

    ratings: tuple[Rating, ...]
    anchor: str
    draw_nu: float
    bootstrap: int
    converged: bool


def fit_ratings(games: Sequence[Game], *, anchor: str | None = None, bootstrap: int = 200, seed: int = 0) -> Fit:
    """The Davidson-Bradley-Terry ratings of every agent in ``games``; anchor default Random (else the first agent)."""
    agents = sorted({g.a for g in games} | {g.b for g in games})
    if len(agents) < 2:
        raise ValueError(f"a rating needs games between 2 or more agents; these games have {len(agents)}")
    anchor = anchor or (DEFAULT_ANCHOR if DEFAULT_ANCHOR in agents else agents[0])
    if anchor not in agents:
        raise ValueError(f"anchor {anchor!r} played no game: give one of {', '.join(agents)}")
    index = {name: i for i, name in enumerate(agents)}
    rows, counts = _categories(games, index)
    draws = bool(np.any(rows[:, 2] == 1))
    with one_blas_thread():
        theta, nu, converged = _solve(rows, counts.astype(float), len(agents), draws, None)
        low, high = _intervals(rows, counts, len(agents), draws, theta, nu, bootstrap, seed, index[anchor])
    centre = (theta - theta[index[anchor]]) * SCALE
    records = _records(games)
    ratings = [
        Rating(agent=name, rating=float(centre[i]), low=float(low[i]), high=float(high[i]), **records[name]) for name, i in index.items()
    ]
    ratings.sort(key=lambda r: -r.rating)
    return Fit(ratings=tuple(ratings), anchor=anchor, draw_nu=nu, bootstrap=bootstrap, converged=converged)


def fitted_strengths(rows: np.ndarray, counts: np.ndarray, agents: int) -> np.ndarray:
    """The fit's natural-scale strengths (theta) from outcome counts: ``rows`` as :func:`_categories` makes them
    (winner-or-first, other, draw flag), ``counts`` how often each happened (no bootstrap, no anchor)."""
    draws = bool(np.any(counts[rows[:, 2] == 1] > 0))
    with one_blas_thread():
        theta, _, _ = _solve(rows, counts.astype(float), agents, draws, None)
    return theta


def _categories(games: Sequence[Game], index: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """Distinct outcomes as rows (winner-or-first, other, draw flag) with their counts."""
    keys: dict[tuple[int, int, int], int] = {}
    for game in games:
        i, j = index[game.a], index[game.b]
        key = (i, j, 0) if game.score == 1 else (j, i, 0) if game.score == 0 else (min(i, j), max(i, j), 1)
        keys[key] = keys.get(key, 0) + 1
    rows = np.array(list(keys), dtype=np.int64).reshape(-1, 3)
    return rows, np.array(list(keys.values()), dtype=np.int64)


def _negative_log_likelihood(params: np.ndarray, rows: np.ndarray, weights: np.ndarray, n: int, draws: bool) -> tuple[float, np.ndarray]:
    theta, g = params[:n], (params[n] if draws else -np.inf)
    a, b, is_draw = theta[rows[:, 0]], theta[rows[:, 1]], rows[:, 2] == 1
    tie = g + 0.5 * (a + b) if draws else np.full_like(a, -np.inf)
    top = np.maximum(np.maximum(a, b), tie)
    ea, eb, et = np.exp(a - top), np.exp(b - top), np.exp(tie - top)
    total = ea + eb + et
    pa, pb, pt = ea / total, eb / total, et / total
    log_d = top + np.log(total)
    ll = np.where(is_draw, tie - log_d, a - log_d) if draws else a - log_d
    grad_a = np.where(is_draw, 0.5, 1.0) - (pa + 0.5 * pt)
    grad_b = np.where(is_draw, 0.5, 0.0) - (pb + 0.5 * pt)
    grad = np.zeros(len(params))
    grad[:n] = -(np.bincount(rows[:, 0], weights * grad_a, n) + np.bincount(rows[:, 1], weights * grad_b, n))
    if draws:
        grad[n] = -float(np.sum(weights * (is_draw.astype(float) - pt)))
    value = -float(np.sum(weights * ll)) + RIDGE * float(theta @ theta)
    grad[:n] += 2 * RIDGE * theta
    return value, grad


@functools.cache
def _scipy_blas() -> ctypes.CDLL | None:
    """The OpenBLAS that scipy's wheel bundles (its L-BFGS-B calls it), or None where scipy was built otherwise."""
    import scipy  # imported when a fit runs, not when `arena` starts (~0.3 s)

    for path in sorted(Path(scipy.__file__).parent.parent.glob("scipy.libs/libscipy_openblas*.so")):
        with contextlib.suppress(OSError):
            library = ctypes.CDLL(str(path))
            if hasattr(library, "scipy_openblas_set_num_threads"):
                return library
    return None


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """scipy's OpenBLAS on one thread while the block runs: on a loaded machine its worker threads made each tiny
    L-BFGS-B solve (a handful of variables) take ~20 ms instead of well under 1 ms (measured on this 2-core machine)."""
    library = _scipy_blas()
    if library is None:
        yield
        return
    before = int(library.scipy_openblas_get_num_threads())
    library.scipy_openblas_set_num_threads(1)
    try:
        yield
    finally:
        library.scipy_openblas_set_num_threads(before)


def _solve(rows: np.ndarray, weights: np.ndarray, n: int, draws: bool, start: np.ndarray | None) -> tuple[np.ndarray, float, bool]:
    from scipy.optimize import minimize  # imported when a fit runs, not when `arena` starts

    x0 = start if start is not None else np.zeros(n + int(draws))
    result = minimize(
        _negative_log_likelihood,
        x0,
        args=(rows, weights, n, draws),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 2000, "gtol": 1e-7, "ftol": 1e-12},
    )
    theta = result.x[:n]
    nu = float(math.exp(result.x[n])) if draws else 0.0
    return theta, nu, bool(result.success)


def _intervals(
    rows: np.ndarray, counts: np.ndarray, n: int, draws: bool, theta: np.ndarray, nu: float, bootstrap: int, seed: int, anchor: int
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile intervals (anchor-relative, rating scale) from refits on games resampled with replacement."""
    centre = (theta - theta[anchor]) * SCALE
    if bootstrap < 1:
        return centre, centre
    rng = np.random.default_rng(seed)
    start = np.concatenate([theta, [math.log(nu)] if draws else []])
    samples = np.empty((bootstrap, n))
    total = int(counts.sum())
    for b in range(bootstrap):
        weights = rng.multinomial(total, counts / total).astype(float)
        fitted, _, _ = _solve(
            rows,
            weights,
            n,
            draws and bool(np.any(weights[rows[:, 2] == 1] > 0)),
            start if draws and np.any(weights[rows[:, 2] == 1] > 0) else start[:n],
        )
        samples[b] = (fitted - fitted[anchor]) * SCALE
    return np.percentile(samples, 2.5, axis=0), np.percentile(samples, 97.5, axis=0)


def _records(games: Sequence[Game]) -> dict[str, dict[str, int]]:
    records: dict[str, dict[str, int]] = {}
    for game in games:
        for name, score in ((game.a, game.score), (game.b, 1.0 - game.score)):
            record = records.setdefault(name, {"games": 0, "wins": 0, "draws": 0, "losses": 0})
            record["games"] += 1
            record["wins" if score == 1 else "draws" if score == 0.5 else "losses"] += 1
    return records
