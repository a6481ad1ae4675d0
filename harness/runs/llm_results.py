"""``metrics.json`` and ``report.md`` of an ``arena run``, computed from the run's files alone."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from engine import make_env
from engine.protocol.belief import Belief
from harness.models.errors import REPLAYED, attempt_failures
from harness.play.decisions import FailureCounts
from harness.prompting.beliefs import score_belief
from harness.records.commitment import SALT_FILE, condition_text, read_salt
from harness.records.transcript import CallEntry, GameEntry, TranscriptReader
from harness.referee.isolation import isolation_lines, read_referee_record
from harness.registry.specs import canonical_spec, parse_spec
from harness.runs.cwm_plot import plot_cwm_accuracy
from harness.runs.llm_config import AGENT_FILE, BELIEFS_FILE, IN_PROCESS, METRICS_FILE, REFEREED, REPORT_FILE, STRATEGIES_FILE, LlmRunConfig
from harness.runs.run_stop import UNFINISHED_FAILURE
from harness.tournaments.stats import wilson


def read_beliefs(run_dir: Path) -> list[dict[str, Any]]:
    return read_jsonl(run_dir / BELIEFS_FILE)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    data = path.read_text(encoding="utf-8")
    lines = data.split("\n")[:-1]  # a torn last line (no newline) is dropped
    return [json.loads(line) for line in lines if line.strip()]


def write_results(run_dir: Path, stopped: str | None = None, refereed: bool | None = None) -> dict[str, Any]:
    """metrics.json and report.md from the run's files (``refereed``: how it was played; None: as configured)."""
    reader = TranscriptReader(run_dir)
    config = LlmRunConfig.model_validate(reader.manifest().config)
    games, calls = reader.games(), reader.calls()
    metrics = compute_metrics(config, games, calls, read_beliefs(run_dir), stopped)
    metrics["referee"] = REFEREED if (config.referee if refereed is None else refereed) else IN_PROCESS
    if record := read_referee_record(run_dir):  # the referee's own record: the agent process's walls, refused requests
        metrics["agent_processes"] = record.get("agent_processes")
        metrics["refused_requests"] = record.get("refused_requests", [])
        metrics["isolation_lines"] = isolation_lines(record)
    if config.agent == "llm-strategist":
        strategies = read_jsonl(run_dir / STRATEGIES_FILE)
        metrics["strategies"] = len(strategies)
        metrics["strategy_failures"] = sum(not line["new"] for line in strategies)
    if config.agent == "cwm":
        metrics["cwm"] = cwm_metrics(config, run_dir / AGENT_FILE)
        metrics["cwm"]["plot"] = plot_cwm_accuracy(metrics["cwm"]["steps"], run_dir)
    committed = reader.manifest().condition_sha256
    if committed is not None:  # revealed here, at the end: the condition and the salt the manifest committed to
        metrics["commitment"] = {"condition": condition_text(make_env(config.env).condition), "salt": read_salt(run_dir),
                                 "sha256": committed}
    (run_dir / METRICS_FILE).write_text(json.dumps(metrics, indent=2) + "\n", encoding="utf-8")
    (run_dir / REPORT_FILE).write_text(render_report(config, metrics), encoding="utf-8")
    return metrics


