"""Adaptive tournaments: which pairing to play next, and when the order of the agents is known.

Pure logic (no engine): :class:`Standing` holds every game's score so far and gives the
current order, the next pairings and the decision; :func:`simulate` plays it against a
known-strength model (:mod:`harness.sweep.strengths`), as the benchmark and the tests do.

**The test (anytime-valid).** For each pair (i, j) the scores ``X_1, X_2, ...`` of i's direct
games against j (1 win, 0.5 draw, 0 loss, colours alternating) lie in [0, 1], so
``X - p_ij`` is sub-Gaussian with variance factor 1/4 whatever the draw rate. Robbins' normal
mixture of the exponential supermartingales ``exp(l S_n - l^2 n / 8)`` over ``l ~ N(0, 1/rho)``
is a nonnegative supermartingale with initial value 1, and by Ville's inequality it exceeds
``1/a`` at *any* time with probability at most ``a``; so
``|S_n - n p_ij| < sqrt((n/4 + rho) log((n/4 + rho) / (rho a^2)))`` holds for all ``n`` at
once with probability 1 - a: a confidence sequence, valid however the games were chosen
and whenever we stop (optional stopping and adaptive sampling included). Which pairs end up
neighbours depends on the data, so every one of the ``m = N(N-1)/2`` pairs gets ``a =
alpha / m`` (Bonferroni over pairs, not over looks: looks are free). With probability
1 - alpha every pair's sequence covers its ``p_ij`` at every time; then a decided pair
(its interval excludes 1/2) is ordered correctly, and an order whose neighbours are all
decided (in the order's direction) is the true order whenever strengths are transitive
(Bradley-Terry: ``p_ij > 1/2`` iff ``theta_i > theta_j``).

**The schedule.** The current order is the Davidson-Bradley-Terry fit of every game
(:mod:`harness.sweep.rating`), then any neighbour pair that its own test decided the other
way is swapped. The next pairing is the undecided neighbour pair whose interval is widest
(ties: highest in the order); it plays two games, colours swapped. The fixed schedule it is
compared with is the full round robin in rounds of two games per pair, stopped by the same
test and rule: the same confidence, only the choice of pairings differs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from harness.sweep.rating import Game, fitted_strengths
from harness.tournaments.match import Tally

ALPHA = 0.05
RHO = 4.0  # the mixture's spread: the boundary is tightest near n/4 ~ 4 rho games, i.e. a few dozen to hundreds
GAMES_PER_PICK = 2  # colours swapped


def half_width(games: int, alpha: float, rho: float = RHO) -> float:
    """Half the width of the confidence sequence for a pair's mean score after ``games`` games (at level ``alpha``)."""
    if games == 0:
        return math.inf
    variance = games / 4.0 + rho
    return math.sqrt(variance * math.log(variance / (rho * alpha * alpha))) / games


