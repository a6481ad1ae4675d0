"""The episode memory a model agent is shown: its finished games, recent ones in full and all by rho bin.

Data only (frozen dataclasses); :mod:`harness.prompting.renderer` fits a memory to a token
budget and renders it (``prompts/memory.j2``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from fractions import Fraction

from engine.layout import Layout
from engine.protocol.record import GameRecord
from engine.state import BLACK, COLOUR_NAMES

DEFAULT_BINS = 10
DEFAULT_MAX_RECENT = 20


@dataclass(frozen=True)
class GameSummary:
    """One finished game from the agent's side: its colour and the final own/opponent/empty counts."""

    index: int
    colour: int
    own: int
    opp: int
    empty: int
    reward: int

    def __post_init__(self) -> None:
        if self.colour not in (0, 1):
            raise ValueError(f"colour={self.colour!r}: 0 (black) or 1 (white)")
        if self.reward not in (-1, 0, 1):
            raise ValueError(f"reward={self.reward!r}: one of -1, 0, +1")
        if min(self.own, self.opp, self.empty) < 0:
            raise ValueError(f"disc counts must be >= 0, got own={self.own}, opp={self.opp}, empty={self.empty}")

    @property
    def rho(self) -> Fraction:
        """own / (own + opponent), exactly; 0 when the board holds no discs (as GameRecord does)."""
        total = self.own + self.opp
        return Fraction(self.own, total) if total else Fraction(0)

    @property
    def rho_value(self) -> float:
        """``float(rho)``: the correctly rounded quotient (as ``float(Fraction)`` gives), without a Fraction."""
        total = self.own + self.opp
        return self.own / total if total else 0.0

    def rho_slot(self, bins: int) -> int:
        """The rho bin of this game among ``bins`` equal bins over [0, 1] (rho = 1 in the last), in integers."""
        total = self.own + self.opp
        return min(self.own * bins // total, bins - 1) if total else 0

    @property
    def colour_name(self) -> str:
        return COLOUR_NAMES[self.colour]

    @classmethod
    def from_record(cls, index: int, record: GameRecord, colour: int, layout: Layout) -> GameSummary:
        """The summary of ``record`` for the agent that played ``colour``."""
        own, opp = (record.black, record.white) if colour == BLACK else (record.white, record.black)
        empty = layout.playable_mask.bit_count() - record.black - record.white
        return cls(index, colour, own, opp, empty, record.reward(colour))


@dataclass(frozen=True)
class RhoBin:
    """Outcomes of the games whose rho fell in [low, high) (the last bin includes 1)."""

    low: float
    high: float
    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses


@dataclass(frozen=True)
class EpisodeMemory:
    """What the agent has seen so far: every finished game's summary, in play order. Immutable.

    The rho bins are computed once per memory and carried forward by :meth:`add`
    (one game updates one bin), so a long memory costs no more per move than a short one.
    """

    games: tuple[GameSummary, ...] = ()
    _bins: dict[int, tuple[RhoBin, ...]] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "games", tuple(self.games))

    def add(self, summary: GameSummary) -> EpisodeMemory:
        """A new memory with ``summary`` appended."""
        longer = EpisodeMemory(self.games + (summary,))
        for bins, old in self._bins.items():
            slot = summary.rho_slot(bins)
            counted = replace(old[slot], **{_OUTCOME_FIELD[summary.reward]: getattr(old[slot], _OUTCOME_FIELD[summary.reward]) + 1})
            longer._bins[bins] = old[:slot] + (counted,) + old[slot + 1 :]
        return longer

    def recent(self, n: int) -> tuple[GameSummary, ...]:
        """The last ``n`` games, oldest first."""
        if n < 0:
            raise ValueError(f"recent(n={n}): n must be >= 0")
        return self.games[len(self.games) - n :] if n else ()

    def rho_bins(self, bins: int = DEFAULT_BINS) -> tuple[RhoBin, ...]:
        """Win/draw/loss counts in ``bins`` equal rho bins over [0, 1]; they add up to len(games)."""
        if bins < 1:
            raise ValueError(f"bins={bins}: give at least 1")
        cached = self._bins.get(bins)
        if cached is None:
            counts = [[0, 0, 0] for _ in range(bins)]
            for game in self.games:
                counts[game.rho_slot(bins)][1 - game.reward] += 1  # reward +1 -> wins, 0 -> draws, -1 -> losses
            cached = self._bins[bins] = tuple(RhoBin(i / bins, (i + 1) / bins, *c) for i, c in enumerate(counts))
        return cached

    def totals(self) -> tuple[int, int, int]:
        """(wins, draws, losses) over all games."""
        (everything,) = self.rho_bins(1)
        return (everything.wins, everything.draws, everything.losses)

    def view(self, recent: int = DEFAULT_MAX_RECENT, bins: int = DEFAULT_BINS) -> MemoryView:
        """What ``memory.j2`` shows: the summary and the last ``recent`` games."""
        shown = self.recent(min(recent, len(self.games)))
        wins, draws, losses = self.totals()
        return MemoryView(
            games=len(self.games),
            wins=wins,
            draws=draws,
            losses=losses,
            bins=self.rho_bins(bins),
            recent=shown,
            omitted=len(self.games) - len(shown),
        )


_OUTCOME_FIELD = {1: "wins", 0: "draws", -1: "losses"}


@dataclass(frozen=True)
class MemoryView:
    """The context of ``memory.j2``."""

    games: int
    wins: int
    draws: int
    losses: int
    bins: tuple[RhoBin, ...]
    recent: tuple[GameSummary, ...] = field(default=())
    omitted: int = 0


def summaries(records: Iterable[tuple[GameRecord, int]], layout: Layout, start: int = 1) -> EpisodeMemory:
    """An EpisodeMemory from (record, colour the agent played) pairs, numbered from ``start``."""
    return EpisodeMemory(tuple(GameSummary.from_record(start + i, rec, col, layout) for i, (rec, col) in enumerate(records)))
