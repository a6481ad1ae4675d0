"""What the decision vocabulary left free (survivors of `make mutation MODULES=play`): failure counts.

Its tests lived in ``tests/harness/prompting``, outside the play group; pinned here: a decision's
failed attempts counted by kind (repeats, attempts without a failure), its forfeit and fallback,
several decisions summed, counts added field by field, read by kind, and nothing else added.
"""

from __future__ import annotations

import pytest

from harness.play.decisions import Attempt, FailureCounts, FailureKind, MoveDecision

ALL = FailureCounts(parse_error=1, illegal_move=2, empty_or_refusal=3, truncated=4, timeout=5, api_error=6, forfeits=7, fallbacks=8)


def attempt(kind):
    verdict = "legal" if kind is None else "unparsed"
    return Attempt(messages=(), text="d3", finish_reason="stop", parsed=None, verdict=verdict, failure_kind=kind)


def test_a_decision_counts_each_failed_attempt_by_kind_and_its_outcome():
    decision = MoveDecision(
        None,
        True,
        [attempt(FailureKind.TIMEOUT), attempt(FailureKind.TIMEOUT), attempt(FailureKind.PARSE_ERROR), attempt(None)],
        fallback_used=True,
    )
    assert decision.failure_counts == FailureCounts(timeout=2, parse_error=1, forfeits=1, fallbacks=1)
    assert decision.failure_counts.total == 3 and decision.retries == 3
    assert MoveDecision(19, False, [attempt(None)]).failure_counts == FailureCounts()
    assert MoveDecision(19, False, [attempt(FailureKind.ILLEGAL_MOVE), attempt(None)], fallback_used=True).failure_counts == FailureCounts(
        illegal_move=1, fallbacks=1
    )


def test_decisions_are_summed_per_kind():
    decisions = [
        MoveDecision(None, True, [attempt(FailureKind.API_ERROR)]),
        MoveDecision(20, False, [attempt(FailureKind.API_ERROR), attempt(FailureKind.TRUNCATED)], fallback_used=True),
        MoveDecision(None, True, [attempt(FailureKind.EMPTY_OR_REFUSAL)], fallback_used=True),
        MoveDecision(21, False, []),
    ]
    assert FailureCounts.of_decisions(decisions) == FailureCounts(api_error=2, truncated=1, empty_or_refusal=1, forfeits=2, fallbacks=2)
    assert FailureCounts.of_decisions([]) == FailureCounts()


def test_counts_add_field_by_field_and_read_by_kind():
    total = ALL + ALL + FailureCounts(timeout=1)
    assert total == FailureCounts(
        parse_error=2, illegal_move=4, empty_or_refusal=6, truncated=8, timeout=11, api_error=12, forfeits=14, fallbacks=16
    )
    assert [ALL.of(kind) for kind in FailureKind] == [1, 2, 3, 4, 5, 6]
    assert ALL.of("api_error") == 6 and ALL.total == 21
    with pytest.raises(ValueError, match="'forfeits' is not a valid FailureKind"):
        ALL.of("forfeits")


def test_counts_add_only_counts():
    assert ALL.__add__(3) is NotImplemented
    with pytest.raises(TypeError, match="unsupported operand"):
        ALL + 3  # noqa: B018
