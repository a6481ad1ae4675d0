"""``arena bench paper`` results: per-condition statistics, the paper's numbers beside ours, the issue's targets.

The paper's Table 1 (Adaptive Minimax, mean ± standard deviation over the 7
layouts of each condition, in percent) is transcribed below; its Table 2
(per environment) is read from ``paper_table2.json`` (by default the copy in
``harness/data/``), and :func:`paper_consistency` checks
that Table 2's per-condition means and standard deviations (sample, ddof = 1)
give Table 1 back to its rounding. Our statistics are computed the same way:
the per-environment rate of each (agent, opponent), then its mean and sample
standard deviation over the environments of a condition.

Targets (issue 5): (a) the reproduced Adaptive Minimax's win rate against
Random within 15 percentage points of Table 1 on every condition; (b) the
interval agent at least matching it on every condition against Random and
MCTS-100; (c) the interval agent at least doubling its win rate against Random
on K = 0.6 and K = 0.4.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from agents.registry import parse_spec
from engine.environments import layouts
from harness.bench_paper import EnvAgentResult, PaperPlan, paper_order
from harness.tournament_results import PRIVILEGED_MARK, PRIVILEGED_NOTE, _markdown_table, agent_label

SUMMARY_SCHEMA = 1
DEFAULT_PAPER_TABLE2 = Path(__file__).resolve().parent / "data" / "paper_table2.json"  # a copy of the paper's Table 2
OUTCOMES = ("win", "draw", "lose")
PAPER_OPPONENTS = ("Random", "PosNet", "PPO-2K", "MCTS-30", "MCTS-50", "MCTS-100")
ADAPTIVE_MINIMAX, INTERVAL = "adaptive-minimax", "interval"
TOLERANCE_PP = 15.0
NARROW = ("K=0.6", "K=0.4")
# Table 1 of the paper (section 5.2): outcome, condition, then mean and std for each of PAPER_OPPONENTS.
_TABLE1 = """
win K>1.0 95.7 7.3 78.6 29.8 85.7 37.8 85.0 10.8 84.3 17.2 78.6 18.0
win K=0.8 54.3 17.7 47.9 25.0 64.3 24.4 47.1 15.2 44.3 18.1 44.3 25.2
win K=0.6 19.3 11.0 19.3 22.4 0.0 0.0 14.3 10.6 9.3 7.3 13.6 14.4
win K=0.4 18.6 12.5 3.6 6.3 14.3 24.4 7.1 8.1 10.7 7.9 8.6 12.5
win K=0.2 77.9 13.2 56.4 31.8 64.3 47.6 60.7 22.6 48.6 21.0 45.0 19.8
win K<0.0 94.3 5.3 100.0 0.0 92.9 18.9 65.7 26.8 59.3 29.2 55.7 24.4
win K>1.0_(10_turns) 90.0 5.8 83.6 23.2 85.7 24.4 65.0 15.8 64.3 15.1 56.4 25.4
win K<0.0_(10_turns) 84.3 8.9 82.1 23.8 78.6 26.7 61.4 18.2 57.9 14.7 55.7 17.4
draw K>1.0 1.4 3.8 0.7 1.9 0.0 0.0 0.7 1.9 2.1 3.9 0.7 1.9
draw K=0.8 35.7 20.9 39.3 35.9 28.6 26.7 31.4 20.6 24.3 15.9 20.0 13.8
draw K=0.6 73.6 13.8 72.1 22.7 92.9 18.9 67.1 15.5 72.9 11.9 67.9 19.3
draw K=0.4 72.9 18.0 95.7 7.3 78.6 26.7 70.0 27.2 54.3 30.1 60.0 27.1
draw K=0.2 16.4 13.5 43.6 31.8 14.3 37.8 16.4 17.7 17.9 16.5 24.3 15.9
draw K<0.0 2.1 3.9 0.0 0.0 0.0 0.0 1.4 2.4 5.7 9.3 3.6 4.8
draw K>1.0_(10_turns) 6.4 7.5 9.3 18.4 14.3 24.4 24.3 15.1 17.9 11.5 32.1 28.4
draw K<0.0_(10_turns) 12.1 7.6 15.0 24.0 14.3 24.4 20.0 14.4 17.1 13.2 10.7 9.8
lose K>1.0 2.9 3.9 20.7 29.9 14.3 37.8 14.3 9.8 13.6 14.1 20.7 17.2
lose K=0.8 10.0 14.4 12.9 19.1 7.1 18.9 21.4 22.7 31.4 29.5 35.7 28.3
lose K=0.6 7.1 9.5 8.6 18.6 7.1 18.9 18.6 8.0 17.9 9.5 18.6 15.7
lose K=0.4 8.6 8.5 0.7 1.9 7.1 18.9 22.9 27.5 35.0 31.2 31.4 31.1
lose K=0.2 5.7 6.7 0.0 0.0 21.4 39.3 22.9 22.0 33.6 24.1 30.7 22.3
lose K<0.0 3.6 3.8 0.0 0.0 7.1 18.9 32.9 27.1 35.0 30.1 40.7 25.1
lose K>1.0_(10_turns) 3.6 2.4 7.1 18.9 0.0 0.0 10.7 6.1 17.9 9.9 11.4 6.3
lose K<0.0_(10_turns) 3.6 4.8 2.9 7.6 7.1 18.9 18.6 12.8 25.0 14.1 33.6 15.7
"""


class Stat(BaseModel):
    """Mean and sample standard deviation (percent) over ``n`` environments."""

    model_config = ConfigDict(frozen=True)

    mean: float
    std: float
    n: int

    @classmethod
    def of(cls, values: Sequence[float]) -> Stat:
        values = list(values)
        return cls(mean=statistics.fmean(values), std=statistics.stdev(values) if len(values) > 1 else 0.0,
                   n=len(values))

    def cell(self) -> str:
        return f"{self.mean:.1f} ± {self.std:.1f}"


# condition -> opponent -> outcome -> Stat
ConditionTable = dict[str, dict[str, dict[str, Stat]]]
# (condition, layout 1-7) -> opponent -> (win, draw, lose) percent
PaperTable2 = dict[tuple[str, int], dict[str, tuple[float, float, float]]]


class Check(BaseModel):
    """One line of the target checks: PASS (True), FAIL (False) or n/a (None)."""

    model_config = ConfigDict(frozen=True)

    target: str
    passed: bool | None
    text: str

    @property
    def mark(self) -> str:
        return {True: "PASS", False: "FAIL", None: "n/a"}[self.passed]


class PaperSummary(BaseModel):
    """``results.json``: the plan, every pair's record, per-condition statistics, the paper's values, the checks."""

    model_config = ConfigDict(frozen=True)

    schema_version: int = SUMMARY_SCHEMA
    plan: PaperPlan
    pairs: tuple[EnvAgentResult, ...]
    per_condition: dict[str, ConditionTable]  # agent -> condition -> opponent -> outcome
    convergence: dict[str, dict[str, dict[str, dict[int, Stat]]]]  # agent -> condition -> opponent -> games
    paper_table1: ConditionTable
    paper_table2: dict[str, dict[str, tuple[float, float, float]]]  # "condition|layout" -> opponent -> W/D/L
    checks: tuple[Check, ...]
    notes: tuple[str, ...] = ()


def paper_table1() -> ConditionTable:
    """The paper's Table 1: condition -> opponent -> outcome -> Stat (n = 7)."""
    table: ConditionTable = defaultdict(lambda: defaultdict(dict))
    for line in _TABLE1.strip().splitlines():
        outcome, condition, *numbers = line.split()
        for index, opponent in enumerate(PAPER_OPPONENTS):
            mean, std = float(numbers[2 * index]), float(numbers[2 * index + 1])
            table[condition.replace("_", " ")][opponent][outcome] = Stat(mean=mean, std=std, n=7)
    return _plain(table)