def compute_metrics(config: LlmRunConfig, games: list[GameEntry], calls: list[CallEntry],
                    beliefs: list[dict[str, Any]], stopped: str | None) -> dict[str, Any]:
    true_k = make_env(config.env).condition.k
    evaluation: dict[str, Any] = {}
    for spec in config.opponents:
        name = canonical_spec(spec)
        rewards = [g.rewards[0 if g.agent_colour == "black" else 1] for g in games if g.phase == "eval" and g.opponent == name]
        counts = {"win": rewards.count(1), "draw": rewards.count(0), "lose": rewards.count(-1)}
        evaluation[name] = {"games": len(rewards), "privileged": parse_spec(spec)[0].privileged, **{
            outcome: {"count": n, "rate": n / len(rewards) if rewards else 0.0, "wilson95": list(wilson(n, len(rewards)))}
            for outcome, n in counts.items()}}
    belief_scores = []
    for line in beliefs:
        scored = score_belief(Belief.model_validate(line["belief"]), true_k).model_dump() if line["belief"] else None
        belief_scores.append({"checkpoint": line["checkpoint"], "belief": line["belief"], "score": scored, "error": line["error"]})
    failures = sum((g.failures for g in games), FailureCounts())  # move attempts, once per game on record
    other = call_failures(calls)
    cached = [c for c in calls if c.cache_hit]  # answered from the cache: paid for once, when first asked
    return {
        "adapt_games": sum(g.phase == "adapt" for g in games), "eval_games": sum(g.phase == "eval" for g in games),
        "evaluation": evaluation, "beliefs": belief_scores,
        "belief_failures": sum(line["belief"] is None for line in beliefs),
        "failures": failures.model_dump(), "call_failures": other, "failed_attempts": failures.total + sum(other.values()),
        "attempt_failures": attempt_failure_counts(calls),
        "calls": len(calls), "cache_hits": sum(c.cache_hit for c in calls),
        # The run's calls as an uninterrupted run makes them (a resumed run's cache hits included: a killed process
        # paid for them), and the part of them answered from the cache (not charged again in this process).
        "tokens_in": sum(c.tokens_in for c in calls), "tokens_out": sum(c.tokens_out for c in calls),
        "cost_usd": sum(c.cost_usd for c in calls), "cached_tokens_in": sum(c.tokens_in for c in cached),
        "cached_tokens_out": sum(c.tokens_out for c in cached), "stopped": stopped, "true_k": str(true_k), "referee": IN_PROCESS,
        "prompt_cache": prompt_cache(calls),
        **({"concurrency": concurrency_report(config, calls)} if any(c.concurrency is not None for c in calls) else {}),
    }


def prompt_cache(calls: list[CallEntry]) -> dict[str, Any]:
    """Prompt tokens of the run's calls (as ``tokens_in`` counts them) and the share the provider served from its
    prompt cache (priced at its cached rate: the cost above already counts them so)."""
    prompt, cached = sum(c.tokens_in for c in calls), sum(c.cached_tokens_in for c in calls)
    return {"prompt_tokens": prompt, "cached_prompt_tokens": cached, "cached_share": cached / prompt if prompt else 0.0}


def concurrency_report(config: LlmRunConfig, calls: list[CallEntry]) -> dict[str, Any]:
    """The model client's adaptive concurrency when it was lowered (metrics.json has it only then; otherwise every call
    ran under the ceiling, --concurrency): the ceiling, its lowest limit and where it settled (the mean limit over the
    last 200 calls sent), from the limit each call recorded (none recorded: the ceiling)."""
    limits = [float(config.concurrency) if c.concurrency is None else c.concurrency for c in calls if not c.cache_hit]
    return {"ceiling": config.concurrency, "lowest": min(limits) if limits else None,
            "settled": round(sum(limits[-200:]) / len(limits[-200:]), 2) if limits else None}


def call_failures(calls: list[CallEntry]) -> dict[str, int]:
    """Failed calls outside the games' moves (strategy, belief, code synthesis...), by failure kind.

    Move attempts are counted from the games on record (their failure counts), so a game
    played again on resume counts once; every other failed call counts from its record (a call that failed for
    good in a game the run did not finish, once: not again when its game, played again on resume, met it).
    """
    counts: dict[str, int] = {}
    reasons = [call.reason or "" for call in calls]
    replayed = Counter(reason.removesuffix(f" {REPLAYED}") for reason in reasons if reason.endswith(REPLAYED))
    for call in calls:
        if call.game_index is None and call.failure_kind is not None:
            message = (call.reason or "").partition(f"{UNFINISHED_FAILURE}: ")[2]
            if message and replayed[message] > 0:  # its game, played again on resume, counts it (met from the cache)
                replayed[message] -= 1
                continue
            counts[call.failure_kind] = counts.get(call.failure_kind, 0) + 1
    return counts


