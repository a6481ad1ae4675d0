"""How ``arena run`` builds its model agent and model client, in whichever process plays it.

:class:`ModelAgentRecipe` holds the agent's settings and nothing else: no
environment id or name, no condition, no run directory. Under the referee it is
sent to the agent process (:class:`~harness.referee.model_process.ModelJob`),
which builds the agent there; in-process runs (``arena rerun``, ``--in-process``)
build it with the same code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from agents.base import AgentContext
from engine.protocol.observation import Observation
from harness.cwm.agent import CwmAgent
from harness.cwm.config import CwmConfig
from harness.cwm.finalists import RejectionConfig
from harness.cwm.refine import RefineConfig
from harness.models.cache import ResponseCache
from harness.models.client import ModelClient
from harness.models.options import ModelOptions
from harness.play.game import PlyDecision
from harness.prompting.policy_agent import LlmPolicyAgent, LlmPolicyConfig
from harness.prompting.renderer import PromptRenderer
from harness.prompting.strategist_agent import LlmStrategistAgent, LlmStrategistConfig
from harness.referee.model_process import ModelSinks
from harness.referee.model_session import ModelSession
from harness.runs.llm_config import LlmRunConfig

ModelAgent = LlmPolicyAgent | LlmStrategistAgent | CwmAgent


@dataclass(frozen=True)
class CwmSettings:
    """The code-world-model agent's own settings (``arena run --agent cwm``)."""

    explore_games: int = 20
    explore_random: int = 8
    mode: str = "tree"
    max_calls: int = 12
    simulations: int = 1000
    adapt_simulations: int = 50
    planner: str = "mcts"
    depth: int = 4
    reject_candidates: int = 3
    heldout_transitions: int = 10_000
    unsandboxed: bool = False
    transitions: str = "engine"
    spot_check: float = 0.1


def cwm_settings(config: LlmRunConfig) -> CwmSettings | None:
    """The cwm agent's settings from a run's config (None for the other agents)."""
    if config.agent != "cwm":
        return None
    return CwmSettings(explore_games=config.cwm_explore, explore_random=config.cwm_random, mode=config.cwm_mode,
                       max_calls=config.cwm_calls, simulations=config.cwm_simulations,
                       adapt_simulations=config.cwm_adapt_simulations, planner=config.cwm_planner,
                       depth=config.cwm_depth, reject_candidates=config.cwm_reject, heldout_transitions=config.cwm_heldout,
                       unsandboxed=config.unsandboxed, transitions=config.cwm_transitions, spot_check=config.cwm_spot_check)