@dataclass(frozen=True)
class PairRecord(Tally):
    """The direct games of the lower-indexed agent of a pair against the other: its wins, draws and losses."""

    def add(self, score: float) -> PairRecord:
        """This record with one more game, scored ``score`` for the lower-indexed agent."""
        return PairRecord(self.wins + (score == 1.0), self.draws + (score == 0.5), self.losses + (score == 0.0))

    def sequence_interval(self, alpha: float) -> tuple[float, float]:
        """The confidence sequence's interval for the first agent's expected score, clipped to [0, 1]."""
        if self.games == 0:
            return 0.0, 1.0
        centre, half = (self.wins + 0.5 * self.draws) / self.games, half_width(self.games, alpha)
        return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Standing:
    """The games so far of an adaptive tournament among ``agents`` (as records by pair), at family-wise level ``alpha``."""

    agents: tuple[str, ...]
    alpha: float = ALPHA
    games: int = 0
    cost_usd: float = 0.0
    pairs: dict[tuple[int, int], PairRecord] = field(default_factory=dict)

    @property
    def pair_alpha(self) -> float:
        """Each pair's level: alpha over the N(N-1)/2 pairs that could be neighbours."""
        count = len(self.agents) * (len(self.agents) - 1) // 2
        return self.alpha / max(1, count)

    def record(self, game: Game, cost_usd: float = 0.0) -> Standing:
        """This standing with ``game`` added (and its model cost)."""
        i, j = self.agents.index(game.a), self.agents.index(game.b)
        key, score = ((i, j), game.score) if i < j else ((j, i), 1.0 - game.score)
        pairs = {**self.pairs, key: self.pairs.get(key, PairRecord()).add(score)}
        return Standing(self.agents, self.alpha, self.games + 1, self.cost_usd + cost_usd, pairs)

    def score_interval(self, upper: int, lower: int) -> tuple[float, float]:
        """The interval for ``upper``'s expected score against ``lower`` (agent indices)."""
        record = self.pairs.get((min(upper, lower), max(upper, lower)), PairRecord())
        low, high = record.sequence_interval(self.pair_alpha)
        return (low, high) if upper < lower else (1.0 - high, 1.0 - low)

    def verdict(self, upper: int, lower: int) -> int:
        """+1 if the test says ``upper`` is the stronger, -1 if ``lower`` is, 0 while undecided."""
        low, high = self.score_interval(upper, lower)
        return 1 if low > 0.5 else -1 if high < 0.5 else 0

    def order(self) -> tuple[int, ...]:
        """Agent indices best first: the rating fit's order, with neighbours the test decided the other way swapped."""
        theta = self._strengths()
        order = sorted(range(len(self.agents)), key=lambda i: (-theta[i], i))
        for _ in range(len(order)):
            swapped = False
            for k in range(len(order) - 1):
                if self.verdict(order[k], order[k + 1]) < 0:
                    order[k], order[k + 1] = order[k + 1], order[k]
                    swapped = True
            if not swapped:
                break
        return tuple(order)

    def _strengths(self) -> list[float]:
        """The Davidson-Bradley-Terry strengths of all games (all 0 until every agent has played)."""
        played = {i for key, record in self.pairs.items() if record.games for i in key}
        if len(played) < len(self.agents):
            return [0.0] * len(self.agents)
        rows, counts = [], []
        for (i, j), record in self.pairs.items():
            for row, count in (((i, j, 0), record.wins), ((j, i, 0), record.losses), ((i, j, 1), record.draws)):
                if count:
                    rows.append(row)
                    counts.append(count)
        theta = fitted_strengths(np.array(rows, dtype=np.int64), np.array(counts, dtype=np.int64), len(self.agents))
        return [float(t) for t in theta]

    def undecided(self, order: Sequence[int]) -> list[tuple[int, int]]:
        """The neighbour pairs (upper, lower) of ``order`` the test has not yet separated."""
        return [(order[k], order[k + 1]) for k in range(len(order) - 1) if self.verdict(order[k], order[k + 1]) <= 0]

    def decided(self) -> bool:
        """Whether every neighbour pair of the current order is separated, in the order's direction."""
        return not self.undecided(self.order())

    def next_pairing(self) -> tuple[str, str] | None:
        """The undecided neighbour pair with the widest interval (upper agent first), or None once decided."""
        order = self.order()
        candidates = self.undecided(order)
        if not candidates:
            return None
        widths = [self.score_interval(u, v)[1] - self.score_interval(u, v)[0] for u, v in candidates]
        upper, lower = candidates[widths.index(max(widths))]
        return self.agents[upper], self.agents[lower]

    def ranking(self) -> tuple[str, ...]:
        return tuple(self.agents[i] for i in self.order())


PlayGame = Callable[[str, str, int], tuple[float, float]]  # (A, B, game index of the pair) -> (A's score, cost in $)
GameOrder = tuple[str, str, int]  # (A, B, game index of the pair): A is the earlier of the pair in the agents' order
PlayBatch = Callable[[list[GameOrder]], list[tuple[float, float]]]  # a batch of games -> their results, in its order


@dataclass(frozen=True)
class Outcome:
    """How a schedule ended: its order, whether the test decided it, and what it took."""

    ranking: tuple[str, ...]
    decided: bool
    games: int
    cost_usd: float
    stopped_by: str  # "decision", "game cap" or "dollar cap"


