"""``mock/reasoner``: an embedded offline "model" for llm-strategist that actually reasons from its prompt.

It reads only what a real model would: the episode memory of the strategy prompt
(``prompts/memory.j2``): the table of recent games (game, colour, own, opponent,
empty, rho, reward) and the summary of all games by rho bin. From the rows it
deduces the feasible set of the threshold K exactly (:mod:`agents.interval.belief`);
each bin adds what any share inside it would imply (the hull of the constraints
at the bin's two ends, so the deduction stays sound); it states the result as its belief, and picks a target
share: while the outcome of some reachable share is still uncertain, the share
that bisects the uncertain range (a probe); once nothing is uncertain, the middle
of the shares that surely win. Its weights favour mobility, and corners and
stable discs when a majority wins, few discs when a minority wins. It is deterministic, needs no
network or key, and is what ``make demo`` runs when no API key is set.

It is stateless like a real model call: games older than the memory's recent
table (the prompt's token budget) are forgotten, except through the table.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from fractions import Fraction

from agents.interval.belief import HALF, InconsistentRecord, KInterval, constraints, probe_target, share_constraint
from harness.models.messages import Messages, last_user_text

_ROW = re.compile(r"^\s*(\d+)\s*\|\s*(black|white)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*[\d.]+\s*\|\s*([+-]?\d)\s*$", re.MULTILINE)
_PLAYED = re.compile(r"Games finished:\s*(\d+)\s+of at most\s+(\d+)")
_BIN = re.compile(r"^\s*(\d\.\d+)-(\d\.\d+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*$", re.MULTILINE)
DEFAULT_TOTAL = 64
MAJORITY_WEIGHTS = {"mobility": 8.0, "corners": 20.0, "discs": 1.0, "stability": 5.0}
MINORITY_WEIGHTS = {"mobility": 8.0, "corners": 2.0, "discs": -6.0, "stability": 0.0, "frontier": 4.0}
OUTCOME_SIDES = {"win": (True, False), "draw": (False, False), "loss": (False, True)}  # (own inside, opponent inside)


def recent_games(prompt: str) -> list[tuple[int, int, int]]:
    """(black discs, white discs, black's reward) of every game row in the prompt's memory table."""
    games = []
    for _, colour, own, opp, _, reward in _ROW.findall(prompt):
        own_n, opp_n, reward_n = int(own), int(opp), int(reward)
        games.append((own_n, opp_n, reward_n) if colour == "black" else (opp_n, own_n, -reward_n))
    return games


def bin_outcomes(prompt: str) -> list[tuple[Fraction, Fraction, str]]:
    """(low, high, outcome) for every outcome that occurred in a rho bin of the prompt's summary."""
    found = []
    for low, high, _, wins, draws, losses in _BIN.findall(prompt):
        for outcome, count in (("win", wins), ("draw", draws), ("loss", losses)):
            if int(count):
                found.append((Fraction(low), Fraction(high), outcome))
    return found


def _hull(a: KInterval, b: KInterval) -> KInterval:
    """The smallest closed interval holding both (unbounded where either is)."""
    lower = None if a.lower is None or b.lower is None else min(a.lower, b.lower)
    upper = None if a.upper is None or b.upper is None else max(a.upper, b.upper)
    return KInterval(lower, upper, True, True)


def bin_constraint(low: Fraction, high: Fraction, outcome: str) -> KInterval:
    """What an ``outcome`` at some own share in [low, high] implies for K, whichever share it was."""
    own_inside, opponent_inside = OUTCOME_SIDES[outcome]

    def at(rho: Fraction) -> KInterval:
        return share_constraint(rho, own_inside).intersect(share_constraint(1 - rho, opponent_inside))

    return _hull(at(low), at(high))


def deduce(games: list[tuple[int, int, int]], bins: Sequence[tuple[Fraction, Fraction, str]] = ()) -> KInterval:
    """The feasible set of K after the games and bin outcomes (everything when they contradict each other)."""
    interval = KInterval.everything()
    try:
        for low, high, outcome in bins:
            interval = interval.intersect(bin_constraint(low, high, outcome))
        for black, white, reward in games:
            for constraint in constraints(black, white, reward):
                interval = interval.intersect(constraint)
        if interval.is_empty:
            raise InconsistentRecord("contradictory records")
    except InconsistentRecord:
        return KInterval.everything()
    return interval


def target_share(interval: KInterval, totals: set[int], games_left: int) -> tuple[float, str]:
    """(own share to aim at, why): a probe while games are left and an outcome is uncertain, else the middle of the sure wins."""
    probe = probe_target(interval, totals or {DEFAULT_TOTAL}) if games_left > 0 else None
    if probe is not None:
        return float(probe), f"probing: the outcome at share {float(probe):.3f} is still uncertain"
    if interval.regime == "majority":
        edge = min(interval.lower, Fraction(1)) if interval.lower is not None else Fraction(1)
        return float((HALF + edge) / 2) if edge < 1 else 1.0, "aiming inside the winning majority range"
    edge = max(interval.upper, Fraction(0)) if interval.upper is not None else Fraction(0)
    return float((HALF + edge) / 2), "aiming inside the winning minority range"


def reasoned_strategy(messages: Messages, rng: random.Random) -> str:
    """The reply to a strategy prompt: a JSON strategy deduced from the memory table."""
    prompt = last_user_text(messages)
    games = recent_games(prompt)
    interval = deduce(games, bin_outcomes(prompt))
    played = _PLAYED.search(prompt)
    games_left = int(played.group(2)) - int(played.group(1)) if played else 1
    target, why = target_share(interval, {black + white for black, white, _ in games}, games_left)
    belief = interval.belief().model_dump(exclude={"schema_version"})
    belief["confidence"] = 0.9 if interval.regime != "unknown" else 0.1
    weights = MAJORITY_WEIGHTS if target >= 0.5 else MINORITY_WEIGHTS
    return json.dumps(
        {
            "schema_version": 1,
            "belief": belief,
            "target_ratio": round(target, 4),
            "weights": weights,
            "rationale": f"{len(games)} games in memory give K in {interval.describe()}; {why}",
        }
    )
