"""``llm-strategist``: the model sets a strategy once per batch of games; Minimax plays the moves.

Per batch of ``batch`` games (default 50) the agent renders ``system.j2`` and
``strategy.j2`` (the episode memory of the games before the batch, fitted to a
token budget) and asks the model once for a :class:`Strategy`: its belief about
the hidden condition (the fields of :class:`harness.prompting.beliefs.Belief`), a target
share of the final discs ``target_ratio`` (own / (own + opponent), 0..1) and
weights of the Minimax evaluation features (names from
``agents.search.features.FEATURES``; missing ones keep ``DEFAULT_WEIGHTS``).

A reply that holds no valid strategy (or a failed call) is re-asked with the
reason, up to ``max_retries`` times; then the previous strategy is kept (before
the first success: :data:`DEFAULT_STRATEGY`, standard Othello play) and the
failure is counted (``strategy_failures``). Every attempt goes to ``on_call``;
the belief of each batch goes to ``on_belief`` with the batch's first game
number as the checkpoint (None and the error when the batch kept an old
strategy); the strategy in force goes to ``on_strategy``.

The batch's games are self-play (both colours) by an alpha-beta search
(``agents.search.api``) with the strategy's weights, depth ``search_depth``, and
an exact endgame solve at ``endgame`` empty cells or fewer. Finished games are
scored by :func:`ratio_utility`: ``-|own / (own + opp) - target_ratio|`` from
the mover's view, so the searcher (and the exact solver near the end) steers
towards the target share rather than towards the most discs. Frozen evaluation
(``decider``/``act``) uses the last strategy.

With ``jobs`` > 1 a batch's games are searched on that many worker processes
(:mod:`harness.prompting.worker_pool`; the search is CPU-bound): each worker gets
the batch's strategy and settings and a game's index, plays the game with
:func:`self_play_moves` and returns its moves; this process then plays them
through the arena (the referee scores them as any game) in index order. The model
is asked only here, through the run's one client. Every game is the same at any
``jobs``: its generator is seeded by its index, its searcher built from the
batch's strategy, and the search clears its transposition table at every search,
so a worker's fresh tables give the moves the shared ones give.

Batches start every ``batch`` games and also at each belief checkpoint
(``checkpoints``, games finished): a checkpoint that falls inside a batch cuts it
short, so the model states its belief after exactly that many games. A
checkpoint equal to the budget is asked after the last game, and that strategy
plays the evaluation.

Resume: the memory is rebuilt from the arena's ledger; a batch interrupted in
the middle is re-planned from the memory as it was at the batch's start, so the
prompt is the same and the run's response cache answers it without the
network; its calls and belief are not recorded a second time.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from agents.base import Agent, AgentContext
from agents.search.api import SearchTables
from agents.search.endgame import ratio_utility  # noqa: F401 - re-exported: the utility the module docstring names
from agents.search.features import DEFAULT_WEIGHTS, FEATURES
from agents.spec import Param, register
from engine.protocol.belief import Belief
from engine.protocol.observation import Observation
from harness.play.decisions import MoveDecision
from harness.prompting.beliefs import read_reply
from harness.prompting.memory import EpisodeMemory
from harness.prompting.model_agent import ModelAgent, adapt_call_fields, ask_parsed, game_rng, named
from harness.prompting.model_specs import SPEC_PARAMS
from harness.prompting.renderer import fit_memory
from harness.prompting.strategist_search import Searcher, replay, self_play_moves
from harness.prompting.waves import wave_of
from harness.prompting.worker_pool import WorkerPool

STRATEGY_SCHEMA_VERSION = 1


class StrategyParseError(ValueError):
    """A reply that holds no valid strategy; the message says what was wrong."""


class Strategy(BaseModel):
    """A batch's plan: the belief, the target share of the final discs, the evaluation weights."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    schema_version: int = STRATEGY_SCHEMA_VERSION
    belief: Belief | None = None
    target_ratio: float = Field(ge=0.0, le=1.0, validation_alias=AliasChoices("target_ratio", "target"))
    weights: dict[str, float] = Field(default_factory=dict)
    rationale: str | None = None

    @field_validator("schema_version")
    @classmethod
    def _known_version(cls, value: int) -> int:
        if value != STRATEGY_SCHEMA_VERSION:
            raise ValueError(f"schema_version {value} is not supported; use {STRATEGY_SCHEMA_VERSION}")
        return value

    @field_validator("target_ratio")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError("must be a finite number")
        return value

    @field_validator("weights")
    @classmethod
    def _known_features(cls, value: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(value) - set(FEATURES))
        if unknown:
            raise ValueError(f"unknown feature(s) {', '.join(unknown)}; valid features: {', '.join(FEATURES)}")
        if not all(math.isfinite(v) for v in value.values()):
            raise ValueError("weights must be finite numbers")
        return value

    def full_weights(self) -> dict[str, float]:
        """Every feature's weight: the strategy's, else the default."""
        return DEFAULT_WEIGHTS | self.weights


