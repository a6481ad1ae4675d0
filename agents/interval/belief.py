"""The feasible set of the hidden threshold K, deduced exactly from terminal rewards.

Every finished game constrains K. With ``rho`` a player's final share
own / (own + opp), the rule "a player wins iff its rho lies in
I(K) = (min(K, 1/2), max(K, 1/2))" turns each observation into a half-line:

- rho > 1/2 inside I(K)  <=>  K > rho;   rho > 1/2 outside  <=>  K <= rho;
- rho < 1/2 inside I(K)  <=>  K < rho;   rho < 1/2 outside  <=>  K >= rho;
- rho = 1/2 is never inside (a win there is an inconsistent record).

A game tells both players' facts (black won / white won / neither), so the
feasible set is an intersection of half-lines: one :class:`KInterval`, exact
(Fractions) with open or closed ends, possibly unbounded. K = 1/2 is excluded
implicitly (a single point: it changes no probability). An empty intersection
means the records contradict the rule: :class:`InconsistentRecord`.

Belief over K (for utilities): uniform on a bounded interval; an interval
unbounded on one side puts all its mass beyond that side (K > max: every
majority wins; K < min: every minority wins, since nothing observed says
otherwise); the whole line is half "K above 1", half "K below 0". From it,
:func:`outcome_table` gives ``P(win) - P(loss)`` for every final (own, opp).

Probing: a game whose larger share is ``m`` > 1/2 splits the K line in three
(K > m: the majority holder wins; K < 1 - m: the minority holder wins; else a
draw), so what a game can teach depends on ``m`` alone. :func:`informative`
says whether the outcome at ``m`` is still uncertain and :func:`probe_target`
picks the share that bisects the uncertain range among the achievable shares.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Protocol

import numpy as np

from engine.protocol.belief import Belief

HALF = Fraction(1, 2)
# What :meth:`KInterval.belief` reports for an unbounded side (any K beyond 1 or below 0 acts alike).
REPORTED_ABOVE, REPORTED_BELOW = 2.0, -1.0
Totals = frozenset[int] | set[int] | tuple[int, ...]  # final disc totals (own + opp) that games have ended with


class InconsistentRecord(ValueError):
    """A game's outcome that no threshold K can explain together with the games before it."""


class FinishedGame(Protocol):
    """What a constraint needs from a game: final counts and the rewards (black, white)."""

    black: int
    white: int
    rewards: tuple[int, int]


