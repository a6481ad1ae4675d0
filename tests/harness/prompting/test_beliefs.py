"""Belief schema, tolerant parsing, scoring against the true K, checkpoint schedules."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest

from engine.protocol.belief import BELIEF_SCHEMA_VERSION, Belief
from harness.prompting.beliefs import BeliefParseError, parse_belief, parse_checkpoints, score_belief
from harness.prompting.renderer import DEFAULT_PROMPTS_DIR

GOOD = '{"schema_version": 1, "regime": "majority", "k_low": 0.7, "k_high": 0.9, "confidence": 0.6, "rationale": "wins near 0.75"}'


def test_plain_json() -> None:
    belief = parse_belief(GOOD)
    assert (belief.regime, belief.k_low, belief.k_high, belief.confidence) == ("majority", 0.7, 0.9, 0.6)
    assert belief.schema_version == BELIEF_SCHEMA_VERSION


def test_fenced_json_and_prose() -> None:
    reply = f"Here is my belief.\n```json\n{GOOD}\n```\nThanks."
    assert parse_belief(reply) == parse_belief(GOOD)
    assert parse_belief(f"```\n{GOOD}\n```").regime == "majority"


def test_embedded_json_with_braces_in_prose() -> None:
    reply = 'I think the set {wins} looks odd. My answer: {"regime": "minority", "k_low": -0.1, "k_high": 0.3, "confidence": 0.4} done'
    belief = parse_belief(reply)
    assert belief.regime == "minority" and belief.rationale is None
    assert parse_belief('{"belief": ' + GOOD + "}").k_high == 0.9  # wrapped
    assert parse_belief('{"note": "x"} then ' + GOOD).regime == "majority"  # first valid object wins


def test_extra_fields_are_ignored() -> None:
    assert parse_belief(GOOD[:-1] + ', "target_ratio": 0.7}').regime == "majority"


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("", "empty"),
        ("I believe majority wins, K about 0.8", "no JSON object"),
        ('{"regime": "majority", "k_low": 0.7, "k_high": 0.9,', "no JSON object"),  # truncated
        ('{"regime": "most", "k_low": 0.7, "k_high": 0.9, "confidence": 0.5}', "regime"),
        ('{"regime": "majority", "k_low": 0.9, "k_high": 0.7, "confidence": 0.5}', "k_low .* must not exceed k_high"),
        ('{"regime": "majority", "k_low": 0.7, "k_high": 0.9, "confidence": 1.5}', "confidence"),
        ('{"regime": "majority", "k_low": 0.7, "k_high": 0.9}', "confidence: Field required"),
        ('{"regime": "majority", "k_low": "high", "k_high": 0.9, "confidence": 0.5}', "k_low"),
        ('{"schema_version": 7, "regime": "unknown", "k_low": 0, "k_high": 1, "confidence": 0.5}', "schema_version 7"),
        ("[1, 2, 3]", "no JSON object"),
    ],
)
def test_malformed_replies_raise_a_clear_error(reply: str, message: str) -> None:
    with pytest.raises(BeliefParseError, match=message):
        parse_belief(reply)


def test_non_finite_numbers_are_rejected() -> None:
    with pytest.raises(BeliefParseError, match="finite"):
        parse_belief('{"regime": "majority", "k_low": 0.7, "k_high": Infinity, "confidence": 0.5}')


def _belief(regime: str, low: float, high: float, confidence: float = 0.5) -> Belief:
    return Belief(regime=regime, k_low=low, k_high=high, confidence=confidence)


def test_scoring_known_cases() -> None:
    score = score_belief(_belief("majority", 0.7, 0.9), Fraction(4, 5))
    assert score.regime_correct and score.contains_k and score.true_regime == "majority"
    assert score.width == pytest.approx(0.2) and score.midpoint_error == pytest.approx(0.0)

    edge = score_belief(_belief("majority", 0.8, 0.8), "0.8")  # closed interval, exact decimals
    assert edge.contains_k and edge.width == 0 and edge.midpoint_error == 0

    wrong = score_belief(_belief("majority", 0.55, 0.65), Fraction(-1, 100))
    assert not wrong.regime_correct and not wrong.contains_k and wrong.true_regime == "minority"
    assert wrong.midpoint_error == pytest.approx(0.61)

    unsure = score_belief(_belief("unknown", -1.0, 2.0), Fraction(101, 100))
    assert not unsure.regime_correct and unsure.contains_k and unsure.width == pytest.approx(3.0)

    minority = score_belief(_belief("minority", 0.1, 0.3, 0.9), 0.2)
    assert minority.regime_correct and minority.contains_k and minority.confidence == 0.9
    assert score_belief(_belief("majority", 0.7, 0.9), 0.6).contains_k is False
    assert set(score.model_dump()) == {"true_regime", "regime_correct", "contains_k", "width", "midpoint_error", "confidence"}


def test_belief_prompt_lists_exactly_the_schema_fields() -> None:
    source = (DEFAULT_PROMPTS_DIR / "belief.j2").read_text()
    example = next(line for line in source.splitlines() if line.startswith('{"schema_version"'))
    assert set(re.findall(r'"(\w+)":', example)) == set(Belief.model_fields)


def test_parse_checkpoints() -> None:
    assert parse_checkpoints("10,50,200,2000") == (10, 50, 200, 2000)
    assert parse_checkpoints(" 10 , 50 ") == (10, 50)
    assert parse_checkpoints("2000", budget=2000) == (2000,)


@pytest.mark.parametrize(
    ("text", "budget", "message"),
    [
        ("", None, "comma-separated"),
        ("10,fifty", None, "'fifty' is not a whole number"),
        ("10,,50", None, "'' is not a whole number"),
        ("-5,10", None, "not a whole number"),
        ("0,10", None, "at least 1"),
        ("50,10", None, "must increase"),
        ("10,10", None, "must increase"),
        ("10,5000", 2000, "exceeds the budget of 2000"),
        ("1.5", None, "not a whole number"),
    ],
)
def test_parse_checkpoints_errors(text: str, budget: int | None, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_checkpoints(text, budget)