def run_adaptive(
    agents: Sequence[str],
    play: PlayGame | None = None,
    *,
    alpha: float = ALPHA,
    max_games: int = 10_000,
    max_cost_usd: float | None = None,
    warmup: int = 1,
    batch: int = GAMES_PER_PICK,
    play_batch: PlayBatch | None = None,
) -> Outcome:
    """Play ``warmup`` rounds of the round robin (2 games a pair), then widest-undecided-neighbour pairs until decided.

    Games are chosen ``batch`` at a time (an even number: ``batch / 2`` picks of two games, colours swapped) from the
    standing after the previous batches, then played together by ``play_batch`` (default: one by one through
    ``play``), recorded in the batch's order, and the test and caps are checked between batches. The games chosen
    depend on ``batch`` and the results only, never on how ``play_batch`` plays them (in parallel, in any order).
    """
    if batch < GAMES_PER_PICK or batch % GAMES_PER_PICK:
        raise ValueError(f"batch={batch}: give an even number of games, 2 or more")
    if play_batch is None:
        play_batch = _one_by_one(play)
    standing = Standing(tuple(agents), alpha)
    played: dict[tuple[str, str], int] = {}
    while True:
        picks = min(batch, max_games - standing.games) // GAMES_PER_PICK
        if picks == 0:
            return _outcome(standing, "game cap")
        if max_cost_usd is not None and standing.cost_usd >= max_cost_usd:
            return _outcome(standing, "dollar cap")
        pairings = next_pairings(standing, picks, warmup)
        if not pairings:
            return _outcome(standing, "decision")
        orders = [_order(standing, played, pairing) for pairing in pairings for _ in range(GAMES_PER_PICK)]
        for (a, b, _), (score, cost) in zip(orders, play_batch(orders), strict=True):
            standing = standing.record(Game(a, b, score), cost)


def next_pairings(standing: Standing, picks: int, warmup: int = 1) -> list[tuple[str, str]]:
    """The next ``picks`` pairings (two games each): the warm-up round robin's next pairs, then the undecided
    neighbour pairs widest first, in turn (the widest again once each has one); empty once the order is decided."""
    pairs = _pairs(standing.agents)
    warm = warmup * GAMES_PER_PICK * len(pairs)
    chosen: list[tuple[str, str]] = []
    games = standing.games
    while len(chosen) < picks and games < warm:
        chosen.append(pairs[games // GAMES_PER_PICK % len(pairs)])
        games += GAMES_PER_PICK
    if len(chosen) == picks:
        return chosen
    order = standing.order()
    candidates = standing.undecided(order)
    if not candidates:
        return chosen
    widths = [standing.score_interval(u, v)[1] - standing.score_interval(u, v)[0] for u, v in candidates]
    ranked = [candidates[k] for k in sorted(range(len(candidates)), key=lambda k: -widths[k])]  # stable: ties by order
    return chosen + [(standing.agents[u], standing.agents[v]) for u, v in (ranked[k % len(ranked)] for k in range(picks - len(chosen)))]


def run_round_robin(
    agents: Sequence[str], play: PlayGame, *, alpha: float = ALPHA, max_games: int = 10_000, max_cost_usd: float | None = None
) -> Outcome:
    """The fixed schedule: whole rounds of the round robin (2 games a pair), the same test checked after each round."""
    standing = Standing(tuple(agents), alpha)
    played: dict[tuple[str, str], int] = {}
    while True:
        if standing.games and standing.decided():
            return _outcome(standing, "decision")
        stop = _cap(standing, max_games, max_cost_usd, GAMES_PER_PICK * len(_pairs(agents)))
        if stop:
            return _outcome(standing, stop)
        for pairing in _pairs(agents):
            for _ in range(GAMES_PER_PICK):
                standing = _play_one(standing, played, pairing, play)


def _one_by_one(play: PlayGame | None) -> PlayBatch:
    if play is None:
        raise ValueError("give play or play_batch")
    single = play
    return lambda orders: [single(a, b, k) for a, b, k in orders]


def _pairs(agents: Sequence[str]) -> list[tuple[str, str]]:
    return [(a, b) for i, a in enumerate(agents) for b in agents[i + 1 :]]


def _order(standing: Standing, played: dict[tuple[str, str], int], pairing: tuple[str, str]) -> GameOrder:
    """The pair's next game: one pairing (and game numbering) per pair, however it is picked."""
    a, b = sorted(pairing, key=standing.agents.index)
    index = played.get((a, b), 0)
    played[(a, b)] = index + 1
    return a, b, index


def _play_one(standing: Standing, played: dict[tuple[str, str], int], pairing: tuple[str, str], play: PlayGame) -> Standing:
    a, b, index = _order(standing, played, pairing)
    score, cost = play(a, b, index)
    return standing.record(Game(a, b, score), cost)


def _cap(standing: Standing, max_games: int, max_cost_usd: float | None, step: int = GAMES_PER_PICK) -> str:
    if standing.games + step > max_games:
        return "game cap"
    if max_cost_usd is not None and standing.cost_usd >= max_cost_usd:
        return "dollar cap"
    return ""


def _outcome(standing: Standing, stopped_by: str) -> Outcome:
    return Outcome(standing.ranking(), standing.decided(), standing.games, standing.cost_usd, stopped_by)