DEFAULT_STRATEGY = Strategy(
    belief=Belief(regime="unknown", k_low=0.0, k_high=1.0, confidence=0.0),
    target_ratio=1.0,
    rationale="default before any strategy from the model: standard Othello (most discs)",
)


def parse_strategy(text: str) -> Strategy:
    """The strategy in a reply: a bare JSON object, one in a ```json fence, or one embedded in prose.

    The first candidate object that validates wins; ``{"strategy": {...}}`` is
    unwrapped. Missing ``weights`` keep the defaults, a missing ``belief`` is None;
    ``target_ratio`` (or ``target``) is required. StrategyParseError says why nothing did.
    """
    strategy, problems = read_reply(
        text,
        Strategy,
        "strategy",
        StrategyParseError,
        "belief, target_ratio and weights",
        '{"belief": {...}, "target_ratio": 0.6, "weights": {...}}',
        skip=_belief_alone,
    )
    if strategy is not None:
        return strategy
    if not problems:
        raise StrategyParseError("the JSON in the reply is not a valid strategy: target_ratio: Field required")
    raise StrategyParseError("the JSON in the reply is not a valid strategy: " + problems[0])


def _belief_alone(candidate: dict[str, Any]) -> bool:
    """A nested belief object found on its own: not a strategy candidate."""
    return "target_ratio" not in candidate and "target" not in candidate and "regime" in candidate


@dataclass(frozen=True)
class LlmStrategistConfig:
    """How the agent prompts, plans and searches."""

    hint_level: str = "ratio"
    max_retries: int = 2
    memory_tokens: int = 1500
    batch: int = 50
    search_depth: int = 3
    endgame: int = 10
    checkpoints: tuple[int, ...] = ()  # extra batch starts: beliefs after exactly these many games
    jobs: int = 1  # worker processes that search a batch's games (1: in this process)
    params: dict[str, Any] = field(default_factory=lambda: {"temperature": 0.0})

    def batch_bounds(self, index: int, budget: int) -> tuple[int, int]:
        """(first game, end) of the batch holding game ``index``: every ``batch`` games and at each checkpoint (its wave)."""
        wave = wave_of(index, self.batch, budget, self.checkpoints)
        return wave.start, wave.end

    def __post_init__(self) -> None:
        if self.batch < 1 or self.search_depth < 1 or self.endgame < 0 or self.max_retries < 0 or self.jobs < 1:
            raise ValueError("llm-strategist: batch, search_depth and jobs >= 1, endgame and max_retries >= 0")


