"""Synthesis and refinement of candidate programs: every model call reported, every candidate tested in the sandbox.

:class:`Synthesizer` asks the model for a program (``cwm_synthesize.j2``), tests it
(:func:`~harness.cwm.tests_from_games.run_tests` in a fresh
:class:`~harness.sandbox.client.SandboxWorker`) and refines it, in one of two modes:

- ``conversation``: the failing tests (expected vs actual, the traceback) are
  appended to the dialogue (``cwm_refine.j2``) and a corrected program is asked for;
  the dialogue goes on from the latest reply;
- ``tree``: REx-style Thompson sampling over every candidate so far: each gets
  ``theta ~ Beta(1 + C*h, 1 + C*(1 - h) + times refined)`` (``h`` the weighted
  fraction of tests passed), the largest is refined (a single-turn prompt holding
  its source and its failing tests) and its child joins the candidates.

Both stop when a candidate passes every test or the episode's call budget is
spent, and return the best candidate so far (most ``h``, the earliest on a tie).
Every call goes to ``on_call`` with the fields of the other model agents
(:func:`harness.prompting.model_agent.adapt_call_fields`); a reply with no usable
program (no code, a program that does not load) has ``failure_kind`` ``code_error``,
a failed call ``call_failed``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.rules import Rules
from harness.cwm.tests_from_games import Score, TestFailure, UnitTest, run_tests
from harness.cwm.world import extract_code, rules_layout
from harness.models.client import ModelClient
from harness.models.errors import ModelCallError
from harness.models.messages import ModelResponse
from harness.prompting.model_agent import CallSink, adapt_call_fields
from harness.prompting.renderer import PromptRenderer, system_context
from harness.sandbox.client import SandboxWorker
from harness.sandbox.limits import Limits

MODES = ("conversation", "tree")
CandidateHook = Callable[["Candidate", SandboxWorker], Awaitable[None] | None]


@dataclass(frozen=True)
class RefineConfig:
    """How programs are asked for and refined."""

    mode: str = "tree"
    calls_per_episode: int = 4  # model calls of one refinement episode (after the synthesis)
    c: float = 5.0  # REx's C: how strongly h pulls the sampling
    shown_failures: int = 6
    params: dict[str, Any] = field(default_factory=lambda: {"temperature": 0.0})
    limits: Limits = field(default_factory=lambda: Limits(call_s=30.0, start_s=20.0, cpu_s=3600))
    unsandboxed: bool = False

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"refinement mode {self.mode!r}: choose one of {', '.join(MODES)}")
        if self.calls_per_episode < 0 or self.c < 0:
            raise ValueError("calls_per_episode and c must be >= 0")


@dataclass
class Candidate:
    """A program (None when the reply held none), its score on the training tests, and its lineage."""

    source: str | None
    score: Score
    call: int  # the model call that wrote it (1-based, over the agent's life)
    messages: list[dict[str, Any]] = field(default_factory=list)  # the dialogue that ends with its reply
    refined: int = 0

    @property
    def h(self) -> float:
        return self.score.h if self.source is not None else 0.0


class Synthesizer:
    """Asks a model for programs of one game and refines them against unit tests (module docstring)."""

    def __init__(
        self,
        client: ModelClient,
        rules: Rules,
        *,
        renderer: PromptRenderer | None = None,
        config: RefineConfig | None = None,
        on_call: CallSink,
        seed: int = 0,
        on_candidate: CandidateHook | None = None,
        budget: int = 0,
    ) -> None:
        self.client, self.rules, self.on_call = client, rules, on_call
        self.renderer = renderer or PromptRenderer()
        self.config = config or RefineConfig()
        self.on_candidate = on_candidate
        self.budget = budget
        self.calls = 0
        self.code_errors = 0
        self.sandbox_failures: dict[str, int] = {}
        self.tested: list[Candidate] = []  # every usable candidate, in the order written (rescored ones again)
        self._rng = random.Random(seed)
        self._layout = rules_layout(rules)

    # ------------------------------------------------------------------ prompts

    def synthesis_messages(self, evidence: Sequence[dict[str, Any]], games_played: int) -> tuple[list[dict[str, Any]], str]:
        """The synthesis prompt for the evidence so far, and its template hash."""
        prompt = self.renderer.render(
            "cwm_synthesize",
            rules=system_context(self.rules, "none", self.budget)["rules"],
            layout=json.dumps(self._layout, separators=(", ", ": ")),
            evidence=list(evidence),
            games_played=games_played,
            budget=self.budget,
        )
        return [{"role": "user", "content": prompt.text}], prompt.template_hash

    def refine_prompt(self, candidate: Candidate, evidence: Sequence[dict[str, Any]], with_program: bool) -> tuple[str, str]:
        """The text asking to correct ``candidate`` (its failing tests, the evidence), and the template hash."""
        prompt = self.renderer.render(
            "cwm_refine",
            program=(candidate.source or "").rstrip() if with_program else "",
            passed=candidate.score.passed,
            total=candidate.score.total,
            failures=self._shown(candidate.score.failures),
            evidence=list(evidence),
        )
        return prompt.text, prompt.template_hash

    def _shown(self, failures: Sequence[TestFailure]) -> list[str]:
        outcomes = sorted((f for f in failures if f.test.kind == "outcome"), key=lambda f: -f.test.weight)
        transitions = [f for f in failures if f.test.kind != "outcome"]
        half = max(1, self.config.shown_failures // 2)
        chosen = outcomes[:half] + transitions[: self.config.shown_failures - min(half, len(outcomes))]
        return [f.describe() for f in chosen[: self.config.shown_failures]]

    # ------------------------------------------------------------------ calls and tests

    async def _ask(self, messages: list[dict[str, Any]], template_hash: str, tests: Sequence[UnitTest]) -> Candidate:
        """One model call, its program tested; the call reported once its verdict is known."""
        self.calls += 1
        response: ModelResponse | None = None
        reason = None
        try:
            response = await self.client.complete(self.client.request(messages, **self.config.params))
        except ModelCallError as error:
            reason = f"call failed: {error}"
        text = response.text if response is not None else None
        source = extract_code(text)
        score = Score(None, None, 0, len(tests))
        if source is not None:
            score = await self._test(source, tests)
            if score.load_failure is not None:
                reason = f"the program does not load: {score.load_failure}"
        elif response is not None:
            reason = "the reply holds no program (expected one ```python block)"
        usable = source is not None and score.load_failure is None
        if response is not None and not usable:
            self.code_errors += 1
        failure_kind = None if usable else ("code_error" if response is not None else "call_failed")
        self.on_call(adapt_call_fields(response, messages, template_hash, failure_kind, reason=reason))
        dialogue = list(messages) + ([{"role": "assistant", "content": text or ""}] if response is not None else [])
        candidate = Candidate(source if usable else None, score, self.calls, dialogue)
        if usable:
            self.tested.append(candidate)
        return candidate

    async def _test(self, source: str, tests: Sequence[UnitTest]) -> Score:
        worker = SandboxWorker(source, self.config.limits, unsandboxed=self.config.unsandboxed)
        try:
            score = run_tests(worker, tests)
            if score.load_failure is None and self.on_candidate is not None:
                candidate = Candidate(source, score, self.calls)
                hooked = self.on_candidate(candidate, worker)
                if hooked is not None:
                    await hooked
            return score
        finally:
            for kind, count in worker.failures.items():
                self.sandbox_failures[kind] = self.sandbox_failures.get(kind, 0) + count
            worker.close()

    async def rescore(self, candidate: Candidate, tests: Sequence[UnitTest]) -> Candidate:
        """``candidate`` scored again on ``tests`` (new tests added since it was written)."""
        if candidate.source is None:
            return candidate
        rescored = Candidate(
            candidate.source, await self._test(candidate.source, tests), candidate.call, candidate.messages, candidate.refined
        )
        self.tested.append(rescored)
        return rescored

    # ------------------------------------------------------------------ synthesis and refinement

    async def synthesize(self, tests: Sequence[UnitTest], evidence: Sequence[dict[str, Any]], games_played: int) -> Candidate:
        """A first program from the synthesis prompt."""
        messages, template_hash = self.synthesis_messages(evidence, games_played)
        return await self._ask(messages, template_hash, tests)

    async def refine(
        self, start: Candidate, tests: Sequence[UnitTest], evidence: Sequence[dict[str, Any]], games_played: int, calls: int | None = None
    ) -> Candidate:
        """Refine from ``start`` until a candidate passes every test or ``calls`` calls are spent; the best one."""
        calls = self.config.calls_per_episode if calls is None else calls
        if self.config.mode == "conversation":
            return await self._conversation(start, tests, evidence, games_played, calls)
        return await self._tree(start, tests, evidence, games_played, calls)

    async def _conversation(
        self, start: Candidate, tests: Sequence[UnitTest], evidence: Sequence[dict[str, Any]], games_played: int, calls: int
    ) -> Candidate:
        best = current = start
        for _ in range(calls):
            if best.score.all_passed:
                break
            if not current.messages:  # a candidate from elsewhere: start the dialogue from the synthesis prompt
                messages, _ = self.synthesis_messages(evidence, games_played)
                current.messages = messages + [{"role": "assistant", "content": f"```python\n{current.source or ''}```"}]
            text, template_hash = self.refine_prompt(current, evidence, with_program=current.source is None)
            child = await self._ask(current.messages + [{"role": "user", "content": text}], template_hash, tests)
            current = (
                child
                if child.source is not None
                else Candidate(current.source, current.score, current.call, child.messages, current.refined + 1)
            )
            if child.h > best.h:
                best = child
        return best

    async def _tree(
        self, start: Candidate, tests: Sequence[UnitTest], evidence: Sequence[dict[str, Any]], games_played: int, calls: int
    ) -> Candidate:
        candidates, best = [start], start
        synthesis, _ = self.synthesis_messages(evidence, games_played)
        for _ in range(calls):
            if best.score.all_passed:
                break
            c = self.config.c
            pick = max(candidates, key=lambda k: self._rng.betavariate(1 + c * k.h, 1 + c * (1 - k.h) + k.refined))
            pick.refined += 1
            if pick.source is None:
                child = await self._ask(synthesis, self.renderer.template_hash("cwm_synthesize"), tests)
            else:
                text, template_hash = self.refine_prompt(pick, evidence, with_program=True)
                merged = [{"role": "user", "content": synthesis[0]["content"] + "\n\n" + text}]
                child = await self._ask(merged, template_hash, tests)
            candidates.append(child)
            if child.h > best.h:
                best = child
        return best
