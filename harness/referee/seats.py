"""The referee's side of the player processes: seats that have an agent built per game and ask it for moves.

A :class:`Seat` is one long-lived player process (:mod:`harness.referee.players`),
spawned at its first game and reused for every game after it: ``new_game`` has a
fresh agent built there from the public rules, its spec and its seed, and returns
a :class:`RemotePlayer`, a policy whose ``act`` asks that agent over the pipe. The
game loop that calls it (and the condition, K) stays in this process::

    with Seats() as seats:
        black = seats.a.new_game(env.rules, "greedy", game_seed, 0, "A, black", "a")
        white = seats.b.new_game(env.rules, "random", game_seed, 1, "B, white", "b")
        record = play_game(env.rules, env.condition, black, white)

Anything that goes wrong on a seat (the agent cannot be built, raises in ``act``,
returns something that is not a move index, breaks the protocol, or its process
exits) is an :class:`AgentFailed` naming the agent. After a broken protocol or a
dead process the seat's process is ended, and its next game starts a fresh one.
"""

from __future__ import annotations

import json
import multiprocessing
from functools import lru_cache
from typing import Any

from engine.protocol.observation import Observation
from engine.rules import Rules
from harness.referee.isolation import start_agent
from harness.referee.players import PlayerJob, player_main, rules_message
from harness.referee.wire import AgentProcessGone, ProtocolViolation, Wire, int_field
from harness.registry.plugins import plugin_sources
from harness.registry.specs import is_outside

JOIN_SECONDS = 10.0
MAX_CALLS_PER_MOVE = 100  # attempts of one move (re-asks and retries are far fewer)


@lru_cache(maxsize=64)
def _rules_text(rules: Rules) -> str:
    return json.dumps(rules_message(rules), separators=(",", ":"))


class AgentFailed(RuntimeError):
    """An agent in a player process failed: it could not be built, raised, broke the protocol, or its process exited."""

    def __init__(self, agent: str, who: str, reason: str, detail: str | None = None) -> None:
        self.agent, self.who, self.reason = agent, who, reason
        self.detail = reason if detail is None else detail  # the agent's own error text, when it sent one
        super().__init__(f"agent {agent!r} ({who}): {reason}" if who else f"agent {agent!r}: {reason}")


class Seat:
    """One player process, started at the first game; ``spin_s``: how long ``act`` polls awake for each answer."""

    def __init__(self, label: str, spin_s: float = 0.0, outside: bool | None = None) -> None:
        self.label = label
        self.spin_s = spin_s
        # it serves agents from outside the project (and imports them), or only the project's; None: outside when
        # this process knows plugins (a seat used on its own); Seats says which
        self.outside = bool(plugin_sources()) if outside is None else outside
        self._process: Any = None
        self._wire: Wire | None = None
        self.started = 0  # processes started so far (a failure ends one; the next game starts another)

    def new_game(
        self, rules: Rules, spec: str, seed: int, stream: int, who: str = "", side: str = "a", entropy: list[int] | None = None
    ) -> RemotePlayer:
        """Have a fresh agent built for a game's ``side`` ("a" or "b"); raises :class:`AgentFailed` if it cannot be.

        Its generator is ``default_rng(SeedSequence(seed).spawn(2)[stream])``, or ``default_rng(entropy)``."""
        self.start()
        fields: dict[str, Any] = {"entropy": entropy} if entropy is not None else {}
        reply = self.ask(
            spec,
            who,
            "new_game",
            rules=_rules_text(rules),
            spec=spec,
            seed=seed,
            stream=stream,
            side=side,
            expected=("ready", "game_error"),
            **fields,
        )
        if reply["op"] == "game_error":
            error = str(reply.get("error"))[:2000]
            raise AgentFailed(spec, who, f"cannot be built: {error}", error)
        return RemotePlayer(self, spec, who, side)

    def start(self) -> None:
        """Start the player process if it is not running (it imports while this process goes on)."""
        if self._process is None or not self._process.is_alive():
            self.stop()
            self._start()

    def _start(self) -> None:
        job = PlayerJob(plugin_sources() if self.outside else ())
        context = multiprocessing.get_context("spawn")
        ours, self._process = start_agent(player_main, (job,), network=False, outside=self.outside, context=context)
        self._wire = Wire(ours)  # only the player process holds the other end: its exit ends our reads
        self.started += 1

    def ask(self, agent: str, who: str, op: str, /, *, expected: tuple[str, ...], spin_s: float = 0.0, **fields: Any) -> dict[str, Any]:
        """Send one message and read the answer; any failure ends the process and is an :class:`AgentFailed`."""
        if self._wire is None:
            raise AgentFailed(agent, who, "its player process was stopped after an earlier failure")
        try:
            self._wire.send(op, **fields)
            return self._wire.recv(*expected, spin_s=spin_s)
        except AgentProcessGone:
            code = self._join()
            reason = f"its player process exited with code {code} (a crash, os._exit, or killed; see its stderr above)"
        except (BrokenPipeError, ConnectionResetError, EOFError):
            code = self._join()
            reason = f"its player process exited with code {code} (the pipe broke)"
        except ProtocolViolation as violation:
            self.stop()
            reason = f"broke the referee's protocol: {violation}"
        raise AgentFailed(agent, who, reason)

    def _join(self) -> int | None:
        process, self._process = self._process, None
        self._close_wire()
        if process is None:
            return None
        process.join(JOIN_SECONDS)
        if process.is_alive():
            process.kill()
            process.join()
        return process.exitcode

    def stop(self) -> None:
        """End the player process now (after a failure; the next game starts a fresh one)."""
        if self._process is not None and self._process.is_alive():
            self._process.kill()
        self._join()

    def close(self) -> None:
        """Tell the player process to finish and wait for it (ended by force after a few seconds)."""
        if self._wire is not None:
            try:
                self._wire.send("finish")
            except (BrokenPipeError, OSError):
                pass
        self._join()

    def _close_wire(self) -> None:
        if self._wire is not None:
            self._wire.close()
            self._wire = None