def attempt_failure_counts(calls: list[CallEntry]) -> dict[str, dict[str, int]]:
    """Every request that failed, by kind (rate_limit, server_error, timeout, malformed_response...): those retried
    (the call went on) and those that failed for good; cache hits and failures replayed from the cache made none."""
    retried: Counter[str] = Counter()
    failed: Counter[str] = Counter()
    for call in calls:
        kinds, final = attempt_failures(call.errors, call.retries, call.verdict, call.reason, call.cache_hit)
        retried.update(kinds)
        failed.update([final] if final else [])
    return {"retried": dict(sorted(retried.items())), "failed": dict(sorted(failed.items()))}


def attempt_failure_line(counts: dict[str, dict[str, int]]) -> list[str]:
    """The report's line on the failed requests (none when every request succeeded)."""
    parts = [f"{label} " + ", ".join(f"{kind} {n}" for kind, n in counts.get(key, {}).items())
             for key, label in (("retried", "retried"), ("failed", "failed for good")) if counts.get(key)]
    return [f"Failed requests to the model, by kind: {'; '.join(parts)}."] if parts else []


def render_report(config: LlmRunConfig, metrics: dict[str, Any]) -> str:
    lines = [
        f"# {config.agent_label()} with {config.model} on env {config.env}", "",
        f"Adaptation: {metrics['adapt_games']} of {config.budget} games; evaluation: {metrics['eval_games']} games "
        f"(true K = {metrics['true_k']}, shown only here).", "",
        f"Referee: {metrics.get('referee', IN_PROCESS)}.", "",
        *(line for text in metrics.get("isolation_lines", []) for line in (text, "")),
        "| opponent | games | win (95% CI) | draw | lose |", "|---|---|---|---|---|",
    ]
    for name, row in metrics["evaluation"].items():
        cells = [f"{row[o]['rate']:.2f} [{row[o]['wilson95'][0]:.2f}, {row[o]['wilson95'][1]:.2f}]" for o in ("win", "draw", "lose")]
        marked = f"{name}\\*" if row["privileged"] else name
        lines.append(f"| {marked} | {row['games']} | " + " | ".join(cells) + " |")
    if any(row["privileged"] for row in metrics["evaluation"].values()):
        lines += ["", "\\* privileged: simulator access to the true K"]
    lines += ["", "Beliefs: " + (", ".join(
        f"{b['checkpoint']}: " + (f"{b['belief']['regime']} [{b['belief']['k_low']}, {b['belief']['k_high']}]"
                                  f"{' contains K' if b['score']['contains_k'] else ''}" if b["belief"] else "no belief")
        for b in metrics["beliefs"]) or "none asked"), "",
        f"Failed attempts: {metrics['failed_attempts']} ({failure_text(metrics)}); forfeits "
        f"{metrics['failures'].get('forfeits', 0)}, random fallbacks {metrics['failures'].get('fallbacks', 0)}; "
        f"belief failures: {metrics['belief_failures']}.",
        *attempt_failure_line(metrics.get("attempt_failures", {})),
        f"Calls: {metrics['calls']} ({metrics['cache_hits']} from the cache); tokens {metrics['tokens_in']} in, "
        f"{metrics['tokens_out']} out (of which from the cache, not charged again: {metrics.get('cached_tokens_in', 0)} "
        f"in, {metrics.get('cached_tokens_out', 0)} out); cost ${metrics['cost_usd']:.4f}."]
    if "cwm" in metrics:
        lines += cwm_lines(metrics["cwm"])
    if metrics["stopped"]:
        lines.append(f"Stopped early: {metrics['stopped']}.")
    if metrics.get("commitment"):
        lines += ["", commitment_line(metrics["commitment"])]
    return "\n".join(lines) + "\n"


