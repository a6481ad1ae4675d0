"""Runs side by side: model-agent runs and tournament baselines in one table, with Wilson intervals.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from harness.records.transcript import (
    TranscriptError,
)
from harness.runs.llm_run import METRICS_FILE
from harness.runs.replay import llm_config, read_json, run_kind
from harness.tournaments.stats import wilson

COMPARE_COLUMNS = ("run", "agent", "model", "env", "budget", "opponent", "games", "win [95% CI]", "draw", "lose",
                   "belief (last)", "failures", "tokens", "cost $")


def compare_rows(run_dirs: list[str | Path]) -> list[list[str]]:
    """One row per (run, opponent) for ``arena run`` directories, one per pairing for tournaments (baselines)."""
    rows: list[list[str]] = []
    for run_dir in map(Path, run_dirs):
        if run_kind(run_dir) == "llm":
            rows += _llm_rows(run_dir)
        else:
            rows += _tournament_rows(run_dir)
    return rows


def _cell(count: int, n: int) -> str:
    low, high = wilson(count, n)
    return f"{count / n if n else 0:.0%} [{100 * low:.0f}-{100 * high:.0f}]"


def _llm_rows(run_dir: Path) -> list[list[str]]:
    config = llm_config(run_dir)
    metrics = read_json(run_dir / METRICS_FILE, "metrics",
                         "the run has no metrics.json (interrupted? resume it with 'arena run --resume')")
    scored = [b for b in metrics.get("beliefs", []) if b.get("score")]
    if scored:
        last = scored[-1]
        belief = (f"@{last['checkpoint']}: [{last['belief']['k_low']:.2f}, {last['belief']['k_high']:.2f}]"
                  + (" contains K" if last["score"]["contains_k"] else " misses K"))
    else:
        belief = "none"
    common = [run_dir.name, config.agent, config.model, str(config.env), f"{metrics['adapt_games']}/{config.budget}"]
    tail = [belief, str(metrics["failed_attempts"]), str(metrics["tokens_in"] + metrics["tokens_out"]), f"{metrics['cost_usd']:.4f}"]
    rows = []
    for name, row in metrics["evaluation"].items():
        n = row["games"]
        rows.append(common + [name + ("*" if row.get("privileged") else ""), str(n)]
                    + [_cell(row[o]["count"], n) for o in ("win", "draw", "lose")] + tail)
    return rows or [common + ["-", "0", "-", "-", "-"] + tail]


def _tournament_rows(run_dir: Path) -> list[list[str]]:
    from harness.tournaments.results import TournamentResults

    path = run_dir / "results.json"
    try:
        results = TournamentResults.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        raise TranscriptError("the tournament has no results.json (did it finish?)", path) from None
    except ValidationError as error:
        raise TranscriptError(f"invalid results: {error.errors()[0]['msg']}", path) from None
    rows = []
    for row in results.over_envs:
        rates, n = row.overall, row.overall.games
        env = str(results.env_ids[0]) if len(results.env_ids) == 1 else f"{len(results.env_ids)} envs"
        rows.append([run_dir.name, row.agent_a + ("*" if row.a_privileged else ""), "(baseline)", env, "-",
                     row.agent_b + ("*" if row.b_privileged else ""), str(n)]
                    + [_cell(getattr(rates, o), n) for o in ("win", "draw", "lose")] + ["-", "-", "-", "-"])
    return rows


def compare_table(run_dirs: list[str | Path]) -> str:
    """The comparison as a Markdown table."""
    rows = compare_rows(run_dirs)
    lines = ["| " + " | ".join(COMPARE_COLUMNS) + " |", "|" + "---|" * len(COMPARE_COLUMNS)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    if any("*" in row[1] or "*" in row[5] for row in rows):
        lines += ["", "* privileged: simulator access to the true K"]
    return "\n".join(lines)