def load_paper_table2(path: Path = DEFAULT_PAPER_TABLE2) -> PaperTable2:
    """The paper's Table 2 from its JSON file: (condition, layout 1-7) -> opponent -> (win, draw, lose) percent."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return {(row["condition"], int(row["layout"])): {o: tuple(float(x) for x in row[o]) for o in PAPER_OPPONENTS
                                                     if o in row} for row in data["rows"]}


def table2_condition_stats(table2: PaperTable2) -> ConditionTable:
    """Table 2's per-condition mean and sample standard deviation over layouts (what Table 1 reports)."""
    values: dict[str, dict[str, dict[str, list[float]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for (condition, _), row in table2.items():
        for opponent, rates in row.items():
            for outcome, rate in zip(OUTCOMES, rates):
                values[condition][opponent][outcome].append(rate)
    return {c: {o: {k: Stat.of(v) for k, v in by.items()} for o, by in ops.items()} for c, ops in values.items()}


def paper_consistency(table1: ConditionTable, table2: PaperTable2, tolerance: float = 0.051) -> list[str]:
    """Where Table 2's derived means/stds differ from Table 1 by more than its rounding (empty: they agree)."""
    derived = table2_condition_stats(table2)
    problems = []
    for condition, opponents in table1.items():
        for opponent, outcomes in opponents.items():
            for outcome, stat in outcomes.items():
                other = derived.get(condition, {}).get(opponent, {}).get(outcome)
                if other is None:
                    problems.append(f"{condition} vs {opponent} ({outcome}): not in Table 2")
                elif abs(other.mean - stat.mean) > tolerance or abs(other.std - stat.std) > tolerance:
                    problems.append(f"{condition} vs {opponent} ({outcome}): Table 1 {stat.cell()}, "
                                    f"Table 2 gives {other.cell()}")
    return problems


def condition_stats(results: Sequence[EnvAgentResult], agent: str) -> ConditionTable:
    """Our per-condition mean ± std (percent) of ``agent``'s final results, over the environments that finished."""
    values: dict[str, dict[str, dict[str, list[float]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for result in results:
        if result.agent == agent and result.status == "ok":
            for outcome in result.final:
                for name in OUTCOMES:
                    values[result.condition][outcome.opponent][name].append(outcome.percent(name))
    return {c: {o: {k: Stat.of(v) for k, v in by.items()} for o, by in ops.items()} for c, ops in values.items()}


def convergence_stats(results: Sequence[EnvAgentResult], agent: str) -> dict[str, dict[str, dict[int, Stat]]]:
    """Win rate (percent) at each planned checkpoint: condition -> opponent -> planned games -> Stat."""
    values: dict[str, dict[str, dict[int, list[float]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for result in results:
        if result.agent == agent and result.status == "ok":
            for checkpoint in result.checkpoints:
                for outcome in checkpoint.outcomes:
                    values[result.condition][outcome.opponent][checkpoint.planned_games].append(outcome.percent("win"))
    return {c: {o: {g: Stat.of(v) for g, v in sorted(by.items())} for o, by in ops.items()} for c, ops in values.items()}


def agent_with_role(agents: Sequence[str], role: str) -> str | None:
    """The first agent spec whose registered name is ``role`` (``adaptive-minimax`` or ``interval``)."""
    return next((spec for spec in agents if parse_spec(spec)[0].name == role), None)


def target_checks(per_condition: dict[str, ConditionTable], table1: ConditionTable, agents: Sequence[str]) -> list[Check]:
    """The issue's targets (a), (b), (c), one line per condition (and opponent)."""
    am, interval = agent_with_role(agents, ADAPTIVE_MINIMAX), agent_with_role(agents, INTERVAL)
    checks: list[Check] = []
    if am is None:
        return [Check(target=t, passed=None, text=f"({t}) needs an {ADAPTIVE_MINIMAX} agent in --agents") for t in "abc"]
    ours = per_condition.get(am, {})
    for condition in paper_order(ours):
        stat, paper = _win(ours, condition, "Random"), _win(table1, condition, "Random")
        if stat is None or paper is None:
            continue
        gap = stat.mean - paper.mean
        checks.append(Check(target="a", passed=abs(gap) <= TOLERANCE_PP, text=(
            f"(a) {condition}: {am} vs Random {stat.mean:.1f}% ({_layouts(stat)}), paper {paper.mean:.1f}%, "
            f"difference {gap:+.1f} pp (limit ±{TOLERANCE_PP:g})")))
    misses = [c.text.split(":")[0][4:] for c in checks if c.passed is False]
    if checks:
        checks.append(Check(target="a", passed=not misses, text=(
            f"(a) {len(checks) - len(misses)} of {len(checks)} conditions within {TOLERANCE_PP:g} pp of the paper"
            + (f"; misses: {', '.join(misses)}" if misses else ""))))
    if interval is None:
        return checks + [Check(target=t, passed=None, text=f"({t}) needs an {INTERVAL} agent in --agents") for t in "bc"]
    theirs = per_condition.get(interval, {})
    for condition in paper_order(ours):
        for opponent in ("Random", "MCTS-100"):
            a, b = _win(ours, condition, opponent), _win(theirs, condition, opponent)
            if a is not None and b is not None:
                checks.append(Check(target="b", passed=b.mean >= a.mean, text=(
                    f"(b) {condition} vs {opponent}: {interval} {b.mean:.1f}% >= {am} {a.mean:.1f}%")))
    for condition in NARROW:
        a, b = _win(ours, condition, "Random"), _win(theirs, condition, "Random")
        if a is not None and b is not None:
            checks.append(Check(target="c", passed=b.mean >= 2 * a.mean, text=(
                f"(c) {condition} vs Random: {interval} {b.mean:.1f}% >= 2 x {am} {a.mean:.1f}% = {2 * a.mean:.1f}%")))
        else:
            checks.append(Check(target="c", passed=None, text=f"(c) {condition}: not in this run"))
    return checks


def _win(table: ConditionTable, condition: str, opponent: str) -> Stat | None:
    return table.get(condition, {}).get(opponent, {}).get("win")


def _layouts(stat: Stat) -> str:
    return f"{stat.n} of 7 layouts" if stat.n != 7 else "7 layouts"


def _plain(table: dict) -> ConditionTable:
    return {c: {o: dict(by) for o, by in ops.items()} for c, ops in table.items()}


def summarise(plan: PaperPlan, results: Sequence[EnvAgentResult],
              paper_table2: Path | None = DEFAULT_PAPER_TABLE2) -> PaperSummary:
    """Everything the report shows; the paper's Table 2 is left out (with a note) when its file is missing."""
    notes = []
    table1 = paper_table1()
    table2: PaperTable2 = {}
    if paper_table2 is not None and Path(paper_table2).is_file():
        table2 = load_paper_table2(Path(paper_table2))
        problems = paper_consistency(table1, table2)
        notes.append("the paper's Table 2 gives its Table 1 back (means and stds within rounding)" if not problems
                     else "the paper's Tables 1 and 2 disagree: " + "; ".join(problems))
    else:
        notes.append(f"the paper's Table 2 was not found at {paper_table2}: per-environment paper columns left out "
                     "(give --paper-table FILE)")
    if plan.missing_opponents:
        notes.append("opponents left out: " + ", ".join(plan.missing_opponents))
    per_condition = {agent: condition_stats(results, agent) for agent in plan.agents}
    return PaperSummary(
        plan=plan, pairs=tuple(results), per_condition=per_condition,
        convergence={agent: convergence_stats(results, agent) for agent in plan.agents},
        paper_table1=table1, paper_table2={f"{c}|{layout}": row for (c, layout), row in table2.items()},
        checks=tuple(target_checks(per_condition, table1, plan.agents)), notes=tuple(notes),
    )


def wdl(win: float, draw: float, lose: float) -> str:
    """``95/0/5``: win/draw/lose percent, as the paper's Table 2 writes them."""
    return f"{win:.0f}/{draw:.0f}/{lose:.0f}"


def opponent_headers(plan: PaperPlan) -> list[str]:
    """The opponents' column names, ``*`` on the privileged ones (simulator access to K)."""
    return [agent_label(o.label, o.privileged) for o in plan.opponents]


def per_env_rows(summary: PaperSummary, agent: str) -> tuple[list[str], list[list[str]]]:
    """The paper's Table 2 layout for one agent: W/D/L % per environment; for Adaptive Minimax a paper row under ours."""
    with_paper = parse_spec(agent)[0].name == ADAPTIVE_MINIMAX and bool(summary.paper_table2)
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
            paper = summary.paper_table2.get(f"{result.condition}|{result.layout + 1}", {})
            rows.append(["", "", "paper", *(wdl(*paper[o.label]) if o.label in paper else "-"
                                            for o in summary.plan.opponents)])
        previous = result.condition
    return columns, rows


def condition_rows(summary: PaperSummary, outcome: str = "win") -> tuple[list[str], list[list[str]]]:
    """The paper's Table 1 layout: per condition the paper's row, each agent's mean ± std, and ours - paper (pp)."""
    columns = ["C", "agent", "envs", *opponent_headers(summary.plan)]
    labels = [o.label for o in summary.plan.opponents]
    rows = []
    for condition in paper_order(c for table in summary.per_condition.values() for c in table):
        paper = summary.paper_table1.get(condition, {})
        rows.append([condition, "paper: Adaptive Minimax", "7",
                     *(paper[o][outcome].cell() if o in paper else "-" for o in labels)])
        for agent, table in summary.per_condition.items():
            ours = {o: table.get(condition, {}).get(o, {}).get(outcome) for o in labels}
            envs = max((s.n for s in ours.values() if s), default=0)
            rows.append(["", agent, str(envs), *(s.cell() if s else "-" for s in ours.values())])
            if parse_spec(agent)[0].name == ADAPTIVE_MINIMAX:
                rows.append(["", "  ours - paper (pp)", "", *(
                    f"{s.mean - paper[o][outcome].mean:+.1f}" if s and o in paper else "-" for o, s in ours.items())])
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
            rows.append([condition if index == 0 else "", agent_label(opponent.label, opponent.privileged),
                         *(f"{stats[g].mean:.0f}" if g in stats else "-" for g in plan.checkpoints)])
    return columns, rows


def belief_rows(summary: PaperSummary) -> list[list[str]]:
    """Per pair with a belief: env, agent, condition, the interval [k_low, k_high], regime, contains K, width."""
    rows = []
    for r in summary.pairs:
        if r.belief is not None and r.belief_score is not None:
            score = r.belief_score
            rows.append([str(r.env_id), r.agent, r.condition, f"[{r.belief.k_low:.3f}, {r.belief.k_high:.3f}]",
                         f"{r.belief.regime} ({'right' if score.regime_correct else 'wrong'})",
                         "yes" if score.contains_k else "NO", f"{score.width:.3f}"])
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
        rows.append([agent, f"{sum(r.status == 'ok' for r in mine)}/{len(mine)}",
                     f"{min(used)}-{max(used)}/{summary.plan.budget}", str(sum(r.refused_games for r in mine)),
                     f"{statistics.fmean(adapt):.1f} (max {max(adapt):.1f})",
                     f"{statistics.fmean(r.checkpoint_seconds for r in mine):.1f}",
                     f"{statistics.fmean(r.eval_seconds for r in mine):.1f}"])
    return rows


COST_COLUMNS = ["agent", "pairs ok", "games used", "refused", "adapt s", "checkpoint s", "eval s"]
BELIEF_COLUMNS = ["env", "agent", "C", "belief K in", "regime", "contains K", "width"]


def failures(summary: PaperSummary) -> list[str]:
    """One line per failed pair (a budget overrun says so in capitals)."""
    return [f"env {r.env_id} ({r.env_name}), {r.agent}: {r.error}" for r in summary.pairs if r.status != "ok"]


def describe(plan: PaperPlan) -> str:
    """One line: environments, agents, budget, games, checkpoints, seed."""
    return (f"{len(plan.env_ids)} environments x {len(plan.agents)} adaptive agents; budget {plan.budget} games; "
            f"final evaluation {plan.games} games per opponent, checkpoints at {', '.join(map(str, plan.checkpoints))} "
            f"games ({plan.checkpoint_games} per opponent; the last is the final evaluation); colours alternating; "
            f"seed {plan.seed}{'; --quick' if plan.quick else ''}")


def report_markdown(summary: PaperSummary, plots: Sequence[str] = ()) -> str:
    """``report.md``: settings, checks, Table 1 and Table 2 layouts, convergence, beliefs, costs, notes, plots."""
    plan = summary.plan
    legend = "; ".join(f"L{i + 1} = {layout.name}" for i, layout in enumerate(layouts()))
    parts = ["# arena bench paper", "", describe(plan), "",
             "Opponents: " + ", ".join(f"{o.label} = `{o.spec}`" for o in plan.opponents) + ".", "",
             "## Targets (issue 5)", "", *(f"- **{c.mark}** {c.text}" for c in summary.checks), ""]
    if failed := failures(summary):
        parts += ["## Failures", "", *(f"- {line}" for line in failed), ""]
    for outcome in OUTCOMES:
        columns, rows = condition_rows(summary, outcome)
        parts += [f"## Per condition: {outcome} rate % (mean ± std over layouts; Table 1 layout)", "",
                  *_markdown_table(columns, rows), ""]
    for agent in plan.agents:
        columns, rows = per_env_rows(summary, agent)
        parts += [f"## Per environment: {agent}, W/D/L % (Table 2 layout)", "", legend, "",
                  *_markdown_table(columns, rows), ""]
        columns, rows = convergence_rows(summary, agent)
        parts += [f"### Convergence of {agent}: win % at each checkpoint (@ games played)", "", *_markdown_table(columns, rows), ""]
    if rows := belief_rows(summary):
        inside = sum(row[5] == "yes" for row in rows)
        parts += ["## Beliefs about K", "", f"The interval contains the true K in {inside} of {len(rows)} environments.",
                  "", *_markdown_table(BELIEF_COLUMNS, rows), ""]
    parts += ["## Budget and time", "", "Seconds are means per environment (adaptation excludes checkpoint matches).", "",
              *_markdown_table(COST_COLUMNS, cost_rows(summary)), ""]
    if pair_notes := [f"- env {r.env_id}, {r.agent}: {note}" for r in summary.pairs for note in r.notes]:
        parts += ["## Notes on single pairs", "", *pair_notes, ""]
    parts += ["## Notes", "", f"- \\{PRIVILEGED_MARK} {PRIVILEGED_NOTE}", *(f"- {note}" for note in summary.notes)]
    if plots:
        parts += ["", "## Plots", "", *(f"![{Path(p).stem}]({Path(p).name})" for p in plots)]
    return "\n".join(parts) + "\n"


def write_outputs(plan: PaperPlan, results: Sequence[EnvAgentResult], run_dir: Path,
                  paper_table2: Path | None = DEFAULT_PAPER_TABLE2) -> tuple[PaperSummary, list[str]]:
    """Write the plots, ``results.json`` and ``report.md`` into ``run_dir``; returns the summary and the plot paths."""
    from harness.paper_plots import write_plots  # matplotlib only when writing

    summary = summarise(plan, results, paper_table2)
    plots, plot_notes = write_plots(summary, run_dir)
    summary = summary.model_copy(update={"notes": (*summary.notes, *plot_notes)})
    (run_dir / "results.json").write_text(summary.model_dump_json(indent=2) + "\n", encoding="utf-8")
    (run_dir / "report.md").write_text(report_markdown(summary, plots), encoding="utf-8")
    return summary, plots
