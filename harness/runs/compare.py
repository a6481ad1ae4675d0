"""Runs side by side: model-agent runs and tournament baselines in one table, with Wilson intervals.

Only like is compared with like: every run has a :class:`Setting` (environment,
budget, evaluation opponents, games per opponent, and the legal-move track:
shown or hidden, a model-agent run that records none having shown the list; and how
``llm-policy`` gave its moves: text, a function call or a structured-output object), and
runs whose settings differ are refused with :class:`IncomparableRuns`, naming
each field that differs, unless ``force`` is given; then the runs are grouped by setting and every row shows the fields that
differ beside it. A tournament baseline does not adapt: it has no budget, which
therefore never makes it differ.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from harness.records.transcript import TranscriptError
from harness.runs.llm_run import METRICS_FILE
from harness.runs.replay import llm_config, read_json, run_kind
from harness.tournaments.stats import wilson

COMPARE_COLUMNS = (
    "run",
    "agent",
    "model",
    "env",
    "budget",
    "opponent",
    "games",
    "win [95% CI]",
    "draw",
    "lose",
    "belief (last)",
    "failures",
    "tokens",
    "cost $",
)
DIFFERS_COLUMN = "differs"
SETTING_FIELDS = ("env", "budget", "opponents", "games", "legal moves", "cwm transitions", "move format")
LEGAL_MOVES_DEFAULT = "shown"  # what a model-agent run that records no legal-move track played with


class IncomparableRuns(ValueError):
    """Runs on different environments, budgets, opponents or games were asked to share one table."""


@dataclass(frozen=True)
class Setting:
    """What must be equal for two runs to be compared: None where a run has no such setting (a baseline's budget)."""

    env: str
    budget: str | None
    opponents: str
    games: str
    legal_moves: str | None = None
    cwm_transitions: str | None = None  # cwm runs: planned on the engine or on the program (never pooled without --force)
    move_format: str | None = None  # llm-policy runs: text, tool or json (a run that records none: text)

    def value(self, field: str) -> str | None:
        return getattr(self, field.replace(" ", "_"))


@dataclass(frozen=True)
class RunRows:
    """One run directory: its setting and its table rows."""

    name: str
    setting: Setting
    rows: list[list[str]]


def read_runs(run_dirs: list[str | Path]) -> list[RunRows]:
    """Every run's setting and rows, in the order given."""
    return [_llm_run(run_dir) if run_kind(run_dir) == "llm" else _tournament_run(run_dir) for run_dir in map(Path, run_dirs)]


def differing_fields(runs: list[RunRows]) -> list[str]:
    """The setting fields on which the runs disagree (a run without the field agrees with every value)."""
    fields = []
    for field in SETTING_FIELDS:
        values = {run.setting.value(field) for run in runs} - {None}
        if len(values) > 1:
            fields.append(field)
    return fields


def check_comparable(runs: list[RunRows]) -> None:
    """IncomparableRuns with one line naming each field that differs and the runs' values of it."""
    fields = differing_fields(runs)
    if not fields:
        return
    parts = []
    for field in fields:
        values = "; ".join(f"{run.name}: {run.setting.value(field)}" for run in runs if run.setting.value(field) is not None)
        parts.append(f"{field} differs ({values})")
    raise IncomparableRuns(
        f"the runs are not comparable: {', '.join(parts)}; compare like with like, "
        "or pass --force to show them in one table with the differing fields beside each row"
    )


def compare_rows(run_dirs: list[str | Path], force: bool = False) -> list[list[str]]:
    """One row per (run, opponent) for ``arena run`` directories, one per pairing for tournaments (baselines).

    Runs whose settings differ raise :class:`IncomparableRuns` unless ``force``: then
    they are grouped by setting and each row ends with the fields that differ.
    """
    return _rows(read_runs(run_dirs), force)[1]


def _rows(runs: list[RunRows], force: bool) -> tuple[list[str], list[list[str]]]:
    """(the differing fields, the rows): a ``differs`` cell ends each row when some field differs."""
    fields = differing_fields(runs)
    if not force:
        check_comparable(runs)
    if not fields:
        return fields, [row for run in runs for row in run.rows]
    order = {setting: index for index, setting in enumerate(dict.fromkeys(run.setting for run in runs))}
    grouped = sorted(runs, key=lambda run: order[run.setting])  # stable: like settings side by side, first-seen order
    rows = []
    for run in grouped:
        cell = ", ".join(f"{field}={run.setting.value(field) or '-'}" for field in fields)
        rows += [[*row, cell] for row in run.rows]
    return fields, rows


def _cell(count: int, n: int) -> str:
    low, high = wilson(count, n)
    return f"{count / n if n else 0:.0%} [{100 * low:.0f}-{100 * high:.0f}]"


def _opponents(names: list[str]) -> str:
    return ",".join(sorted(name.rstrip("*") for name in names)) or "-"


def _llm_run(run_dir: Path) -> RunRows:
    config = llm_config(run_dir)
    metrics = read_json(run_dir / METRICS_FILE, "metrics", "the run has no metrics.json (interrupted? resume it with 'arena run --resume')")
    scored = [b for b in metrics.get("beliefs", []) if b.get("score")]
    if scored:
        last = scored[-1]
        belief = f"@{last['checkpoint']}: [{last['belief']['k_low']:.2f}, {last['belief']['k_high']:.2f}]" + (
            " contains K" if last["score"]["contains_k"] else " misses K"
        )
    else:
        belief = "none"
    common = [run_dir.name, config.agent_label(), config.model, str(config.env), f"{metrics['adapt_games']}/{config.budget}"]
    tail = [belief, str(metrics["failed_attempts"]), str(metrics["tokens_in"] + metrics["tokens_out"]), f"{metrics['cost_usd']:.4f}"]
    rows = []
    for name, row in metrics["evaluation"].items():
        n = row["games"]
        rows.append(
            common
            + [name + ("*" if row.get("privileged") else ""), str(n)]
            + [_cell(row[o]["count"], n) for o in ("win", "draw", "lose")]
            + tail
        )
    setting = Setting(
        env=str(config.env),
        budget=str(config.budget),
        opponents=_opponents(list(metrics["evaluation"]) or list(config.opponents)),
        games=str(config.eval_games),
        legal_moves=legal_moves_track(config),
        cwm_transitions=config.cwm_transitions if config.agent == "cwm" else None,
        move_format=getattr(config, "move_format", "text") if config.agent == "llm-policy" else None,
    )
    return RunRows(run_dir.name, setting, rows or [common + ["-", "0", "-", "-", "-"] + tail])


def legal_moves_track(config: object) -> str:
    """``shown`` or ``hidden``: whether the run's prompts listed the legal moves. A run that does not record it
    showed them (the list was always shown before the track was recorded), so it is never pooled with a hidden one."""
    track = getattr(config, "legal_moves", None)
    if isinstance(track, bool):  # a show/hide flag
        return "shown" if track else "hidden"
    return LEGAL_MOVES_DEFAULT if track is None else str(track)


def _tournament_run(run_dir: Path) -> RunRows:
    from harness.tournaments.results import RESULTS_SCHEMA, TournamentResults, agent_label, compact_ids

    path = run_dir / "results.json"
    try:
        results = TournamentResults.model_validate_json(path.read_bytes())
        if results.schema_version > RESULTS_SCHEMA:
            raise TranscriptError(
                f"schema_version {results.schema_version} is newer than this arena reads "
                f"({RESULTS_SCHEMA}): written by a newer version of arena; upgrade it to read the run",
                path,
            )
    except FileNotFoundError:
        raise TranscriptError(
            f"the tournament has no results.json (interrupted? finish it with 'arena {_tournament_kind(run_dir)} --resume {run_dir}')", path
        ) from None
    except ValidationError as error:
        raise TranscriptError(f"invalid results: {error.errors()[0]['msg']}", path) from None
    rows = []
    env = str(results.env_ids[0]) if len(results.env_ids) == 1 else f"{len(results.env_ids)} envs"
    for row in results.over_envs:
        rates, n = row.overall, row.overall.games
        rows.append(
            [
                run_dir.name,
                agent_label(row.agent_a, row.a_privileged, row.a_unadapted),
                "(baseline)",
                env,
                "-",
                agent_label(row.agent_b, row.b_privileged),
                str(n),
            ]
            + [_cell(getattr(rates, o), n) for o in ("win", "draw", "lose")]
            + ["-", "-", "-", "-"]
        )
    setting = Setting(
        env=compact_ids(results.env_ids),
        budget=None,
        opponents=_opponents(sorted({row.agent_b for row in results.over_envs})),
        games=str(results.games_per_pairing_and_env),
    )
    return RunRows(run_dir.name, setting, rows)


def _tournament_kind(run_dir: Path) -> str:
    try:
        kind = read_json(run_dir / "manifest.json", "manifest", "").get("kind")
    except TranscriptError:
        kind = None
    return kind if kind in ("match", "tournament") else "tournament"


def compare_table(run_dirs: list[str | Path], force: bool = False) -> str:
    """The comparison as a Markdown table (IncomparableRuns for runs of different settings unless ``force``)."""
    fields, rows = _rows(read_runs(run_dirs), force)
    columns = (*COMPARE_COLUMNS, DIFFERS_COLUMN) if fields else COMPARE_COLUMNS
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    if any("*" in row[1] or "*" in row[5] for row in rows):
        lines += ["", "* privileged: simulator access to the true K"]
    if fields:
        lines += ["", f"not like with like (--force): the runs differ in {', '.join(fields)}; '{DIFFERS_COLUMN}' gives each row's values"]
    return "\n".join(lines)