@dataclass(frozen=True)
class ModelAgentRecipe:
    """A model agent's settings (public: what the agent may know), picklable; see the module docstring."""

    agent: str
    model: str
    budget: int
    seed: int
    hint: str
    legal_moves: str  # "shown" or "hidden": whether llm-policy's move prompts list the legal moves
    max_retries: int
    on_failure: str
    memory_tokens: int
    checkpoints: tuple[int, ...]
    batch: int
    search_depth: int
    endgame: int
    concurrency: int
    max_cost_usd: float | None
    max_tokens: int | None
    backoff_base_s: float
    model_options: ModelOptions
    beliefs_done: tuple[int, ...] = ()
    cwm: CwmSettings | None = None
    wave: int = 1  # llm-policy: adaptation games at once on one memory
    jobs: int = 1  # llm-strategist: worker processes that search a batch's games
    move_format: str = "text"  # llm-policy: text, tool (a function call) or json (structured output)

    def client(self, cache: ResponseCache | None) -> ModelClient:
        """The model client the agent calls through (caps, retries, concurrency and options as configured)."""
        return ModelClient(self.model, cache=cache, options=self.model_options, max_cost_usd=self.max_cost_usd,
                           max_tokens_total=self.max_tokens, seed=self.seed, backoff_base_s=self.backoff_base_s,
                           concurrency=self.concurrency)

    def build(self, context: AgentContext, sinks: ModelSinks, client: ModelClient,
              renderer: PromptRenderer | None = None) -> ModelAgent:
        """The agent, reporting through ``sinks``."""
        params = self.model_options.request_params({"temperature": 0.0})  # options over the default
        rng, renderer = np.random.default_rng(self.seed), renderer or PromptRenderer()
        if self.agent == "cwm":
            cwm = self.cwm or CwmSettings()
            return CwmAgent(
                context, rng, client, budget=self.budget, seed=self.seed, renderer=renderer,
                config=CwmConfig(explore_games=cwm.explore_games, explore_random=cwm.explore_random, max_calls=cwm.max_calls,
                                 simulations=cwm.simulations, adapt_simulations=cwm.adapt_simulations,
                                 planner=cwm.planner, depth=cwm.depth,
                                 rejection=RejectionConfig(candidates=cwm.reject_candidates),
                                 heldout_transitions=cwm.heldout_transitions, hint_level=self.hint,
                                 transitions=cwm.transitions, spot_check=cwm.spot_check,
                                 refine=RefineConfig(mode=cwm.mode, params=params, unsandboxed=cwm.unsandboxed)),
                on_call=sinks.on_call, on_game=sinks.on_game, on_belief=sinks.on_belief, beliefs_done=self.beliefs_done,
            )
        if self.agent == "llm-strategist":
            return LlmStrategistAgent(
                context, rng, client, budget=self.budget, seed=self.seed, renderer=renderer,
                config=LlmStrategistConfig(
                    hint_level=self.hint, max_retries=self.max_retries, memory_tokens=self.memory_tokens, batch=self.batch,
                    search_depth=self.search_depth, endgame=self.endgame, checkpoints=self.checkpoints, params=params,
                    jobs=self.jobs,
                ),
                on_call=sinks.on_call, on_game=sinks.on_game, on_belief=sinks.on_belief, on_strategy=sinks.on_strategy,
                beliefs_done=self.beliefs_done,
            )
        return LlmPolicyAgent(
            context, rng, client, budget=self.budget, seed=self.seed, renderer=renderer,
            config=LlmPolicyConfig(
                hint_level=self.hint, max_retries=self.max_retries, on_failure=self.on_failure,
                memory_tokens=self.memory_tokens, checkpoints=self.checkpoints, params=params,
                free_call_failures=self.model_options.max_consecutive_failures,  # as recorded, for a rerun too
                show_legal=self.legal_moves == "shown", wave=self.wave, move_format=self.move_format,
            ),
            on_call=sinks.on_call, on_game=sinks.on_game, on_belief=sinks.on_belief, beliefs_done=self.beliefs_done,
        )

    def __call__(self, context: AgentContext, sinks: ModelSinks, cache: ResponseCache) -> ModelAgent:
        """In the agent process: the agent with a client of its own over ``cache``."""
        return self.build(context, sinks, self.client(cache))


class EvalPlayer(Protocol):
    """The frozen model agent as the run's evaluation games see it."""

    def decider(self, number: int) -> Callable[[Observation], Any]:
        """The agent's moves in evaluation game ``number``."""

    async def report(self, number: int, colour: int, decisions: list[PlyDecision]) -> None:
        """Write game ``number``'s calls (before the run writes the game)."""


class InProcessPlayer:
    """The agent object itself (in-process runs)."""

    def __init__(self, agent: ModelAgent) -> None:
        self._agent = agent

    def decider(self, number: int) -> Callable[[Observation], Any]:
        return self._agent.decider("eval", number)

    async def report(self, number: int, colour: int, decisions: list[PlyDecision]) -> None:
        self._agent.report_calls("eval", number, decisions)


class RemotePlayer:
    """The agent in its process, asked through the referee's session."""

    def __init__(self, session: ModelSession) -> None:
        self._session = session

    def decider(self, number: int) -> Callable[[Observation], Any]:
        return self._session.decider(number)

    async def report(self, number: int, colour: int, decisions: list[PlyDecision]) -> None:
        await self._session.report(number, [d.ply for d in decisions if d.colour == colour])
