"""The referee's side of a model agent: its process, its scored games, its records, its evaluation moves.

:class:`ModelSession` spawns :func:`~harness.referee.model_process.model_agent_main`
and is the only way the run hears from it. During adaptation (:meth:`adapt`) it
answers games through a :class:`~harness.referee.referee.Referee` (which holds
the condition and the ledger) and hands each record the agent sends to the run's
:class:`RunSinks`, checked first: a game is written as the referee scored it, with
the agent's own word only for its failure counts. During evaluation the run plays
each game here, with the opponent on this side; :meth:`decider` asks the agent
process for the model's move (many games at once: a reader on the event loop
routes each answer to its game), and :meth:`report` collects a finished game's
calls before the run writes the game.

What the agent process cannot do: see the condition (it is never sent), play past
the budget (the referee refuses), have a game written that the referee did not
score, or write a record of a kind the protocol does not have (a
:class:`~harness.referee.wire.ProtocolViolation` stops the run).
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.environments import Environment
from engine.protocol.arena import Ledger
from engine.protocol.belief import Belief
from engine.protocol.observation import Observation
from engine.protocol.record import GameRecord
from harness.models.cache import CachedFailure, ResponseCache, split_link
from harness.models.errors import BudgetCapReached, EndpointDown
from harness.models.messages import ModelResponse
from harness.play.decisions import Attempt, FailureCounts, FailureKind, MoveDecision
from harness.prompting.strategist_agent import Strategy
from harness.referee.isolation import agent_isolation, start_agent
from harness.referee.model_process import ModelJob, RunInterrupted, model_agent_main
from harness.referee.referee import Referee
from harness.referee.session import finish, receive
from harness.referee.walls import send_signal
from harness.referee.wire import ProtocolViolation, Wire, int_field

MAX_INDEX = 10**7
_GONE = "the model agent's process exited with code {code} (a crash, os._exit, or killed; see its stderr above)"


class AgentStopped(RuntimeError):
    """The agent process stopped for a reason other than a cost cap or a dead endpoint (its error, named)."""


@dataclass(frozen=True)
class RunSinks:
    """Where the run writes what the agent process reports (every argument already checked)."""

    call: Callable[[dict[str, Any]], None]
    game: Callable[[int, GameRecord, int | None, FailureCounts], None]  # index, the referee's record, who forfeited, failures
    belief: Callable[[int, Belief | None, str | None], None]
    strategy: Callable[[int, Strategy, str | None, bool], None]
    cache_put: Callable[[str, ModelResponse | CachedFailure], None]


def cache_records(path: Path) -> tuple[dict[str, Any], ...]:
    """The response cache file's records in file order, after :class:`ResponseCache` has checked its chain."""
    if not path.exists():
        return ()
    ResponseCache(path)  # verifies the hash chain and cuts a torn last line, or raises naming the line
    return tuple(json.loads(split_link(line)[1]) for line in path.read_bytes().split(b"\n") if line.strip())


def stop_error(stop: Any) -> Exception:
    """The exception an agent process's ``stop`` field stands for (a cost cap, a dead endpoint, an error)."""
    if not isinstance(stop, dict):
        return ProtocolViolation(f"a stop must be a JSON object, got {str(stop)[:80]}")
    error = str(stop.get("error", ""))[:2000]
    if stop.get("kind") == "cap":
        return BudgetCapReached(error)
    if stop.get("kind") == "interrupted":
        return RunInterrupted(error)
    if stop.get("kind") == "down":
        status = stop.get("status_code")
        return EndpointDown(
            str(stop.get("endpoint", "?")),
            str(stop.get("cause", error)),
            kind=str(stop.get("error_kind", "?")),
            status_code=status if isinstance(status, int) else None,
        )
    return AgentStopped(f"the model agent's process failed: {error}")


