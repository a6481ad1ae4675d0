"""``arena bench paper`` summary: per-condition statistics, the paper's numbers beside ours, the targets.

The paper's Table 1 (Adaptive Minimax, mean ± standard deviation over the 7
layouts of each condition, in percent) is transcribed in ``data/paper_table1.txt``; its Table 2
(per environment) is read from ``paper_table2.json`` (by default the copy in
``harness/bench/data/``), and :func:`paper_consistency` checks
that Table 2's per-condition means and standard deviations (sample, ddof = 1)
give Table 1 back to its rounding. Our statistics are computed the same way:
the per-environment rate of each (agent, opponent), then its mean and sample
standard deviation over the environments of a condition.

Targets: (a) the reproduced Adaptive Minimax's win rate against
Random within 15 percentage points of Table 1 on every condition; (b) the
interval agent at least matching it on every condition against Random and
MCTS-100; (c) the interval agent at least doubling its win rate against Random
on K = 0.6 and K = 0.4. They are sized for the full run (all 56 environments, the 2,000-game budget): a
``--quick`` run shows the same lines, ours beside the paper's, and judges none of them (:data:`QUICK_NOTE`).
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from harness.bench.paper_plan import EnvAgentResult, PaperPlan, paper_order
from harness.registry.specs import parse_spec

SUMMARY_SCHEMA = 1
DATA_DIR = Path(__file__).resolve().parent / "data"
DEFAULT_PAPER_TABLE2 = DATA_DIR / "paper_table2.json"  # a copy of the paper's Table 2
PAPER_PPO_TABLE = DATA_DIR / "paper_ppo_table4.json"  # the paper's Table 4: PPO after 2,000 games, vs Random and MCTS-100
PAPER_TABLE1 = DATA_DIR / "paper_table1.txt"  # the paper's Table 1, transcribed
OUTCOMES = ("win", "draw", "lose")
PAPER_OPPONENTS = ("Random", "PosNet", "PPO-2K", "MCTS-30", "MCTS-50", "MCTS-100")
ADAPTIVE_MINIMAX, INTERVAL = "adaptive-minimax", "interval"
PPO = "ppo"  # the PPO-2K agent's spec name: its per-environment table shows the paper's PPO (Table 4) under ours
TOLERANCE_PP = 15.0
NARROW = ("K=0.6", "K=0.4")


class Stat(BaseModel):
    """Mean and sample standard deviation (percent) over ``n`` environments."""

    model_config = ConfigDict(frozen=True)

    mean: float
    std: float
    n: int

    @classmethod
    def of(cls, values: Sequence[float]) -> Stat:
        values = list(values)
        return cls(mean=statistics.fmean(values), std=statistics.stdev(values) if len(values) > 1 else 0.0, n=len(values))

    def cell(self) -> str:
        return f"{self.mean:.1f} ± {self.std:.1f}"


class WinCount(BaseModel):
    """Wins out of games, pooled over the environments of a condition (for a Wilson interval on a figure)."""

    model_config = ConfigDict(frozen=True)

    wins: int
    games: int


# condition -> opponent -> outcome -> Stat
ConditionTable = dict[str, dict[str, dict[str, Stat]]]
# (condition, layout 1-7) -> opponent -> (win, draw, lose) percent
PaperTable2 = dict[tuple[str, int], dict[str, tuple[float, float, float]]]

QUICK_NOTE = (
    "a --quick run judges no target: the targets are sized for the full run (all 56 environments, the 2,000-game "
    "budget); its lines show this run's numbers beside the paper's"
)


def targets_title(plan: PaperPlan) -> str:
    """The heading of the target lines (a quick run's are not judged)."""
    return "Targets, not judged: a quick run (they apply to the full run)" if plan.quick else "Targets"


def check_line(check: Check, plan: PaperPlan) -> str:
    """One target line: its verdict (none on a quick run) and its text."""
    return check.text if plan.quick else f"{check.mark:<4} {check.text}"


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
    convergence_counts: dict[str, dict[str, dict[str, dict[int, WinCount]]]] = {}  # the same keys, pooled counts
    paper_table1: ConditionTable
    paper_table2: dict[str, dict[str, tuple[float, float, float]]]  # "condition|layout" -> opponent -> W/D/L
    paper_ppo: dict[str, dict[str, tuple[float, float, float]]] = {}  # the same, of the paper's PPO (Table 4, 2K games)
    checks: tuple[Check, ...]
    notes: tuple[str, ...] = ()


def paper_table1() -> ConditionTable:
    """The paper's Table 1: condition -> opponent -> outcome -> Stat (n = 7)."""
    table: ConditionTable = defaultdict(lambda: defaultdict(dict))
    lines = PAPER_TABLE1.read_text(encoding="utf-8").splitlines()
    for line in (line for line in lines if line.strip() and not line.startswith("#")):
        outcome, condition, *numbers = line.split()
        for index, opponent in enumerate(PAPER_OPPONENTS):
            mean, std = float(numbers[2 * index]), float(numbers[2 * index + 1])
            table[condition.replace("_", " ")][opponent][outcome] = Stat(mean=mean, std=std, n=7)
    return _plain(table)


def load_paper_table2(path: Path = DEFAULT_PAPER_TABLE2) -> PaperTable2:
    """The paper's Table 2 from its JSON file: (condition, layout 1-7) -> opponent -> (win, draw, lose) percent."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return {
        (row["condition"], int(row["layout"])): {o: tuple(float(x) for x in row[o]) for o in PAPER_OPPONENTS if o in row}
        for row in data["rows"]
    }


def load_paper_ppo(path: Path = PAPER_PPO_TABLE) -> dict[str, dict[str, tuple[float, float, float]]]:
    """The paper's PPO after 2,000 games (its Table 4): "condition|layout" -> opponent -> (win, draw, lose) percent."""
    table = load_paper_table2(path)
    return {f"{c}|{layout}": row for (c, layout), row in table.items()}


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
                    problems.append(f"{condition} vs {opponent} ({outcome}): Table 1 {stat.cell()}, Table 2 gives {other.cell()}")
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


def convergence_counts(results: Sequence[EnvAgentResult], agent: str) -> dict[str, dict[str, dict[int, WinCount]]]:
    """Wins and games at each planned checkpoint, summed over environments: condition -> opponent -> games."""
    counts: dict[str, dict[str, dict[int, list[int]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(lambda: [0, 0])))
    for result in results:
        if result.agent == agent and result.status == "ok":
            for checkpoint in result.checkpoints:
                for outcome in checkpoint.outcomes:
                    tally = counts[result.condition][outcome.opponent][checkpoint.planned_games]
                    tally[0] += outcome.win
                    tally[1] += outcome.win + outcome.draw + outcome.lose
    return {
        c: {o: {g: WinCount(wins=w, games=n) for g, (w, n) in sorted(by.items())} for o, by in ops.items()} for c, ops in counts.items()
    }


def agent_with_role(agents: Sequence[str], role: str) -> str | None:
    """The first agent spec whose registered name is ``role`` (``adaptive-minimax`` or ``interval``)."""
    return next((spec for spec in agents if parse_spec(spec)[0].name == role), None)


def target_checks(per_condition: dict[str, ConditionTable], table1: ConditionTable, agents: Sequence[str]) -> list[Check]:
    """The targets (a), (b), (c), one line per condition (and opponent)."""
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
        checks.append(
            Check(
                target="a",
                passed=abs(gap) <= TOLERANCE_PP,
                text=(
                    f"(a) {condition}: {am} vs Random {stat.mean:.1f}% ({_layouts(stat)}), paper {paper.mean:.1f}%, "
                    f"difference {gap:+.1f} pp (limit ±{TOLERANCE_PP:g})"
                ),
            )
        )
    misses = [c.text.split(":")[0][4:] for c in checks if c.passed is False]
    if checks:
        checks.append(
            Check(
                target="a",
                passed=not misses,
                text=(
                    f"(a) {len(checks) - len(misses)} of {len(checks)} conditions within {TOLERANCE_PP:g} pp of the paper"
                    + (f"; misses: {', '.join(misses)}" if misses else "")
                ),
            )
        )
    if interval is None:
        return checks + [Check(target=t, passed=None, text=f"({t}) needs an {INTERVAL} agent in --agents") for t in "bc"]
    theirs = per_condition.get(interval, {})
    for condition in paper_order(ours):
        for opponent in ("Random", "MCTS-100"):
            a, b = _win(ours, condition, opponent), _win(theirs, condition, opponent)
            if a is not None and b is not None:
                checks.append(
                    Check(
                        target="b",
                        passed=b.mean >= a.mean,
                        text=(f"(b) {condition} vs {opponent}: {interval} {b.mean:.1f}% >= {am} {a.mean:.1f}%"),
                    )
                )
    for condition in NARROW:
        a, b = _win(ours, condition, "Random"), _win(theirs, condition, "Random")
        if a is not None and b is not None:
            checks.append(
                Check(
                    target="c",
                    passed=b.mean >= 2 * a.mean,
                    text=(f"(c) {condition} vs Random: {interval} {b.mean:.1f}% >= 2 x {am} {a.mean:.1f}% = {2 * a.mean:.1f}%"),
                )
            )
        else:
            checks.append(Check(target="c", passed=None, text=f"(c) {condition}: not in this run"))
    return checks


def _win(table: ConditionTable, condition: str, opponent: str) -> Stat | None:
    return table.get(condition, {}).get(opponent, {}).get("win")


def _layouts(stat: Stat) -> str:
    return f"{stat.n} of 7 layouts" if stat.n != 7 else "7 layouts"


def _plain(table: dict) -> ConditionTable:
    return {c: {o: dict(by) for o, by in ops.items()} for c, ops in table.items()}


def summarise(plan: PaperPlan, results: Sequence[EnvAgentResult], paper_table2: Path | None = DEFAULT_PAPER_TABLE2) -> PaperSummary:
    """Everything the report shows; the paper's Table 2 is left out (with a note) when its file is missing."""
    notes = []
    table1 = paper_table1()
    table2: PaperTable2 = {}
    if paper_table2 is not None and Path(paper_table2).is_file():
        table2 = load_paper_table2(Path(paper_table2))
        problems = paper_consistency(table1, table2)
        notes.append(
            "the paper's Table 2 gives its Table 1 back (means and stds within rounding)"
            if not problems
            else "the paper's Tables 1 and 2 disagree: " + "; ".join(problems)
        )
    else:
        notes.append(
            f"the paper's Table 2 was not found at {paper_table2}: per-environment paper columns left out (give --paper-table FILE)"
        )
    if plan.missing_opponents:
        notes.append("opponents left out: " + ", ".join(plan.missing_opponents))
    per_condition = {agent: condition_stats(results, agent) for agent in plan.agents}
    checks = target_checks(per_condition, table1, plan.agents)
    if plan.quick:  # shown beside the paper, judged only on the full run
        checks = [check.model_copy(update={"passed": None}) for check in checks]
        notes.append(QUICK_NOTE)
    return PaperSummary(
        plan=plan,
        pairs=tuple(results),
        per_condition=per_condition,
        convergence={agent: convergence_stats(results, agent) for agent in plan.agents},
        convergence_counts={agent: convergence_counts(results, agent) for agent in plan.agents},
        paper_table1=table1,
        paper_table2={f"{c}|{layout}": row for (c, layout), row in table2.items()},
        paper_ppo=load_paper_ppo(),
        checks=tuple(checks),
        notes=tuple(notes),
    )
