"""A plan before spending: games, model calls, tokens, dollars and wall time of an ``arena run``, offline.

:func:`estimate_run` reads an :class:`~harness.runs.llm_config.LlmRunConfig` and touches neither
the network nor a key:

- **games**: the budget (adaptation) and ``eval_games`` per opponent (evaluation);
- **moves per game**: random play of :data:`RANDOM_GAMES` seeded games with the engine on the
  environment's layout (its rules and turn limit); a forced pass is no call;
- **calls**: llm-policy asks for every move of both colours in self-play, for its own moves only
  in evaluation (about half a game's decisions), and once per belief checkpoint; llm-strategist
  once per batch start (and checkpoint) as its ``adapt_async`` plans, none in evaluation (the
  frozen strategy plays); cwm at most ``cwm_calls``. Re-asks after unusable replies are not
  counted (a model that answers legally every time);
- **prompt tokens**: the prompts are rendered as the agents render them (``system.j2`` with
  ``move.j2``, ``belief.j2`` or ``strategy.j2``) for positions of the random games, with an
  episode memory of the size it has at a few sampled points of the budget (the memory grows,
  then is fitted to ``memory_tokens``), and counted as the harness counts them: a mock model's
  four characters a token per message (:func:`harness.models.mock.estimate_tokens`), a real
  model's ``litellm.token_counter`` (its tokenizers ship with litellm: offline). cwm's prompts
  are not rendered: :data:`CWM_PROMPT_TOKENS` is assumed;
- **reply tokens**: an assumption per kind of call (:data:`REPLY_TOKENS`; the mocks' own sizes for mocks);
- **cost**: litellm's local price table (``litellm.cost_per_token``; ``LITELLM_LOCAL_MODEL_COST_MAP``
  keeps it local), or the price given in the model options; None for a model it does not price, 0 for mocks;
- **wall time**: adaptation calls ``min(wave, concurrency)`` at a time (llm-policy's waves; one after
  another otherwise), evaluation calls ``min(concurrency, games)`` at a time, at ``latency_s`` a call
  (search and engine time not counted).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import BaseModel

from engine import EnvKey, make_env
from engine.protocol.observation import observe
from engine.rules import Rules
from engine.state import PASS, State
from harness.models.client import import_litellm
from harness.models.messages import message_text
from harness.models.mock import STRATEGY_REPLY
from harness.models.mock import estimate_tokens as mock_tokens
from harness.models.options import ModelOptions
from harness.prompting.memory import EpisodeMemory, GameSummary
from harness.prompting.renderer import PromptRenderer, belief_context, memory_block, move_context, system_context
from harness.prompting.strategist_agent import STRATEGY_SCHEMA_VERSION, LlmStrategistConfig
from harness.runs.llm_config import LlmRunConfig

RANDOM_GAMES = 12  # random-play games measured per estimate (moves per game, positions to render)
SAMPLE_POINTS = 6  # points of the budget at which the prompts are rendered with the memory of that size
POSITIONS_PER_POINT = 40  # positions rendered at each point (spread over the random games' decisions)
REPLY_TOKENS = {"move": 8, "belief": 150, "strategy": 250, "cwm": 1500}  # assumed reply sizes of a real model
MOCK_REPLY_TOKENS = {"move": 1, "belief": 1, "strategy": mock_tokens(STRATEGY_REPLY), "cwm": 1500}
CWM_PROMPT_TOKENS = 6000  # cwm: assumed prompt size of one synthesis/refinement call (not rendered here)
Messages = list[dict[str, Any]]


class CallKind(BaseModel):
    """One kind of model call of a run: how many, and the tokens of each."""

    kind: str  # move (adapt), move (eval), belief, strategy, cwm
    calls: int
    prompt_tokens_per_call: float
    reply_tokens_per_call: float

    @property
    def prompt_tokens(self) -> int:
        return round(self.calls * self.prompt_tokens_per_call)

    @property
    def reply_tokens(self) -> int:
        return round(self.calls * self.reply_tokens_per_call)


class RunEstimate(BaseModel):
    """What a run will cost before it starts (see the module docstring for how each figure is made)."""

    agent: str
    model: str
    env: EnvKey
    layout: str
    adapt_games: int
    eval_games: int
    moves_per_game: float  # decisions (no forced passes) of both colours in a random-play game
    kinds: list[CallKind]
    token_counter: str  # how prompt tokens were counted
    cost_usd: float | None  # None: litellm's local price table does not price the model
    latency_s: float
    concurrency: int
    wall_s: float

    @property
    def games(self) -> int:
        return self.adapt_games + self.eval_games

    @property
    def calls(self) -> int:
        return sum(k.calls for k in self.kinds)

    @property
    def prompt_tokens(self) -> int:
        return sum(k.prompt_tokens for k in self.kinds)

    @property
    def reply_tokens(self) -> int:
        return sum(k.reply_tokens for k in self.kinds)

    def cost_text(self) -> str:
        return "unpriced (not in litellm's price table)" if self.cost_usd is None else f"${self.cost_usd:,.2f}"

    def line(self) -> str:
        """The one-line estimate of a run's header."""
        return (f"estimate: {self.games:,} games ({self.adapt_games:,} adaptation + {self.eval_games:,} evaluation), "
                f"{self.calls:,} model calls, {self.prompt_tokens:,} prompt + {self.reply_tokens:,} reply tokens, "
                f"{self.cost_text()} for {self.model}, ~{duration(self.wall_s)} at concurrency {self.concurrency} "
                f"and {self.latency_s:g} s a call")

    def table(self) -> str:
        """A small plain-text table: one row per kind of call, then the totals."""
        rows = [("calls", "kind", "prompt tok/call", "reply tok/call", "prompt tokens", "reply tokens")]
        for k in self.kinds:
            rows.append((f"{k.calls:,}", k.kind, f"{k.prompt_tokens_per_call:,.0f}", f"{k.reply_tokens_per_call:,.0f}",
                         f"{k.prompt_tokens:,}", f"{k.reply_tokens:,}"))
        rows.append((f"{self.calls:,}", "total", "", "", f"{self.prompt_tokens:,}", f"{self.reply_tokens:,}"))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = [f"arena run --dry-run: {self.agent} on env {self.env} ({self.layout}), model {self.model}",
                 f"games: {self.games:,} ({self.adapt_games:,} adaptation + {self.eval_games:,} evaluation); "
                 f"{self.moves_per_game:.1f} moves a game (random play)"]
        lines += ["  ".join(cell.rjust(w) if i != 1 else cell.ljust(w) for i, (cell, w) in enumerate(zip(r, widths)))
                  for r in rows]
        lines += [f"tokens counted by: {self.token_counter}",
                  f"cost: {self.cost_text()} (litellm's local price table, or the price given)",
                  f"wall time: ~{duration(self.wall_s)} at concurrency {self.concurrency} and {self.latency_s:g} s a call "
                  f"(assumed latency; search time not counted)",
                  "assumed: every reply usable (no re-asks); reply sizes " +
                  ", ".join(f"{k} {v}" for k, v in (MOCK_REPLY_TOKENS if self.model.startswith("mock/") else REPLY_TOKENS).items())]
        return "\n".join(lines)


