"""``arena bench paper`` report: the tables of the summary as text and markdown, and the run's output files.

:mod:`harness.bench.paper_summary` computes the statistics and checks;
:mod:`harness.bench.paper_plots` draws the figures; :func:`write_outputs` writes
``results.json``, ``report.md`` and the plots into the run directory. A model agent's name carries
its W (:func:`~harness.prompting.waves.wave_label`).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path

from engine.environments import layouts
from harness.bench.paper_gap import gap_markdown
from harness.bench.paper_plan import EnvAgentResult, PaperPlan, paper_order
from harness.bench.paper_summary import (
    ADAPTIVE_MINIMAX,
    DEFAULT_PAPER_TABLE2,
    OUTCOMES,
    PPO,
    PaperSummary,
    summarise,
    table2_condition_stats,
    targets_title,
)
from harness.prompting.waves import wave_label
from harness.referee.isolation import agent_isolation
from harness.registry.specs import parse_spec
from harness.tournaments.results import PRIVILEGED_MARK, PRIVILEGED_NOTE, _markdown_table, agent_label


def wdl(win: float, draw: float, lose: float) -> str:
    """``95/0/5``: win/draw/lose percent, as the paper's Table 2 writes them."""
    return f"{win:.0f}/{draw:.0f}/{lose:.0f}"


def opponent_headers(plan: PaperPlan) -> list[str]:
    """The opponents' column names, ``*`` on the privileged ones (simulator access to K)."""
    return [agent_label(o.label, o.privileged) for o in plan.opponents]


def per_env_rows(summary: PaperSummary, agent: str) -> tuple[list[str], list[list[str]]]:
    """The paper's Table 2 layout for one agent: W/D/L % per environment; for Adaptive Minimax (Table 2) and PPO
    (Table 4: vs Random and MCTS-100) a paper row under ours."""
    name = parse_spec(agent)[0].name
    paper_rows = summary.paper_table2 if name == ADAPTIVE_MINIMAX else summary.paper_ppo if name == PPO else {}
    with_paper = bool(paper_rows)
    columns = ["C", "L", "", *opponent_headers(summary.plan)]
    mine = [r for r in summary.pairs if r.agent == agent]
    order = paper_order(r.condition for r in mine)
    rows, previous = [], None
    for result in sorted(mine, key=lambda r: (order.index(r.condition), r.layout)):
        condition = result.condition if result.condition != previous else ""
        cells = []
        for opponent in summary.plan.opponents:
            ours = result.outcome(opponent.label)
            cells.append(wdl(*(ours.percent(o) for o in OUTCOMES)) if ours else "-" if result.status == "ok" else "failed")
        rows.append([condition, str(result.layout + 1), "ours", *cells])
        if with_paper:
            paper = paper_rows.get(f"{result.condition}|{result.layout + 1}", {})
            rows.append(["", "", "paper", *(wdl(*paper[o.label]) if o.label in paper else "-" for o in summary.plan.opponents)])
        previous = result.condition
    return columns, rows


def condition_rows(summary: PaperSummary, outcome: str = "win") -> tuple[list[str], list[list[str]]]:
    """The paper's Table 1 layout: per condition the paper's row, each agent's mean ± std, and ours - paper (pp)."""
    columns = ["C", "agent", "envs", *opponent_headers(summary.plan)]
    labels = [o.label for o in summary.plan.opponents]
    paper_ppo = table2_condition_stats(
        {(key.rpartition("|")[0], int(key.rpartition("|")[2])): row for key, row in summary.paper_ppo.items()}
    )
    rows = []
    for condition in paper_order(c for table in summary.per_condition.values() for c in table):
        paper = summary.paper_table1.get(condition, {})
        rows.append([condition, "paper: Adaptive Minimax", "7", *(paper[o][outcome].cell() if o in paper else "-" for o in labels)])
        for agent, table in summary.per_condition.items():
            ours = {o: table.get(condition, {}).get(o, {}).get(outcome) for o in labels}
            envs = max((s.n for s in ours.values() if s), default=0)
            rows.append(["", wave_label(agent), str(envs), *(s.cell() if s else "-" for s in ours.values())])
            if parse_spec(agent)[0].name == PPO and condition in paper_ppo:
                rows.append(
                    [
                        "",
                        "  paper: PPO, 2K games (Table 4)",
                        "7",
                        *(paper_ppo[condition][o][outcome].cell() if o in paper_ppo[condition] else "-" for o in labels),
                    ]
                )
            if parse_spec(agent)[0].name == ADAPTIVE_MINIMAX:
                rows.append(
                    [
                        "",
                        "  ours - paper (pp)",
                        "",
                        *(f"{s.mean - paper[o][outcome].mean:+.1f}" if s and o in paper else "-" for o, s in ours.items()),
                    ]
                )
    return columns, rows


