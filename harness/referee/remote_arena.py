"""The agent process's arena: games played locally, unscored, and sent to the referee for their rewards.

:class:`RemoteArena` implements :class:`~engine.protocol.arena.AdaptationArena`
without holding K: :meth:`play` runs the one game loop with no condition, sends
the moves (one message per game) and returns the record the referee scored, with
the local trajectory attached. Its ledger is a copy built from the referee's
answers; editing it changes nothing the referee counts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from engine.protocol.arena import BudgetExhausted, Ledger, PrivilegeRefused
from engine.protocol.policy import Policy
from engine.protocol.record import GameRecord, rho_fraction
from engine.rules import Rules
from harness.play.arena import LedgerView
from harness.play.game import Decide, PlyDecision, VerifiedGame, play_game_async, play_policies
from harness.play.open_games import OpenGames
from harness.referee.wire import ProtocolViolation, Wire

REPLY_SPIN_S = 0.002  # the referee answers a game in about 0.1 ms: wait for it awake


class GameRejected(RuntimeError):
    """The referee refused a submitted game (illegal or unfinished): it was not counted."""


class RemoteArena(LedgerView):
    """Whole games until the budget is spent, scored by the referee over ``wire``."""

    def __init__(self, wire: Wire, rules: Rules, ledger: Ledger, grant: Callable[[str], Any] | None = None) -> None:
        self._wire = wire
        self._rules = rules
        self._ledger = ledger
        self._grant = grant
        self._in_game = False
        self._open = OpenGames()  # play_verified games under way (a wave), submitted in the order they started

    def play(self, black_policy: Policy, white_policy: Policy) -> GameRecord:
        """Play one game locally and return it as the referee scored it; :class:`BudgetExhausted` past the budget."""
        self._start_game()
        try:
            game = play_policies(self._rules, None, black_policy, white_policy)
        finally:
            self._in_game = False
        return self._submit(game)

    def play_moves(self, moves: Sequence[int], name: str = "recorded") -> GameRecord:
        """A recorded game's moves sent as they are, not played here first: the referee re-plays them (rejecting an
        illegal or unfinished game), charges its ledger and scores them. For replaying a known game (a shared training's
        record); the result is the referee's, as for :meth:`play`, without a local trajectory."""
        self._start_game()
        self._in_game = False
        self._wire.send("game", moves=[int(move) for move in moves], black=name, white=name, forfeit=None)
        reply = self._reply()
        black, white, rewards = reply.get("black"), reply.get("white"), reply.get("rewards")
        if not (type(black) is int and type(white) is int and isinstance(rewards, list) and len(rewards) == 2):
            raise ProtocolViolation(f"the referee's answer to a recorded game is malformed: {reply}")
        record = GameRecord(
            layout=self._rules.layout.name,
            black_policy=name,
            white_policy=name,
            moves=tuple(moves),
            black=black,
            white=white,
            rho_black=float(rho_fraction(black, white)),
            rho_white=float(rho_fraction(white, black)),
            rewards=(int(rewards[0]), int(rewards[1])),
            plies=len(moves),
        )
        self._ledger = self._ledger.model_copy(update={"records": (*self._ledger.records, record)})
        return record

    async def play_verified(
        self, decide_black: Decide, decide_white: Decide, names: tuple[str, str] | None = None
    ) -> tuple[VerifiedGame, list[PlyDecision]]:
        """Like :meth:`play` with deciders that may await (model agents); several may be under way at once (a wave),
        each submitted when the games started before it have been (:mod:`harness.play.open_games`)."""
        async with self._open.game(self._check_start) as turn:
            game, decisions = await play_game_async(self._rules, None, decide_black, decide_white, names)
            async with turn():
                record = self._submit(game)
        return VerifiedGame(record, game.forfeit, game.failures), decisions

    def grant_simulator(self, reason: str) -> Any:
        """A privileged agent's simulator; anyone else's request is refused by the referee and recorded."""
        if self._grant is not None:
            return self._grant(reason)
        self._wire.send("grant", reason=str(reason)[:200])
        raise PrivilegeRefused(self._wire.recv("refused")["error"])

    def _start_game(self) -> None:
        if self._open.open:
            raise RuntimeError("Arena.play called while play_verified games are open: games are played one at a time")
        self._check_start()
        self._in_game = True

    def _check_start(self) -> None:
        if self._in_game:
            raise RuntimeError("Arena.play called from inside a game: games are played one at a time")
        if self.remaining - self._open.open <= 0:
            self._wire.send("over_budget")
            raise BudgetExhausted(self._wire.recv("refused")["error"])

    def _submit(self, game: VerifiedGame) -> GameRecord:
        local = game.record
        self._wire.send("game", moves=list(local.moves), black=local.black_policy, white=local.white_policy, forfeit=game.forfeit_by)
        reply = self._reply()
        scored = (reply.get("black"), reply.get("white"), reply.get("rewards"))
        if scored[:2] != (local.black, local.white) or not isinstance(scored[2], list) or len(scored[2]) != 2:
            raise ProtocolViolation(f"the referee scored {scored} for a game that ended {local.black}-{local.white}")
        stored = local.model_copy(update={"rewards": (int(scored[2][0]), int(scored[2][1]))})
        stored._trajectory = ()  # the ledger keeps the serialised fields only
        record = stored.model_copy()
        record._trajectory = local.trajectory
        self._ledger = self._ledger.model_copy(update={"records": (*self._ledger.records, stored)})
        return record

    def _reply(self) -> dict[str, Any]:
        """The referee's answer to a submitted game: scored, else :class:`BudgetExhausted` or :class:`GameRejected`."""
        reply = self._wire.recv("scored", "refused", "rejected", spin_s=REPLY_SPIN_S)
        if reply["op"] == "refused":
            raise BudgetExhausted(reply["error"])
        if reply["op"] == "rejected":
            raise GameRejected(reply["error"])
        return reply

    def __repr__(self) -> str:
        return f"RemoteArena(layout={self.layout.name!r}, budget={self.budget}, games_played={self.games_played})"
