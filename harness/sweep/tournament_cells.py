"""A sweep's head-to-head cell: ``arena tournament``'s own code (round robin or adaptive) into the cell's run directory.

The directory is an ordinary tournament run (``arena tournament --resume``, ``arena
leaderboard`` read it); a cell is finished when its manifest says ``complete``. A cell left
half-way resumes from its ``games.jsonl``: the round robin plays the games not on record,
the adaptive schedule takes the recorded ones and plays the rest (:mod:`harness.sweep.adaptive_run`),
so no game is lost or played twice. Games are played in the cell's own process (one job).
"""

from __future__ import annotations

from pathlib import Path

from harness.sweep.adaptive_run import AdaptiveSettings, run_adaptive_tournament
from harness.sweep.spec import TournamentCell
from harness.tournaments.plan import make_plan, round_robin
from harness.tournaments.tournament import run_tournament


def run_tournament_cell(cell: TournamentCell, run_dir: Path, *, resume: bool, command: str) -> None:
    """Play (or, ``resume``, finish) the cell's tournament into ``run_dir``; errors are raised for the caller to record."""
    plan = make_plan(round_robin(cell.agents), cell.envs, cell.games, cell.seed, referee=cell.referee)
    if not cell.adaptive:
        run_tournament(plan, run_dir, 1, command=command, resume=resume)
        return
    settings = AdaptiveSettings(cell.alpha, cell.max_games, cell.max_cost_usd, cell.batch)
    run_adaptive_tournament(plan, run_dir, None if resume else settings, jobs=1, resume=resume, command=command)