def convergence_rows(summary: PaperSummary, agent: str) -> tuple[list[str], list[list[str]]]:
    """Win rate (mean % over environments) at each checkpoint, per condition and opponent (Figure 2)."""
    plan = summary.plan
    columns = ["C", "vs", *(f"@{g}" for g in plan.checkpoints)]
    table = summary.convergence.get(agent, {})
    rows = []
    for condition in paper_order(table):
        for index, opponent in enumerate(plan.checkpoint_opponents):
            stats = table[condition].get(opponent.label, {})
            rows.append(
                [
                    condition if index == 0 else "",
                    agent_label(opponent.label, opponent.privileged),
                    *(f"{stats[g].mean:.0f}" if g in stats else "-" for g in plan.checkpoints),
                ]
            )
    return columns, rows


def belief_rows(summary: PaperSummary) -> list[list[str]]:
    """Per pair with a belief: env, agent, condition, the interval [k_low, k_high], regime, contains K, width."""
    rows = []
    for r in summary.pairs:
        if r.belief is not None and r.belief_score is not None:
            score = r.belief_score
            rows.append(
                [
                    str(r.env_id),
                    wave_label(r.agent),
                    r.condition,
                    f"[{r.belief.k_low:.3f}, {r.belief.k_high:.3f}]",
                    f"{r.belief.regime} ({'right' if score.regime_correct else 'wrong'})",
                    "yes" if score.contains_k else "NO",
                    f"{score.width:.3f}",
                ]
            )
    return rows


def cost_rows(summary: PaperSummary) -> list[list[str]]:
    """Per agent: pairs ok, games used (min-max) of the budget, games refused, mean seconds per environment."""
    rows = []
    for agent in summary.plan.agents:
        mine = [r for r in summary.pairs if r.agent == agent]
        if not mine:
            continue
        used = [r.games_used for r in mine]
        adapt = [r.adapt_seconds for r in mine]
        rows.append(
            [
                wave_label(agent),
                f"{sum(r.status == 'ok' for r in mine)}/{len(mine)}",
                f"{min(used)}-{max(used)}/{summary.plan.budget}",
                str(sum(r.refused_games for r in mine)),
                f"{statistics.fmean(adapt):.1f} (max {max(adapt):.1f})",
                f"{statistics.fmean(r.checkpoint_seconds for r in mine):.1f}",
                f"{statistics.fmean(r.eval_seconds for r in mine):.1f}",
            ]
        )
    return rows


COST_COLUMNS = ["agent", "pairs ok", "games used", "refused", "adapt s", "checkpoint s", "eval s"]
BELIEF_COLUMNS = ["env", "agent", "C", "belief K in", "regime", "contains K", "width"]


def failures(summary: PaperSummary) -> list[str]:
    """One line per failed pair (a budget overrun says so in capitals)."""
    return [f"env {r.env_id} ({r.env_name}), {wave_label(r.agent)}: {r.error}" for r in summary.pairs if r.status != "ok"]


def describe(plan: PaperPlan) -> str:
    """One line: environments, agents, budget, games, checkpoints, seed."""
    return (
        f"{len(plan.env_ids)} environments x {len(plan.agents)} adaptive agents; budget {plan.budget} games; "
        f"final evaluation {plan.games} games per opponent, checkpoints at {', '.join(map(str, plan.checkpoints))} "
        f"games ({plan.checkpoint_games} per opponent; the last is the final evaluation); colours alternating; "
        f"seed {plan.seed}{'; --quick' if plan.quick else ''}. {enforcement(plan)}"
    )


