"""What the overview shows: the manifest, outcomes with Wilson intervals, failures, tokens and cost, plot series.

The per-game plots (cumulative win/draw/loss, final shares coloured by reward) are drawn by the page from the game
summaries; this module gives everything else, as plain JSON-ready dicts.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from fractions import Fraction
from typing import Any

from harness.prompting.waves import wave_label
from harness.tournaments.stats import wilson
from harness.view.sources import CallIndex, RunSource

MAX_CALL_BINS = 200
_OUTCOMES = ("win", "draw", "lose")


def overview(source: RunSource, calls: CallIndex) -> dict[str, Any]:
    """The overview of ``source`` (its calls already indexed)."""
    view: dict[str, Any] = {
        "manifest": manifest_rows(source),
        "usage": usage(calls),
        "calls_plot": call_bins(calls.latency),
        "failures": failures(source, calls),
        "beliefs": None,
        "checkpoints": [],
        "notes": [],
    }
    if source.kind == "llm":
        view |= _llm(source)
    elif source.kind == "tournament":
        view["outcomes"] = _tournament_outcomes(source.extras.get("results"))
    else:
        view |= _paper(source.extras["results"])
    return view


def outcome_row(label: str, win: int, draw: int, lose: int, privileged: bool = False) -> dict[str, Any]:
    """A row of the outcome table: each outcome as [count, rate, Wilson low, Wilson high]."""
    games = win + draw + lose
    row: dict[str, Any] = {"label": label, "games": games, "privileged": privileged}
    for name, count in zip(_OUTCOMES, (win, draw, lose)):
        low, high = wilson(count, games)
        row[name] = [count, count / games if games else 0.0, low, high]
    return row


def manifest_rows(source: RunSource) -> list[list[str]]:
    """The manifest as (name, value) rows: config, versions, commit, template hashes; nothing secret is ever in it."""
    manifest = source.manifest or {}
    rows: list[list[str]] = [["run", str(manifest.get("run_id", source.run_dir.name))], ["directory", str(source.run_dir)]]
    for name in ("command", "kind", "status", "created_at", "started_at", "condition_sha256"):
        if manifest.get(name) is not None:
            rows.append([name, str(manifest[name])])
    for section in ("config", "plan"):
        for key, value in (manifest.get(section) or {}).items():
            if value not in (None, [], {}, ""):
                rows.append([key, _short(value)])
    for key in ("agents", "envs", "env_ids", "games", "seed", "referee", "privileged_agents"):
        if key in manifest and manifest[key] not in (None, []):
            rows.append([key, _short(manifest[key])])
    for key, value in (manifest.get("versions") or {}).items():
        rows.append([f"version {key}", str(value)])
    git = manifest.get("git") or {}
    if git:
        rows.append(["git commit", f"{git.get('commit')}{' (dirty)' if git.get('dirty') else ''}"])
    for name, digest in (manifest.get("template_hashes") or {}).items():
        rows.append([f"template {name}", str(digest)])
    return rows


def _short(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(_short(item) for item in value)
    if isinstance(value, dict):
        return ", ".join(f"{key}={_short(item)}" for key, item in value.items() if item not in (None, {}, []))
    return str(value)


def usage(calls: CallIndex) -> dict[str, float]:
    totals = calls.totals
    return {name: totals.get(name, 0) for name in ("calls", "cache_hits", "tokens_in", "tokens_out", "cost_usd")}


def call_bins(latency: list[float]) -> list[dict[str, float]]:
    """Model calls in file order, in at most :data:`MAX_CALL_BINS` bins: calls so far, mean and max latency of each."""
    if not latency:
        return []
    size = max(1, -(-len(latency) // MAX_CALL_BINS))
    bins = []
    for start in range(0, len(latency), size):
        part = latency[start : start + size]
        bins.append({"calls": start + len(part), "mean_latency": sum(part) / len(part), "max_latency": max(part)})
    return bins


def failures(source: RunSource, calls: CallIndex) -> dict[str, int]:
    """Failures by kind: the games' counts (parse error, illegal move, ..., forfeits), the failed calls' kinds and every
    failed request to the model (``request retried: rate_limit``, ``request failed for good: timeout``)."""
    counted: Counter[str] = Counter()
    for game in source.games:
        for kind, count in (game.record.get("failures") or {}).items():
            counted[kind] += int(count)
    for kind, count in calls.failure_kinds.items():
        counted[f"call: {kind}"] += count
    for kind, count in calls.request_failures.items():
        counted[f"request {kind}"] += count
    return {kind: count for kind, count in sorted(counted.items()) if count}


def _llm(source: RunSource) -> dict[str, Any]:
    metrics = source.extras.get("metrics") or {}
    rows = [
        outcome_row(
            opponent,
            int(result["win"]["count"]),
            int(result["draw"]["count"]),
            int(result["lose"]["count"]),
            bool(result.get("privileged")),
        )
        for opponent, result in (metrics.get("evaluation") or {}).items()
    ]
    if not rows:  # a run still going: count the evaluation games on record
        tally: dict[str, Counter[int]] = defaultdict(Counter)
        for game in source.games:
            if game.phase == "eval":
                tally[game.opponent][_agent_reward(game.agent_colour, game.rewards)] += 1
        rows = [outcome_row(opponent, c[1], c[0], c[-1]) for opponent, c in tally.items()]
    true_k = _fraction(metrics.get("true_k"))
    points = []
    for line in source.extras.get("beliefs") or []:
        belief = line.get("belief")
        if isinstance(belief, dict):
            points.append(
                {
                    "x": line.get("checkpoint"),
                    "low": belief.get("k_low"),
                    "high": belief.get("k_high"),
                    "label": f"{belief.get('regime')} ({belief.get('confidence')})",
                }
            )
    notes = [f"belief at {line.get('checkpoint')}: {line.get('error')}" for line in source.extras.get("beliefs") or [] if line.get("error")]
    if metrics.get("stopped"):
        notes.append(f"stopped: {metrics['stopped']}")
    return {
        "outcomes": {"title": "Evaluation (the frozen agent against each opponent)", "rows": rows},
        "beliefs": {"true_k": true_k, "points": points, "title": "Belief about K at each checkpoint"},
        "notes": notes,
    }


def _agent_reward(colour: str, rewards: tuple[int, int]) -> int:
    return rewards[1] if colour == "white" else rewards[0]


def _fraction(text: Any) -> float | None:
    try:
        return float(Fraction(str(text))) if text is not None else None
    except (ValueError, ZeroDivisionError):
        return None


def _tournament_outcomes(results: Any) -> dict[str, Any]:
    rows = []
    for row in (results or {}).get("over_envs", []) + (results or {}).get("per_env", []):
        rates = row["overall"]
        scope = "all envs" if row.get("env_id") is None else f"env {row['env_id']}"
        pairing = f"{wave_label(row['agent_a'])} vs {wave_label(row['agent_b'])} ({scope})"
        rows.append(
            outcome_row(pairing, rates["win"], rates["draw"], rates["lose"], bool(row.get("a_privileged") or row.get("b_privileged")))
        )
    return {"title": "A's results against B", "rows": rows}


def _paper(results: list[dict[str, Any]]) -> dict[str, Any]:
    totals: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    privileged: dict[str, bool] = {}
    curves: dict[tuple[str, str], dict[int, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
    beliefs, notes = [], []
    for pair in results:
        if pair.get("status") != "ok":
            notes.append(f"env {pair.get('env_id')} {pair.get('agent')}: failed: {pair.get('error')}")
        for outcome in pair.get("final") or []:
            totals[(pair["agent"], outcome["opponent"])].update({o: int(outcome[o]) for o in _OUTCOMES})
            privileged[outcome["opponent"]] = bool(outcome.get("privileged"))
        for checkpoint in pair.get("checkpoints") or []:
            for outcome in checkpoint.get("outcomes") or []:
                curve = curves[(pair["agent"], outcome["opponent"])][int(checkpoint["planned_games"])]
                curve.update({o: int(outcome[o]) for o in _OUTCOMES})
        belief = pair.get("belief")
        if isinstance(belief, dict):
            beliefs.append(
                {
                    "x": pair["env_id"],
                    "low": belief.get("k_low"),
                    "high": belief.get("k_high"),
                    "label": f"env {pair['env_id']} {pair['agent']}",
                    "true_k": pair.get("condition"),
                }
            )
    rows = [
        outcome_row(f"{wave_label(agent)} vs {opponent}", c["win"], c["draw"], c["lose"], privileged.get(opponent, False))
        for (agent, opponent), c in sorted(totals.items())
    ]
    checkpoints = []
    for (agent, opponent), by_games in sorted(curves.items()):
        points = []
        for games, c in sorted(by_games.items()):
            n = c["win"] + c["draw"] + c["lose"]
            points.append([games, c["win"] / n if n else 0.0, *wilson(c["win"], n)])
        checkpoints.append({"label": f"{wave_label(agent)} vs {opponent}", "points": points})
    return {
        "outcomes": {"title": "Final evaluation over all environments (adaptive agent vs opponent)", "rows": rows},
        "checkpoints": checkpoints,
        "notes": notes,
        "beliefs": {"true_k": None, "points": beliefs, "title": "Belief about K per environment"} if beliefs else None,
    }