@dataclass(frozen=True)
class KInterval:
    """An interval of K with exact ends: ``None`` is unbounded; ``*_closed`` says whether the end belongs to it."""

    lower: Fraction | None = None
    upper: Fraction | None = None
    lower_closed: bool = False
    upper_closed: bool = False

    @classmethod
    def everything(cls) -> KInterval:
        """The whole line: nothing known yet."""
        return cls()

    @property
    def is_empty(self) -> bool:
        """No K fits (K = 1/2 alone counts as empty: it is never a valid threshold)."""
        if self.lower is None or self.upper is None:
            return False
        if self.lower != self.upper:
            return self.lower > self.upper
        return not (self.lower_closed and self.upper_closed) or self.lower == HALF

    @property
    def bounded(self) -> bool:
        return self.lower is not None and self.upper is not None

    @property
    def width(self) -> Fraction | None:
        """upper - lower, or None when unbounded."""
        return self.upper - self.lower if self.bounded else None

    @property
    def regime(self) -> str:
        """``majority`` (every feasible K > 1/2), ``minority`` (every K < 1/2) or ``unknown``."""
        if self.lower is not None and self.lower >= HALF:
            return "majority"
        if self.upper is not None and self.upper <= HALF:
            return "minority"
        return "unknown"

    def contains(self, k: Fraction | float | int) -> bool:
        """Whether ``k`` is feasible (exact; K = 1/2 never is)."""
        k = Fraction(k)
        if k == HALF:
            return False
        above = self.lower is None or k > self.lower or (self.lower_closed and k == self.lower)
        below = self.upper is None or k < self.upper or (self.upper_closed and k == self.upper)
        return above and below

    def intersect(self, other: KInterval) -> KInterval:
        """The K both intervals allow (possibly empty: check :attr:`is_empty`)."""
        lower, lower_closed = _tighter(self.lower, self.lower_closed, other.lower, other.lower_closed, max)
        upper, upper_closed = _tighter(self.upper, self.upper_closed, other.upper, other.upper_closed, min)
        return KInterval(lower, upper, lower_closed, upper_closed)

    def meets(self, other: KInterval) -> bool:
        """Whether some valid K lies in both."""
        return not self.intersect(other).is_empty

    def update(self, game: FinishedGame) -> KInterval:
        """The feasible set after one finished game; InconsistentRecord if none is left."""
        result = self
        for constraint in constraints(game.black, game.white, game.rewards[0]):
            result = result.intersect(constraint)
        if result.is_empty:
            raise InconsistentRecord(
                f"the game {game.black}-{game.white} (black's reward {game.rewards[0]}) contradicts the "
                f"feasible set {self.describe()}: no threshold K explains all the games"
            )
        return result

    def describe(self) -> str:
        """The interval in bracket notation, e.g. ``(3/5, 4/5]`` or ``(-inf, 1/5)``."""
        left = "(-inf" if self.lower is None else ("[" if self.lower_closed else "(") + str(self.lower)
        right = "+inf)" if self.upper is None else str(self.upper) + ("]" if self.upper_closed else ")")
        return f"{left}, {right}"

    def prob_above(self, x: Fraction) -> Fraction:
        """P(K > x) under the belief (module docstring)."""
        return _prob_above(self.lower, self.upper, x)

    def prob_below(self, x: Fraction) -> Fraction:
        """P(K < x) under the belief: P(-K > -x) on the interval mirrored about 0."""
        return _prob_above(_negated(self.upper), _negated(self.lower), -x)

    def belief(self) -> Belief:
        """The feasible set as the LLM agents report theirs (unbounded ends as 2.0 / -1.0).

        Confidence is 1 when the regime is deduced (the set holds K for sure if
        the rule has the stated form) and 0 for ``unknown``, which is never right.
        """
        regime = self.regime
        return Belief(
            regime=regime,
            k_low=REPORTED_BELOW if self.lower is None else float(self.lower),
            k_high=REPORTED_ABOVE if self.upper is None else float(self.upper),
            confidence=0.0 if regime == "unknown" else 1.0,
            rationale=f"K in {self.describe()}, deduced exactly from the terminal rewards",
        )


def _negated(bound: Fraction | None) -> Fraction | None:
    return None if bound is None else -bound


def _prob_above(lower: Fraction | None, upper: Fraction | None, x: Fraction) -> Fraction:
    """P(K > x) for K uniform on [lower, upper] (None: unbounded that side; both unbounded: 1/2)."""
    if lower is None and upper is None:
        return HALF
    if upper is None:
        return Fraction(1)
    if lower is None:
        return Fraction(0)
    if lower == upper:
        return Fraction(int(lower > x))
    return min(Fraction(1), max(Fraction(0), (upper - x) / (upper - lower)))


def _tighter(
    a: Fraction | None, a_closed: bool, b: Fraction | None, b_closed: bool, pick: Callable[[Fraction, Fraction], Fraction]
) -> tuple[Fraction | None, bool]:
    """The tighter of two ends (``pick`` = max for lower ends, min for upper ends); open wins a tie."""
    if a is None:
        return b, b_closed
    if b is None or a != b:
        return (a, a_closed) if b is None or pick(a, b) == a else (b, b_closed)
    return a, a_closed and b_closed