class ModelSession:
    """One model agent's process and its referee; see the module docstring."""

    def __init__(self, env: Environment, job: ModelJob, sinks: RunSinks) -> None:
        self.referee = Referee(env, job.budget, Ledger(layout=env.layout.name, budget=job.budget, records=job.records))
        self._sinks = sinks
        self._next_game = len(job.records)  # the next adaptation game the agent may report
        self._moves: dict[int, asyncio.Future[Any]] = {}  # game -> its open move request
        self._reports: dict[int, asyncio.Future[Any]] = {}  # game -> its open report request
        self._broken: Exception | None = None
        self.agent_report: dict[str, Any] = {}  # what the agent said about itself after adapting (untrusted, JSON)
        ours, self._process = start_agent(
            model_agent_main,
            (job,),
            network=True,
            outside=bool(job.plugins),
            context=multiprocessing.get_context("spawn"),
            files=model_files(job.recipe),
            outside_walls=OWN_SANDBOX if starts_a_sandbox(job.recipe) else None,
        )
        self.isolation = {"mode": "not isolated", "reason": OWN_SANDBOX} if starts_a_sandbox(job.recipe) else agent_isolation()
        self._wire = Wire(ours)  # only the agent process holds the other end: its exit ends our reads

    # ------------------------------------------------------------------ adaptation

    def adapt(self) -> None:
        """Answer and record until the agent has adapted; raises what stopped it early (:func:`stop_error`)."""
        while True:
            message = self._recv()
            op = message["op"]
            if op in ("game", "over_budget", "grant"):
                self._wire.send(**self.referee.answer(message))
            elif op == "adapted":
                report = message.get("report")
                self.agent_report = report if isinstance(report, dict) else {}
                self._write_unreported_games()
                if message.get("stop") is not None:
                    raise stop_error(message["stop"])
                return
            else:
                self._record(message)

    def _record(self, message: dict[str, Any]) -> None:
        op = message["op"]
        if op == "call":
            fields = message.get("fields")
            if not isinstance(fields, dict):
                raise ProtocolViolation("op 'call': field 'fields' must be a JSON object")
            self._sinks.call(fields)  # the writer validates the call entry
        elif op == "cache_put":
            key = message.get("key")
            if not isinstance(key, str):
                raise ProtocolViolation("op 'cache_put': field 'key' must be a string")
            entry = (
                CachedFailure.model_validate(message["failure"])
                if "failure" in message
                else ModelResponse.model_validate(message.get("response"))
            )
            self._sinks.cache_put(key, entry)
        elif op == "adapt_game":
            self._adapt_game(int_field(message, "index"), FailureCounts.model_validate(message.get("failures") or {}))
        elif op == "belief":
            belief = message.get("belief")
            error = message.get("error")
            self._sinks.belief(
                int_field(message, "checkpoint"),
                Belief.model_validate(belief) if belief is not None else None,
                None if error is None else str(error)[:2000],
            )
        elif op == "strategy":
            error = message.get("error")
            self._sinks.strategy(
                int_field(message, "batch_start"),
                Strategy.model_validate(message.get("strategy")),
                None if error is None else str(error)[:2000],
                bool(message.get("new")),
            )
        else:
            raise ProtocolViolation(f"op {op!r} is not a message of a model agent's process")

    def _adapt_game(self, index: int, failures: FailureCounts) -> None:
        if index != self._next_game or index >= self.referee.games_played:
            raise ProtocolViolation(
                f"op 'adapt_game': game {index} is not the next game the referee scored "
                f"(next: {self._next_game}, scored: {self.referee.games_played})"
            )
        self._sinks.game(index, self.referee.ledger.records[index], self.referee.forfeits.get(index), failures)
        self._next_game += 1

    def _write_unreported_games(self) -> None:
        """A game the referee scored is written even if the agent never reported it (its failure counts unknown: zero)."""
        while self._next_game < self.referee.games_played:
            self._adapt_game(self._next_game, FailureCounts())

    # ------------------------------------------------------------------ evaluation

    def start_evaluation(self) -> None:
        """Route the agent process's messages on the running event loop (call from inside it, after :meth:`adapt`)."""
        asyncio.get_running_loop().add_reader(self._wire.fileno(), self._readable)

    def decider(self, number: int) -> Callable[[Observation], Any]:
        """The model's moves in evaluation game ``number``, asked of the agent process."""

        async def decide(observation: Observation) -> MoveDecision:
            state = observation.state
            reply = await self._ask(
                self._moves, number, "act", state=[state.black, state.white, state.to_move, state.placed_black, state.placed_white]
            )
            return _decision(reply)

        return decide

    async def report(self, number: int, plies: list[int]) -> None:
        """Have the agent process send game ``number``'s calls (its decisions were at ``plies``); returns once written."""
        await self._ask(self._reports, number, "report", plies=plies)

    async def _ask(self, pending: dict[int, Any], number: int, op: str, **fields: Any) -> Any:
        if self._broken is not None:
            raise self._broken
        if number in pending or not 0 <= number < MAX_INDEX:
            raise RuntimeError(f"evaluation game {number}: a request is already open")
        future = pending[number] = asyncio.get_running_loop().create_future()
        self._wire.send(op, game=number, **fields)
        try:
            return await future
        finally:
            pending.pop(number, None)

    def _readable(self) -> None:
        try:
            while self._broken is None and self._wire.poll():
                self._route(self._recv())
        except Exception as failure:  # noqa: BLE001 - every open request fails with it; the run stops
            self._break(failure)

    def _route(self, message: dict[str, Any]) -> None:
        op = message["op"]
        if op not in ("move", "act_failed", "reported"):
            self._record(message)
            return
        number = int_field(message, "game")
        pending = self._reports if op == "reported" else self._moves
        future = pending.get(number)
        if future is None or future.done():
            raise ProtocolViolation(f"op {op!r} for evaluation game {number}, which asked nothing")
        if op == "act_failed":
            future.set_exception(stop_error(message.get("stop")))
        else:
            future.set_result(message if op == "move" else None)

    def _break(self, failure: Exception) -> None:
        self._broken = failure
        asyncio.get_running_loop().remove_reader(self._wire.fileno())
        for future in (*self._moves.values(), *self._reports.values()):
            if not future.done():
                future.set_exception(failure)

    def stop_evaluation(self) -> None:
        if self._broken is None:
            asyncio.get_running_loop().remove_reader(self._wire.fileno())

    # ------------------------------------------------------------------ life

    def _recv(self) -> dict[str, Any]:
        return receive(self._wire, self._process, _GONE)

    def interrupt(self) -> None:
        """Pass the operator's interrupt on: the agent process starts no new model call or game (see model_process)."""
        send_signal(self._process, signal.SIGINT)

    def kill(self) -> None:
        """End the agent process at once (a second interrupt)."""
        if self._process.is_alive():
            self._process.kill()

    def close(self) -> None:
        """Tell the agent process to finish and wait for it (ended by force after a few seconds).

        After a clean stop (a cap, an interrupt) nothing is left unread: each game waited for its
        answer, and the agent process sends a call's cache entry before the answer it decided.
        """
        finish(self._wire, self._process)


