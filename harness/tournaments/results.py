"""Tournament summaries: win/draw/lose of agent A per pairing, per environment and over all of them.

Every figure comes with its Wilson 95% interval and the number of games behind
it, overall and by A's colour. Agents with simulator access to the true K are
marked with ``*`` and a footnote wherever they are named; a run played
in-process (not under the referee) is marked UNENFORCED.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from engine import EnvKey, make_env
from harness.prompting.waves import wave_label
from harness.referee.isolation import agent_isolation
from harness.tournaments.match import OUTCOMES, Tally
from harness.tournaments.plan import GameLine, TournamentPlan

RESULTS_SCHEMA = 1
PRIVILEGED_MARK = "*"
PRIVILEGED_NOTE = "privileged: simulator access to the true K"
UNADAPTED_MARK = " (unadapted)"
UNADAPTED_NOTE = (
    "(unadapted): an adaptive agent that played without its adaptation budget (a match or tournament "
    "gives none); `arena run` and `arena bench paper` adapt it first"
)
SCOPES = (("overall", "overall"), ("a_black", "A black"), ("a_white", "A white"))
OVERALL_COLUMNS = ("A", "B", "scope", "games", "win", "draw", "lose")
PER_ENV_COLUMNS = ("env", "A", "B", "games", "win", "draw", "lose", "A black (W-D-L)", "A white (W-D-L)")
CELL_NOTE = "A's results: rate % [Wilson 95% interval] (games)"
UNENFORCED_NOTE = (
    "UNENFORCED: the agents played in the process that held K (--in-process), where a cheating agent "
    "could read it; use these numbers for quick experiments only"
)
UNSANDBOXED_NOTE = (
    "UNENFORCED: agents from plugins played outside the sandbox's walls (--unsandboxed-agents, or no bubblewrap), "
    "where a cheating agent could read K; use these numbers for quick experiments only"
)


class Rates(BaseModel):
    """Counts, rates and Wilson 95% intervals of one side's outcomes."""

    model_config = ConfigDict(frozen=True)

    games: int
    win: int
    draw: int
    lose: int
    win_rate: float
    draw_rate: float
    lose_rate: float
    win_ci: tuple[float, float]
    draw_ci: tuple[float, float]
    lose_ci: tuple[float, float]

    @classmethod
    def of(cls, tally: Tally) -> Rates:
        fields: dict[str, object] = {"games": tally.games}
        for outcome in OUTCOMES:
            fields |= {outcome: tally.count(outcome), f"{outcome}_rate": tally.rate(outcome), f"{outcome}_ci": tally.interval(outcome)}
        return cls.model_validate(fields)

    @property
    def tally(self) -> Tally:
        return Tally(self.win, self.draw, self.lose)


class ResultRow(BaseModel):
    """Agent A's results against B on one environment (``env_id``) or over all of them (``env_id`` None)."""

    model_config = ConfigDict(frozen=True)

    agent_a: str
    agent_b: str
    a_privileged: bool
    b_privileged: bool
    a_unadapted: bool = False
    b_unadapted: bool = False
    env_id: EnvKey | None
    env_name: str
    overall: Rates
    a_black: Rates
    a_white: Rates


class TournamentResults(BaseModel):
    """The whole summary, as written to ``results.json``."""

    model_config = ConfigDict(frozen=True)

    schema_version: int = RESULTS_SCHEMA
    seed: int
    games_per_pairing_and_env: int
    env_ids: tuple[EnvKey, ...]
    agents: tuple[str, ...]
    privileged_agents: tuple[str, ...]
    unadapted_agents: tuple[str, ...] = ()
    total_games: int
    per_env: tuple[ResultRow, ...]
    over_envs: tuple[ResultRow, ...]
    notes: tuple[str, ...] = ()
    enforced: bool = True  # False: played in-process (--in-process), where an agent could reach K

    @property
    def privileged(self) -> bool:
        return bool(self.privileged_agents)


def summarise(plan: TournamentPlan, lines: Iterable[GameLine]) -> TournamentResults:
    """Tallies of the plan's games, whatever order ``lines`` come in; every planned game must be there once."""
    games = {(line.env_id, line.pairing, line.game): line for line in lines}
    expected = {(t.env_id, t.pairing_index, t.game_index) for t in plan.tasks()}
    if set(games) != expected:
        raise ValueError(f"summarise: {len(games)} distinct games given, the plan has {len(expected)}")
    privileged, unadapted = set(plan.privileged_agents), set(plan.unadapted_agents)
    walls_open = plan.referee and agent_isolation()["mode"] == "UNENFORCED"  # plugins' agents outside the walls
    per_env: list[ResultRow] = []
    over_envs: list[ResultRow] = []
    for index, pairing in enumerate(plan.pairings):
        flags = {
            "a_privileged": pairing.a in privileged,
            "b_privileged": pairing.b in privileged,
            "a_unadapted": pairing.a in unadapted,
            "b_unadapted": pairing.b in unadapted,
        }
        scoped_all: dict[str, list[int]] = {scope: [] for scope, _ in SCOPES}
        for env_id in plan.env_ids:
            played = [games[(env_id, index, game)] for game in range(plan.games)]
            scoped = _by_scope(played)
            for scope, rewards in scoped.items():
                scoped_all[scope] += rewards
            per_env.append(_row(pairing.a, pairing.b, flags, env_id, make_env(env_id).name, scoped))
        over_envs.append(_row(pairing.a, pairing.b, flags, None, _envs_label(plan.env_ids), scoped_all))
    order = {env_id: i for i, env_id in enumerate(plan.env_ids)}
    per_env.sort(key=lambda row: order[row.env_id])  # type: ignore[index]
    return TournamentResults(
        seed=plan.seed,
        games_per_pairing_and_env=plan.games,
        env_ids=plan.env_ids,
        agents=plan.agents,
        privileged_agents=plan.privileged_agents,
        unadapted_agents=plan.unadapted_agents,
        total_games=plan.total_games,
        per_env=tuple(per_env),
        over_envs=tuple(over_envs),
        notes=(
            *((f"{PRIVILEGED_MARK} {PRIVILEGED_NOTE}",) if privileged else ()),
            *((UNADAPTED_NOTE,) if unadapted else ()),
            *(() if plan.referee else (UNENFORCED_NOTE,)),
            *((UNSANDBOXED_NOTE,) if walls_open else ()),
        ),
        enforced=plan.referee and not walls_open,
    )


