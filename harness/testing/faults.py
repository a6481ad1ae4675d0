"""Fault injection for the stub server: which faults, how often (``--faults SPEC``), drawn per request.

A spec is either a total rate spread evenly over kinds, ``0.2`` (every kind) or
``0.2:rate_limit+server_error+illegal`` (those kinds), or a rate per kind,
``rate_limit=0.1,stall=0.02``. The kinds (:data:`FAULT_KINDS`): ``rate_limit`` (HTTP 429
with Retry-After), ``server_error`` (HTTP 500), ``stall`` (no answer for ``stall_s``),
``malformed`` (a body that is not JSON), ``truncated`` (a cut-off reply,
``finish_reason='length'``), ``illegal`` (a well-formed move that is not legal, in a call or an object too).
Faults of a move asked as a function call or a structured-output object (:data:`STRUCTURED_KINDS`,
named, or every kind with ``all``: ``0.2:all``): ``no_call`` (free text, no call or object),
``other_function`` (a call to another function), ``bad_arguments`` (arguments or an object that
are not JSON). A careless model's habits (:data:`CARELESS_KINDS`), in every format: ``noise``
(the move in free-text prose), ``wrong_key`` (``{"square": "d3"}``), ``extra_call`` (two
answers naming different moves: two calls, two objects, two answer lines).
A request's fault is drawn from a generator seeded by (seed, the request's index), so
the same requests in the same order meet the same faults.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

FAULT_KINDS = ("rate_limit", "server_error", "stall", "malformed", "truncated", "illegal")  # what a bare rate spreads over
STRUCTURED_KINDS = ("no_call", "other_function", "bad_arguments")
CARELESS_KINDS = ("noise", "wrong_key", "extra_call")
KNOWN_KINDS = FAULT_KINDS + STRUCTURED_KINDS + CARELESS_KINDS


class FaultSpecError(ValueError):
    """A ``--faults`` spec that cannot be read; says what a spec looks like."""


@dataclass(frozen=True)
class FaultSpec:
    """Per-kind fault rates (their sum at most 1) and the seed of the draws."""

    rates: tuple[tuple[str, float], ...] = ()
    seed: int = 0

    def __post_init__(self) -> None:
        unknown = [kind for kind, _ in self.rates if kind not in KNOWN_KINDS]
        if unknown:
            raise FaultSpecError(f"unknown fault kind(s) {', '.join(unknown)}; valid: {', '.join(KNOWN_KINDS)} (or all)")
        if any(not 0.0 <= rate <= 1.0 for _, rate in self.rates) or self.total > 1.0 + 1e-9:
            raise FaultSpecError(f"fault rates must be within [0, 1] and sum to at most 1, not {self.describe()}")

    @classmethod
    def parse(cls, text: str, seed: int = 0) -> FaultSpec:
        """Read ``0.2``, ``0.2:rate_limit+illegal`` or ``rate_limit=0.1,stall=0.02`` (see the module docstring)."""
        text = text.strip()
        try:
            if "=" in text:
                pairs = [item.split("=", 1) for item in text.split(",") if item.strip()]
                return cls(tuple((kind.strip(), float(rate)) for kind, rate in pairs), seed)
            rate_text, _, kinds_text = text.partition(":")
            kinds = [kind.strip() for kind in kinds_text.split("+")] if kinds_text else list(FAULT_KINDS)
            kinds = list(FAULT_KINDS + STRUCTURED_KINDS) if kinds == ["all"] else kinds
            rate = float(rate_text)
        except ValueError:
            raise FaultSpecError(
                f"cannot read the fault spec {text!r}: give a total rate (0.2), a rate and kinds "
                f"(0.2:rate_limit+illegal) or rates per kind (rate_limit=0.1,stall=0.02); "
                f"kinds: {', '.join(KNOWN_KINDS)}, or all"
            ) from None
        if not 0.0 <= rate <= 1.0:
            raise FaultSpecError(f"the fault rate must be within [0, 1], not {rate:g}")
        return cls(tuple((kind, rate / len(kinds)) for kind in kinds), seed)

    @property
    def total(self) -> float:
        """The share of requests that meet a fault."""
        return sum(rate for _, rate in self.rates)

    def describe(self) -> str:
        """The spec in words, e.g. ``rate_limit=0.1, illegal=0.1``."""
        return ", ".join(f"{kind}={rate:.3g}" for kind, rate in self.rates) or "none"

    def draw(self, request_index: int) -> str | None:
        """The fault of request ``request_index`` (None: answer normally)."""
        if not self.rates:
            return None
        roll = random.Random(f"{self.seed}:{request_index}").random()
        for kind, rate in self.rates:
            if roll < rate:
                return kind
            roll -= rate
        return None
