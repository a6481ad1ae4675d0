"""``arena leaderboard`` over tournament run directories: each game one head-to-head result, beside other runs."""

from __future__ import annotations

import json
from pathlib import Path

from harness.sweep.leaderboard import PUBLISHED, leaderboard

# (A, B, A's wins, draws, losses): interval > minimax:depth=1 > greedy > random, each gap clear
RECORDS = (
    ("random", "greedy", 3, 2, 15),
    ("random", "minimax:depth=1", 1, 1, 18),
    ("greedy", "minimax:depth=1", 4, 2, 14),
    ("interval", "minimax:depth=1", 15, 2, 3),
    ("interval", "random", 19, 1, 0),
)


def _tournament(run_dir: Path, schedule: str | None = None) -> int:
    """A tournament run directory as ``arena tournament`` writes it (the fields the leaderboard reads), a line torn."""
    run_dir.mkdir(parents=True)
    manifest = {"kind": "tournament", **({"schedule": schedule} if schedule else {}), "envs": [5]}
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    lines = []
    for pairing, (a, b, wins, draws, losses) in enumerate(RECORDS):
        for game, reward in enumerate([1] * wins + [0] * draws + [-1] * losses):
            lines.append(
                json.dumps(
                    {
                        "env_id": 5,
                        "pairing": pairing,
                        "game": game,
                        "agent_a": a,
                        "agent_b": b,
                        "a_reward": reward,
                        "a_colour": "black" if game % 2 == 0 else "white",
                    }
                )
            )
    (run_dir / "games.jsonl").write_text("\n".join(lines) + "\n" + lines[0][:25])  # a kill's torn line: left out
    calls = [{"env_id": 5, "pairing": 3, "game": g, "agent": "interval", "cost_usd": 0.25} for g in range(4)]
    (run_dir / "calls.jsonl").write_text("".join(json.dumps(call) + "\n" for call in calls))
    return len(lines)


def test_a_tournament_directory_is_rated_game_by_game(tmp_path: Path) -> None:
    games = _tournament(tmp_path / "runs" / "t1")
    board = leaderboard([tmp_path / "runs"], bootstrap=50)
    assert board["runs"] == 1 and board["games"] == games == 100
    (section,) = board["sections"]
    assert section["condition_set"] == PUBLISHED and section["anchor"] == "Random"
    order = [r["agent"] for r in section["ratings"]]
    assert order == ["interval (unadapted)", "minimax:depth=1", "greedy", "Random"]  # the constructed strengths
    ratings = {r["agent"]: r for r in section["ratings"]}
    assert ratings["Random"]["rating"] == 0 and ratings["greedy"]["low"] > 0  # greedy clearly above Random
    assert (ratings["Random"]["wins"], ratings["Random"]["draws"], ratings["Random"]["losses"]) == (4, 4, 52)
    assert ratings["interval (unadapted)"]["calls"] == 4 and ratings["interval (unadapted)"]["cost_usd"] == 1.0
    rows = [w for w in board["win_rates"] if w["agent"] == "greedy" and w["opponent"] == "Random"]
    assert len(rows) == 1 and rows[0]["games"] == 20 and rows[0]["win_rate"] == 15 / 20


def test_tournaments_and_model_runs_share_one_fit(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    _tournament(runs / "round-robin")
    _tournament(runs / "adaptive", schedule="adaptive")
    model = runs / "model"
    model.mkdir()
    (model / "manifest.json").write_text(json.dumps({"config": {"agent": "llm-policy", "model": "mock/a", "env": 5}}))
    evals = [{"phase": "eval", "agent_colour": "black", "rewards": [r, -r], "opponent": "random"} for r in [1] * 8 + [-1] * 2]
    (model / "games.jsonl").write_text("".join(json.dumps(game) + "\n" for game in evals))
    board = leaderboard([runs], bootstrap=0)
    assert board["runs"] == 3 and board["games"] == 210
    agents = [r["agent"] for r in board["sections"][0]["ratings"]]
    assert agents.count("Random") == 1 and any("model=mock/a" in agent for agent in agents)  # one Random, both kinds
