"""MoveAsker.free_call_failures: calls that failed outright do not use up re-asks (the model saw nothing)."""

from __future__ import annotations

import asyncio

import pytest

from engine.notation import parse_move
from harness.play.decisions import FailureCounts
from harness.prompting.moves import ModelCallFailed, MoveAsker
from tests.harness.prompting.moves_helpers import ENV, OBS, PROMPT, scripted


def test_free_call_failures_do_not_use_up_the_re_asks():
    failures = [ModelCallFailed("api_error", "HTTP 503") for _ in range(4)]
    decision = asyncio.run(MoveAsker(scripted(*failures, "hmm", "e3"), max_retries=1, free_call_failures=4).decide(OBS, PROMPT))
    assert decision.move == parse_move("e3", ENV.layout) and not decision.forfeited
    assert decision.failure_counts == FailureCounts(api_error=4, parse_error=1)


def test_failures_past_the_free_ones_count_as_before():
    failures = [ModelCallFailed("timeout") for _ in range(3)]
    decision = asyncio.run(MoveAsker(scripted(*failures), max_retries=1, free_call_failures=1).decide(OBS, PROMPT))
    assert decision.forfeited and decision.failure_counts == FailureCounts(timeout=3, forfeits=1)
    without = asyncio.run(MoveAsker(scripted(*failures[:2]), max_retries=1).decide(OBS, PROMPT))
    assert without.forfeited and len(without.attempts) == 2  # the default: every failure is a re-ask


def test_a_negative_free_count_is_refused():
    with pytest.raises(ValueError, match="free_call_failures=-1: give a whole number 0 or more"):
        MoveAsker(scripted(), free_call_failures=-1)
