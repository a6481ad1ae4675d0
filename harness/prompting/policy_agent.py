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
from typing import Any, cast

import numpy as np

from agents.base import Agent, AgentContext
from agents.spec import register
from engine.protocol.observation import Observation
from harness.models.errors import ModelCallError
from harness.models.messages import ModelRequest, ModelResponse
from harness.play.decisions import FailureKind, MoveDecision, ParsedMove
from harness.play.game import PlyDecision, decision_ply
from harness.play.open_games import GameNotEntered
from harness.prompting.beliefs import BeliefParseError, parse_belief
from harness.prompting.memory import EpisodeMemory
from harness.prompting.model_agent import ModelAgent, adapt_call_fields, ask_parsed, call_fields, game_rng, named
from harness.prompting.model_specs import SPEC_PARAMS
from harness.prompting.move_formats import MoveReader, answer_format, format_params, legal_notations
from harness.prompting.moves import FallbackPolicy, ModelCallFailed, MoveAsker
from harness.prompting.renderer import MemoryBlock, belief_context, memory_block, move_context
from harness.prompting.waves import wave_of


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
    move_format: str = "text"  # text (a MOVE: line), tool (a play_move call) or json (a structured-output object)


class LlmPolicyAgent(ModelAgent[LlmPolicyConfig]):
    """A model playing every move; see the module docstring."""

    name = "llm-policy"
    config_class = LlmPolicyConfig

    def setup(self) -> None:
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
        answer = answer_format(self.config.move_format, self.config.answer_format)
        context = move_context(obs, block.view, len(self.memory.games), self.budget, self.config.show_legal, answer, wave_game=wave_game)
        move = self.renderer.render_reusing("move", {"memory": block.text}, **context)
        return [{"role": "system", "content": self.system.text}, {"role": "user", "content": move.text}]

    async def _ask(
        self, messages: list[dict[str, Any]], one_at_a_time: bool = False, fields: dict[str, Any] | None = None
    ) -> tuple[str, str | None, ModelResponse]:
        request = self.client.request(messages, **self.config.params, **(fields or {}))
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
        rng = game_rng(self.seed, phase, game_index)
        ask = functools.partial(self._ask, one_at_a_time=True)
        free = self.config.free_call_failures
        if free is None:
            free = getattr(self.client, "max_consecutive_failures", None) or 0
        return MoveAsker(
            ask,
            max_retries=self.config.max_retries,
            policy=cast(FallbackPolicy, self.config.on_failure),  # MoveAsker checks it
            rng=rng,  # type: ignore[arg-type]
            free_call_failures=free,
            reader=MoveReader(self.config.move_format),
        )

    def format_fields(self, obs: Observation) -> dict[str, Any] | None:
        """The request fields of the move format for ``obs`` (the legal moves as the schema's enum when shown), None for text."""
        if self.config.move_format == "text":
            return None
        legal = legal_notations(obs.legal_moves, obs.rules.layout) if self.config.show_legal else None
        return format_params(self.config.move_format, legal)

    def decider(self, phase: str, game_index: int) -> Callable[[Observation], Any]:
        """An async decider for one game (pass its decisions to :meth:`report_calls` afterwards)."""
        asker = self.asker(phase, game_index)
        wave = wave_of(game_index, self.config.wave, self.budget, self.config.checkpoints) if phase == "adapt" else None
        wave_game = (
            None if wave is None or wave.end - wave.start < 2 else {"number": game_index - wave.start + 1, "size": wave.end - wave.start}
        )  # the games of a wave differ by it

        async def decide(obs: Observation) -> MoveDecision:
            fields = self.format_fields(obs)
            ask = None if fields is None else functools.partial(self._ask, one_at_a_time=True, fields=fields)
            return await asker.decide(obs, self.messages(obs, wave_game), ask)

        return named(decide, self.name)

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
        game, decisions = await self.self_play(arena, decide)
        if arena.games_played != index + 1:  # the arena enters games in the order they started
            raise RuntimeError(f"adaptation game {index} was entered as game {arena.games_played - 1}")
        self.report_calls("adapt", index, decisions)
        self.emit_game(index, game)

    async def _maybe_belief(self, games_played: int) -> None:
        if games_played not in self.config.checkpoints or not self.first_belief(games_played):
            return
        block = self.memory_block()
        prompt = self.renderer.render_reusing("belief", {"memory": block.text}, **belief_context(block.view, games_played, self.budget))
        messages = [{"role": "system", "content": self.system.text}, {"role": "user", "content": prompt.text}]
        response, belief, error = await ask_parsed(self.client, messages, self.config.params, parse_belief, BeliefParseError)
        if belief is None:
            self.belief_failures += 1
        self.on_call(adapt_call_fields(response, messages, prompt.template_hash, None if belief else "belief_error"))
        self.emit_belief(games_played, belief, error)


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
    return LlmPolicyAgent.from_spec(
        context,
        rng,
        model,
        lambda: LlmPolicyConfig(hint_level=hint, max_retries=retries, on_failure="random", params={"temperature": temperature}),
    )
