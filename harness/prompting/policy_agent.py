"""``llm-policy``: the model picks every move; its prompt carries the episode memory.

Per move the agent renders ``system.j2`` and ``move.j2`` (the memory of the games it
has seen, fitted to a token budget, and the games left), asks the model through a
:class:`~harness.models.client.ModelClient` via :class:`~harness.prompting.moves.MoveAsker`
(re-asks with the reason, then the configured policy: forfeit or a random legal
move), and reports one call record per attempt through ``on_call`` once the game
is over (the ply of each decision is known then).

``adapt(arena)``: self-play through :meth:`harness.play.arena.Arena.play_verified` until
the budget is spent; every finished game goes into the memory (seen from black in
even-numbered games, from white in odd ones) and to ``on_game``. At each belief
checkpoint (games finished) the model is asked for its belief (``belief.j2``);
a reply that holds no belief, or a failed call, is counted, never fatal. Only
:class:`~harness.models.errors.EndpointDown` (the client found the endpoint unusable) is
not caught: it stops the run, and the game in progress is not recorded.

The memory is rebuilt from the arena's ledger when ``adapt`` starts, so a resumed
run continues with the memory it had. Randomness for the ``random`` fallback comes
from a generator per (phase, game), so a game does not depend on those before it.

Per move only the board part of the prompt is rendered: the episode memory changes
only when a game ends, so its fitted view and rendered text (:func:`memory_block`)
are made once per memory and spliced into ``move.j2`` (the same text as a full
render). Evaluation games may be played concurrently (``arena run --concurrency``):
their deciders send identical requests one at a time, so the second is answered
from the response cache, as it would be had the games been played one by one.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agents.base import Agent, AgentContext
from agents.spec import register
from engine.protocol.belief import Belief
from engine.protocol.observation import Observation
from harness.models.client import ModelClient
from harness.models.errors import ModelCallError
from harness.models.messages import ModelRequest, ModelResponse
from harness.play.decisions import FailureKind, MoveDecision, ParsedMove
from harness.play.game import PlyDecision, decision_ply
from harness.play.open_games import GameNotEntered
from harness.prompting.beliefs import BeliefParseError, parse_belief
from harness.prompting.memory import EpisodeMemory, GameSummary
from harness.prompting.model_specs import SPEC_PARAMS, spec_client
from harness.prompting.moves import ModelCallFailed, MoveAsker
from harness.prompting.renderer import MemoryBlock, PromptRenderer, belief_context, memory_block, move_context, system_context
from harness.prompting.waves import wave_of

PHASE_CODES = {"adapt": 0, "eval": 1}
CallSink = Callable[[dict[str, Any]], None]
GameSink = Callable[[str, int, Any, int], None]  # phase, game index, VerifiedGame, colour the memory takes
BeliefSink = Callable[[int, Belief | None, str | None], None]  # checkpoint, belief, error


@dataclass(frozen=True)
class LlmPolicyConfig:
    """How the agent prompts and what it does on failure."""

    hint_level: str = "ratio"
    max_retries: int = 2
    on_failure: str = "forfeit"
    show_legal: bool = True
    answer_format: str = "line"
    memory_tokens: int = 1500
    checkpoints: tuple[int, ...] = ()
    params: dict[str, Any] = field(default_factory=lambda: {"temperature": 0.0})
    free_call_failures: int | None = None  # failed calls of a move that use no re-ask (None: the client's limit in a row)
    wave: int = 1  # adaptation games played at once, sharing one memory (harness.prompting.waves); 1: one after another


def _no_call(_: dict[str, Any]) -> None:
    return None


class MemoryAgent(Agent):
    """An agent that learns from the episode memory of its self-play games in an arena."""

    memory: EpisodeMemory

    def __init__(
        self,
        context: AgentContext,
        rng: np.random.Generator,
        client: ModelClient,
        *,
        budget: int,
        seed: int,
        config: Any,
        renderer: PromptRenderer | None,
        on_call: CallSink,
        on_game: GameSink | None,
        on_belief: BeliefSink | None,
        beliefs_done: Sequence[int],
    ) -> None:
        """What every model agent holds: client, budget, config (with ``hint_level``), sinks, memory, system prompt."""
        super().__init__(context, rng)
        self.client, self.budget, self.seed, self.config = client, budget, seed, config
        self.renderer = renderer or PromptRenderer()
        self.on_call, self.on_game, self.on_belief = on_call, on_game, on_belief
        self.memory = EpisodeMemory()
        self.beliefs_done = set(beliefs_done)
        self.system = self.renderer.render("system", **system_context(self.rules, config.hint_level, budget))

    def remember(self, record: Any, colour: int) -> None:
        """Add a finished game, seen from ``colour``, to the memory."""
        index = len(self.memory.games) + 1
        self.memory = self.memory.add(GameSummary.from_record(index, record, colour, self.rules.layout))

    def rebuild_memory(self, arena: Any, games: int | None = None) -> None:
        """The memory of the first ``games`` games in the arena's ledger (all by default; self-play: black in even games)."""
        self.memory = EpisodeMemory()
        for index, record in enumerate(arena.ledger.records[:games]):
            self.remember(record, index % 2)

    def adapt(self, arena: Any) -> None:
        """Self-play until the budget is spent (synchronous wrapper of ``adapt_async``)."""
        asyncio.run(self.adapt_async(arena))

    async def adapt_async(self, arena: Any) -> None:
        raise NotImplementedError


