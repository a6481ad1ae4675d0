"""``arena leaderboard DIR...``: every evaluation game of runs, bench runs and sweeps, rated by one fit.

Directories are searched for run directories (any depth): a bench-paper run
(``results.jsonl``: each pair's final evaluation games, reward by reward), an ``arena run``
(``games.jsonl``'s evaluation games). Agent names: a bench agent's spec; a model agent as
``llm-policy:model=M,hint=H`` (with ``,legal_moves=hidden`` for that track); opponents by
the paper's labels (``Random``, ``MCTS-30``). Adaptation games (self-play) are not rated.
Besides the ratings (:mod:`harness.sweep.rating`): win rates per agent, condition and
opponent with Wilson intervals; adaptation curves (win rate against each checkpoint
opponent at each checkpoint's games used, bench runs); model calls and dollars per agent;
and which agents sit on the cost-versus-rating frontier (no cheaper agent rates higher).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine import make_env
from harness.bench.paper_plan import EnvAgentResult, env_condition_label, opponent_label
from harness.sweep.rating import Fit, Game, fit_ratings
from harness.tournaments.stats import wilson

SCORES = {1: 1.0, 0: 0.5, -1: 0.0}


@dataclass
class Pool:
    """Every rated game, with the condition of each, and what each agent spent."""

    games: list[Game] = field(default_factory=list)
    conditions: list[str] = field(default_factory=list)
    calls: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    cost: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    curves: dict[tuple[str, str, int], list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    runs: int = 0


def collect(directories: list[Path]) -> Pool:
    """The games of every run directory found under ``directories``."""
    pool = Pool()
    for directory in directories:
        if not directory.is_dir():
            raise ValueError(f"{directory}: not a directory; give run, bench-paper or sweep directories")
        for manifest in sorted({directory / "manifest.json", *directory.rglob("manifest.json")}):
            if manifest.is_file():
                _add_run(pool, manifest.parent, json.loads(manifest.read_text(encoding="utf-8")))
    if not pool.games:
        raise ValueError(f"no evaluation game under {', '.join(map(str, directories))}: give run, bench-paper or sweep directories")
    return pool


def _add_run(pool: Pool, run_dir: Path, manifest: dict[str, Any]) -> None:
    if manifest.get("kind") == "bench-paper" and (run_dir / "results.jsonl").is_file():
        pool.runs += 1
        for line in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                _add_bench_result(pool, EnvAgentResult.model_validate_json(line))
    elif isinstance(manifest.get("config"), dict) and (run_dir / "games.jsonl").is_file():
        pool.runs += 1
        _add_model_run(pool, run_dir, manifest["config"])


def _add_bench_result(pool: Pool, result: EnvAgentResult) -> None:
    if result.status != "ok":
        return
    for outcome in result.final:
        for reward in outcome.rewards:
            pool.games.append(Game(result.agent, outcome.opponent, SCORES[reward]))
            pool.conditions.append(result.condition)
    for checkpoint in result.checkpoints:
        for outcome in checkpoint.outcomes:
            tally = pool.curves[(result.agent, outcome.opponent, checkpoint.planned_games)]
            tally[0] += outcome.win
            tally[1] += outcome.win + outcome.draw + outcome.lose


def model_agent_name(config: dict[str, Any]) -> str:
    """A model agent's name on the leaderboard: agent, model, hint level and prompt track."""
    track = ",legal_moves=hidden" if config.get("legal_moves") == "hidden" else ""
    return f"{config['agent']}:model={config['model']},hint={config.get('hint', 'ratio')}{track}"


