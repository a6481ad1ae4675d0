"""The referee's side: the environment (with K), the budget ledger, and the answers to an agent process.

:class:`Referee` answers the adaptation messages of one agent process: ``game``
(the moves of a game the agent played locally: re-played through the engine,
charged to the ledger, answered with the record and its rewards), ``over_budget``
(the agent's own arena saw the budget spent: counted as a refused game) and
``grant`` (a simulator request from an agent that is not privileged: refused and
recorded). Nothing an agent process can send changes K, resets the ledger or
plays past the budget. :class:`RemotePolicy` is the agent as the referee's
evaluation games see it: each move is asked for over the pipe.
"""

from __future__ import annotations

from typing import Any

from engine.environments import Environment
from engine.protocol.arena import Ledger, PrivilegedUsage
from engine.protocol.observation import Observation
from engine.protocol.record import GameRecord, rho_fraction
from engine.rules import IllegalMoveError
from engine.state import BLACK, WHITE
from harness.play.grants import refusal_message
from harness.referee.wire import ProtocolViolation, Wire, int_field, int_list

MAX_NAME = 200


class Referee:
    """One environment's condition and budget ledger, answering one agent process."""

    def __init__(self, env: Environment, budget: int, ledger: Ledger | None = None) -> None:
        self._env = env
        self._ledger = ledger or Ledger(layout=env.layout.name, budget=budget)
        self.refused_games = 0
        self.forfeits: dict[int, int] = {}  # game index -> the colour that forfeited it (games counted from this session)
        self.rejected: list[str] = []  # games the agent submitted that the engine refused (never charged)

    @property
    def ledger(self) -> Ledger:
        return self._ledger

    @property
    def games_played(self) -> int:
        return self._ledger.games_played

    def answer(self, message: dict[str, Any]) -> dict[str, Any]:
        """The reply to one adaptation message (``game``, ``over_budget`` or ``grant``)."""
        op = message["op"]
        if op == "game":
            return self._game(message)
        if op == "over_budget":
            return self._refuse()
        if op == "grant":
            reason = str(message.get("reason", ""))[:MAX_NAME] or "(no reason given)"
            self._record_usage(refused=(*self._ledger.privileged.refused, reason))
            return {"op": "refused", "error": refusal_message(reason)}
        raise ProtocolViolation(f"op {op!r} is not an adaptation message (game, over_budget, grant, progress, adapted)")

    def record_privileged(self, usage: PrivilegedUsage) -> None:
        """Grants and calls a privileged agent made through its own simulator (it reports them when it stops)."""
        current = self._ledger.privileged
        self._record_usage(**usage.model_dump(exclude={"refused"}), refused=current.refused)

    def _game(self, message: dict[str, Any]) -> dict[str, Any]:
        if self.games_played >= self._ledger.budget:
            return self._refuse()
        rules = self._env.rules
        moves = int_list(message, "moves", 4 * rules.layout.cells + 4)
        forfeit = message.get("forfeit")
        if forfeit not in (None, BLACK, WHITE):
            raise ProtocolViolation(f"op 'game': forfeit must be null, 0 (black) or 1 (white), got {forfeit!r}")
        try:
            replayed = rules.replay(moves, allow_unfinished=forfeit is not None)
        except IllegalMoveError as error:
            self.rejected.append(str(error))
            return {"op": "rejected", "error": f"game not counted: {error}"}
        if forfeit is None:
            rewards = self._env.condition.rewards(replayed.black, replayed.white)
        else:
            rewards = (-1, 1) if forfeit == BLACK else (1, -1)
        record = GameRecord.model_construct(  # every field computed here from the verified replay
            layout=rules.layout.name,
            black_policy=_name(message, "black"),
            white_policy=_name(message, "white"),
            moves=tuple(moves),
            black=replayed.black,
            white=replayed.white,
            rho_black=float(rho_fraction(replayed.black, replayed.white)),
            rho_white=float(rho_fraction(replayed.white, replayed.black)),
            rewards=rewards,
            plies=len(moves),
        )
        if forfeit is not None:
            self.forfeits[self.games_played] = forfeit
        self._ledger = self._ledger.model_copy(update={"records": (*self._ledger.records, record)})
        return {
            "op": "scored",
            "black": replayed.black,
            "white": replayed.white,
            "rewards": list(rewards),
            "games_played": self.games_played,
        }

    def _refuse(self) -> dict[str, Any]:
        self.refused_games += 1
        return {
            "op": "refused",
            "error": f"budget of {self._ledger.budget} games used up: {self.games_played} games "
            f"played on {self._ledger.layout!r}; no further game is allowed",
        }

    def _record_usage(self, **update: Any) -> None:
        usage = self._ledger.privileged.model_copy(update=update)
        self._ledger = self._ledger.model_copy(update={"privileged": usage})


def _name(message: dict[str, Any], field: str) -> str:
    value = message.get(field)
    return value[:MAX_NAME] if isinstance(value, str) and value else "agent"


class RemotePolicy:
    """The agent in the agent process, as a policy: ``act`` asks it over the pipe (its frozen copy answers)."""

    def __init__(self, wire: Wire, name: str) -> None:
        self._wire = wire
        self.name = name

    def act(self, observation: Observation) -> int:
        state = observation.state
        self._wire.send("act", state=[state.black, state.white, state.to_move, state.placed_black, state.placed_white])
        reply = self._wire.recv("move", "act_error")
        if reply["op"] == "act_error":
            raise RuntimeError(f"the agent failed to choose a move: {str(reply.get('error'))[:500]}")
        return int_field(reply, "move")