class LlmPolicyAgent(MemoryAgent):
    """A model playing every move; see the module docstring."""

    name = "llm-policy"

    def __init__(
        self,
        context: AgentContext,
        rng: np.random.Generator,
        client: ModelClient,
        *,
        budget: int,
        seed: int = 0,
        config: LlmPolicyConfig | None = None,
        renderer: PromptRenderer | None = None,
        on_call: CallSink = _no_call,
        on_game: GameSink | None = None,
        on_belief: BeliefSink | None = None,
        beliefs_done: Sequence[int] = (),
    ) -> None:
        super().__init__(
            context,
            rng,
            client,
            budget=budget,
            seed=seed,
            config=config or LlmPolicyConfig(),
            renderer=renderer,
            on_call=on_call,
            on_game=on_game,
            on_belief=on_belief,
            beliefs_done=beliefs_done,
        )
        self.belief_failures = 0
        self._block: tuple[EpisodeMemory, MemoryBlock] | None = None  # the memory's block, while it is the memory
        self._requests: dict[str, list[Any]] = {}  # request key -> [lock, users] of identical requests under way
        self._last_act: tuple[int, int] | None = None  # (ply, move number) of the last move asked through act()

    # ------------------------------------------------------------------ one move

    def memory_block(self) -> MemoryBlock:
        """The memory fitted to its token budget and rendered: made once per memory, reused for every move."""
        if self._block is None or self._block[0] is not self.memory:
            self._block = (self.memory, memory_block(self.memory, self.config.memory_tokens, self.renderer))
        return self._block[1]

    def messages(self, obs: Observation, wave_game: dict[str, int] | None = None) -> list[dict[str, Any]]:
        """System and move prompts for ``obs`` (the memory fitted to its token budget; ``wave_game``: see move_context)."""
        block = self.memory_block()
        context = move_context(
            obs, block.view, len(self.memory.games), self.budget, self.config.show_legal, self.config.answer_format, wave_game=wave_game
        )
        move = self.renderer.render_reusing("move", {"memory": block.text}, **context)
        return [{"role": "system", "content": self.system.text}, {"role": "user", "content": move.text}]

    async def _ask(self, messages: list[dict[str, Any]], one_at_a_time: bool = False) -> tuple[str, str | None, ModelResponse]:
        request = self.client.request(messages, **self.config.params)
        try:
            response = await (self._complete_one_at_a_time(request) if one_at_a_time else self.client.complete(request))
        except ModelCallError as error:
            kind = FailureKind.TIMEOUT if error.kind == "timeout" else FailureKind.API_ERROR
            raise ModelCallFailed(kind, str(error)) from error
        return response.text, response.finish_reason, response

    async def _complete_one_at_a_time(self, request: ModelRequest) -> ModelResponse:
        """``client.complete``, waiting first for an identical request under way (then usually a cache hit)."""
        key = request.key()
        entry = self._requests.setdefault(key, [asyncio.Lock(), 0])
        entry[1] += 1
        try:
            async with entry[0]:
                return await self.client.complete(request)
        finally:
            entry[1] -= 1
            if not entry[1]:
                del self._requests[key]

    def asker(self, phase: str, game_index: int) -> MoveAsker:
        """The asker of one game; games that may run concurrently (evaluation, a wave) send identical requests one at a time."""
        rng = np.random.default_rng([self.seed, PHASE_CODES[phase], game_index])
        ask = functools.partial(self._ask, one_at_a_time=True)
        free = self.config.free_call_failures
        if free is None:
            free = getattr(self.client, "max_consecutive_failures", None) or 0
        return MoveAsker(
            ask,
            max_retries=self.config.max_retries,
            policy=self.config.on_failure,
            rng=rng,  # type: ignore[arg-type]
            free_call_failures=free,
        )

    def decider(self, phase: str, game_index: int) -> Callable[[Observation], Any]:
        """An async decider for one game (pass its decisions to :meth:`report_calls` afterwards)."""
        asker = self.asker(phase, game_index)
        wave = wave_of(game_index, self.config.wave, self.budget, self.config.checkpoints) if phase == "adapt" else None
        wave_game = (
            None if wave is None or wave.end - wave.start < 2 else {"number": game_index - wave.start + 1, "size": wave.end - wave.start}
        )  # the games of a wave differ by it

        async def decide(obs: Observation) -> MoveDecision:
            return await asker.decide(obs, self.messages(obs, wave_game))

        decide.name = self.name  # type: ignore[attr-defined]
        return decide

    def act(self, observation: Observation) -> int:
        """Synchronous move (outside a running event loop), its calls reported to ``on_call``; a forfeit raises.

        The calls of a game played through ``act`` (a match or tournament game) carry the
        decision's ply (:func:`~harness.play.game.decision_ply`) and game index 0: the
        harness that records them knows which game it is.
        """
        previous = self._last_act
        if previous is not None and observation.move_number <= previous[1]:
            previous = None  # a new game
        ply = decision_ply(previous, observation)
        decision = asyncio.run(self.decider("eval", 0)(observation))
        self._last_act = (ply, observation.move_number)
        self.report_calls("eval", 0, [PlyDecision(ply, observation.colour, decision)])
        if decision.move is None:
            raise RuntimeError("the model forfeited: no legal move after the retries")
        return decision.move

    def report_calls(self, phase: str, game_index: int, decisions: Sequence[Any]) -> None:
        """One ``on_call`` per attempt of the game's decisions (PlyDecision), in play order."""
        template_hash = self.renderer.template_hash("move")
        for ply_decision in decisions:
            for number, attempt in enumerate(ply_decision.decision.attempts):
                read = attempt.parsed if isinstance(attempt.parsed, ParsedMove) else None
                self.on_call(
                    call_fields(
                        attempt.meta,
                        game_index=game_index,
                        phase=phase,
                        ply=ply_decision.ply,
                        attempt=number,
                        messages=list(attempt.messages),
                        reply=attempt.text,
                        finish_reason=attempt.finish_reason,
                        parsed_move=read.notation if read else None,
                        verdict=attempt.verdict,
                        failure_kind=attempt.failure_kind.value if attempt.failure_kind else None,
                        template_hash=template_hash,
                        reason=attempt.reason if attempt.verdict != "legal" else None,
                        parse_span=list(read.span) if read and read.span else None,
                        parse_candidates=[{"move": move, "source": source, "span": list(span)} for move, source, span in read.candidates]
                        if read
                        else None,
                    )
                )

    # ------------------------------------------------------------------ adaptation

    async def adapt_async(self, arena: Any) -> None:
        """Self-play in waves of ``config.wave`` games (:mod:`harness.prompting.waves`) until the budget is spent.

        The games of a wave are played at once, their prompts carrying the memory of the games before
        the wave; the memory takes the wave's games (in game order) when the wave ends. Each game's calls
        and record are reported as soon as the arena has entered it (games are entered in game order). A
        run resumed in the middle of a wave plays the rest of it with the memory the wave started with.
        """
        self.rebuild_memory(arena, wave_of(arena.games_played, self.config.wave, self.budget, self.config.checkpoints).start)
        while True:
            wave = wave_of(arena.games_played, self.config.wave, self.budget, self.config.checkpoints)
            known = wave.start if arena.remaining > 0 else arena.games_played  # the games before this wave (all, at the end)
            for index in range(len(self.memory.games), known):
                self.remember(arena.ledger.records[index], index % 2)
            await self._maybe_belief(arena.games_played)
            if arena.remaining == 0:
                break
            results = await asyncio.gather(
                *(self._adapt_game(arena, index) for index in range(arena.games_played, wave.end)), return_exceptions=True
            )
            failures = [r for r in results if isinstance(r, BaseException)]
            if failures:  # the first that is not merely a later game left unentered because of it
                raise next((f for f in failures if not isinstance(f, GameNotEntered)), failures[0])

    async def _adapt_game(self, arena: Any, index: int) -> None:
        decide = self.decider("adapt", index)
        game, decisions = await arena.play_verified(decide, decide, (self.name, self.name))
        if arena.games_played != index + 1:  # the arena enters games in the order they started
            raise RuntimeError(f"adaptation game {index} was entered as game {arena.games_played - 1}")
        self.report_calls("adapt", index, decisions)
        if self.on_game is not None:
            self.on_game("adapt", index, game, index % 2)

    async def _maybe_belief(self, games_played: int) -> None:
        if games_played not in self.config.checkpoints or games_played in self.beliefs_done:
            return
        self.beliefs_done.add(games_played)
        block = self.memory_block()
        prompt = self.renderer.render_reusing("belief", {"memory": block.text}, **belief_context(block.view, games_played, self.budget))
        messages = [{"role": "system", "content": self.system.text}, {"role": "user", "content": prompt.text}]
        belief, error, response, text = None, None, None, None
        try:
            response = await self.client.complete(self.client.request(messages, **self.config.params))
            text = response.text
            belief = parse_belief(text)
        except ModelCallError as failure:
            error = f"call failed: {failure}"
        except BeliefParseError as failure:
            error = str(failure)
        if belief is None:
            self.belief_failures += 1
        self.on_call(
            call_fields(
                response,
                game_index=None,
                phase="adapt",
                ply=None,
                attempt=0,
                messages=messages,
                reply=text,
                finish_reason=response.finish_reason if response else None,
                parsed_move=None,
                verdict=None if response else "call_failed",
                failure_kind=None if belief else "belief_error",
                template_hash=prompt.template_hash,
            )
        )
        if self.on_belief is not None:
            self.on_belief(games_played, belief, error)


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
    return fields


@register(
    "llm-policy",
    "A model picks every move from the prompt (board, legal moves, episode memory); adapts within the budget",
    params=SPEC_PARAMS,
    model_driven=True,
)
def llm_policy_entry(
    context: AgentContext, rng: np.random.Generator, model: str = "", hint: str = "ratio", retries: int = 2, temperature: float = 0.0
) -> Agent:
    """From a spec (``llm-policy:model=M``): a frozen player for matches and tournaments, each call recorded
    through ``context.record_call``; after the re-asks it plays a random legal move (counted as a fallback)."""
    agent = LlmPolicyAgent(
        context,
        rng,
        spec_client("llm-policy", model, rng),
        budget=0,
        seed=int(rng.integers(2**31)),
        config=LlmPolicyConfig(hint_level=hint, max_retries=retries, on_failure="random", params={"temperature": temperature}),
        on_call=context.record_call or _no_call,
    )
    agent.freeze()
    return agent
