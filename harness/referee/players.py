"""The player process: a long-lived agent process that builds agents per game and answers their moves.

Tournaments and matches (:mod:`harness.tournaments`) play many short games; a
process per game would cost more than the games. So each tournament worker keeps
long-lived *player processes* (one per side, A and B: see
:class:`~harness.referee.seats.Seats`), and :func:`player_main` is a player
process's whole life. It is spawned with :class:`PlayerJob` (plugin sources only)
and then, over the JSON wire (:mod:`harness.referee.wire`), answers:

- ``new_game`` (``side``: "a" or "b", the agent it replaces; ``rules``: the layout
  and turn limit, the JSON text of :func:`rules_message`; ``spec``: the agent's
  spec; ``seed`` and ``stream``: the agent's generator is
  ``default_rng(SeedSequence(seed).spawn(2)[stream])``, the very generator an
  in-process game would give it) with ``ready``, or ``game_error`` when the agent
  cannot be built;
- ``act`` (``side``; ``state``: the five integers of a
  :class:`~engine.state.State`; ``legal``: its legal moves, as the referee
  computed them) with ``move``, or ``act_error`` when the agent raised or returned
  something that is not a move index (the referee verifies the move itself);
- ``finish``: the process ends (so does the end of the pipe).

The process never receives the condition (K), the environment id or its name:
only the public rules. The game loop, the verification of every move and the
rewards stay with the referee (:mod:`harness.referee.seats`).
"""

from __future__ import annotations

import json
import numbers
import signal
import sys
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from agents.base import AgentContext
from engine.layout import Layout
from engine.protocol.observation import observe
from engine.rules import Rules
from engine.state import State
from harness.referee.wire import AgentProcessGone, ProtocolViolation, Wire, int_field, int_list
from harness.registry.specs import become_agent_process, make_agent

MAX_SPEC = 1000
MAX_ERROR = 2000
MAX_MOVES = 4096  # more than the cells of the largest board
SIDES = ("a", "b")


@dataclass(frozen=True)
class PlayerJob:
    """What a player process is given when it starts: the plugin sources its registry needs, nothing else."""

    plugins: tuple[str, ...] = ()


def rules_message(rules: Rules) -> dict[str, Any]:
    """The public rules as JSON: the layout (size, obstacles, starting discs, name) and the turn limit."""
    layout = rules.layout
    return {
        "rows": layout.rows,
        "cols": layout.cols,
        "name": layout.name,
        "obstacles": sorted(map(list, layout.obstacles)),
        "black": sorted(map(list, layout.black)),
        "white": sorted(map(list, layout.white)),
        "turn_limit": rules.turn_limit,
        "turn_counting": rules.turn_counting,
    }


@lru_cache(maxsize=64)
def rules_from_text(text: str) -> Rules:
    """The rules :func:`rules_message` wrote (as JSON text; cached, so a layout's geometry is built once)."""
    data = json.loads(text)
    cells = {key: frozenset(tuple(cell) for cell in data[key]) for key in ("obstacles", "black", "white")}
    layout = Layout(data["rows"], data["cols"], cells["obstacles"], cells["black"], cells["white"], data["name"])
    return Rules(layout, data["turn_limit"], data["turn_counting"])


def player_main(connection: Any, job: PlayerJob) -> None:
    """The player process: serve ``new_game`` and ``act`` until ``finish`` or the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and ends this process
    sys.argv = sys.argv[:1]  # spawn copies the parent's command line, which may name the environment
    become_agent_process()  # this process imports the plugins; the referee's never do
    wire = Wire(connection)
    try:
        _load_plugins(job.plugins)
        _serve(wire)
    except AgentProcessGone:
        pass
    finally:
        wire.close()


def _serve(wire: Wire) -> None:
    seats = {side: _Seat() for side in SIDES}
    while (message := wire.recv("new_game", "act", "finish"))["op"] != "finish":
        seat = seats[_side(message)]
        if message["op"] == "new_game":
            error = seat.new_game(message)
            wire.send("ready") if error is None else wire.send("game_error", error=error[:MAX_ERROR])
        else:
            _answer_act(wire, seat, message)


def _side(message: dict[str, Any]) -> str:
    side = message.get("side")
    if side not in SIDES:
        raise ProtocolViolation(f"op {message.get('op')!r}: side must be one of {', '.join(SIDES)}, got {side!r}")
    return str(side)


def _answer_act(wire: Wire, seat: _Seat, message: dict[str, Any]) -> None:
    black, white, to_move, placed_black, placed_white = int_list(message, "state", 5)
    legal = int_list(message, "legal", MAX_MOVES)
    try:
        move = seat.act(State(black, white, to_move, placed_black, placed_white), legal)
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as failure:  # noqa: BLE001 - the referee names the agent and the game, and stops the run
        wire.send("act_error", error=f"{type(failure).__name__}: {failure}"[:MAX_ERROR])
        return
    calls = seat.take_calls()  # a model agent's calls for this move (recorded by the referee's side)
    wire.send("move", move=move, **({"calls": calls} if calls else {}))


class _Seat:
    """The agent of one side in the current game, and its rules."""

    def __init__(self) -> None:
        self._agent: Any = None
        self._rules: Rules | None = None
        self._calls: list[dict[str, Any]] = []  # model calls the agent reported since the last move was sent

    def new_game(self, message: dict[str, Any]) -> str | None:
        """Build the game's agent; the error text if it cannot be built."""
        self._agent = self._rules = None  # the last game's agent is gone, whatever happens next
        self._calls = []
        spec, rules = message.get("spec"), message.get("rules")
        if not isinstance(spec, str) or not spec or len(spec) > MAX_SPEC or not isinstance(rules, str):
            raise ProtocolViolation("op 'new_game' needs a string 'spec' and the rules as JSON text")
        seed, stream = int_field(message, "seed"), int_field(message, "stream")
        if seed < 0 or stream not in (0, 1):
            raise ProtocolViolation(f"op 'new_game': seed must be >= 0 and stream 0 or 1, got {seed}, {stream}")
        entropy = message.get("entropy")  # the generator's seed words, when the referee names them (arena run's opponents)
        if entropy is not None and (not isinstance(entropy, list) or len(entropy) > 8 or not all(_whole(w) for w in entropy)):
            raise ProtocolViolation("op 'new_game': 'entropy' must be a list of at most 8 whole numbers >= 0")
        try:
            game_rules = rules_from_text(rules)
            sequence = np.random.SeedSequence(seed).spawn(2)[stream] if entropy is None else entropy
            generator = np.random.default_rng(sequence)
            self._agent = make_agent(spec, AgentContext(game_rules, record_call=self._calls.append), generator)
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as failure:  # noqa: BLE001 - reported to the referee, which names the agent
            return f"{type(failure).__name__}: {failure}"
        self._rules = game_rules
        return None

    def take_calls(self) -> list[dict[str, Any]]:
        calls, self._calls[:] = list(self._calls), []
        return calls

    def act(self, state: State, legal: list[int]) -> int:
        if self._agent is None or self._rules is None:
            raise RuntimeError("no game: the referee must send new_game first")
        proposal = self._agent.act(observe(self._rules, state, legal))
        if isinstance(proposal, bool) or not isinstance(proposal, numbers.Integral):
            raise TypeError(
                f"act() returned {str(proposal)[:80]!r} of type {type(proposal).__name__}; "
                "it must return a flat move index (int, row * cols + col)"
            )
        return int(proposal)


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _load_plugins(sources: tuple[str, ...]) -> None:
    if sources:
        from harness.registry import plugins  # noqa: PLC0415 - only when the run names plugins

        plugins.load_plugins(sources)
