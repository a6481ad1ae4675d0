"""Confidence intervals for rates reported to people."""

from __future__ import annotations

import math

Z95 = 1.959964


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (95% by default); ``n == 0`` gives (0, 1)."""
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"wilson: need 0 <= successes <= n, got successes={successes}, n={n}")
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # Clamp rounding noise so that 0/n starts at exactly 0 and n/n ends at exactly 1.
    return (max(0.0, centre - half) if successes else 0.0, min(1.0, centre + half) if successes < n else 1.0)
