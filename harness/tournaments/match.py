"""Evaluation matches: policy A against policy B, colours alternating, results with Wilson intervals.

A match is evaluation, not adaptation: it plays directly on the environment
(no budget). Game ``i`` gets its own randomness: ``SeedSequence(seed)`` is
spawned once per game and each game's child is split in two, one generator for
each policy factory, so a match is reproducible from its seed and any game can
be replayed on its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, ConfigDict

from engine import EnvKey
from engine.environments import Environment
from engine.protocol.policy import Policy, policy_name
from engine.protocol.record import GameRecord
from engine.state import BLACK, WHITE
from harness.play.game import play_game
from harness.tournaments.stats import wilson

PolicyFactory = Callable[[np.random.Generator], Policy]
OUTCOMES = ("win", "draw", "lose")


@dataclass(frozen=True)
class Tally:
    """Win/draw/lose counts for one side, with rates and Wilson 95% intervals."""

    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    def count(self, outcome: str) -> int:
        """Games ending in ``outcome`` ('win', 'draw' or 'lose')."""
        return {"win": self.wins, "draw": self.draws, "lose": self.losses}[outcome]

    def rate(self, outcome: str) -> float:
        """Fraction of games ending in ``outcome`` (0 when no games)."""
        return self.count(outcome) / self.games if self.games else 0.0

    def interval(self, outcome: str) -> tuple[float, float]:
        """Wilson 95% interval of that rate."""
        return wilson(self.count(outcome), self.games)


def tally(rewards: list[int] | tuple[int, ...]) -> Tally:
    """Counts of +1 / 0 / -1 rewards."""
    return Tally(rewards.count(1), rewards.count(0), rewards.count(-1))


class MatchResult(BaseModel):
    """All games of a match, seen from policy A; JSON-serialisable."""

    model_config = ConfigDict(frozen=True)

    env_id: EnvKey
    env_name: str
    seed: int
    policy_a: str
    policy_b: str
    a_colours: tuple[int, ...]
    a_rewards: tuple[int, ...]
    records: tuple[GameRecord, ...]

    @property
    def games(self) -> int:
        return len(self.records)

    @property
    def overall(self) -> Tally:
        return tally(self.a_rewards)

    def as_colour(self, colour: int) -> Tally:
        """A's results in the games where it played ``colour``."""
        return tally([r for c, r in zip(self.a_colours, self.a_rewards) if c == colour])

    @property
    def as_black(self) -> Tally:
        return self.as_colour(BLACK)

    @property
    def as_white(self) -> Tally:
        return self.as_colour(WHITE)

    def table(self) -> list[dict[str, object]]:
        """Rows (overall, A as black, A as white): games, counts, rates and interval bounds, for printing."""
        rows = []
        for scope, t in (("overall", self.overall), ("A black", self.as_black), ("A white", self.as_white)):
            row: dict[str, object] = {"scope": scope, "games": t.games}
            for outcome in OUTCOMES:
                low, high = t.interval(outcome)
                row |= {outcome: t.count(outcome), f"{outcome}_rate": t.rate(outcome), f"{outcome}_low": low, f"{outcome}_high": high}
            rows.append(row)
        return rows

    def render(self) -> str:
        """The table as plain text: rate [low, high] (count) per outcome."""
        lines = [f"{self.policy_a} vs {self.policy_b} on env {self.env_id} ({self.env_name}), seed {self.seed}"]
        for row in self.table():
            cells = [f"{o} {row[f'{o}_rate']:.3f} [{row[f'{o}_low']:.3f}, {row[f'{o}_high']:.3f}] ({row[o]})" for o in OUTCOMES]
            lines.append(f"  {row['scope']:<8} n={row['games']:<5} " + "  ".join(cells))
        return "\n".join(lines)


def run_match(env: Environment, policy_a_factory: PolicyFactory, policy_b_factory: PolicyFactory, games: int, seed: int) -> MatchResult:
    """Play ``games`` games, A as black in even-numbered games (0, 2, ...) and white in odd ones."""
    if isinstance(games, bool) or not isinstance(games, int) or games < 0:
        raise ValueError(f"games={games!r}: give a non-negative number of games")
    names = ["", ""]
    colours: list[int] = []
    rewards: list[int] = []
    records: list[GameRecord] = []
    for index, game_seed in enumerate(np.random.SeedSequence(seed).spawn(games)):
        seed_a, seed_b = game_seed.spawn(2)
        a = policy_a_factory(np.random.default_rng(seed_a))
        b = policy_b_factory(np.random.default_rng(seed_b))
        names = [policy_name(a), policy_name(b)]
        a_colour = BLACK if index % 2 == 0 else WHITE
        black, white = (a, b) if a_colour == BLACK else (b, a)
        record = play_game(env.rules, env.condition, black, white)
        colours.append(a_colour)
        rewards.append(record.reward(a_colour))
        records.append(record.without_trajectory())
    return MatchResult(
        env_id=env.id,
        env_name=env.name,
        seed=seed,
        policy_a=names[0],
        policy_b=names[1],
        a_colours=tuple(colours),
        a_rewards=tuple(rewards),
        records=tuple(records),
    )
