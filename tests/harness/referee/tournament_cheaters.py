"""Agents for tournament and match tests, loaded as a plugin: one that looks for K while it plays, one that fails.

A tournament never calls ``adapt``: an agent is built and asked for moves. So
``cheat-play`` looks for K where a tournament agent can: in its constructor and in
``act`` it walks the call stack, scans every live object, reads its context, the
command line and the environment table, and writes what it found to
``$CHEAT_REPORT/cheat-play-<pid>-<n>.json`` after every move (JSON; nothing that
depends on the game's moves or seed, so two runs that differ only in K write the
same findings unless K, or the environment, was reachable).

``crash`` plays legal moves until it has ``colour`` (black or white) and at least
``after`` discs were placed, then fails as ``how`` says: ``exit`` (``os._exit(3)``),
``raise`` (a RuntimeError), ``wire`` (it writes a bad message into the referee's
pipe), ``type`` (it returns a string instead of a move index).
"""

from __future__ import annotations

import gc
import importlib.util
import itertools
import os
import sys
from pathlib import Path
from typing import Any

from agents.base import Agent, choose
from agents.spec import Param, register
from engine.condition import Condition
from engine.environments import Environment, reference_data
from engine.state import BLACK


def _helpers():
    """``cheaters.py`` beside this file, as a plain module (this file is loaded by path, with or without pytest)."""
    spec = importlib.util.spec_from_file_location("_tournament_cheaters_helpers", Path(__file__).with_name("cheaters.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


conditions_reachable, report, stack_locals, process_tag = (
    getattr(_helpers(), name) for name in ("conditions_reachable", "report", "stack_locals", "process_tag")
)

# The environment table as data (building its Condition objects would put them among the live objects scanned).
TABLE = reference_data()["conditions"]
LABELS = sorted({entry["label"] for entry in TABLE})  # "Majority", "Minority", ...
_instances = itertools.count()


def strings_reachable(roots: list[Any], limit: int = 100_000) -> list[str]:
    """Every string reachable from ``roots`` that names a condition (an env name such as 'Standard 8x8 / Minority')."""
    found, seen, stack = set(), set(), list(roots)
    while stack and len(seen) < limit:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, str):
            if any(label in obj for label in LABELS) and obj not in LABELS and len(obj) < 200:
                found.add(obj)
        elif isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend(obj)
        elif hasattr(obj, "__dict__") and not isinstance(obj, type) and type(obj).__module__ != "builtins":
            attributes = getattr(obj, "__dict__", None)  # some objects' __dict__ is not a dict
            if isinstance(attributes, dict):
                stack.extend(attributes.values())
    return sorted(found)


def _live_conditions() -> list[str]:
    return [repr(o) for o in gc.get_objects() if isinstance(o, (Condition, Environment))]


@register("cheat-play", "test cheater: looks for K from its constructor and act() in a tournament")
class CheatPlay(Agent):
    def __init__(self, context, rng) -> None:
        super().__init__(context, rng)
        self.report_name = f"cheat-play-{process_tag()}-{next(_instances)}"
        stack = stack_locals()
        self.findings: dict[str, Any] = {
            "grant": "none" if context.grant_simulator is None else "GRANTED",
            "context": conditions_reachable([context]),
            "stack_in_init": conditions_reachable(stack),
            "names_in_init": strings_reachable(stack),
            "gc_in_init": _live_conditions(),
            "argv": sys.argv[1:],
            "stack_in_act": [],
            "names_in_act": [],
            "gc_in_act": [],
        }

    def act(self, observation) -> int:
        found = self.findings
        if not found["stack_in_act"]:  # once per game: the scans are slow
            stack = stack_locals()
            found["stack_in_act"] = conditions_reachable(stack)[:3] or ["nothing"]
            found["names_in_act"] = strings_reachable(stack)
            found["gc_in_act"] = _live_conditions()
            found["observation"] = conditions_reachable([observation])
            found["table_candidates"] = sorted({str(entry["K"]) for entry in TABLE if entry["turns"] == observation.rules.turn_limit})
            report(self.report_name, found)
        return choose(self.rng, list(observation.legal_moves))


@register(
    "crash",
    "test agent: fails at its first move with the given colour after some discs are placed",
    params={
        "colour": Param(str, "white", "the colour it fails with", ("black", "white")),
        "after": Param(int, 4, "discs placed before it fails"),
        "how": Param(str, "exit", "how it fails", ("exit", "raise", "wire", "type")),
    },
)
class Crash(Agent):
    def __init__(self, context, rng, colour: str = "white", after: int = 4, how: str = "exit") -> None:
        super().__init__(context, rng)
        self.colour, self.after, self.how = colour, after, how

    def act(self, observation):
        colour = "black" if observation.colour == BLACK else "white"
        if colour == self.colour and observation.move_number >= self.after:
            if self.how == "exit":
                os._exit(3)
            if self.how == "raise":
                raise RuntimeError("boom")
            if self.how == "type":
                return "d3"
            for wire in [o for o in gc.get_objects() if type(o).__name__ == "Wire"]:
                wire.send("move", move="d3")  # a move the protocol does not allow: the referee stops this agent
        return choose(self.rng, list(observation.legal_moves))
