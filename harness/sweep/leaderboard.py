"""``arena leaderboard DIR...``: every evaluation game of runs, bench runs and sweeps, rated by one fit.

Directories are searched for run directories (any depth): a bench-paper run
(``results.jsonl``: each pair's final evaluation games, reward by reward), an ``arena run``
(``games.jsonl``'s evaluation games), an ``arena tournament`` or ``match`` (round robin or
adaptive: every game of ``games.jsonl`` is one head-to-head result, A's score; model calls
and dollars from ``calls.jsonl``). Agent names: a bench agent's spec; a model agent as
``llm-policy:model=M,hint=H`` (with ``,legal_moves=hidden`` for that track); opponents by
the paper's labels (``Random``, ``MCTS-30``), in tournaments too (their agents by the same
labels; an adaptive agent, which a tournament plays without its budget, as ``SPEC
(unadapted)``, never pooled with its adapted self). Adaptation games (self-play) are not rated.
Besides the ratings (:mod:`harness.sweep.rating`): win rates per agent, condition and
opponent with Wilson intervals; adaptation curves (win rate against each checkpoint
opponent at each checkpoint's games used, bench runs); model calls and dollars per agent;
and which agents sit on the cost-versus-rating frontier (no cheaper agent rates higher).

Condition sets are never pooled: every game belongs to the set of its environment (the
published 56, a held-out suite by its name, or custom layouts, :func:`condition_set`), and
each set gets its own section: its own fit, intervals, costs and frontier; the win-rate
rows and curves carry the set as a column.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine import EnvKey, make_env
from engine.env_spec import is_paper_env, is_sealed
from engine.suite import SuiteError, read_public
from harness.bench.paper_plan import EnvAgentResult, env_condition_label, opponent_label
from harness.prompting.waves import wave_label, wave_size
from harness.sweep.rating import Fit, Game, fit_ratings
from harness.tournaments.plan import is_adaptive
from harness.tournaments.results import UNADAPTED_MARK
from harness.tournaments.stats import wilson

SCORES = {1: 1.0, 0: 0.5, -1: 0.0}
PUBLISHED = "published 56"
CUSTOM = "custom layouts"
TOURNAMENT_KINDS = ("tournament", "match")


@dataclass
class Pool:
    """Every rated game, with the condition of each, and what each agent spent."""

    games: list[Game] = field(default_factory=list)
    conditions: list[str] = field(default_factory=list)
    sets: list[str] = field(default_factory=list)  # each game's condition set (:func:`condition_set`)
    calls: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))  # (set, agent)
    cost: dict[tuple[str, str], float] = field(default_factory=lambda: defaultdict(float))
    curves: dict[tuple[str, str, str, int], list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    runs: int = 0

    def add(self, game: Game, condition: str, condition_set: str) -> None:
        self.games.append(game)
        self.conditions.append(condition)
        self.sets.append(condition_set)


def condition_set(key: EnvKey) -> str:
    """The set an environment's results belong to: the published 56, ``suite NAME`` (a held-out suite), or custom."""
    if is_paper_env(key):
        return PUBLISHED
    if is_sealed(key):
        directory = str(key).rpartition(":")[0]
        try:
            name = read_public(directory)[0]
        except (SuiteError, OSError, ValueError):
            name = ""
        return f"suite {name or Path(directory).name}"
    return CUSTOM


def collect(directories: list[Path]) -> Pool:
    """The games of every run directory found under ``directories``."""
    pool = Pool()
    for directory in directories:
        if not directory.is_dir():
            raise ValueError(f"{directory}: not a directory; give run, bench-paper, tournament or sweep directories")
        for manifest in sorted({directory / "manifest.json", *directory.rglob("manifest.json")}):
            if manifest.is_file():
                _add_run(pool, manifest.parent, json.loads(manifest.read_text(encoding="utf-8")))
    if not pool.games:
        raise ValueError(
            f"no evaluation game under {', '.join(map(str, directories))}: give run, bench-paper, tournament or sweep directories"
        )
    return pool


