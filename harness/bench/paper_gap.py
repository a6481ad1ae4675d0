"""The generalisation table of ``arena bench paper --suite``: per agent, the published 56 against held-out environments.

Each pair's final evaluation games are counted, never pooled across the two groups:
the paper's environments (ids 0-55) on one side, every other environment of the plan
(a suite's entries, custom layouts) on the other. Per agent and opponent (and over all
opponents) the table gives the win rate on each side with its Wilson 95% interval and
the number of games, and the difference (held-out minus published) with Newcombe's
interval for a difference of two proportions (built from the two Wilson intervals).
The games of one environment are not independent draws (one adapted agent plays
them), so the intervals are narrower than the environment-level spread would give.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import sqrt

from engine.env_spec import is_paper_env
from harness.bench.paper_plan import EnvAgentResult, PaperPlan
from harness.tournaments.stats import wilson

GAP_COLUMNS = (
    "agent",
    "opponent",
    "published 56: win % [95% CI] (games)",
    "held-out: win % [95% CI] (games)",
    "gap (held-out - 56), pp [95% CI]",
)
ALL_OPPONENTS = "all"


def has_held_out(plan: PaperPlan) -> bool:
    """Whether the plan has environments outside the 56 (and so a generalisation table)."""
    return any(not is_paper_env(key) for key in plan.env_ids)


def gap_rows(plan: PaperPlan, pairs: Sequence[EnvAgentResult]) -> list[list[str]]:
    """One row per agent and opponent, then the agent over all opponents (the table's layout: :data:`GAP_COLUMNS`)."""
    rows = []
    for agent in plan.agents:
        mine = [r for r in pairs if r.agent == agent and r.status == "ok"]
        for opponent in [*(o.label for o in plan.opponents), ALL_OPPONENTS]:
            paper = _count([r for r in mine if is_paper_env(r.env_id)], opponent)
            held = _count([r for r in mine if not is_paper_env(r.env_id)], opponent)
            rows.append([agent, opponent, _cell(*paper), _cell(*held), _difference(paper, held)])
    return rows


def _count(results: Sequence[EnvAgentResult], opponent: str) -> tuple[int, int]:
    """(wins, games) of the final evaluations against ``opponent`` (or all of them)."""
    outcomes = [o for r in results for o in r.final if opponent in (ALL_OPPONENTS, o.opponent)]
    return sum(o.win for o in outcomes), sum(o.win + o.draw + o.lose for o in outcomes)


def _cell(wins: int, games: int) -> str:
    if not games:
        return "-"
    low, high = wilson(wins, games)
    return f"{100 * wins / games:.1f} [{100 * low:.1f}, {100 * high:.1f}] ({games})"


def difference_interval(paper: tuple[int, int], held: tuple[int, int]) -> tuple[float, float, float]:
    """(held-out rate - paper rate, low, high): Newcombe's hybrid score interval (method 10) at 95%."""
    p1, p2 = paper[0] / paper[1], held[0] / held[1]
    l1, u1 = wilson(*paper)
    l2, u2 = wilson(*held)
    delta = p2 - p1
    low = delta - sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2)
    high = delta + sqrt((u2 - p2) ** 2 + (p1 - l1) ** 2)
    return delta, low, high


def _difference(paper: tuple[int, int], held: tuple[int, int]) -> str:
    if not paper[1] or not held[1]:
        return "-"
    delta, low, high = difference_interval(paper, held)
    return f"{100 * delta:+.1f} [{100 * low:+.1f}, {100 * high:+.1f}]"


def gap_markdown(plan: PaperPlan, pairs: Sequence[EnvAgentResult]) -> list[str]:
    """The report's section (empty when the plan has only the 56)."""
    if not has_held_out(plan):
        return []
    header = "| " + " | ".join(GAP_COLUMNS) + " |"
    rule = "|" + "|".join("---" for _ in GAP_COLUMNS) + "|"
    held = sum(not is_paper_env(key) for key in plan.env_ids)
    return [
        "## Generalisation: the published 56 vs held-out environments",
        "",
        f"Final evaluation win rates; {len(plan.env_ids) - held} published and {held} held-out environments "
        "(never pooled). Gap: held-out minus published, percentage points, Newcombe 95% interval.",
        "",
        header,
        rule,
        *("| " + " | ".join(row) + " |" for row in gap_rows(plan, pairs)),
        "",
    ]
