"""The base of the model-driven agents: what ``llm-policy``, ``llm-strategist`` and ``cwm`` share.

:class:`ModelAgent` holds the model client, the adaptation budget, the seed and the agent's config
(its ``hint_level`` picks the system prompt), the prompt renderer and the rendered system prompt,
the transcript sinks (``on_call``, ``on_game``, ``on_belief``, ``on_strategy``), the episode memory
of the games seen (rebuilt from the arena's ledger on resume) and the belief checkpoints already
reported (``beliefs_done``). It builds the frozen player of a spec (:meth:`ModelAgent.from_spec`),
plays self-play games through the arena and reports them. A subclass sets ``name`` and
``config_class`` and makes its own state in :meth:`ModelAgent.setup`.

Built on it: :class:`~harness.prompting.policy_agent.LlmPolicyAgent`,
:class:`~harness.prompting.strategist_agent.LlmStrategistAgent` and :class:`~harness.cwm.agent.CwmAgent`
(which may import this layer; this layer never imports ``harness.cwm``).

:func:`call_fields` gives the fields of a call record; :func:`adapt_call_fields` those of a call made
between games (a belief, a strategy, a program); :func:`ask_parsed` makes such a call and reads its reply.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Generic, Protocol, Self, TypeVar

import numpy as np

from agents.base import Agent, AgentContext
from engine.protocol.belief import Belief
from harness.models.client import ModelClient
from harness.models.errors import ModelCallError
from harness.models.messages import ModelResponse
from harness.prompting.memory import EpisodeMemory, GameSummary
from harness.prompting.model_specs import spec_client
from harness.prompting.renderer import PromptRenderer, system_context

PHASE_CODES = {"adapt": 0, "eval": 1}
CallSink = Callable[[dict[str, Any]], None]
GameSink = Callable[[str, int, Any, int], None]  # phase, game index, VerifiedGame, colour the memory takes
BeliefSink = Callable[[int, Belief | None, str | None], None]  # checkpoint, belief, error
StrategySink = Callable[[int, Any, "str | None", bool], None]  # batch start, strategy in force, error, new?
Read = TypeVar("Read")
Decider = TypeVar("Decider", bound=Callable[..., Any])


class AgentConfig(Protocol):
    """What the base reads of an agent's config: the hint level of the system prompt."""

    @property
    def hint_level(self) -> str: ...


ConfigT = TypeVar("ConfigT", bound=AgentConfig)


def no_call(_: dict[str, Any]) -> None:
    """The call sink of an agent whose calls are not recorded."""
    return None


def game_rng(seed: int, phase: str, game_index: int, *salt: int) -> np.random.Generator:
    """The generator of one game (its own per phase and game, whichever process plays it; ``salt``: another stream)."""
    return np.random.default_rng([seed, PHASE_CODES[phase], game_index, *salt])


def named(decide: Decider, name: str) -> Decider:
    """``decide`` carrying the player's name (what the game loop records)."""
    decide.name = name  # type: ignore[attr-defined]
    return decide