def _decision(reply: dict[str, Any]) -> MoveDecision:
    """The agent's decision as the game loop needs it: the move (verified there), forfeit, failures by attempt."""
    move, kinds = reply.get("move"), reply.get("kinds")
    if move is not None and (isinstance(move, bool) or not isinstance(move, int)):
        raise ProtocolViolation(f"op 'move': field 'move' must be an integer or null, got {move!r}")
    if not isinstance(kinds, list) or len(kinds) > 1000:
        raise ProtocolViolation("op 'move': field 'kinds' must be a list of failure kinds (null for a good attempt)")
    known = {kind.value for kind in FailureKind}
    if any(kind is not None and kind not in known for kind in kinds):
        raise ProtocolViolation(f"op 'move': failure kinds must be among {sorted(known)} or null, got {kinds[:5]}")
    attempts = [Attempt((), None, None, None, "call_failed" if kind else "legal", FailureKind(kind) if kind else None) for kind in kinds]
    forfeited = bool(reply.get("forfeited"))
    return MoveDecision(None if forfeited else move, forfeited, attempts, bool(reply.get("fallback_used")))


def model_files(recipe: Any) -> tuple[str, ...]:
    """Host files the model agent's process reads: a scripted model's replies (``mock/script:FILE``)."""
    model = str(getattr(recipe, "model", ""))
    return (model.removeprefix("mock/script:"),) if model.startswith("mock/script:") else ()


OWN_SANDBOX = (
    "the cwm agent starts its generated code's sandbox (bubblewrap as root), which cannot start inside the walls; "
    "its programs run behind that sandbox's walls"
)


def starts_a_sandbox(recipe: Any) -> bool:
    """Whether the model agent starts the generated-code sandbox itself (cwm, sandboxed): its process then runs outside
    the agent walls (it needs root to start bubblewrap), its programs inside the sandbox's."""
    cwm = getattr(recipe, "cwm", None)
    return cwm is not None and not getattr(cwm, "unsandboxed", False)
