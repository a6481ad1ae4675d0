"""``arena sweep plan``: the cells and what they will play, call and cost, before anything runs.

Counts come from the same estimators as the commands a cell runs (tournament cells: their
round robin's games, or the adaptive schedule's cap): bench cells from
:class:`~harness.bench.paper_estimate.PaperEstimate` (adaptation, checkpoint and
evaluation games per pair; with ``timed`` its probes also time the agents), model cells
from :func:`harness.runs.estimate.estimate_run` (games, model calls, tokens, dollars from
litellm's local price table). Nothing is written and no model is called.
"""

from __future__ import annotations

from collections import Counter

from harness.bench.paper_estimate import PaperEstimate, estimate_paper
from harness.bench.paper_plan import PaperPlan
from harness.runs.estimate import duration, estimate_run
from harness.sweep.spec import Cell, Sweep


def plan_lines(sweep: Sweep, jobs: int = 1, *, timed: bool = False) -> list[str]:
    """The plan as plain-text lines: one per cell, then the totals."""
    lines = [
        f"arena sweep plan: {len(sweep.cells)} cells "
        f"({', '.join(f'{n} {kind}' for kind, n in Counter(c.kind for c in sweep.cells).items())})"
    ]
    bench = [c for c in sweep.cells if c.kind == "bench"]
    games = calls = 0
    cost: float | None = 0.0
    if bench:
        estimate = _bench_estimate(bench, jobs, timed)
        per_cell = sweep.file.budget + estimate.checkpoint_games_per_pair + estimate.eval_games_per_pair
        games += per_cell * len(bench)
        lines.append(
            f"bench cells: {per_cell:,} games each ({sweep.file.budget:,} adaptation + "
            f"{estimate.checkpoint_games_per_pair:,} checkpoint + {estimate.eval_games_per_pair:,} evaluation); "
            "no model calls"
        )
        if timed:
            lines.append(f"bench cells: ~{duration(estimate.wall_seconds)} at {jobs} workers (timed on env {estimate.probe_env})")
    for cell in sweep.cells:
        if cell.kind == "model":
            assert cell.config is not None
            run = estimate_run(cell.config)
            games, calls = games + run.games, calls + run.calls
            cost = None if cost is None or run.cost_usd is None else cost + run.cost_usd
            lines.append(f"  {cell.id}: {run.games:,} games, {run.calls:,} model calls, {run.cost_text()}")
        elif cell.tournament is not None:
            played = tournament_games(cell)
            games += played
            schedule = f"adaptive, at most {played:,} games" if cell.tournament.adaptive else f"{played:,} games"
            lines.append(f"  {cell.id}: {cell.agent} on {len(cell.tournament.envs)} envs, seed {cell.seed} ({schedule})")
        else:
            lines.append(f"  {cell.id}: {cell.agent} on env {cell.env}, seed {cell.seed}")
    priced = "unpriced (a model not in litellm's price table)" if cost is None else f"${cost:,.2f}"
    lines.append(f"total: {games:,} games, {calls:,} model calls, {priced}")
    lines += [f"limit {provider}: {limits.model_dump(exclude_none=True)}" for provider, limits in sweep.file.limits.items()]
    return lines


def tournament_games(cell: Cell) -> int:
    """A tournament cell's games: the round robin's, or the adaptive schedule's cap (default: the round robin's)."""
    assert cell.tournament is not None
    agents = len(cell.tournament.agents)
    fixed = agents * (agents - 1) // 2 * len(cell.tournament.envs) * cell.tournament.games
    return fixed if not cell.tournament.adaptive or cell.tournament.max_games is None else cell.tournament.max_games


def _bench_estimate(cells: list[Cell], jobs: int, timed: bool) -> PaperEstimate:
    """The bench cells as one plan (their settings are shared), estimated by ``arena bench paper --dry-run``'s code."""
    first = cells[0].plan
    assert first is not None
    envs = tuple(dict.fromkeys(c.env for c in cells))
    agents = tuple(dict.fromkeys(c.agent for c in cells))
    plan: PaperPlan = first.model_copy(update={"env_ids": envs, "agents": agents})
    if timed:
        return estimate_paper(plan, jobs)
    nothing: dict[str, float | None] = {a: None for a in agents}
    return PaperEstimate(
        plan=plan,
        jobs=jobs,
        probe_env=envs[0],
        adapt_seconds=nothing,
        adapt_probe={},
        game_seconds={a: {} for a in agents},
        model_costs=(),
        latency_s=1.0,
    )
