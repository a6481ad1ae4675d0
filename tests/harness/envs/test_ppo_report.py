"""bench paper's report shows the paper's PPO (its Table 4, 2,000 games) beside our PPO-2K row, and the PPO-2K column."""

from __future__ import annotations

from harness.bench.paper_plan import EnvAgentResult, Outcome, make_paper_plan
from harness.bench.paper_report import condition_rows, per_env_rows
from harness.bench.paper_summary import load_paper_ppo, summarise


def _result(plan, env_id: int, layout: int, condition: str) -> EnvAgentResult:
    final = tuple(
        Outcome(opponent=o.label, spec=o.spec, privileged=o.privileged, win=2, draw=1, lose=1, rewards=(1, 1, 0, -1))
        for o in plan.opponents
    )
    return EnvAgentResult(
        env_id=env_id,
        env_name="x",
        layout=layout,
        condition=condition,
        agent="ppo",
        status="ok",
        budget=plan.budget,
        games_used=plan.budget,
        final=final,
    )


def test_the_paper_ppo_table_has_every_environment() -> None:
    table = load_paper_ppo()
    assert len(table) == 56 and table["K>1.0|1"] == {"Random": (90.0, 5.0, 5.0), "MCTS-100": (10.0, 5.0, 85.0)}


def test_the_ppo_rows_sit_beside_the_papers() -> None:
    plan = make_paper_plan([0, 7], ["ppo"], budget=2000, games=4)
    assert "PPO-2K" in [o.label for o in plan.opponents]
    summary = summarise(plan, [_result(plan, 0, 0, "K>1.0"), _result(plan, 7, 0, "K<0.0")])
    columns, rows = per_env_rows(summary, "ppo")
    assert "PPO-2K*" in columns
    paper = [row for row in rows if row[2] == "paper"]
    random_column = columns.index("Random")
    assert [row[random_column] for row in paper] == ["90/5/5", "90/5/5"]  # K>1.0 and K<0.0, layout 1
    _, condition_table = condition_rows(summary, "win")
    labels = [row[1] for row in condition_table]
    assert "  paper: PPO, 2K games (Table 4)" in labels