class RemotePlayer:
    """The agent of one game on a seat, as a policy: ``act`` asks it over the pipe."""

    def __init__(self, seat: Seat, spec: str, who: str, side: str = "a") -> None:
        self._seat = seat
        self.seat = seat
        self.name = spec
        self._who, self._side = who, side
        self.calls: list[dict[str, Any]] = []  # a model agent's calls, in order, as the player process reported them

    def act(self, observation: Observation) -> int:
        state = observation.state
        reply = self._seat.ask(
            self.name,
            self._who,
            "act",
            state=[state.black, state.white, state.to_move, state.placed_black, state.placed_white],
            legal=list(observation.legal_moves),
            side=self._side,
            expected=("move", "act_error"),
            spin_s=self._seat.spin_s,
        )
        if reply["op"] == "act_error":
            error = str(reply.get("error"))[:2000]
            raise AgentFailed(self.name, self._who, f"failed to choose a move: {error}", error)
        try:
            move = int_field(reply, "move")
            self.calls.extend(_calls(reply))
            return move
        except ProtocolViolation as violation:
            self._seat.stop()
            raise AgentFailed(self.name, self._who, f"broke the referee's protocol: {violation}") from None


def _calls(reply: dict[str, Any]) -> list[dict[str, Any]]:
    calls = reply.get("calls", [])
    if not isinstance(calls, list) or len(calls) > MAX_CALLS_PER_MOVE or not all(isinstance(c, dict) for c in calls):
        raise ProtocolViolation(f"op 'move': 'calls' must be a list of at most {MAX_CALLS_PER_MOVE} JSON objects")
    return calls


class Seats:
    """The seats of a game's sides, ``a`` and ``b``: two player processes, so the opponents never share one.

    ``shared=True``: one player process serves both sides (it keeps an agent per
    side). Measured about 1.4x the games/s of two processes on a busy 2-core
    machine (one process stays awake; two alternate), but an agent could then
    reach its opponent's object in the same process, so tournaments do not use it.
    """

    def __init__(self, spin_s: float = 0.0, shared: bool = False) -> None:
        self.a = Seat("a", spin_s, outside=False)
        self.b = self.a if shared else Seat("b", spin_s, outside=False)
        self._spin_s, self._shared = spin_s, shared
        self._outside: dict[str, Seat] = {}  # per side, started at the first outside agent's game

    def start(self) -> None:
        """Start both player processes now, so that they start up side by side."""
        self.a.start()
        self.b.start()

    def side(self, side: str) -> Seat:
        """The seat of side ``"a"`` or ``"b"`` for the project's agents."""
        return {"a": self.a, "b": self.b}[side]

    def for_spec(self, side: str, spec: str) -> Seat:
        """The seat that plays ``spec`` on ``side``: agents from outside the project (plugins, installed packages) get
        player processes of their own, so their code never runs in a process that plays one of the project's agents."""
        if not is_outside(spec):
            return self.side(side)
        key = "a" if self._shared else side
        if key not in self._outside:
            self._outside[key] = Seat(f"{key}-outside", self._spin_s, outside=True)
        return self._outside[key]

    def close(self) -> None:
        for seat in (self.a, self.b, *self._outside.values()):
            seat.close()

    def __enter__(self) -> Seats:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class OpponentSeats:
    """Player processes for opponents from outside the project in a referee's process (``arena run``'s evaluation):
    the referee never builds them itself. One seat per game under way; a seat goes back to the pool after its game."""

    def __init__(self) -> None:
        self._free: list[Seat] = []
        self._all: list[Seat] = []

    def player(self, rules: Rules, spec: str, entropy: list[int], who: str) -> RemotePlayer:
        """The opponent of one game, its generator ``default_rng(entropy)``; :meth:`release` it after the game."""
        seat = self._free.pop() if self._free else self._new()
        return seat.new_game(rules, spec, 0, 0, who, "a", entropy=entropy)

    def _new(self) -> Seat:
        seat = Seat(f"opponent-{len(self._all)}", outside=True)
        self._all.append(seat)
        return seat

    def release(self, player: RemotePlayer) -> None:
        self._free.append(player.seat)

    def close(self) -> None:
        for seat in self._all:
            seat.close()
