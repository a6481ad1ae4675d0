"""A plugin that makes ``arena run``'s llm-policy cheat, in whichever process plays it.

Loaded with ``--plugin``, it patches :class:`LlmPolicyAgent` (inert unless
``$CHEAT_REPORT`` is set, so other tests in the same process are unaffected).
In ``adapt`` the agent tries the simulator grant, the arena's private
attributes, the call stack, every live object, the command line and the
environment table; after its budget, a ledger reset and a second arena handle.
In its evaluation moves it walks the call stack. With ``CHEAT_WIRE=1`` it also
sends the referee a game record the referee never scored. Findings go to
``$CHEAT_REPORT/model-cheat-<pid>.json``.
"""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path
from typing import Any

from agents.base import Agent
from agents.spec import register
from engine.condition import Condition
from engine.environments import Environment, all_envs
from engine.protocol.arena import BudgetExhausted, Ledger, PrivilegeRefused
from harness.prompting.policy_agent import LlmPolicyAgent

if str(Path(__file__).parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).parent))  # a plugin is imported by path, in agent processes too
from cheat_tools import conditions_reachable, report, stack_locals  # noqa: E402

FINDINGS: dict[str, Any] = {}


@register("model-cheat", "test plugin: patches llm-policy to cheat; this entry itself plays the first legal move")
class FirstLegal(Agent):
    name = "model-cheat"

    def act(self, observation) -> int:
        return observation.legal_moves[0]


def _active() -> bool:
    return bool(os.environ.get("CHEAT_REPORT"))


def _play_more(arena, limit: int = 5) -> int:
    extra = 0
    try:
        for _ in range(limit):
            arena.play(PLAYER, PLAYER)
            extra += 1
    except BudgetExhausted:
        pass
    return extra


async def cheating_adapt(self, arena) -> None:
    global PLAYER
    PLAYER = FirstLegal(self.context, self.rng)
    if not _active():
        return await ORIGINAL_ADAPT(self, arena)
    found = FINDINGS
    try:
        arena.grant_simulator("peek at K")
        found["grant"] = "GRANTED"
    except PrivilegeRefused:
        found["grant"] = "refused"
    found["private_attributes"] = conditions_reachable([arena])
    found["stack_in_adapt"] = conditions_reachable(stack_locals())
    found["gc_objects"] = sorted({repr(o) for o in gc.get_objects() if isinstance(o, (Condition, Environment))})
    found["argv"] = sys.argv[1:]
    found["table_candidates"] = sorted({str(e.condition.k) for e in all_envs() if e.rules == arena.rules})
    await ORIGINAL_ADAPT(self, arena)
    found["games_in_budget"] = arena.games_played
    object.__setattr__(arena, "_ledger", Ledger(layout=arena.layout.name, budget=arena.budget))  # the reset
    found["after_reset"] = _play_more(arena)
    try:  # a second handle on the same channel, with a ledger of its own making
        second = type(arena)(*list(vars(arena).values())[:2], Ledger(layout=arena.layout.name, budget=10**6))
        found["second_handle"] = _play_more(second)
    except (TypeError, ValueError):
        found["second_handle"] = "no second handle"
    report("model-cheat", found)
    wire = next((v for v in vars(arena).values() if hasattr(v, "send") and hasattr(v, "recv")), None)
    if os.environ.get("CHEAT_WIRE") and wire is not None:
        wire.send("adapt_game", index=10**6, failures={})  # a game the referee never scored


def cheating_decider(self, phase, game_index):
    decide = ORIGINAL_DECIDER(self, phase, game_index)

    async def spy(observation):
        if _active() and phase == "eval":
            seen = FINDINGS.setdefault("stack_in_act", [])
            if len(seen) < 3:
                # the frames' locals first: in a long-lived process the search through every module's globals can
                # spend its object limit before it meets the frames (a test worker that imported hypothesis, torch...)
                local = conditions_reachable(stack_locals(with_globals=False))[:1]
                seen.append(local or conditions_reachable(stack_locals())[:1] or ["nothing"])
                report("model-cheat", FINDINGS)
        return await decide(observation)

    return spy


if not getattr(LlmPolicyAgent, "_cheat_patched", False):  # a plugin may be imported more than once
    ORIGINAL_ADAPT, ORIGINAL_DECIDER = LlmPolicyAgent.adapt_async, LlmPolicyAgent.decider
    LlmPolicyAgent.adapt_async = cheating_adapt
    LlmPolicyAgent.decider = cheating_decider
    LlmPolicyAgent._cheat_patched = True
