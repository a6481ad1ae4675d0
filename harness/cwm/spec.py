"""``cwm:model=M``: the code-world-model agent as a spec, for ``match``, ``tournament`` and ``bench paper``.

Built from a spec, the agent has no adaptation budget of its own (those commands
either give it one through ``--adapt-budget`` or mark it unadapted). Before its
first move its model writes the program from the prompt alone, refined against
transition tests from random play of the public rules (no K: there is no
outcome evidence, so the reward code is the model's prior); the agent then
plans on that program in the sandbox, frozen. Every model call goes to
``context.record_call`` like the other model agents'.
"""

from __future__ import annotations

import asyncio

import numpy as np

from agents.base import Agent, AgentContext
from agents.spec import Param, register
from engine.protocol.observation import Observation
from harness.cwm.agent import CwmAgent
from harness.cwm.config import PLANNERS, CwmConfig
from harness.cwm.engine_path import TRANSITIONS
from harness.cwm.refine import MODES, RefineConfig
from harness.cwm.tests_from_games import random_transitions

RULE_TRANSITIONS = 300  # random-play transitions of the public rules the first program is tested on


class PromptOnlyCwm(CwmAgent):
    """A cwm agent that writes its program before its first move, from the prompt and the public rules alone, unless it
    adapted (given a budget, as in ``bench paper``): then it plays with the program its adaptation chose."""

    written = False

    def act(self, observation: Observation) -> int:
        if not self.written and self.best is None:
            self.written = True
            asyncio.run(self.write_program())
        return super().act(observation)

    async def write_program(self) -> None:
        """Synthesize and refine against random-play transition tests (no outcomes are known) within the calls."""
        tests = random_transitions(self.rules, RULE_TRANSITIONS, self.seed)
        start = await self.synth.synthesize(tests, [], 0)
        calls = min(self.config.max_calls - 1, self.config.refine.calls_per_episode)
        best = await self.synth.refine(start, tests, [], 0, calls)
        if best.source is not None:
            self._use(best)


@register(
    "cwm",
    "A model writes the game as code (its reward code the hidden-rule hypothesis), tested in the sandbox; MCTS or "
    "minimax on it. From a spec: written from the prompt alone before the first move (arena run --agent cwm adapts)",
    params={
        "model": Param(str, "", "the model: litellm provider/model, or mock/<name> (required)"),
        "temperature": Param(float, 0.0, "sampling temperature"),
        "calls": Param(int, 3, "model calls for the program (a synthesis, then refinements)"),
        "mode": Param(str, "tree", "refinement: REx tree search or conversation", choices=MODES),
        "planner": Param(str, "mcts", "search on the program", choices=PLANNERS),
        "simulations": Param(int, 1000, "MCTS simulations per move"),
        "depth": Param(int, 3, "minimax: deepest iteration in plies"),
        "transitions": Param(
            str,
            "engine",
            "plan on the engine with the program's returns (once it passes every transition test) or on the program",
            choices=TRANSITIONS,
        ),
    },
    model_driven=True,
)
def cwm_entry(
    context: AgentContext,
    rng: np.random.Generator,
    model: str = "",
    temperature: float = 0.0,
    calls: int = 3,
    mode: str = "tree",
    planner: str = "mcts",
    simulations: int = 1000,
    depth: int = 3,
    transitions: str = "engine",
) -> Agent:
    """From a spec (``cwm:model=M``); see the module docstring."""
    config = CwmConfig(
        max_calls=calls,
        simulations=simulations,
        planner=planner,
        depth=depth,
        transitions=transitions,
        refine=RefineConfig(mode=mode, params={"temperature": temperature}),
    )
    return PromptOnlyCwm.from_spec(context, rng, model, lambda: config)