def _add_model_run(pool: Pool, run_dir: Path, config: dict[str, Any]) -> None:
    name = model_agent_name(config)
    condition = env_condition_label(make_env(config["env"]))
    for line in (run_dir / "games.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        game = json.loads(line)
        if game.get("phase") != "eval":
            continue
        reward = game["rewards"][0 if game["agent_colour"] == "black" else 1]
        pool.games.append(Game(name, _label(game["opponent"]), SCORES[reward]))
        pool.conditions.append(condition)
    metrics = run_dir / "metrics.json"
    if metrics.is_file():
        data = json.loads(metrics.read_text(encoding="utf-8"))
        pool.calls[name] += int(data.get("calls") or 0)
        pool.cost[name] += float(data.get("cost_usd") or 0.0)


def _label(name: str) -> str:
    try:
        return opponent_label(name)
    except (KeyError, ValueError):
        return name


def win_rates(pool: Pool) -> list[dict[str, Any]]:
    """Per agent, condition and opponent: games, win rate and its Wilson interval (both sides of each game)."""
    tallies: dict[tuple[str, str, str], list[float]] = defaultdict(lambda: [0, 0])
    for game, condition in zip(pool.games, pool.conditions):
        for me, them, score in ((game.a, game.b, game.score), (game.b, game.a, 1 - game.score)):
            tally = tallies[(me, condition, them)]
            tally[0] += score == 1
            tally[1] += 1
    rows = []
    for (agent, condition, opponent), (wins, games) in sorted(tallies.items()):
        low, high = wilson(int(wins), int(games))
        rows.append({"agent": agent, "condition": condition, "opponent": opponent, "games": int(games),
                     "win_rate": wins / games, "low": low, "high": high})
    return rows


def frontier(fit: Fit, pool: Pool) -> set[str]:
    """Agents that no cheaper-or-equal agent out-rates (cost 0 for agents that call no model)."""
    ranked = sorted(fit.ratings, key=lambda r: (pool.cost.get(r.agent, 0.0), -r.rating))
    best, on = float("-inf"), set()
    for rating in ranked:
        if rating.rating > best:
            on.add(rating.agent)
            best = rating.rating
    return on


def leaderboard(directories: list[Path], *, anchor: str | None = None, bootstrap: int = 200, seed: int = 0) -> dict[str, Any]:
    """Everything the command prints, as one JSON-able dict."""
    pool = collect(directories)
    fit = fit_ratings(pool.games, anchor=anchor, bootstrap=bootstrap, seed=seed)
    on_frontier = frontier(fit, pool)
    return {
        "runs": pool.runs, "games": len(pool.games), "anchor": fit.anchor, "scale": "400/ln10 (Elo), anchor = 0",
        "draws": f"Davidson's model, nu = {fit.draw_nu:.3f}", "bootstrap": fit.bootstrap, "converged": fit.converged,
        "ratings": [{**r.__dict__, "calls": pool.calls.get(r.agent, 0), "cost_usd": pool.cost.get(r.agent, 0.0),
                     "frontier": r.agent in on_frontier} for r in fit.ratings],
        "win_rates": win_rates(pool),
        "curves": [{"agent": a, "opponent": o, "games_used": g, "wins": w, "games": n}
                   for (a, o, g), (w, n) in sorted(pool.curves.items())],
    }


def markdown(board: dict[str, Any]) -> str:
    """The leaderboard as Markdown tables."""
    lines = [f"# Leaderboard: {board['games']:,} games from {board['runs']} runs", "",
             f"Bradley-Terry ({board['draws']}), {board['scale']}: {board['anchor']}; 95% intervals from "
             f"{board['bootstrap']} bootstrap refits resampled by game.", "",
             "| # | agent | rating | 95% interval | games | W-D-L | model calls | $ | frontier |",
             "|---|---|---:|---|---:|---|---:|---:|---|"]
    for rank, r in enumerate(board["ratings"], 1):
        lines.append(f"| {rank} | {r['agent']} | {r['rating']:.0f} | [{r['low']:.0f}, {r['high']:.0f}] | {r['games']} | "
                     f"{r['wins']}-{r['draws']}-{r['losses']} | {r['calls']} | {r['cost_usd']:.2f} | "
                     f"{'yes' if r['frontier'] else ''} |")
    lines += ["", "## Win rates by condition (Wilson 95%)", "", "| agent | condition | opponent | games | win rate |",
              "|---|---|---|---:|---|"]
    lines += [f"| {w['agent']} | {w['condition']} | {w['opponent']} | {w['games']} | {w['win_rate']:.2f} "
              f"[{w['low']:.2f}, {w['high']:.2f}] |" for w in board["win_rates"]]
    if board["curves"]:
        lines += ["", "## Adaptation curves (win rate at each checkpoint)", "", "| agent | opponent | games used | win rate |",
                  "|---|---|---:|---|"]
        lines += [f"| {c['agent']} | {c['opponent']} | {c['games_used']} | {c['wins'] / max(1, c['games']):.2f} "
                  f"({c['games']} games) |" for c in board["curves"]]
    return "\n".join(lines) + "\n"


def plot(board: dict[str, Any], path: Path) -> Path:
    """Ratings with their intervals, one bar per agent (matplotlib, imported here)."""
    import matplotlib  # noqa: PLC0415 - only when a plot is asked for

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    ratings = list(reversed(board["ratings"]))
    figure, axes = plt.subplots(figsize=(8, 0.4 * len(ratings) + 1.2))
    y = range(len(ratings))
    axes.errorbar([r["rating"] for r in ratings], list(y), fmt="o",
                  xerr=[[r["rating"] - r["low"] for r in ratings], [r["high"] - r["rating"] for r in ratings]])
    axes.set_yticks(list(y), [r["agent"] for r in ratings])
    axes.axvline(0, color="grey", linewidth=0.5)
    axes.set_xlabel(f"rating ({board['anchor']} = 0, 400/ln10 scale), 95% bootstrap interval")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path
