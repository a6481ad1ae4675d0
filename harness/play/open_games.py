"""Several adaptation games open at once (a wave), entered into the ledger in the order they started.

Both arenas (:class:`~harness.play.arena.Arena` in process, the agent process's
:class:`~harness.referee.remote_arena.RemoteArena`) hand each ``play_verified`` a
ticket when it starts: its place in the ledger. A game that finishes before an
earlier one waits for its turn, so the ledger's order (and each game's index) is the
order the games were started in, whatever order they end in. The budget counts the
open games: a game starts only while ``games played + games open < budget``.

A game that ends without being entered (an exception: an interrupt, a dead endpoint,
a game the referee rejected) makes every later open game end unentered too
(:class:`GameNotEntered`): a later game is never entered in an earlier one's place.
Once no game is open, play goes on as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

Turn = Callable[[], AbstractAsyncContextManager[None]]  # the context a finished game is entered in


class GameNotEntered(RuntimeError):
    """An open game was not entered because a game started before it was not finished."""


class OpenGames:
    """The tickets of the games under way; see the module docstring."""

    def __init__(self) -> None:
        self.open = 0
        self._next_ticket = 0  # the ticket the next game gets
        self._turn = 0  # the ticket whose game may be entered next
        self._broken = False  # a game was not entered: the later open ones are not either
        self._turns: asyncio.Condition | None = None

    @asynccontextmanager
    async def game(self, enter_allowed: Callable[[], None]) -> AsyncIterator[Turn]:
        """One game: yields ``turn``, an async context to enter the game in (entered when it exits cleanly).

        ``enter_allowed`` raises when no game may start (the budget, an interrupt); it sees ``open`` before this game.
        """
        enter_allowed()
        ticket, entered = self._next_ticket, False
        self._next_ticket += 1
        self.open += 1

        @asynccontextmanager
        async def turn() -> AsyncIterator[None]:
            nonlocal entered
            await self._wait_for(ticket)
            if self._broken:
                raise GameNotEntered(f"game {ticket} of the open games not entered: a game started before it did not finish")
            yield
            entered = True

        try:
            yield turn
        finally:
            await self._done(ticket, entered)

    async def _wait_for(self, ticket: int) -> None:
        if self._turn == ticket:
            return
        turns = self._condition()
        async with turns:
            await turns.wait_for(lambda: self._turn == ticket)

    async def _done(self, ticket: int, entered: bool) -> None:
        await self._wait_for(ticket)  # tickets end in order: a failed early game waits for nothing, later ones for it
        self._broken = self._broken or not entered
        self._turn += 1
        self.open -= 1
        if self.open == 0:
            self._broken = False  # the wave is over: the next games start afresh
        turns = self._condition()
        async with turns:
            turns.notify_all()

    def _condition(self) -> asyncio.Condition:
        if self._turns is None:
            self._turns = asyncio.Condition()
        return self._turns
