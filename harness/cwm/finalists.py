"""Which program the ``cwm`` agent keeps after a refinement episode: bad-sample rejection among the best.

After an episode, the distinct programs whose score on the training tests is
within ``RejectionConfig.tolerance`` of the episode's best (at most
``RejectionConfig.candidates``, best first) are the *finalists*. With two or more, they play each other in the sandbox, each
program in turn the host (:func:`harness.cwm.rejection.reject_bad_samples`, the
seed paper's appendix E); clear losers are discarded, and the kept finalist
with the best mean payoff (the earliest on a tie) is used. A program that passes
every test but breaks in play (a crash or a loop deep in a game, legal moves its
own host refuses) loses those games and goes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.rules import Rules
from harness.cwm.refine import Candidate, RefineConfig
from harness.cwm.rejection import reject_bad_samples
from harness.cwm.world import rules_layout

WORST_PAYOFF = -2.0  # ranks a kept finalist with no counted game below any that played


@dataclass(frozen=True)
class RejectionConfig:
    """How finalists are compared."""

    candidates: int = 3  # finalists at most (< 2: no rejection)
    games_per_pair: int = 1  # games per ordered pair of agents, on every host
    simulations: int = 8  # MCTS simulations per move of the finalists' agents
    margin: float = 0.10  # discard means below the best by this share of the payoffs' range
    tolerance: float = 0.02  # finalists score at least the best h minus this

    def __post_init__(self) -> None:
        if self.candidates < 0 or min(self.games_per_pair, self.simulations) < 1:
            raise ValueError("cwm rejection: candidates >= 0; games_per_pair and simulations >= 1")
        for name in ("margin", "tolerance"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"cwm rejection: {name}={getattr(self, name)!r}: give a value in [0, 1]")


def finalists(best: Candidate, tested: Sequence[Candidate], limit: int, tolerance: float = 0.0) -> list[Candidate]:
    """The distinct programs of ``tested`` scoring at least ``best``'s h minus ``tolerance``, best first (the earliest
    on a tie), at most ``limit``."""
    chosen: list[Candidate] = []
    seen: set[str] = set()
    for candidate in sorted(tested, key=lambda c: -c.h):  # a stable sort: the earliest first among equals
        if candidate.source is not None and candidate.h >= best.h - tolerance - 1e-12 and candidate.source not in seen:
            seen.add(candidate.source)
            chosen.append(candidate)
    return chosen[:limit]


def choose_final(
    best: Candidate, tested: Sequence[Candidate], rules: Rules, config: RejectionConfig, refine: RefineConfig, seed: int
) -> tuple[Candidate, dict[str, Any] | None]:
    """The program to use after an episode and what the rejection showed (None when it did not run)."""
    finals = finalists(best, tested, config.candidates, config.tolerance)
    if len(finals) < 2:
        return best, None
    rejection = reject_bad_samples(
        [c.source or "" for c in finals],
        rules_layout(rules),
        limits=refine.limits,
        unsandboxed=refine.unsandboxed,
        simulations=config.simulations,
        games_per_pair=config.games_per_pair,
        margin=config.margin,
        seed=seed,
    )
    if not rejection.kept:  # no finalist could even start: keep what refinement chose
        return best, None
    payoffs = {score.index: score.mean_payoff for score in rejection.candidates}
    chosen = max(rejection.kept, key=lambda i: (payoffs[i] if payoffs[i] is not None else WORST_PAYOFF, -i))
    return finals[chosen], {
        "calls": [c.call for c in finals],
        "mean_payoffs": [payoffs[i] for i in range(len(finals))],
        "kept": list(rejection.kept),
        "chosen": chosen,
        "games": rejection.games,
        "voided": rejection.voided,
    }
