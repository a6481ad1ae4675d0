"""Fake adaptive agents for the ``arena bench paper`` tests, loaded as a plugin (so the agent processes know them).

``fake-adaptive`` self-plays in batches of 5 random games until the budget is
spent; ``over-budget`` plays one game more than its budget; ``swallower`` asks for
one more and hides the refusal. Each ``adapt`` call appends a line to the file
named by ``PAPER_FAKES_LOG`` (when set), so a test can count them across processes.
"""

from __future__ import annotations

import os

import numpy as np

from agents.base import Agent, choose
from agents.spec import Param, register
from engine.protocol.arena import BudgetExhausted
from engine.protocol.belief import Belief

PARAMS = {"population": Param(int, 100), "train_depth": Param(int, 3)}


def note_adapt(name: str) -> None:
    if path := os.environ.get("PAPER_FAKES_LOG"):
        with open(path, "a", encoding="utf-8") as log:
            log.write(name + "\n")
        try:  # agent processes behind the walls run as uids of their own: the next one appends too
            os.chmod(path, 0o666)
        except OSError:
            pass


@register("fake-adaptive", "test fake: self-play in batches of 5 random games", PARAMS)
class FakeAdaptive(Agent):
    def __init__(self, context, rng, population: int = 100, train_depth: int = 3) -> None:
        super().__init__(context, rng)

    def adapt(self, arena, on_progress=None) -> None:
        note_adapt("fake-adaptive")
        while arena.remaining:
            for _ in range(min(5, arena.remaining)):
                arena.play(self, self)
            if on_progress is not None:
                on_progress(arena.games_played)

    def act(self, observation) -> int:
        return choose(self.rng, list(observation.legal_moves))

    def belief(self) -> Belief:
        return Belief(regime="majority", k_low=0.55, k_high=1.0, confidence=0.5)

    def weight_curve(self, progress: float, rhos: np.ndarray) -> np.ndarray:
        return np.outer(rhos, [progress, 1.0 - progress, 0.5, -0.5])


@register("over-budget", "test fake: plays one game more than its budget", PARAMS)
class OverBudget(FakeAdaptive):
    def adapt(self, arena, on_progress=None) -> None:
        for _ in range(arena.budget + 1):
            arena.play(self, self)


@register("swallower", "test fake: asks for a game beyond the budget and hides the refusal", PARAMS)
class Swallower(FakeAdaptive):
    def adapt(self, arena, on_progress=None) -> None:
        for _ in range(arena.budget + 1):
            try:
                arena.play(self, self)
            except BudgetExhausted:
                pass
