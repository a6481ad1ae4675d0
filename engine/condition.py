"""The hidden winning condition: threshold K and the outcome rule, on exact rationals.

rho = own / (own + opponent) at the end of the game. I(K) is the open interval
between K and 1/2. A player wins iff its rho lies in I(K); if neither does, the
game is a draw. K = 1/2 makes I(K) empty and is rejected.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

HALF = Fraction(1, 2)
# "per_player": the paper's rule, each player makes at most `turn_limit` placements;
# "total": the public reference environment's, `turn_limit` placements in all.
TURN_COUNTINGS = ("per_player", "total")


class ConditionError(ValueError):
    """An invalid winning condition (K = 0.5, a non-number)."""


def as_fraction(k: float | int | str | Fraction) -> Fraction:
    """K as an exact rational: floats by their shortest decimal form (1.01 -> 101/100)."""
    try:
        value = k if isinstance(k, Fraction) else Fraction(str(k))
    except (ValueError, ZeroDivisionError) as error:
        raise ConditionError(f"K={k!r} is not a number; give a decimal such as 0.8 or 1.01") from error
    if value == HALF:
        raise ConditionError(
            "K=0.5 is invalid: the winning interval between K and 0.5 would be empty; "
            "use K > 0.5 (majority regimes) or K < 0.5 (minority regimes)"
        )
    return value


@dataclass(frozen=True)
class Condition:
    """Threshold K (hidden from agents) with the optional turn limit of the rules."""

    k: Fraction
    turn_limit: int | None = None
    turn_counting: str = "per_player"
    label: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", as_fraction(self.k))
        limit = self.turn_limit
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise ConditionError(f"turn_limit={self.turn_limit!r}: give a positive integer or None")
        if self.turn_counting not in TURN_COUNTINGS:
            raise ConditionError(f"turn_counting={self.turn_counting!r}: choose one of {', '.join(TURN_COUNTINGS)}")

    @property
    def interval(self) -> tuple[Fraction, Fraction]:
        return (min(self.k, HALF), max(self.k, HALF))

    def wins(self, own: int, opponent: int) -> bool:
        """True iff own / (own + opponent) lies strictly inside I(K), in exact integers."""
        total = own + opponent
        if total <= 0:
            return False
        low, high = self.interval
        # low < own/total < high  <=>  low.num*total < own*low.den  and  own*high.den < high.num*total
        return low.numerator * total < own * low.denominator and own * high.denominator < high.numerator * total

    def rewards(self, black: int, white: int) -> tuple[int, int]:
        """Terminal rewards (black, white) in {+1, 0, -1} from the final disc counts."""
        if self.wins(black, white):
            return (1, -1)
        if self.wins(white, black):
            return (-1, 1)
        return (0, 0)

    def describe(self) -> str:
        low, high = self.interval
        limit = f", {self.turn_limit} turns" if self.turn_limit else ""
        return f"K={float(self.k):g} (win iff rho in ({float(low):g}, {float(high):g})){limit}"
