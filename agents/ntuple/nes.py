"""Antithetic natural evolution strategy (NES) with Adam: the gradient ascent that trains the 8x8 n-tuple weights.

The League score of a 1-ply player is a noisy, non-differentiable function of
the weights. Each step estimates its gradient from ``pairs`` mirrored
perturbations ``theta +- sigma * eps`` (``eps`` standard normal), each pair
scored on the same fresh games (its own seed), as
``sum_i (f(theta + sigma eps_i) - f(theta - sigma eps_i)) eps_i / (2 pairs sigma)``,
and takes an Adam step of size ``rate``. Because a 1-ply player only compares
values, the score does not change when the weights are scaled: ``theta`` is kept
at root-mean-square 1, so ``sigma`` and ``rate`` are relative. Unlike (mu+lambda)
selection on a few games per individual, which keeps the luckiest rather than
the best, every game's result enters the average.

Every ``check_every`` steps ``check(theta)`` (a held-out League sample) is called
and the best ``theta`` it saw is returned; the caller owns scoring and stopping.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

ADAM_BETAS = (0.9, 0.999)
ADAM_EPSILON = 1e-8

# score(flat weights, double games, seed) -> League score in [0, 1]
Score = Callable[[np.ndarray, int, int], float]


def unit_rms(theta: np.ndarray) -> np.ndarray:
    """``theta`` scaled to root-mean-square 1 (all zeros stay zeros)."""
    rms = float(np.sqrt(np.mean(theta**2)))
    return theta / rms if rms > 0 else theta.copy()


def nes_ascent(
    theta: np.ndarray,
    score: Score,
    pairs: int,
    games: int,
    sigma: float,
    rate: float,
    rng: np.random.Generator,
    keep_going: Callable[[int], bool],
    check: Callable[[int, np.ndarray], float],
    check_every: int = 10,
) -> tuple[np.ndarray, float, int]:
    """Ascend the score from ``theta`` while ``keep_going(step)``; returns (best checked theta, its check, steps)."""
    theta = unit_rms(np.asarray(theta, dtype=np.float64).ravel())
    first, second = np.zeros_like(theta), np.zeros_like(theta)
    beta1, beta2 = ADAM_BETAS
    best_theta, best = theta.copy(), check(0, theta)
    step = 0
    while keep_going(step):
        step += 1
        noise = rng.standard_normal((pairs, theta.size))
        differences = np.empty(pairs)
        for i in range(pairs):
            seed = int(rng.integers(1, 2**62))
            differences[i] = score(theta + sigma * noise[i], games, seed) - score(theta - sigma * noise[i], games, seed)
        gradient = (differences[:, None] * noise).sum(axis=0) / (2 * pairs * sigma)
        first = beta1 * first + (1 - beta1) * gradient
        second = beta2 * second + (1 - beta2) * gradient**2
        corrected = first / (1 - beta1**step) / (np.sqrt(second / (1 - beta2**step)) + ADAM_EPSILON)
        theta = unit_rms(theta + rate * corrected)
        if step % check_every == 0:
            value = check(step, theta)
            if value > best:
                best, best_theta = value, theta.copy()
    return best_theta, best, step
