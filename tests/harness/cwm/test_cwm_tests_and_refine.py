"""Unit tests from transcripts, and both refinement modes with scripted replies (a wrong program, then a right one)."""

from __future__ import annotations

import asyncio
import random

import pytest

from engine import make_env
from harness.cwm.refine import RefineConfig, Synthesizer
from harness.cwm.tests_from_games import TestSuite, random_transitions, run_tests
from harness.cwm.world import evidence_rows, extract_code
from harness.models.client import ModelClient
from harness.models.mock import MockModel
from harness.prompting.model_agent import call_fields
from harness.sandbox.client import SandboxWorker
from harness.sandbox.limits import Limits
from harness.sandbox.reference_program import reference_source

LIMITS = Limits(call_s=30.0, start_s=20.0, memory_bytes=512 << 20)
NO_PASS = reference_source(0.8).replace('return [] if not _placements(state, 1 - state["player"]) else [PASS]', "return []")


def _suite(env_id: int, games: int = 8, seed: int = 0) -> tuple[TestSuite, list]:
    env, rng, suite, outcomes = make_env(env_id), random.Random(seed), TestSuite(), []
    rules = env.rules
    for game in range(games):
        state, moves = rules.initial_state(), []
        while legal := rules.legal_moves(state):
            moves.append(rng.choice(legal))
            state = rules.play(state, moves[-1])
        outcomes.append(suite.add_game(rules, moves, env.condition.rewards(*rules.counts(state)), game))
    return suite, outcomes


def _run(source: str, tests) -> object:
    with SandboxWorker(source, LIMITS) as worker:
        return run_tests(worker, tests)


def test_the_true_program_passes_every_test_a_wrong_k_fails_outcomes_only(sandbox_ready):
    suite, _ = _suite(7 * 2 + 5)  # 6x8, K = 0.8
    right, wrong = _run(reference_source(0.8), suite.tests), _run(reference_source(1.01), suite.tests)
    assert right.all_passed and right.h == 1.0 and right.transition == 1.0 and right.outcome == 1.0
    assert wrong.transition == 1.0 and wrong.outcome < 1.0 and not wrong.all_passed
    assert {f.test.kind for f in wrong.failures} == {"outcome"}
    assert "expected returns" in wrong.failures[0].describe()


def test_blitz_and_random_transitions_check_the_turn_limit_and_passes(sandbox_ready):
    suite, _ = _suite(7 * 6 + 5, games=4)  # blitz: 10 placements each
    held = random_transitions(make_env(7 * 6 + 5).rules, 150, seed=3)
    assert len(held) == 150
    assert _run(reference_source(1.01), suite.tests + held).all_passed
    no_limit = reference_source(1.01).replace('limit = state["limit"]', "limit = None")
    assert no_limit != reference_source(1.01)
    assert _run(no_limit, held).transition < 1.0
    passes, _ = _suite(7 * 0 + 4, games=6)  # 12x10 with obstacles: passes happen
    if any(t.expected[0] == [-1] for t in passes.tests if t.kind == "transition"):
        assert _run(NO_PASS, passes.tests).transition < 1.0


def test_outcome_accuracy_weights_each_reward_value_alike(sandbox_ready):
    suite, _ = _suite(7 * 2 + 5, games=12)
    outcomes = [t for t in suite.tests if t.kind == "outcome"]
    by_value: dict[tuple, float] = {}
    for test in outcomes:
        by_value[tuple(test.expected[1])] = by_value.get(tuple(test.expected[1]), 0.0) + test.weight
    assert len(by_value) >= 2 and all(total == pytest.approx(1.0) for total in by_value.values())


def test_a_program_that_does_not_load_fails_every_test_as_a_value(sandbox_ready):
    suite, _ = _suite(7 * 2 + 5, games=2)
    score = _run("def broken(:\n", suite.tests)
    assert score.load_failure is not None and score.passed == 0 and score.h == 0.0


@pytest.mark.parametrize("mode", ["conversation", "tree"])
def test_both_refinement_modes_end_on_a_program_passing_every_test(sandbox_ready, mode):
    env_id = 7 * 2 + 5
    suite, outcomes = _suite(env_id, games=10)
    replies = [
        "I cannot write code today.",
        f"```python\n{reference_source(1.01)}```",
        f"Corrected:\n```python\n{reference_source(0.8)}```",
    ]
    model = MockModel(replies=replies, name="script")
    calls: list[dict] = []
    synth = Synthesizer(
        ModelClient("mock/scripted", mock=model),
        make_env(env_id).rules,
        on_call=calls.append,
        config=RefineConfig(mode=mode, calls_per_episode=4, limits=LIMITS),
        budget=50,
    )
    start = asyncio.run(synth.synthesize(suite.tests, evidence_rows(outcomes), 10))
    assert start.source is None  # no code in the reply
    best = asyncio.run(synth.refine(start, suite.tests, evidence_rows(outcomes), 10))
    assert best.score.all_passed and best.source == extract_code(replies[2]) and synth.calls == 3
    assert [c["failure_kind"] for c in calls] == ["code_error", None, None] and synth.code_errors == 1
    assert set(calls[0]) == set(
        call_fields(
            None,
            game_index=None,
            phase="adapt",
            ply=None,
            attempt=0,
            messages=[],
            reply=None,
            finish_reason=None,
            parsed_move=None,
            verdict=None,
            failure_kind=None,
            template_hash=None,
            reason=None,
        )
    ) | {
        "tokens_in",
        "tokens_out",
        "cost_usd",
        "cached_tokens_in",
        "concurrency",
        "latency_s",
        "retries",
        "errors",
        "cache_key",
        "cache_hit",
    }
    assert all(c["template_hash"] for c in calls)
    assert "Failing tests:" in calls[2]["messages"][-1]["content"] and "expected returns" in calls[2]["messages"][-1]["content"]
