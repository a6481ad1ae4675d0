"""What an adapting agent knows of the budgeted arena: its interface, the ledger, budget exhaustion.

The harness implements the arena (:class:`harness.play.arena.Arena`); agents are
typed against :class:`AdaptationArena`, which has no way to reach the condition:
``play`` returns finished games whose rewards the arena computed.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, ConfigDict

from engine.layout import Layout
from engine.protocol.policy import Policy
from engine.protocol.record import GameRecord
from engine.rules import Rules

DEFAULT_BUDGET = 2000
LEDGER_SCHEMA = 1


class BudgetExhausted(RuntimeError):
    """The arena's game budget is used up; no further game is played."""


class PrivilegeRefused(PermissionError):
    """A simulator was asked for by an agent that is not configured as privileged; the request is recorded."""


class PrivilegedUsage(BaseModel):
    """Grants of the true simulator (their reasons), calls made through them by kind, and refused requests."""

    model_config = ConfigDict(frozen=True)

    grants: tuple[str, ...] = ()
    refused: tuple[str, ...] = ()  # reasons given by requests that were refused (a non-privileged agent asked)
    outcome_calls: int = 0
    rewards_calls: int = 0
    rollout_calls: int = 0
    table_calls: int = 0

    @property
    def uses(self) -> int:
        """All calls to any granted simulator."""
        return self.outcome_calls + self.rewards_calls + self.rollout_calls + self.table_calls

    @property
    def privileged(self) -> bool:
        """True once a simulator has been granted: results must then be labelled privileged."""
        return bool(self.grants)


class Ledger(BaseModel):
    """The budget ledger: completed games in order, the budget and privileged usage (JSON-serialisable).

    Immutable: the arena replaces its ledger with a new one after each game, so
    a ledger handed out is a snapshot that cannot be edited.
    """

    model_config = ConfigDict(frozen=True)

    schema_version: int = LEDGER_SCHEMA
    layout: str
    budget: int
    records: tuple[GameRecord, ...] = ()
    privileged: PrivilegedUsage = PrivilegedUsage()

    @property
    def games_played(self) -> int:
        return len(self.records)

    @property
    def remaining(self) -> int:
        return max(0, self.budget - self.games_played)


class AdaptationArena(Protocol):
    """The handle an agent adapts through: public rules, the ledger, and whole games until the budget is spent."""

    @property
    def rules(self) -> Rules: ...

    @property
    def layout(self) -> Layout: ...

    @property
    def budget(self) -> int: ...

    @property
    def games_played(self) -> int: ...

    @property
    def remaining(self) -> int: ...

    @property
    def ledger(self) -> Ledger: ...

    def play(self, black_policy: Policy, white_policy: Policy) -> GameRecord:
        """One whole game from the initial position; raises :class:`BudgetExhausted` after the budget."""
        ...
