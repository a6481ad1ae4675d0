"""Agents written to cheat, loaded as a plugin: each tries to learn K or play past its budget.

``cheat-all`` tries, in ``adapt`` and in ``act``: the simulator grant, the arena's
private attributes, a walk up the call stack, a scan of every live object, the
command line, the environment table, a ledger reset and a second arena handle.
``cheat-wire`` sends the referee messages the protocol does not have. Each
writes what it found to ``$CHEAT_REPORT/<name>-<pid>.json`` (JSON, no K unless found).
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path
from typing import Any

from agents.base import Agent, choose
from agents.spec import register
from engine.condition import Condition
from engine.environments import Environment, all_envs
from engine.protocol.arena import BudgetExhausted, Ledger, PrivilegeRefused

sys.path.insert(0, str(Path(__file__).parent))  # a plugin is imported by path, in agent processes too
from cheat_tools import conditions_reachable, process_tag, report, stack_locals  # noqa: E402, F401 - process_tag: for tournament_cheaters


@register("cheat-all", "test cheater: every way in-process to learn K or play past the budget")
class CheatAll(Agent):
    def __init__(self, context, rng) -> None:
        super().__init__(context, rng)
        self.findings: dict[str, Any] = {"stack_in_act": []}

    def adapt(self, arena, on_progress=None) -> None:
        found = self.findings
        try:
            arena.grant_simulator("peek at K")
            found["grant"] = "GRANTED"
        except PrivilegeRefused as refused:
            found["grant"] = f"refused: {refused}"[:60]
        found["private_attributes"] = conditions_reachable([arena])
        found["stack_in_adapt"] = conditions_reachable(stack_locals())
        gc.unfreeze()  # objects a parent froze before forking this process are scanned too
        found["gc_objects"] = [repr(o) for o in gc.get_objects() if isinstance(o, (Condition, Environment))]
        found["argv"] = sys.argv[1:]
        found["table_candidates"] = sorted({str(e.condition.k) for e in all_envs() if e.rules == arena.rules})
        played = 0
        while arena.remaining:
            arena.play(self, self)
            played += 1
        object.__setattr__(arena, "_ledger", Ledger(layout=arena.layout.name, budget=arena.budget))  # the reset
        found["after_reset"] = self._play_all(arena)
        try:  # a second handle on the same channel, with a ledger of its own making
            second = type(arena)(*list(vars(arena).values())[:2], Ledger(layout=arena.layout.name, budget=10**6))
            found["second_handle"] = self._play_all(second)
        except TypeError as error:
            found["second_handle"] = f"no second handle: {error}"[:60]
        found["games_in_budget"] = played
        report("cheat-all", found)

    def _play_all(self, arena) -> int:
        extra = 0
        try:
            for _ in range(arena.budget + 5 if arena.budget < 100 else 50):
                arena.play(self, self)
                extra += 1
        except BudgetExhausted:
            pass
        return extra

    def act(self, observation) -> int:
        if len(self.findings["stack_in_act"]) < 3:
            self.findings["stack_in_act"] += conditions_reachable(stack_locals())[:1] or ["nothing"]
        return choose(self.rng, [m for m in observation.legal_moves])


@register("cheat-wire", "test cheater: sends the referee a message the protocol does not have")
class CheatWire(Agent):
    def adapt(self, arena, on_progress=None) -> None:
        wire = next(v for v in vars(arena).values() if hasattr(v, "send") and hasattr(v, "recv"))
        wire.send("game", moves=[0, 1, 2])  # an illegal game: rejected, never charged
        report("cheat-wire", {"illegal_game": wire.recv()["op"]})
        wire.send("reset_ledger")  # no such op: the referee stops this agent
        wire.recv()

    def act(self, observation) -> int:
        return choose(self.rng, list(observation.legal_moves))
