"""Run ``arena bench paper`` from a test and get the run directory back parsed.

``play_bench_paper(["interval"], out=tmp_path, envs=[5], budget=3, games=1)`` plays what
``arena bench paper --quick`` plays with those settings (the plan from
:func:`harness.bench.paper_plan.make_paper_plan`, the pairs through
:func:`harness.bench.paper_run.run_bench_paper`, the report through
:func:`harness.bench.paper_report.write_outputs`, as the command does) and returns a
:class:`BenchRunResult`: the manifest, the :class:`~harness.bench.paper_plan.PaperPlan`, each
(environment, agent) pair as an :class:`~harness.bench.paper_plan.EnvAgentResult`, ``results.json``
as the :class:`~harness.bench.paper_summary.PaperSummary` and ``report.md``.

``suite``: a held-out suite directory (``arena envs new``) whose entries are played after
``envs``, as ``--suite``: ``report.md`` then has the generalisation table (the published vs the held-out).
Settings left out take ``--quick``'s (budget 200, 10 evaluation games, 4 per checkpoint, the
quick agent parameters: ``adaptive-minimax`` plays as ``adaptive-minimax:population=10``, the spec
:meth:`BenchRunResult.pair` takes); a test gives much smaller ones. ``referee=False`` is ``--in-process`` (faster, UNENFORCED).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.env_spec import env_key
from engine.suite import read_public, suite_directory
from harness.bench.paper_plan import EnvAgentResult, PaperPlan, make_paper_plan
from harness.bench.paper_report import write_outputs
from harness.bench.paper_run import default_run_dir, read_plan, read_results, run_bench_paper
from harness.bench.paper_summary import PaperSummary
from harness.testing.tournaments import EnvSpec


@dataclass(frozen=True)
class BenchRunResult:
    """An ``arena bench paper`` directory, parsed: what a test asserts on."""

    run_dir: Path
    manifest: dict[str, Any]
    plan: PaperPlan
    pairs: list[EnvAgentResult]  # results.jsonl, plan order, the latest line of each pair
    summary: PaperSummary  # results.json
    report: str  # report.md

    def pair(self, env: int | str, agent: str) -> EnvAgentResult:
        """The result of one (environment key, agent spec) pair; KeyError naming the pairs there are."""
        for result in self.pairs:
            if result.env_id == env and result.agent == agent:
                return result
        raise KeyError(f"no pair ({env!r}, {agent!r}); pairs: {[(r.env_id, r.agent) for r in self.pairs]}")


def read_bench_run(run_dir: str | Path) -> BenchRunResult:
    """Parse a finished ``arena bench paper`` directory (FileNotFoundError if its report was not written)."""
    path = Path(run_dir)
    plan = read_plan(path)
    recorded = read_results(path)
    return BenchRunResult(
        run_dir=path,
        manifest=json.loads((path / "manifest.json").read_text(encoding="utf-8")),
        plan=plan,
        pairs=[recorded[task.key] for task in plan.tasks() if task.key in recorded],
        summary=PaperSummary.model_validate_json((path / "results.json").read_text(encoding="utf-8")),
        report=(path / "report.md").read_text(encoding="utf-8"),
    )


def play_bench_paper(
    agents: Sequence[str] = ("interval",),
    *,
    out: str | Path,
    envs: Sequence[EnvSpec] = (5,),
    suite: str | Path | None = None,
    budget: int | None = None,
    games: int | None = None,
    checkpoint_games: int | None = None,
    opponents: Sequence[str] | None = None,
    seed: int = 0,
    referee: bool = True,
    jobs: int = 1,
) -> BenchRunResult:
    """``arena bench paper --quick --envs ... [--suite SUITE] --agents ...`` into a new directory under ``out``, parsed."""
    held_out = []
    if suite is not None:
        directory = suite_directory(suite)
        held_out = [f"{directory}:{entry}" for entry in range(len(read_public(directory)[1]))]
    plan = make_paper_plan(
        [env_key(str(spec)) for spec in envs],
        list(agents),
        budget=budget,
        games=games,
        checkpoint_games=checkpoint_games,
        seed=seed,
        quick=True,
        held_out=held_out,
        opponents=None if opponents is None else list(opponents),
    )
    plan = plan.model_copy(update={"referee": referee})
    run_dir = default_run_dir(Path(out))
    pairs = run_bench_paper(plan, run_dir, jobs, command=f"harness.testing.play_bench_paper (agents {list(agents)})")
    write_outputs(plan, pairs, run_dir)
    return read_bench_run(run_dir)
