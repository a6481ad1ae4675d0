"""What an agent believes about the hidden condition: the regime and an interval estimate of K.

Agents state beliefs (the interval agent from its feasible set, model agents when
asked at checkpoints); the harness scores them against the true K afterwards.
Regimes: ``majority`` means K > 0.5 (a win needs more than half of the discs),
``minority`` means K < 0.5.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

BELIEF_SCHEMA_VERSION = 1
Regime = Literal["majority", "minority", "unknown"]


class Belief(BaseModel):
    """The agent's belief about the hidden condition: the regime and an interval estimate [k_low, k_high] of K."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    schema_version: int = BELIEF_SCHEMA_VERSION
    regime: Regime
    k_low: float
    k_high: float
    confidence: float = Field(ge=0.0, le=1.0)
    rationale: str | None = None

    @field_validator("schema_version")
    @classmethod
    def _known_version(cls, value: int) -> int:
        if value != BELIEF_SCHEMA_VERSION:
            raise ValueError(f"schema_version {value} is not supported; use {BELIEF_SCHEMA_VERSION}")
        return value

    @field_validator("k_low", "k_high", "confidence")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError("must be a finite number")
        return value

    @model_validator(mode="after")
    def _ordered(self) -> Belief:
        if self.k_low > self.k_high:
            raise ValueError(f"k_low ({self.k_low}) must not exceed k_high ({self.k_high})")
        return self