@dataclass(frozen=True)
class _Game:
    states: tuple[State, ...]  # the positions where the mover chose (no forced passes)
    black: int
    white: int


def _random_games(rules: Rules, games: int, seed: int) -> list[_Game]:
    rng = np.random.default_rng([seed, 7919])
    played = []
    for _ in range(games):
        state, states = rules.initial_state(), []
        while True:
            legal = rules.legal_moves(state)
            if not legal:
                break
            if legal != [PASS]:
                states.append(state)
            state = rules.play(state, legal[int(rng.integers(len(legal)))])
        black, white = rules.counts(state)
        played.append(_Game(tuple(states), black, white))
    return played


def _memories(pool: Sequence[_Game], rules: Rules, sizes: Sequence[int]) -> dict[int, EpisodeMemory]:
    """Episode memories of each size, filled with the random games' summaries (black in even games, as self-play)."""
    playable = rules.layout.playable_mask.bit_count()
    memory, found = EpisodeMemory(), {}
    for size in sorted(set(sizes)):
        while len(memory.games) < size:
            index = len(memory.games)
            game, colour = pool[index % len(pool)], index % 2
            own, opp = (game.black, game.white) if colour == 0 else (game.white, game.black)
            memory = memory.add(GameSummary(index + 1, colour, own, opp, playable - own - opp, (own > opp) - (own < opp)))
        found[size] = memory
    return found


