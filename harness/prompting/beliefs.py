"""Belief elicitation: the schema a model answers in, a tolerant parser, and scoring against the truth.

At checkpoints (``parse_checkpoints("10,50,200,2000")``, games finished) the agent
is asked (``prompts/belief.j2``) for its belief about the hidden condition as a
:class:`Belief`. Scoring with the true K happens afterwards in the harness
(:func:`score_belief`); the model never sees K.

Regimes: ``majority`` means K > 0.5 (a win needs more than half of the discs),
``minority`` means K < 0.5.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from engine.condition import HALF, as_fraction
from engine.protocol.belief import Belief, Regime

Parsed = TypeVar("Parsed", bound=BaseModel)
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


class BeliefParseError(ValueError):
    """A reply that holds no valid belief; the message says what was wrong."""


class BeliefScore(BaseModel):
    """How a belief compares with the true K (computed after the fact, never shown to the model)."""

    model_config = ConfigDict(frozen=True)

    true_regime: Regime
    regime_correct: bool
    contains_k: bool
    width: float
    midpoint_error: float
    confidence: float


def true_regime(k: Fraction) -> Regime:
    """``majority`` for K > 0.5, ``minority`` for K < 0.5."""
    return "majority" if k > HALF else "minority"


def score_belief(belief: Belief, true_k: Fraction | float | str) -> BeliefScore:
    """Regime right?, interval [k_low, k_high] contains K (closed, exact)?, its width, |midpoint - K|.

    The interval ends are read as the decimals the model wrote (0.8 -> 4/5), so an
    end equal to K counts as containing it. ``unknown`` is never a correct regime.
    """
    k = as_fraction(true_k)
    low, high = _exact(belief.k_low), _exact(belief.k_high)
    regime = true_regime(k)
    return BeliefScore(
        true_regime=regime,
        regime_correct=belief.regime == regime,
        contains_k=low <= k <= high,
        width=float(high - low),
        midpoint_error=float(abs((low + high) / 2 - k)),
        confidence=belief.confidence,
    )


def _exact(value: float) -> Fraction:
    return Fraction(repr(float(value)))


def parse_belief(text: str) -> Belief:
    """The belief in a reply: a bare JSON object, one in a ```json fence, or one embedded in prose.

    Candidates are tried in that order; the first JSON object that validates wins.
    ``{"belief": {...}}`` is unwrapped. BeliefParseError says why nothing did.
    """
    belief, problems = read_reply(
        text,
        Belief,
        "belief",
        BeliefParseError,
        "regime, k_low, k_high, confidence",
        '{"regime": "majority", "k_low": ..., "k_high": ..., "confidence": ...}',
    )
    if belief is not None:
        return belief
    raise BeliefParseError("the JSON in the reply is not a valid belief: " + "; ".join(problems[0:1]))


def read_reply(
    text: str,
    model: type[Parsed],
    wrapper: str,
    error: type[ValueError],
    expected: str,
    example: str,
    skip: Callable[[dict[str, Any]], bool] | None = None,
) -> tuple[Parsed | None, list[str]]:
    """The first JSON object in a reply that validates as ``model`` (else None), and why each before it did not.

    Objects are tried in :func:`_json_objects`'s order; ``{wrapper: {...}}`` is unwrapped, and an object
    ``skip`` names is no candidate. A reply that is empty or holds no JSON object raises ``error``, saying
    what was ``expected`` (the fields) with an ``example``.
    """
    if not isinstance(text, str) or not text.strip():
        raise error(f"the reply is empty; expected a JSON object with {expected}")
    objects = _json_objects(text)
    if not objects:
        raise error(f"no JSON object found in the reply; expected e.g. {example}")
    problems: list[str] = []
    for candidate in objects:
        if isinstance(candidate.get(wrapper), dict) and len(candidate) == 1:
            candidate = candidate[wrapper]
        if skip is not None and skip(candidate):
            continue
        try:
            return model.model_validate(candidate), problems
        except ValidationError as failure:
            problems.append(_describe(failure))
    return None, problems


def _json_objects(text: str) -> list[dict[str, Any]]:
    """JSON objects in the text: fenced blocks first, then the whole text, then every embedded ``{...}``."""
    found: list[dict[str, Any]] = []
    for block in _FENCE.findall(text):
        found += _decode_all(block)
    found += _decode_all(text)
    unique = []
    for item in found:
        if item not in unique:
            unique.append(item)
    return unique


def _decode_all(text: str) -> list[dict[str, Any]]:
    decoder, objects, position = json.JSONDecoder(), [], 0
    while (start := text.find("{", position)) != -1:
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            position = start + 1
            continue
        if isinstance(value, dict):
            objects.append(value)
        position = end
    return objects


def _describe(error: ValidationError) -> str:
    parts = []
    for item in error.errors():
        where = ".".join(str(p) for p in item["loc"]) or "belief"
        parts.append(f"{where}: {item['msg']}")
    return ", ".join(parts)


def parse_checkpoints(text: str, budget: int | None = None) -> tuple[int, ...]:
    """``"10,50,200,2000"`` -> (10, 50, 200, 2000): positive, strictly increasing game counts (<= budget if given)."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("checkpoints: give comma-separated game counts, e.g. 10,50,200,2000")
    values = []
    for part in text.split(","):
        item = part.strip()
        if not item.isdigit():
            raise ValueError(f"checkpoints {text!r}: {item!r} is not a whole number of games (e.g. 10,50,200,2000)")
        values.append(int(item))
    if values[0] < 1:
        raise ValueError(f"checkpoints {text!r}: counts must be at least 1")
    for before, after in zip(values, values[1:]):
        if after <= before:
            raise ValueError(f"checkpoints {text!r}: counts must increase ({after} after {before})")
    if budget is not None and values[-1] > budget:
        raise ValueError(f"checkpoints {text!r}: {values[-1]} exceeds the budget of {budget} games")
    return tuple(values)
