"""The agent process of a model agent: its model client, its adaptation, and its moves in evaluation games.

:func:`model_agent_main` is the whole life of the process that runs ``llm-policy``
or ``llm-strategist`` for ``arena run``. It receives a :class:`ModelJob`: the
public rules, the budget, the games already on record (a resumed run), the
response cache's records, and a recipe that builds the agent and its model client.
No environment id, name, condition or run directory reaches it. It then

- adapts through a :class:`~harness.referee.remote_arena.RemoteArena`: each game
  is played here and scored by the referee, one message per game;
- sends everything the run records as messages: each model call (``call``), each
  adaptation game's failure counts (``adapt_game``; the game itself is the one the
  referee scored), beliefs, strategies, new cache entries (``cache_put``);
- after adapting (``adapted``, with the reason if a cost cap or a dead endpoint
  stopped it), answers evaluation moves: ``act`` requests for many games at once,
  each game decided by its own decider of the frozen agent, concurrently, and
  ``report`` requests that send a finished game's calls, until ``finish``.

Interrupts: the referee's side passes the operator's first Ctrl-C (or SIGTERM) on as a
SIGINT (a terminal's Ctrl-C reaches this process too). From then on no model call and
no adaptation game starts here (:class:`RunInterrupted`, reported as a stop of kind
``interrupted``); calls already under way finish and are recorded as usual.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from agents.base import AgentContext
from engine.protocol.arena import Ledger
from engine.protocol.observation import observe
from engine.protocol.record import GameRecord
from engine.rules import Rules
from engine.state import State
from harness.models.cache import CachedFailure, ResponseCache
from harness.models.errors import BudgetCapReached, EndpointDown
from harness.models.messages import ModelResponse
from harness.play.game import PlyDecision
from harness.referee.agent_process import load_plugins
from harness.referee.remote_arena import RemoteArena
from harness.referee.wire import AgentProcessGone, Wire, int_field, int_list
from harness.registry.specs import become_agent_process

_interrupted = {"on": False}  # set by this process's SIGINT handler (see the module docstring)


class RunInterrupted(RuntimeError):
    """The operator interrupted the run (Ctrl-C, SIGTERM): no new game or model call starts."""


def interrupted() -> bool:
    """Whether this process was interrupted (:func:`model_agent_main`'s SIGINT handler)."""
    return _interrupted["on"]


def raise_if_interrupted() -> None:
    if _interrupted["on"]:
        raise RunInterrupted("interrupted: no new model call or game is started")


@dataclass(frozen=True)
class ModelSinks:
    """Where the agent reports what the run records (each sends a message to the referee's side)."""

    on_call: Callable[[dict[str, Any]], None]
    on_game: Callable[[str, int, Any, int], None]
    on_belief: Callable[[int, Any, str | None], None]
    on_strategy: Callable[[int, Any, str | None, bool], None]


class ModelRecipe(Protocol):
    """Builds the model agent (and its model client, with ``cache``) in the agent process; picklable."""

    def __call__(self, context: AgentContext, sinks: ModelSinks, cache: ResponseCache) -> Any: ...


@dataclass(frozen=True)
class ModelJob:
    """What a model agent's process is given: public information and the recipe, never K or the run's location."""

    rules: Rules
    budget: int
    recipe: ModelRecipe
    records: tuple[GameRecord, ...] = ()  # adaptation games already on record (a resumed run)
    cache: tuple[dict[str, Any], ...] = ()  # the response cache's records, in file order
    plugins: tuple[str, ...] = ()


class ForwardedCache(ResponseCache):
    """The run's response cache as the agent process holds it: filled from the job, new entries sent to be written."""

    def __init__(self, wire: Wire, records: tuple[dict[str, Any], ...]) -> None:
        super().__init__(None)
        for record in records:
            response = (
                CachedFailure.model_validate(record["failure"]) if "failure" in record else ModelResponse.model_validate(record["response"])
            )
            super().put(record["key"], response)
        self._wire = wire

    def lookup(self, key: str, occurrence: int = 0) -> ModelResponse | CachedFailure | None:
        """The cached answer; once the process is interrupted, :class:`RunInterrupted` (every call asks here first)."""
        raise_if_interrupted()
        return super().lookup(key, occurrence)

    def put(self, key: str, response: ModelResponse | CachedFailure) -> None:
        super().put(key, response)
        field = "failure" if isinstance(response, CachedFailure) else "response"
        self._wire.send("cache_put", key=key, **{field: response.model_dump(mode="json")})


def model_agent_main(connection: Any, job: ModelJob) -> None:
    """The agent process: adapt, then answer evaluation moves until the referee says ``finish``."""
    signal.signal(signal.SIGINT, _on_interrupt)  # stop starting calls and games; the parent ends this process
    sys.argv = sys.argv[:1]  # spawn copies the parent's command line, which names the environment
    become_agent_process()  # this process imports the plugins; the referee's never do
    wire = Wire(connection)
    try:
        asyncio.run(_life(wire, job))
    except AgentProcessGone:
        pass
    finally:
        wire.close()


def _on_interrupt(signum: int, frame: Any) -> None:
    _interrupted["on"] = True


class StoppableArena(RemoteArena):
    """The remote arena, refusing to start a game once the process is interrupted."""

    def play(self, black_policy: Any, white_policy: Any) -> GameRecord:
        raise_if_interrupted()
        return super().play(black_policy, white_policy)

    async def play_verified(self, decide_black: Any, decide_white: Any, names: tuple[str, str] | None = None) -> Any:
        raise_if_interrupted()
        return await super().play_verified(decide_black, decide_white, names)


async def _life(wire: Wire, job: ModelJob) -> None:
    load_plugins(job.plugins)
    agent = job.recipe(AgentContext(job.rules), _sinks(wire), ForwardedCache(wire, job.cache))
    arena = StoppableArena(wire, job.rules, Ledger(layout=job.rules.layout.name, budget=job.budget, records=job.records))
    stop = None
    try:
        await agent.adapt_async(arena)
        agent.freeze()
    except AgentProcessGone:
        raise
    except Exception as failure:  # noqa: BLE001 - reported: the referee's side stops the run, naming the cause
        stop = stop_fields(failure)
    wire.send("adapted", stop=stop, report=agent_report(agent))
    try:
        if stop is None:
            await MoveServer(wire, agent, job.rules).serve()
        else:
            wire.recv("finish")
    finally:
        close = getattr(agent, "close", None)
        if callable(close):
            close()  # e.g. the cwm agent's sandbox worker


def agent_report(agent: Any) -> dict[str, Any]:
    """What the agent says about itself after adapting, as JSON (cwm: its counts, refinement steps and belief)."""
    report: dict[str, Any] = {}
    try:
        if callable(getattr(agent, "counts", None)):
            report["counts"] = agent.counts()
        if isinstance(getattr(agent, "steps", None), list):
            report["steps"] = agent.steps
        if callable(getattr(agent, "belief", None)):
            report["belief"] = agent.belief().model_dump(mode="json")
        return dict(json.loads(json.dumps(report, default=str)))
    except Exception as error:  # noqa: BLE001 - a broken report is a note, the run stands
        return {"error": f"the agent's report failed: {type(error).__name__}: {error}"[:2000]}


def stop_fields(failure: BaseException) -> dict[str, Any]:
    """Why the agent stopped, as a message field (see :func:`harness.referee.model_session.stop_error`)."""
    if isinstance(failure, BudgetCapReached):
        return {"kind": "cap", "error": str(failure)}
    if isinstance(failure, RunInterrupted):
        return {"kind": "interrupted", "error": str(failure)}
    if isinstance(failure, EndpointDown):
        return {
            "kind": "down",
            "endpoint": failure.endpoint,
            "cause": failure.cause,
            "error_kind": failure.kind,
            "status_code": failure.status_code,
            "error": str(failure),
        }
    return {"kind": "error", "error": f"{type(failure).__name__}: {failure}"[:2000]}


def _sinks(wire: Wire) -> ModelSinks:
    def on_game(phase: str, index: int, game: Any, colour: int) -> None:
        wire.send("adapt_game", index=index, failures=game.failure_counts.model_dump())

    def on_belief(checkpoint: int, belief: Any, error: str | None) -> None:
        wire.send("belief", checkpoint=checkpoint, belief=belief.model_dump(mode="json") if belief else None, error=error)

    def on_strategy(batch_start: int, strategy: Any, error: str | None, new: bool) -> None:
        wire.send("strategy", batch_start=batch_start, strategy=strategy.model_dump(mode="json"), error=error, new=new)

    return ModelSinks(
        on_call=lambda fields: wire.send("call", fields=fields), on_game=on_game, on_belief=on_belief, on_strategy=on_strategy
    )


class MoveServer:
    """The frozen agent's evaluation moves: many games at once, each with its own decider, answered as they are decided."""

    def __init__(self, wire: Wire, agent: Any, rules: Rules) -> None:
        self._wire, self._agent, self._rules = wire, agent, rules
        self._games: dict[int, tuple[Any, list[tuple[int, Any]]]] = {}  # game -> its decider, (mover, decision) in order
        self._tasks: set[asyncio.Task[None]] = set()

    async def serve(self) -> None:
        inbox: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        loop = asyncio.get_running_loop()

        def readable() -> None:
            try:
                while self._wire.poll():
                    inbox.put_nowait(self._wire.recv())
            except AgentProcessGone:
                inbox.put_nowait(None)

        loop.add_reader(self._wire.fileno(), readable)
        try:
            while (message := await inbox.get()) is not None and message["op"] != "finish":
                self._answer(message)
        finally:
            loop.remove_reader(self._wire.fileno())
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def _answer(self, message: dict[str, Any]) -> None:
        op, game = message["op"], int_field(message, "game")
        if op == "act":
            task = asyncio.ensure_future(self._act(game, int_list(message, "state", 5)))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        elif op == "report":  # the plies of the game's decisions, from the referee's game loop
            _, decided = self._games.pop(game, (None, []))
            plies = int_list(message, "plies", len(decided))
            decisions = [PlyDecision(ply, mover, decision) for ply, (mover, decision) in zip(plies, decided)]
            self._agent.report_calls("eval", game, decisions)  # one ``call`` message per attempt
            self._wire.send("reported", game=game)
        else:
            self._wire.send("act_failed", game=game, stop={"kind": "error", "error": f"unknown op {op!r}"})

    async def _act(self, game: int, fields: list[int]) -> None:
        if game not in self._games:
            self._games[game] = (self._agent.decider("eval", game), [])
        decide, decisions = self._games[game]
        state = State(*fields)
        try:
            decision = decide(observe(self._rules, state))
            if inspect.isawaitable(decision):  # a model call; a search (llm-strategist) answers at once
                decision = await decision
        except asyncio.CancelledError:
            raise
        except Exception as failure:  # noqa: BLE001 - the referee's side stops the run, naming the cause
            self._wire.send("act_failed", game=game, stop=stop_fields(failure))
            return
        decisions.append((state.to_move, decision))
        kinds = [attempt.failure_kind.value if attempt.failure_kind else None for attempt in decision.attempts]
        self._wire.send(
            "move", game=game, move=decision.move, forfeited=decision.forfeited, fallback_used=decision.fallback_used, kinds=kinds
        )