def _add_run(pool: Pool, run_dir: Path, manifest: dict[str, Any]) -> None:
    if manifest.get("kind") == "bench-paper" and (run_dir / "results.jsonl").is_file():
        pool.runs += 1
        for line in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                _add_bench_result(pool, EnvAgentResult.model_validate_json(line))
    elif manifest.get("kind") in TOURNAMENT_KINDS and (run_dir / "games.jsonl").is_file():
        pool.runs += 1
        _add_tournament(pool, run_dir)
    elif isinstance(manifest.get("config"), dict) and (run_dir / "games.jsonl").is_file():
        pool.runs += 1
        _add_model_run(pool, run_dir, manifest["config"])


def _add_bench_result(pool: Pool, result: EnvAgentResult) -> None:
    if result.status != "ok":
        return
    where = condition_set(result.env_id)
    for outcome in result.final:
        for reward in outcome.rewards:
            pool.add(Game(result.agent, outcome.opponent, SCORES[reward]), result.condition, where)
    for checkpoint in result.checkpoints:
        for outcome in checkpoint.outcomes:
            tally = pool.curves[(where, result.agent, outcome.opponent, checkpoint.planned_games)]
            tally[0] += outcome.win
            tally[1] += outcome.win + outcome.draw + outcome.lose


def _add_tournament(pool: Pool, run_dir: Path) -> None:
    """Every game of a tournament or match run (a line torn by a kill is skipped); its model calls per agent."""
    names: dict[str, str] = {}
    conditions: dict[EnvKey, tuple[str, str]] = {}

    def where(env: EnvKey) -> tuple[str, str]:
        if env not in conditions:
            sealed = is_sealed(env)
            conditions[env] = ("held-out (sealed)" if sealed else env_condition_label(make_env(env)), condition_set(env))
        return conditions[env]

    for line in _json_lines(run_dir / "games.jsonl"):
        a, b = (names.setdefault(spec, tournament_agent_name(spec)) for spec in (line["agent_a"], line["agent_b"]))
        pool.add(Game(a, b, SCORES[int(line["a_reward"])]), *where(line["env_id"]))
    for call in _json_lines(run_dir / "calls.jsonl"):
        key = (where(call["env_id"])[1], names.setdefault(call["agent"], tournament_agent_name(call["agent"])))
        pool.calls[key] += 1
        pool.cost[key] += float(call.get("cost_usd") or 0.0)


def tournament_agent_name(spec: str) -> str:
    """A tournament agent's name on the leaderboard: the paper's label, `` (unadapted)`` for an adaptive agent."""
    try:
        unadapted = is_adaptive(spec)
    except (KeyError, ValueError):  # an agent this process does not know (a plugin not loaded): its spec as it is
        unadapted = False
    return wave_label(_label(spec)) + (UNADAPTED_MARK if unadapted else "")


def _json_lines(path: Path) -> list[dict[str, Any]]:
    """The whole JSON lines of ``path`` (none when it is missing; a torn last line left out)."""
    if not path.is_file():
        return []
    found = []
    for text in path.read_text(encoding="utf-8").splitlines():
        try:
            found.append(json.loads(text))
        except json.JSONDecodeError:
            continue
    return found


def model_agent_name(config: dict[str, Any]) -> str:
    """A model agent's name on the leaderboard: agent, model, hint level and prompt track, and its W."""
    track = ",legal_moves=hidden" if config.get("legal_moves") == "hidden" else ""
    name = f"{config['agent']}:model={config['model']},hint={config.get('hint', 'ratio')}{track}"
    return wave_label(name, wave_size(config["agent"], config))


