"""Head-to-head sweep cells (``[tournament]``): parsed with errors naming the key, run and resumed, read by the leaderboard."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.sweep.backends import run_sweep
from harness.sweep.cells import CELLS_DIR, cell_dir, cell_state
from harness.sweep.leaderboard import leaderboard
from harness.sweep.plan import plan_lines
from harness.sweep.spec import SweepError, parse_sweep
from harness.tournaments.tournament import read_games

AGENTS = ["random", "greedy", "minimax:depth=1"]
ADAPTIVE = {
    "envs": [5, 12],
    "seeds": [2],
    "referee": False,
    "tournament": {"agents": AGENTS, "games": 2, "adaptive": True, "max_games": 8, "batch": 4},
}


def test_tournament_cells_one_per_seed_in_the_plan() -> None:
    sweep = parse_sweep({**ADAPTIVE, "seeds": [0, 1], "tournament": {"agents": AGENTS, "envs": ["5-6"], "games": 3}})
    assert [(c.kind, c.seed, c.tournament.envs if c.tournament else None) for c in sweep.cells] == [
        ("tournament", 0, (5, 6)),
        ("tournament", 1, (5, 6)),
    ]
    lines = plan_lines(sweep)
    assert any("tournament of random, greedy, minimax:depth=1 on 2 envs, seed 0 (18 games)" in line for line in lines)
    assert lines[-1].startswith("total: 36 games")


@pytest.mark.parametrize(
    ("tournament", "fragment"),
    [
        ({"agents": ["random"]}, "tournament.agents: Tuple should have at least 2 items"),
        ({"agents": ["random", "nosuchagent"]}, "tournament.agents.1: "),
        ({"agents": ["random", "random"]}, "tournament.agents.1: 'random' is listed twice"),
        ({"agents": AGENTS, "batch": 3}, "tournament.batch: "),
        ({"agents": AGENTS, "alpha": 2}, "tournament.alpha: "),
        ({"agents": AGENTS, "envs": ["9-3"]}, "tournament.envs.0: range"),
        ({"agents": AGENTS, "adaptiv": True}, "tournament.adaptiv: unknown key"),
    ],
)
def test_a_bad_tournament_table_names_its_key(tournament: dict[str, object], fragment: str) -> None:
    with pytest.raises(SweepError) as error:
        parse_sweep({"envs": [5], "tournament": tournament})
    assert fragment in str(error.value)


def test_an_adaptive_tournament_cell_runs_resumes_and_reaches_the_leaderboard(tmp_path: Path) -> None:
    sweep = parse_sweep(ADAPTIVE)
    (cell,) = sweep.cells
    out = tmp_path / "sweep"
    assert [o.status for o in run_sweep(sweep, out)] == ["ok"]
    run_dir = cell_dir(out, cell)
    whole = {(g.env_id, g.pairing, g.game): g.moves for g in read_games(run_dir)}
    decision = json.loads((run_dir / "adaptive.json").read_text())
    assert decision["games"] == len(whole) == 8 and cell_state(run_dir, cell) == "finished"
    assert [o.status for o in run_sweep(sweep, out)] == ["skipped"]
    lines = (run_dir / "games.jsonl").read_text().splitlines(keepends=True)  # a worker killed after 3 games
    (run_dir / "games.jsonl").write_text("".join(lines[:3]) + lines[3][:20])
    manifest = json.loads((run_dir / "manifest.json").read_text())
    (run_dir / "manifest.json").write_text(json.dumps(manifest | {"status": "running"}))
    (run_dir / "adaptive.json").unlink()
    assert cell_state(run_dir, cell) == "partial"
    assert [o.status for o in run_sweep(sweep, out)] == ["ok"]
    again = read_games(run_dir)
    assert len(again) == 8 and {(g.env_id, g.pairing, g.game): g.moves for g in again} == whole  # each game once
    assert json.loads((run_dir / "adaptive.json").read_text()) == decision
    board = leaderboard([out], bootstrap=0)
    assert board["games"] == 8 and {r["agent"] for r in board["sections"][0]["ratings"]} == {"Random", "greedy", "minimax:depth=1"}
    assert (out / CELLS_DIR / cell.id).is_dir()
