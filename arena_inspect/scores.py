"""The Inspect task's score of one run, from its ``metrics.json`` (no Inspect import: tested without the extra)."""

from __future__ import annotations

from typing import Any

from harness.tournaments.stats import wilson

FAILURE_KINDS = ("parse_error", "illegal_move", "empty_or_refusal", "truncated", "timeout", "api_error")
SCORE_KEYS = ("win", "draw", "loss", "belief_accuracy", "games_used", *(f"failures.{kind}" for kind in FAILURE_KINDS))


def protocol_values(metrics: dict[str, Any]) -> tuple[dict[str, float], dict[str, Any]]:
    """(the score's values, the details: each opponent's counts and rates with Wilson 95% intervals, the pooled
    intervals) from a run's ``metrics.json``."""
    evaluation = metrics.get("evaluation", {})
    games = sum(row["games"] for row in evaluation.values())
    totals = {outcome: sum(row[outcome]["count"] for row in evaluation.values()) for outcome in ("win", "draw", "lose")}
    scored = [belief["score"] for belief in metrics.get("beliefs", []) if belief.get("score")]
    failures = metrics.get("failures", {})
    value = {
        "win": totals["win"] / games if games else 0.0,
        "draw": totals["draw"] / games if games else 0.0,
        "loss": totals["lose"] / games if games else 0.0,
        "belief_accuracy": sum(bool(s["contains_k"]) for s in scored) / len(scored) if scored else 0.0,
        "games_used": float(metrics.get("adapt_games", 0)),
        **{f"failures.{kind}": float(failures.get(kind, 0)) for kind in FAILURE_KINDS},
    }
    pooled = {outcome: list(wilson(count, games)) if games else [0.0, 1.0] for outcome, count in totals.items()}
    return value, {"opponents": evaluation, "wilson95": pooled, "beliefs_scored": len(scored), "failures": failures}
