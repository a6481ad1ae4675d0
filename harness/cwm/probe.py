"""The interval of K a program's reward code implies, by probing ``returns`` over the range of final shares.

For every final disc total the agent's games ended with, and every split of it
(own = 0 .. total), the program's ``returns`` is asked on a position with those
counts; each answer is read as a game's outcome and turned into constraints on
K exactly (:mod:`agents.interval.belief`). The intersection is what the code
says about K at the shares the games can reach; ``None`` when no threshold rule
gives the program's answers (or the program fails).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agents.interval.belief import KInterval, constraints
from engine.rules import Rules
from harness.cwm.world import state_json
from harness.sandbox.client import SandboxWorker


def probe_position(rules: Rules, black: int, white: int) -> dict[str, Any]:
    """A position holding ``black`` and ``white`` discs on the first playable cells (their order does not matter)."""
    layout = rules.layout
    state = state_json(rules, rules.initial_state())
    playable = [i for i in range(layout.cells) if state["board"][i] != 3]
    board = [3 if value == 3 else 0 for value in state["board"]]
    for position, index in enumerate(playable[: black + white]):
        board[index] = 1 if position < black else 2
    return {**state, "board": board}


def implied_interval(worker: SandboxWorker, rules: Rules, totals: Iterable[int]) -> KInterval | None:
    """The K interval the program's ``returns`` implies over every split of ``totals`` (None if no K fits)."""
    playable = rules.layout.cells - len(rules.layout.obstacles)
    splits = [(own, total - own) for total in sorted(set(totals)) if 0 < total <= playable for own in range(total + 1)]
    results = worker.call_many([("returns", [probe_position(rules, b, w)]) for b, w in splits])
    interval = KInterval.everything()
    for (black, white), result in zip(splits, results):
        if not result.ok:
            return None
        try:
            r0, r1 = (int(round(float(v))) for v in result.value)
        except (TypeError, ValueError):
            return None
        if (r0, r1) not in ((1, -1), (-1, 1), (0, 0)):
            return None
        for constraint in constraints(black, white, r0):
            interval = interval.intersect(constraint)
        if interval.is_empty:
            return None
    return interval