def _add_model_run(pool: Pool, run_dir: Path, config: dict[str, Any]) -> None:
    name = model_agent_name(config)
    where = condition_set(config["env"])
    condition = env_condition_label(make_env(config["env"])) if _revealable(run_dir, config["env"]) else "held-out (sealed)"
    for line in (run_dir / "games.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        game = json.loads(line)
        if game.get("phase") != "eval":
            continue
        reward = game["rewards"][0 if game["agent_colour"] == "black" else 1]
        pool.add(Game(name, _label(game["opponent"]), SCORES[reward]), condition, where)
    metrics = run_dir / "metrics.json"
    if metrics.is_file():
        data = json.loads(metrics.read_text(encoding="utf-8"))
        pool.calls[(where, name)] += int(data.get("calls") or 0)
        pool.cost[(where, name)] += float(data.get("cost_usd") or 0.0)


def _revealable(run_dir: Path, env: EnvKey) -> bool:
    """Whether the run's condition may be shown: not a sealed suite entry, or the run has finished."""
    if not is_sealed(env):
        return True
    metrics = run_dir / "metrics.json"
    return metrics.is_file() and json.loads(metrics.read_text(encoding="utf-8")).get("stopped") is None


def _label(name: str) -> str:
    try:
        return opponent_label(name)
    except (KeyError, ValueError):
        return name


def win_rates(pool: Pool) -> list[dict[str, Any]]:
    """Per condition set, agent, condition and opponent: games, win rate and its Wilson interval (both sides of each game)."""
    tallies: dict[tuple[tuple[int, str], str, str, str], list[float]] = defaultdict(lambda: [0, 0])
    for game, condition, where in zip(pool.games, pool.conditions, pool.sets):
        for me, them, score in ((game.a, game.b, game.score), (game.b, game.a, 1 - game.score)):
            tally = tallies[(_set_rank(where), me, condition, them)]
            tally[0] += score == 1
            tally[1] += 1
    rows = []
    for (rank, agent, condition, opponent), (wins, games) in sorted(tallies.items()):
        low, high = wilson(int(wins), int(games))
        rows.append(
            {
                "condition_set": rank[1],
                "agent": agent,
                "condition": condition,
                "opponent": opponent,
                "games": int(games),
                "win_rate": wins / games,
                "low": low,
                "high": high,
            }
        )
    return rows


def _set_rank(where: str) -> tuple[int, str]:
    """The published 56 first, then suites and custom layouts by name."""
    return (0 if where == PUBLISHED else 1, where)


def frontier(fit: Fit, pool: Pool, where: str = PUBLISHED) -> set[str]:
    """Agents that no cheaper-or-equal agent out-rates in condition set ``where`` (cost 0 for agents calling no model)."""
    ranked = sorted(fit.ratings, key=lambda r: (pool.cost.get((where, r.agent), 0.0), -r.rating))
    best, on = float("-inf"), set()
    for rating in ranked:
        if rating.rating > best:
            on.add(rating.agent)
            best = rating.rating
    return on


def leaderboard(directories: list[Path], *, anchor: str | None = None, bootstrap: int = 200, seed: int = 0) -> dict[str, Any]:
    """Everything the command prints, as one JSON-able dict: one section (fit) per condition set, never pooled."""
    pool = collect(directories)
    sections = [_section(pool, where, anchor, bootstrap, seed) for where in sorted(set(pool.sets), key=_set_rank)]
    return {
        "runs": pool.runs,
        "games": len(pool.games),
        "scale": "400/ln10 (Elo), anchor = 0",
        "sections": [section for section in sections if section is not None],
        "unrated": [where for where, section in zip(sorted(set(pool.sets), key=_set_rank), sections) if section is None],
        "win_rates": win_rates(pool),
        "curves": [
            {"condition_set": s, "agent": a, "opponent": o, "games_used": g, "wins": w, "games": n}
            for (s, a, o, g), (w, n) in sorted(pool.curves.items(), key=lambda item: (_set_rank(item[0][0]), item[0]))
        ],
    }


def _section(pool: Pool, where: str, anchor: str | None, bootstrap: int, seed: int) -> dict[str, Any] | None:
    """The fit of one condition set's games (None when fewer than two agents played there)."""
    games = [game for game, game_set in zip(pool.games, pool.sets) if game_set == where]
    agents = {g.a for g in games} | {g.b for g in games}
    if len(agents) < 2:
        return None
    fit = fit_ratings(games, anchor=anchor if anchor in agents else None, bootstrap=bootstrap, seed=seed)
    on_frontier = frontier(fit, pool, where)
    return {
        "condition_set": where,
        "games": len(games),
        "anchor": fit.anchor,
        "draws": f"Davidson's model, nu = {fit.draw_nu:.3f}",
        "bootstrap": fit.bootstrap,
        "converged": fit.converged,
        "ratings": [
            {
                **r.__dict__,
                "calls": pool.calls.get((where, r.agent), 0),
                "cost_usd": pool.cost.get((where, r.agent), 0.0),
                "frontier": r.agent in on_frontier,
            }
            for r in fit.ratings
        ],
    }


def markdown(board: dict[str, Any]) -> str:
    """The leaderboard as Markdown tables."""
    lines = [
        f"# Leaderboard: {board['games']:,} games from {board['runs']} runs",
        "",
        "Each condition set (the published 56, a held-out suite, custom layouts) is fitted on its own games: "
        "ratings are never compared across sets.",
        "",
    ]
    for section in board["sections"]:
        lines += [
            f"## {section['condition_set']}: {section['games']:,} games",
            "",
            f"Bradley-Terry ({section['draws']}), {board['scale']}: {section['anchor']}; 95% intervals from "
            f"{section['bootstrap']} bootstrap refits resampled by game.",
            "",
            "| # | agent | rating | 95% interval | games | W-D-L | model calls | $ | frontier |",
            "|---|---|---:|---|---:|---|---:|---:|---|",
        ]
        for rank, r in enumerate(section["ratings"], 1):
            lines.append(
                f"| {rank} | {r['agent']} | {r['rating']:.0f} | [{r['low']:.0f}, {r['high']:.0f}] | {r['games']} | "
                f"{r['wins']}-{r['draws']}-{r['losses']} | {r['calls']} | {r['cost_usd']:.2f} | "
                f"{'yes' if r['frontier'] else ''} |"
            )
        lines.append("")
    lines += [
        "## Win rates by condition (Wilson 95%)",
        "",
        "| condition set | agent | condition | opponent | games | win rate |",
        "|---|---|---|---|---:|---|",
    ]
    lines += [
        f"| {w['condition_set']} | {w['agent']} | {w['condition']} | {w['opponent']} | {w['games']} | "
        f"{w['win_rate']:.2f} [{w['low']:.2f}, {w['high']:.2f}] |"
        for w in board["win_rates"]
    ]
    if board["curves"]:
        lines += [
            "",
            "## Adaptation curves (win rate at each checkpoint)",
            "",
            "| condition set | agent | opponent | games used | win rate |",
            "|---|---|---|---:|---|",
        ]
        lines += [
            f"| {c['condition_set']} | {c['agent']} | {c['opponent']} | {c['games_used']} | "
            f"{c['wins'] / max(1, c['games']):.2f} ({c['games']} games) |"
            for c in board["curves"]
        ]
    return "\n".join(lines) + "\n"


def plot(board: dict[str, Any], path: Path) -> Path:
    """Ratings with their intervals, one bar per agent (matplotlib, imported here)."""
    import matplotlib  # noqa: PLC0415 - only when a plot is asked for

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    sections = board["sections"]
    heights = [0.4 * len(section["ratings"]) + 1.2 for section in sections]
    figure, panels = plt.subplots(len(sections), 1, figsize=(8, sum(heights)), squeeze=False, gridspec_kw={"height_ratios": heights})
    for axes, section in zip(panels[:, 0], sections):  # one panel per condition set: never on one axis
        ratings = list(reversed(section["ratings"]))
        y = range(len(ratings))
        axes.errorbar(
            [r["rating"] for r in ratings],
            list(y),
            fmt="o",
            xerr=[[r["rating"] - r["low"] for r in ratings], [r["high"] - r["rating"] for r in ratings]],
        )
        axes.set_yticks(list(y), [r["agent"] for r in ratings])
        axes.axvline(0, color="grey", linewidth=0.5)
        axes.set_title(section["condition_set"])
        axes.set_xlabel(f"rating ({section['anchor']} = 0, 400/ln10 scale), 95% bootstrap interval")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path