class _Counter:
    """Prompt tokens as the harness counts them: the mock's estimate, or litellm's tokenizer for the model."""

    def __init__(self, model: str) -> None:
        self.model, self.litellm = model, None
        self.name = "the mock's estimate (4 characters a token, per message)"
        if not model.startswith("mock/"):
            self.litellm = import_litellm()
            self.name = f"litellm.token_counter for {model} (local tokenizer)"

    def __call__(self, messages: Messages) -> int:
        if self.litellm is not None:
            try:
                return int(self.litellm.token_counter(model=self.model, messages=messages))
            except Exception:  # noqa: BLE001 - litellm raises many kinds; fall back to the cheap estimate
                self.litellm, self.name = None, "4 characters a token (litellm could not count for this model)"
        return sum(mock_tokens(message_text(m)) for m in messages)


def _points(budget: int) -> list[int]:
    """Games played at the sampled points of the adaptation (evenly over 0 .. budget-1)."""
    if budget <= 0:
        return []
    n = min(budget, SAMPLE_POINTS)
    return sorted({round(i * (budget - 1) / max(1, n - 1)) for i in range(n)})


def estimate_run(config: LlmRunConfig, *, latency_s: float = 1.0, renderer: PromptRenderer | None = None) -> RunEstimate:
    """The estimate of ``config``'s run (no network, no key); KeyError/ValueError for an unknown environment."""
    env = make_env(config.env)
    rules, renderer = env.rules, renderer or PromptRenderer()
    pool = _random_games(rules, RANDOM_GAMES, config.seed)
    positions = [s for g in pool for s in g.states]
    moves_per_game = len(positions) / len(pool)
    count = _Counter(config.model)
    replies = MOCK_REPLY_TOKENS if config.model.startswith("mock/") else REPLY_TOKENS
    system = renderer.render("system", **system_context(rules, config.hint, config.budget)).text
    checkpoints = config.belief_checkpoints()
    eval_games = config.eval_games * len(config.opponents)

    def ask(prompt: str) -> int:
        return count([{"role": "system", "content": system}, {"role": "user", "content": prompt}])

    kinds: list[CallKind] = []
    sequential_calls: float = 0
    eval_calls = 0
    if config.agent == "llm-policy":
        points = _points(config.budget)
        memories = _memories(pool, rules, [*points, config.budget, *checkpoints])

        def move_tokens(games_played: int) -> float:
            block = memory_block(memories[games_played], config.memory_tokens, renderer)
            step = max(1, len(positions) // POSITIONS_PER_POINT)
            sample = positions[games_played % step::step] or positions
            return float(np.mean([ask(renderer.render_reusing("move", {"memory": block.text}, **move_context(
                observe(rules, s), block.view, games_played, config.budget, config.legal_moves == "shown")).text)
                for s in sample]))

        adapt_calls = round(config.budget * moves_per_game)
        adapt_tokens = float(np.mean([move_tokens(p) for p in points])) if points else 0.0
        eval_calls = round(eval_games * moves_per_game / 2)
        kinds.append(CallKind(kind="move (adaptation)", calls=adapt_calls, prompt_tokens_per_call=adapt_tokens,
                              reply_tokens_per_call=replies["move"]))
        kinds.append(CallKind(kind="move (evaluation)", calls=eval_calls,
                              prompt_tokens_per_call=move_tokens(config.budget) if eval_calls else 0.0,
                              reply_tokens_per_call=replies["move"]))
        belief = [ask(_belief_prompt(renderer, memories[c], config, c)) for c in checkpoints]
        kinds.append(CallKind(kind="belief", calls=len(belief), prompt_tokens_per_call=float(np.mean(belief)) if belief else 0.0,
                              reply_tokens_per_call=replies["belief"]))
        sequential_calls = adapt_calls / max(1, min(config.wave, config.concurrency)) + len(belief)  # a wave's games at once
    elif config.agent == "llm-strategist":
        starts = _plan_starts(config)
        memories = _memories(pool, rules, starts)
        tokens = [ask(_strategy_prompt(renderer, memories[s], config, s)) for s in starts]
        kinds.append(CallKind(kind="strategy (and belief)", calls=len(starts),
                              prompt_tokens_per_call=float(np.mean(tokens)) if tokens else 0.0,
                              reply_tokens_per_call=replies["strategy"]))
        sequential_calls = len(starts)
    else:  # cwm: at most its calls, one after another
        kinds.append(CallKind(kind="cwm (at most)", calls=config.cwm_calls, prompt_tokens_per_call=CWM_PROMPT_TOKENS,
                              reply_tokens_per_call=replies["cwm"]))
        sequential_calls = config.cwm_calls
    estimate = RunEstimate(
        agent=config.agent, model=config.model, env=config.env, layout=env.layout.name, adapt_games=config.budget,
        eval_games=eval_games, moves_per_game=moves_per_game, kinds=kinds, token_counter=count.name, cost_usd=None,
        latency_s=latency_s, concurrency=config.concurrency,
        wall_s=latency_s * (sequential_calls + eval_calls / max(1, min(config.concurrency, eval_games))),
    )
    return estimate.model_copy(update={"cost_usd": _cost(config.model, estimate.prompt_tokens, estimate.reply_tokens,
                                                         config.model_options)})


def _belief_prompt(renderer: PromptRenderer, memory: EpisodeMemory, config: LlmRunConfig, games_played: int) -> str:
    block = memory_block(memory, config.memory_tokens, renderer)
    return renderer.render_reusing("belief", {"memory": block.text}, **belief_context(block.view, games_played, config.budget)).text


def _strategy_prompt(renderer: PromptRenderer, memory: EpisodeMemory, config: LlmRunConfig, games_played: int) -> str:
    from agents.search.features import DEFAULT_WEIGHTS, FEATURES

    strategist = _strategist_config(config)
    view = memory_block(memory, config.memory_tokens, renderer).view
    return renderer.render(
        "strategy", memory=view, games_played=games_played, budget=config.budget,
        batch=max(1, strategist.batch_bounds(games_played, config.budget)[1] - games_played),
        schema_version=STRATEGY_SCHEMA_VERSION, features={n: DEFAULT_WEIGHTS[n] for n in FEATURES}).text


def _strategist_config(config: LlmRunConfig) -> LlmStrategistConfig:
    return LlmStrategistConfig(batch=config.batch, checkpoints=config.belief_checkpoints(), memory_tokens=config.memory_tokens)


def _plan_starts(config: LlmRunConfig) -> list[int]:
    """The games played at each strategy call of llm-strategist's adaptation (as its ``adapt_async`` plans)."""
    strategist, starts, planned = _strategist_config(config), [], None
    for index in range(config.budget):
        start = strategist.batch_bounds(index, config.budget)[0]
        if start != planned:
            starts.append(start)
            planned = start
    if config.budget in strategist.checkpoints and planned != config.budget:
        starts.append(config.budget)
    return starts


def _cost(model: str, prompt_tokens: int, reply_tokens: int, options: ModelOptions | None = None) -> float | None:
    if model.startswith("mock/"):
        return 0.0
    if options is not None and options.price_per_mtok_in is not None and options.price_per_mtok_out is not None:
        return (prompt_tokens * options.price_per_mtok_in + reply_tokens * options.price_per_mtok_out) / 1e6  # the given price
    try:
        prompt_cost, reply_cost = import_litellm().cost_per_token(model=model, prompt_tokens=prompt_tokens,
                                                                  completion_tokens=reply_tokens)
        return float(prompt_cost) + float(reply_cost)
    except Exception:  # noqa: BLE001 - litellm raises many kinds for a model it does not price
        return None


def duration(seconds: float) -> str:
    """A readable duration: seconds, minutes or hours (the estimates of ``arena run`` and ``bench paper --dry-run``)."""
    if seconds < 90:
        return f"{math.ceil(seconds)} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
