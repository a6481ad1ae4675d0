"""The record of one finished game, as the arena hands it to an agent and as ledgers store it."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from pydantic import BaseModel, ConfigDict, PrivateAttr

from engine.protocol.observation import Observation
from engine.state import BLACK

GAME_RECORD_SCHEMA = 1

Step = tuple[Observation, int]


def rho_fraction(own: int, opp: int) -> Fraction:
    """own / (own + opponent) discs as an exact fraction (0 when the board holds no disc of either)."""
    return Fraction(own, own + opp) if own + opp else Fraction(0)


class GameRecord(BaseModel):
    """The outcome of one game, JSON-serialisable (``model_dump_json``).

    ``moves`` holds every ply in order, forced passes (PASS = -1) included, and
    ``plies == len(moves)``. ``rho_black``/``rho_white`` are own/(own+opponent)
    computed exactly and shown as floats (``rho_exact`` gives the Fraction).
    ``rewards`` is (black, white) in {+1, 0, -1}. The trajectory (the
    observation and chosen move at each decision the policies were asked for;
    forced passes are not decisions) is kept on the object for learning agents
    and is not serialised. Equality compares the serialised fields only.
    """

    model_config = ConfigDict(frozen=True)

    schema_version: int = GAME_RECORD_SCHEMA
    layout: str
    black_policy: str
    white_policy: str
    moves: tuple[int, ...]
    black: int
    white: int
    rho_black: float
    rho_white: float
    rewards: tuple[int, int]
    plies: int

    _trajectory: tuple[Step, ...] = PrivateAttr(default=())

    @property
    def trajectory(self) -> tuple[Step, ...]:
        """(observation, move) at every decision, in play order (empty for a record loaded from JSON)."""
        return self._trajectory

    def rho_exact(self, colour: int) -> Fraction:
        """own / (own + opponent) discs of ``colour`` at the end, as an exact fraction."""
        own, opp = (self.black, self.white) if colour == BLACK else (self.white, self.black)
        return rho_fraction(own, opp)

    def reward(self, colour: int) -> int:
        """The terminal reward of ``colour``."""
        return self.rewards[colour]

    def without_trajectory(self) -> GameRecord:
        """A copy that keeps only the serialised fields (what a ledger stores)."""
        return GameRecord.model_validate(self.model_dump())

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, GameRecord) and self.model_dump() == other.model_dump()

    __hash__ = None  # type: ignore[assignment]
