"""`bench paper --quick` judges no target (they are sized for the full run); the full run still does."""

from __future__ import annotations

from engine import make_env
from harness.bench.paper_plan import EnvAgentResult, Outcome, condition_label, make_paper_plan
from harness.bench.paper_report import report_markdown
from harness.bench.paper_summary import QUICK_NOTE, summarise

AGENTS = ["adaptive-minimax", "interval"]
ENVS = (5, 26)  # K>1.0 and K=0.6 on Random Board 2


def lost_everything(env_id: int, agent: str) -> EnvAgentResult:
    """A pair whose agent lost every game: target (a) fails against the paper's Table 1."""
    env = make_env(env_id)
    final = (Outcome(opponent="Random", spec="random", privileged=False, win=0, draw=0, lose=4, rewards=(-1,) * 4),)
    return EnvAgentResult(
        env_id=env_id, env_name=env.name, layout=env.layout_index, condition=condition_label(env.condition), agent=agent,
        status="ok", budget=20, final=final,
    )  # fmt: skip


def summary_of(quick: bool):
    plan = make_paper_plan(list(ENVS), AGENTS, budget=20, games=4, checkpoint_games=2, quick=quick)
    return summarise(plan, [lost_everything(env, agent) for env in ENVS for agent in plan.agents])  # quick: the quick specs


def test_the_full_run_judges_the_targets():
    summary = summary_of(quick=False)
    assert any(check.passed is False for check in summary.checks)
    assert "## Targets\n" in report_markdown(summary) and "**FAIL**" in report_markdown(summary)
    assert QUICK_NOTE not in summary.notes


def test_a_quick_run_shows_the_same_lines_beside_the_paper_and_judges_none():
    full, quick = summary_of(quick=False), summary_of(quick=True)
    assert [check.text.split(":")[0] for check in quick.checks] == [check.text.split(":")[0] for check in full.checks]
    assert all(check.passed is None for check in quick.checks) and QUICK_NOTE in quick.notes
    assert any("paper" in check.text for check in quick.checks)
    report = report_markdown(quick)
    assert "## Targets, not judged: a quick run (they apply to the full run)" in report
    assert "**FAIL**" not in report and "**PASS**" not in report