def _by_scope(lines: Sequence[GameLine]) -> dict[str, list[int]]:
    return {
        "overall": [line.a_reward for line in lines],
        "a_black": [line.a_reward for line in lines if line.a_colour == "black"],
        "a_white": [line.a_reward for line in lines if line.a_colour == "white"],
    }


def _row(a: str, b: str, flags: dict[str, bool], env_id: EnvKey | None, name: str, scoped: dict[str, list[int]]) -> ResultRow:
    rates = {scope: Rates.of(Tally(r.count(1), r.count(0), r.count(-1))) for scope, r in scoped.items()}
    return ResultRow(agent_a=a, agent_b=b, **flags, env_id=env_id, env_name=name, **rates)


def _envs_label(env_ids: Sequence[EnvKey]) -> str:
    if len(env_ids) == 1:
        return f"env {env_ids[0]} ({make_env(env_ids[0]).name})"
    return f"all {len(env_ids)} envs"


def agent_label(spec: str, privileged: bool, unadapted: bool = False) -> str:
    """The spec (a model agent's with its W, :func:`~harness.prompting.waves.wave_label`), with ``*`` when the agent is
    privileged and `` (unadapted)`` when it is adaptive but was not adapted."""
    return wave_label(spec) + (PRIVILEGED_MARK if privileged else "") + (UNADAPTED_MARK if unadapted else "")


def rate_cell(rates: Rates, outcome: str) -> str:
    """``55% [32-76] (11)``: rate, Wilson 95% interval in percent, count."""
    low, high = getattr(rates, f"{outcome}_ci")
    return f"{getattr(rates, f'{outcome}_rate'):.0%} [{100 * low:.0f}-{100 * high:.0f}] ({getattr(rates, outcome)})"


def colour_cell(rates: Rates) -> str:
    """``3-1-1, win 60% [23-88]``: counts for one colour and the win rate with its interval."""
    low, high = rates.win_ci
    return f"{rates.win}-{rates.draw}-{rates.lose}, win {rates.win_rate:.0%} [{100 * low:.0f}-{100 * high:.0f}]"


def overall_rows(results: TournamentResults) -> list[list[str]]:
    """Rows of the over-all-environments table (:data:`OVERALL_COLUMNS`): three scopes per pairing."""
    rows = []
    for row in results.over_envs:
        a = agent_label(row.agent_a, row.a_privileged, row.a_unadapted)
        b = agent_label(row.agent_b, row.b_privileged, row.b_unadapted)
        for scope, label in SCOPES:
            rates: Rates = getattr(row, scope)
            rows.append([a, b, label, str(rates.games), *(rate_cell(rates, o) for o in OUTCOMES)])
    return rows


def per_env_rows(results: TournamentResults) -> list[list[str]]:
    """Rows of the per-environment table (:data:`PER_ENV_COLUMNS`): one per pairing and environment."""
    return [
        [
            str(row.env_id),
            agent_label(row.agent_a, row.a_privileged, row.a_unadapted),
            agent_label(row.agent_b, row.b_privileged, row.b_unadapted),
            str(row.overall.games),
            *(rate_cell(row.overall, o) for o in OUTCOMES),
            colour_cell(row.a_black),
            colour_cell(row.a_white),
        ]
        for row in results.per_env
    ]


def describe(results: TournamentResults) -> str:
    """One line: games, environments, seed."""
    envs = compact_ids(results.env_ids)
    return (
        f"{results.total_games} games: {results.games_per_pairing_and_env} per pairing and environment, "
        f"colours alternating (A black in even games); envs {envs}; seed {results.seed}"
    )


def compact_ids(ids: Sequence[EnvKey]) -> str:
    """``0-6, 9, 14-15``: runs of consecutive ids as ranges, in the given order (other environments' keys as they are)."""
    runs: list[list[EnvKey]] = []
    for i in ids:
        last = runs[-1][-1] if runs else None
        if isinstance(i, int) and isinstance(last, int) and i == last + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return ", ".join(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]) for run in runs)


def results_markdown(results: TournamentResults) -> str:
    """``results.md``: the over-all table, the per-environment table (when more than one), the footnotes."""
    parts = ["# Tournament results", "", describe(results), "", CELL_NOTE, ""]
    if not results.enforced:
        note = next((note for note in results.notes if note.startswith("UNENFORCED")), UNENFORCED_NOTE)
        parts[1:1] = ["", f"**{note}**"]
    parts += [f"## Over {_envs_label(results.env_ids)}", "", *_markdown_table(OVERALL_COLUMNS, overall_rows(results))]
    if len(results.env_ids) > 1:
        parts += ["", "## Per environment", "", *_markdown_table(PER_ENV_COLUMNS, per_env_rows(results))]
    if results.notes:
        parts += ["", *(note.replace(PRIVILEGED_MARK, "\\" + PRIVILEGED_MARK, 1) for note in results.notes)]
    return "\n".join(parts) + "\n"


def _markdown_table(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|").replace("*", "\\*") for cell in cells) + " |"

    return [line(columns), "|" + "---|" * len(columns), *(line(row) for row in rows)]