def enforcement(plan: PaperPlan) -> str:
    """How the budget and K were held: by the referee process, or (UNENFORCED) in-process."""
    if plan.referee and agent_isolation()["mode"] == "UNENFORCED":
        return (
            "**UNENFORCED**: agents from plugins adapted outside the sandbox's walls (--unsandboxed-agents, or no "
            "bubblewrap), where a cheating agent could read K; use these numbers for quick experiments only."
        )
    if plan.referee:
        return "Enforced: each agent adapted in its own process; K, the ledger and the opponents stayed with the referee."
    return (
        "**UNENFORCED**: agents adapted in-process (--in-process), where a cheating agent could read K or reset "
        "its ledger; use these numbers for quick experiments only."
    )


def report_markdown(summary: PaperSummary, plots: Sequence[str] = ()) -> str:
    """``report.md``: settings, checks, Table 1 and Table 2 layouts, convergence, beliefs, costs, notes, plots."""
    plan = summary.plan
    legend = "; ".join(f"L{i + 1} = {layout.name}" for i, layout in enumerate(layouts()))
    parts = [
        "# arena bench paper",
        "",
        describe(plan),
        "",
        "Opponents: " + ", ".join(f"{o.label} = `{o.spec}`" for o in plan.opponents) + ".",
        "",
        f"## {targets_title(summary.plan)}",
        "",
        *(f"- {c.text}" if plan.quick else f"- **{c.mark}** {c.text}" for c in summary.checks),
        "",
    ]
    if failed := failures(summary):
        parts += ["## Failures", "", *(f"- {line}" for line in failed), ""]
    for outcome in OUTCOMES:
        columns, rows = condition_rows(summary, outcome)
        parts += [f"## Per condition: {outcome} rate % (mean ± std over layouts; Table 1 layout)", "", *_markdown_table(columns, rows), ""]
    parts += gap_markdown(plan, summary.pairs)
    for agent in plan.agents:
        columns, rows = per_env_rows(summary, agent)
        parts += [f"## Per environment: {wave_label(agent)}, W/D/L % (Table 2 layout)", "", legend, "", *_markdown_table(columns, rows), ""]
        columns, rows = convergence_rows(summary, agent)
        parts += [
            f"### Convergence of {wave_label(agent)}: win % at each checkpoint (@ games played)",
            "",
            *_markdown_table(columns, rows),
            "",
        ]
    if rows := belief_rows(summary):
        inside = sum(row[5] == "yes" for row in rows)
        parts += [
            "## Beliefs about K",
            "",
            f"The interval contains the true K in {inside} of {len(rows)} environments.",
            "",
            *_markdown_table(BELIEF_COLUMNS, rows),
            "",
        ]
    parts += [
        "## Budget and time",
        "",
        "Seconds are means per environment (adaptation excludes checkpoint matches).",
        "",
        *_markdown_table(COST_COLUMNS, cost_rows(summary)),
        "",
    ]
    if pair_notes := [f"- env {r.env_id}, {wave_label(r.agent)}: {note}" for r in summary.pairs for note in r.notes]:
        parts += ["## Notes on single pairs", "", *pair_notes, ""]
    parts += ["## Notes", "", f"- \\{PRIVILEGED_MARK} {PRIVILEGED_NOTE}", *(f"- {note}" for note in summary.notes)]
    if plots:
        parts += ["", "## Plots", "", *(f"![{Path(p).stem}]({Path(p).name})" for p in plots)]
    return "\n".join(parts) + "\n"


def write_outputs(
    plan: PaperPlan, results: Sequence[EnvAgentResult], run_dir: Path, paper_table2: Path | None = DEFAULT_PAPER_TABLE2
) -> tuple[PaperSummary, list[str]]:
    """Write the plots, ``results.json`` and ``report.md`` into ``run_dir``; returns the summary and the plot paths."""
    from harness.bench.paper_plots import write_plots  # matplotlib only when writing

    summary = summarise(plan, results, paper_table2)
    plots, plot_notes = write_plots(summary, run_dir)
    summary = summary.model_copy(update={"notes": (*summary.notes, *plot_notes)})
    (run_dir / "results.json").write_text(summary.model_dump_json(indent=2) + "\n", encoding="utf-8")
    (run_dir / "report.md").write_text(report_markdown(summary, plots), encoding="utf-8")
    return summary, plots