def failure_text(metrics: dict[str, Any]) -> str:
    """Every failed attempt by kind: the moves' (from the games), then the other calls' (strategy, belief, code...)."""
    kinds = {**{k: v for k, v in metrics["failures"].items() if k not in ("forfeits", "fallbacks")},
             **metrics.get("call_failures", {})}
    return ", ".join(f"{kind} {count}" for kind, count in kinds.items() if count) or "none"


def commitment_line(commitment: dict[str, Any]) -> str:
    """The report's line revealing the condition and the salt of the manifest's commitment (``arena replay`` reads it)."""
    salt = commitment["salt"] or f"lost: {SALT_FILE} is missing"
    return f"Condition: {commitment['condition']} (salt {salt}, committed in the manifest as sha256 {commitment['sha256']})."


def cwm_metrics(config: LlmRunConfig, report_path: Path) -> dict[str, Any]:
    """The code world model's figures (from agent.json, what the agent reported after adapting) and the sandbox."""
    report = json.loads(report_path.read_text(encoding="utf-8")) if report_path.exists() else {}
    steps = report.get("steps") or []
    return {"sandbox": "UNSANDBOXED (rlimits only)" if config.unsandboxed else "bubblewrap",
            "counts": report.get("counts", {}), "belief": report.get("belief"), "steps": steps,
            "final_step": steps[-1] if steps else None, "report_error": report.get("error")}


def cwm_path_lines(counts: dict[str, Any]) -> list[str]:
    """Where the agent planned (engine or program, per program and why), the utility table's shape, the time by phase."""
    paths = counts.get("paths")
    if not paths:
        return []
    lines = [f"Planning (--cwm-transitions {counts.get('transitions')}): "
             + "; ".join(f"call {p['call']} on the {p['path']} from game {p['games_played']} ({p['why']})" for p in paths) + "."]
    if counts.get("path") == "engine":
        lines.append(f"Utility table: {counts.get('utility_table')}; {counts.get('spot_checks', 0)} moves spot-checked against "
                     f"the program.")
    if counts.get("seconds"):
        lines.append("Time: " + ", ".join(f"{phase} {seconds:g} s" for phase, seconds in counts["seconds"].items()) + ".")
    return lines


def cwm_lines(cwm: dict[str, Any]) -> list[str]:
    """The report's lines on the code world model."""
    counts, final = cwm["counts"], cwm["final_step"]
    cgroup = {True: " (memory and pids cgroup applied)", False: " (no cgroup on this machine)"}.get(counts.get("cgroup"), "")
    lines = ["", f"Code world model: sandbox {cwm['sandbox']}{cgroup}; K interval of the final reward code: "
             f"{counts.get('k_interval') or 'none (no program fits a threshold)'}; model calls {counts.get('model_calls', 0)}, "
             f"code errors {counts.get('code_errors', 0)}, model errors {counts.get('model_errors', 0)}, "
             f"surprises {counts.get('surprises', 0)}, sandbox failures {counts.get('sandbox_failures') or 'none'}.",
             f"Exploration: {counts.get('steered_games', 0)} games steered towards informative shares; K allowed by the "
             f"outcomes: {counts.get('feasible') or 'not reported'}."]
    lines += cwm_path_lines(counts)
    if final:
        accuracy = {key: final.get(key) for key in ("train_transition", "train_outcome", "test_transition", "test_outcome")}
        lines.append("Final program: " + ", ".join(f"{k.replace('_', ' ')} {v:.3f}" for k, v in accuracy.items()
                                                   if isinstance(v, (int, float))) + f" ({len(cwm['steps'])} candidates tested).")
    if cwm.get("plot"):
        lines.append(f"Accuracy against model calls: {cwm['plot']}")
    if cwm["report_error"]:
        lines.append(f"Agent report: {cwm['report_error']}")
    return lines