def share_constraint(rho: Fraction, inside: bool) -> KInterval:
    """The K for which a share ``rho`` is (``inside``) or is not inside I(K)."""
    if rho == HALF:
        if inside:
            return KInterval(HALF, HALF)  # empty: 1/2 is never inside
        return KInterval.everything()
    if rho > HALF:
        return KInterval(lower=rho) if inside else KInterval(upper=rho, upper_closed=True)
    return KInterval(upper=rho) if inside else KInterval(lower=rho, lower_closed=True)


def constraints(black: int, white: int, black_reward: int) -> tuple[KInterval, KInterval]:
    """The two half-lines one game implies: black's share inside I(K) or not, white's likewise."""
    total = black + white
    if total <= 0 or black < 0 or white < 0:
        raise InconsistentRecord(f"final counts {black}-{white}: a finished game has discs on the board")
    if black_reward not in (-1, 0, 1):
        raise InconsistentRecord(f"black's reward {black_reward!r}: expected +1, 0 or -1")
    rho_black = Fraction(black, total)
    return (share_constraint(rho_black, black_reward == 1), share_constraint(1 - rho_black, black_reward == -1))


def feasible_set(games: list[FinishedGame] | tuple[FinishedGame, ...], start: KInterval | None = None) -> KInterval:
    """The feasible set after ``games`` (from ``start``, default everything)."""
    interval = KInterval.everything() if start is None else start
    for game in games:
        interval = interval.update(game)
    return interval


def outcome_probabilities(interval: KInterval, own: int, opp: int) -> tuple[Fraction, Fraction]:
    """(P(win), P(loss)) of a player ending with ``own`` discs against ``opp``, under the belief."""
    total = own + opp
    if total <= 0:
        return Fraction(0), Fraction(0)
    rho = Fraction(own, total)
    if rho == HALF:
        return Fraction(0), Fraction(0)
    if rho > HALF:  # we win iff K > rho; the opponent (share 1 - rho < 1/2) wins iff K < 1 - rho
        return interval.prob_above(rho), interval.prob_below(1 - rho)
    return interval.prob_below(rho), interval.prob_above(1 - rho)


@lru_cache(maxsize=64)
def outcome_table(interval: KInterval, cells: int) -> np.ndarray:
    """``table[own, opp] = P(win) - P(loss)`` for every final count (read-only; 0 where own + opp > cells)."""
    table = np.zeros((cells + 1, cells + 1), dtype=np.float64)
    for total in range(1, cells + 1):
        for own in range(total + 1):
            win, loss = outcome_probabilities(interval, own, total - own)
            table[own, total - own] = float(win - loss)
    table.setflags(write=False)
    return table


def informative(interval: KInterval, share: Fraction) -> bool:
    """Whether a game whose larger share is ``share`` can still have more than one outcome."""
    if share <= HALF:
        return False
    outcomes = (
        KInterval(lower=share),  # the majority holder wins
        KInterval(upper=1 - share),  # the minority holder wins
        KInterval(1 - share, share, True, True),  # a draw
    )
    return sum(interval.meets(outcome) for outcome in outcomes) >= 2


def achievable_shares(totals: Totals) -> tuple[Fraction, ...]:
    """Every larger share own / total > 1/2 with ``total`` among ``totals``, ascending, without repeats."""
    shares = {Fraction(own, total) for total in totals if total > 0 for own in range(total // 2 + 1, total + 1)}
    return tuple(sorted(shares))


def informative_shares(interval: KInterval, totals: Totals) -> tuple[Fraction, ...]:
    """The achievable larger shares whose outcome is still uncertain."""
    return tuple(share for share in achievable_shares(totals) if informative(interval, share))


def probe_target(interval: KInterval, totals: Totals) -> Fraction | None:
    """The larger share to aim a probe game at: the middle of the uncertain achievable shares (None: nothing left)."""
    shares = informative_shares(interval, totals)
    if not shares:
        return None
    return (shares[0] + shares[-1]) / 2