class ModelAgent(Agent, Generic[ConfigT]):
    """The base of ``llm-policy``, ``llm-strategist`` and ``cwm``: the model client, budget, seed and config, the renderer and
    system prompt, the transcript sinks, the episode memory and the beliefs reported; see the module docstring."""

    config_class: ClassVar[type[Any]]  # the config used when none is given
    memory: EpisodeMemory

    def __init__(
        self,
        context: AgentContext,
        rng: np.random.Generator,
        client: ModelClient,
        *,
        budget: int,
        seed: int = 0,
        config: ConfigT | None = None,
        renderer: PromptRenderer | None = None,
        on_call: CallSink = no_call,
        on_game: GameSink | None = None,
        on_belief: BeliefSink | None = None,
        on_strategy: StrategySink | None = None,
        beliefs_done: Sequence[int] = (),
    ) -> None:
        """What every model agent holds (``on_strategy``: only an agent that plans strategies calls it); then :meth:`setup`."""
        super().__init__(context, rng)
        self.client, self.budget, self.seed = client, budget, seed
        self.config: ConfigT = config or self.config_class()
        self.renderer = renderer or PromptRenderer()
        self.on_call, self.on_game, self.on_belief, self.on_strategy = on_call, on_game, on_belief, on_strategy
        self.memory = EpisodeMemory()
        self.beliefs_done = set(beliefs_done)
        self.system = self.renderer.render("system", **system_context(self.rules, self.config.hint_level, budget))
        self.setup()

    def setup(self) -> None:
        """The subclass's own state (called at the end of ``__init__``)."""

    @classmethod
    def from_spec(cls, context: AgentContext, rng: np.random.Generator, model: str, config: Callable[[], ConfigT]) -> Self:
        """The frozen player of a spec (``name:model=M``): no budget, each call recorded through ``context.record_call``.

        The client is made (and checked, drawing its seed from ``rng``) first, then the agent's seed is drawn, then the
        config is made: a spec that names no model is told so before any bad value in it."""
        client = spec_client(cls.name, model, rng)
        agent = cls(context, rng, client, budget=0, seed=int(rng.integers(2**31)), config=config(), on_call=context.record_call or no_call)
        agent.freeze()
        return agent

    # ------------------------------------------------------------------ memory and beliefs

    def remember(self, record: Any, colour: int) -> None:
        """Add a finished game, seen from ``colour``, to the memory."""
        index = len(self.memory.games) + 1
        self.memory = self.memory.add(GameSummary.from_record(index, record, colour, self.rules.layout))

    def rebuild_memory(self, arena: Any, games: int | None = None) -> None:
        """The memory of the first ``games`` games in the arena's ledger (all by default; self-play: black in even games)."""
        self.memory = EpisodeMemory()
        for index, record in enumerate(arena.ledger.records[:games]):
            self.remember(record, index % 2)

    def first_belief(self, games_played: int) -> bool:
        """Whether the belief after ``games_played`` games is still to be reported (it is marked reported)."""
        if games_played in self.beliefs_done:
            return False
        self.beliefs_done.add(games_played)
        return True

    def emit_belief(self, games_played: int, belief: Belief | None, error: str | None) -> None:
        """The belief after ``games_played`` games (None and why, when there is none) to ``on_belief``."""
        if self.on_belief is not None:
            self.on_belief(games_played, belief, error)

    # ------------------------------------------------------------------ games

    def adapt(self, arena: Any) -> None:
        """Self-play until the budget is spent (synchronous wrapper of ``adapt_async``)."""
        asyncio.run(self.adapt_async(arena))

    async def adapt_async(self, arena: Any) -> None:
        raise NotImplementedError

    async def self_play(self, arena: Any, decide_black: Any, decide_white: Any = None) -> Any:
        """One self-play game through the arena (``decide_black`` plays both colours unless ``decide_white`` is given)."""
        return await arena.play_verified(decide_black, decide_white or decide_black, (self.name, self.name))

    def emit_game(self, index: int, game: Any) -> None:
        """Adaptation game ``index`` to ``on_game`` (self-play: the memory takes black in even games, white in odd ones)."""
        if self.on_game is not None:
            self.on_game("adapt", index, game, index % 2)

    def report_calls(self, phase: str, game_index: int, decisions: Sequence[Any]) -> None:
        """No model calls are made during a game (kept for the harness's interface)."""
        return None


async def ask_parsed(
    client: ModelClient, messages: list[dict[str, Any]], params: dict[str, Any], read: Callable[[str], Read], unreadable: type[Exception]
) -> tuple[ModelResponse | None, Read | None, str | None]:
    """One call and its reply read: (the response, what ``read`` found, why nothing: a failed call or ``unreadable``'s message)."""
    try:
        response = await client.complete(client.request(messages, **params))
    except ModelCallError as failure:
        return None, None, f"call failed: {failure}"
    try:
        return response, read(response.text), None
    except unreadable as failure:
        return response, None, str(failure)


def adapt_call_fields(
    response: ModelResponse | None,
    messages: Sequence[dict[str, Any]],
    template_hash: str,
    failure_kind: str | None,
    attempt: int = 0,
    **fields: Any,
) -> dict[str, Any]:
    """The call record of a call made between adaptation games (a belief, a strategy, a program): no game, ply or move."""
    return call_fields(
        response,
        game_index=None,
        phase="adapt",
        ply=None,
        attempt=attempt,
        messages=list(messages),
        reply=response.text if response is not None else None,
        finish_reason=response.finish_reason if response else None,
        parsed_move=None,
        verdict=None if response else "call_failed",
        failure_kind=failure_kind,
        template_hash=template_hash,
        **fields,
    )


def call_fields(response: ModelResponse | None, **fields: Any) -> dict[str, Any]:
    """CallEntry fields (all but ``call_index``) from the context and the model response, if any."""
    if response is not None:
        fields.update(
            tokens_in=response.prompt_tokens,
            tokens_out=response.completion_tokens,
            cost_usd=response.cost_usd,
            cached_tokens_in=response.cached_tokens,
            concurrency=None if response.cache_hit else response.concurrency,
            latency_s=response.latency_s,
            retries=response.retries,
            errors=list(response.errors),
            cache_key=response.cache_key or None,
            cache_hit=response.cache_hit,
        )
        structured = {
            "tool_calls": response.tool_calls,
            "reasoning": response.reasoning,
            "reasoning_tokens": response.reasoning_tokens,
            "reasoning_cost_usd": response.reasoning_cost_usd,
        }
        fields.update({name: value for name, value in structured.items() if value})  # only what the reply has
    return fields