class LlmStrategistAgent(ModelAgent[LlmStrategistConfig]):
    """A model choosing a strategy per batch, Minimax playing it; see the module docstring."""

    name = "llm-strategist"
    config_class = LlmStrategistConfig

    def setup(self) -> None:
        self.strategy: Strategy = DEFAULT_STRATEGY
        self.strategy_failures = 0
        self.model_calls = 0
        self._tables = SearchTables(self.rules.layout)
        self._searcher = Searcher(self.rules, self.strategy, self.config, self._tables)
        self.plan_before_play = False  # built from a spec: one strategy from the prompt alone, before the first move

    # ------------------------------------------------------------------ planning

    def messages(self, games_played: int) -> tuple[list[dict[str, Any]], str]:
        """System and strategy prompts from the memory of the first ``games_played`` games, and the template hash."""
        memory = EpisodeMemory(self.memory.games[:games_played])
        view = fit_memory(memory, self.config.memory_tokens, self.renderer)
        prompt = self.renderer.render(
            "strategy",
            memory=view,
            games_played=games_played,
            budget=self.budget,
            batch=max(1, self.config.batch_bounds(games_played, self.budget)[1] - games_played),
            schema_version=STRATEGY_SCHEMA_VERSION,
            features={n: DEFAULT_WEIGHTS[n] for n in FEATURES},
        )
        return [{"role": "system", "content": self.system.text}, {"role": "user", "content": prompt.text}], prompt.template_hash

    async def plan(self, games_played: int) -> Strategy | None:
        """Ask for the strategy of the batch starting after ``games_played`` games; None if it kept the old one."""
        record = self.first_belief(games_played)
        messages, template_hash = self.messages(games_played)
        strategy, error = None, None
        for attempt in range(self.config.max_retries + 1):
            self.model_calls += 1
            response, strategy, error = await ask_parsed(self.client, messages, self.config.params, parse_strategy, StrategyParseError)
            if record:
                self.on_call(adapt_call_fields(response, messages, template_hash, None if strategy else "strategy_error", attempt))
            if strategy is not None:
                error = None
                break
            if response is not None:
                messages = messages + [
                    {"role": "assistant", "content": response.text or ""},
                    {
                        "role": "user",
                        "content": f"Your reply could not be used: {error}. "
                        "Reply again with one JSON object in the format described above.",
                    },
                ]
        if strategy is None:
            self.strategy_failures += 1
        else:
            self.strategy = strategy
            self._searcher = Searcher(self.rules, strategy, self.config, self._tables)
        if record:
            self.emit_belief(
                games_played,
                strategy.belief if strategy else None,
                error if strategy is None else (None if strategy.belief else "the strategy holds no belief"),
            )
            if self.on_strategy is not None:
                self.on_strategy(games_played, self.strategy, error, strategy is not None)
        return strategy

    # ------------------------------------------------------------------ play

    def decider(self, phase: str, game_index: int) -> Callable[[Observation], MoveDecision]:
        """A decider for one game with the strategy now in force (its own generator per phase and game)."""
        rng = game_rng(self.seed, phase, game_index)
        searcher = self._searcher

        def decide(obs: Observation) -> MoveDecision:
            return MoveDecision(searcher.move(obs, rng), False, [])

        return named(decide, self.name)

    def act(self, observation: Observation) -> int:
        """The move of the last strategy's searcher (built from a spec: the model writes one strategy first)."""
        if self.plan_before_play:
            self.plan_before_play = False
            asyncio.run(self.plan(0))
        return self._searcher.move(observation, self.rng)

    async def adapt_async(self, arena: Any) -> None:
        """Batches of self-play until the budget is spent (searched on ``jobs`` workers when more than one)."""
        self.rebuild_memory(arena)
        planned: int | None = None
        searched: dict[int, list[int]] = {}  # game index -> the moves a worker searched (this batch)
        pool = WorkerPool(self.config.jobs) if self.config.jobs > 1 else None
        try:
            while arena.remaining > 0:
                index = arena.games_played
                batch_start, batch_end = self.config.batch_bounds(index, self.budget)
                if planned != batch_start:
                    await self.plan(batch_start)
                    planned = batch_start
                    if pool is not None:
                        games = range(index, min(batch_end, index + arena.remaining))
                        tasks = [(self.rules, self.strategy, self.config, self.seed, game) for game in games]
                        searched = dict(zip(games, pool.map(self_play_moves, tasks)))
                decide = replay(searched.pop(index), self.name) if index in searched else self.decider("adapt", index)
                game, _ = await self.self_play(arena, decide)
                self.remember(game.record, index % 2)
                self.emit_game(index, game)
        finally:
            if pool is not None:
                pool.close()
        if arena.games_played in self.config.checkpoints and planned != arena.games_played:
            await self.plan(arena.games_played)  # the belief after the last game; its strategy plays the evaluation


@register(
    "llm-strategist",
    "A model writes a strategy (weights, target share) per batch of games; Minimax plays it; adapts within the budget",
    params={
        **SPEC_PARAMS,
        "depth": Param(int, 3, "Minimax depth in plies"),
        "endgame": Param(int, 10, "solve exactly at this many empty cells or fewer"),
    },
    model_driven=True,
)
def llm_strategist_entry(
    context: AgentContext,
    rng: np.random.Generator,
    model: str = "",
    hint: str = "ratio",
    retries: int = 2,
    temperature: float = 0.0,
    depth: int = 3,
    endgame: int = 10,
) -> Agent:
    """From a spec (``llm-strategist:model=M``): before its first move the model writes one strategy from the prompt
    alone (its call recorded through ``context.record_call``); Minimax plays it, frozen."""
    agent = LlmStrategistAgent.from_spec(
        context,
        rng,
        model,
        lambda: LlmStrategistConfig(
            hint_level=hint, max_retries=retries, search_depth=depth, endgame=endgame, params={"temperature": temperature}
        ),
    )
    agent.plan_before_play = True
    return agent
