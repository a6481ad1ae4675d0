"""Run ``arena match`` / ``arena tournament`` from a test and get the run directory back parsed.

``play_match("greedy", "llm-policy:model=mock/echo", out=tmp_path, env=0, games=2)`` plays the
same run ``arena match`` plays (it builds the plan with
:func:`harness.tournaments.plan.make_plan` and calls
:func:`harness.tournaments.tournament.run_tournament`, as the command does) and returns a
:class:`TournamentRunResult`: the manifest, ``results.json`` as the project's
:class:`~harness.tournaments.results.TournamentResults`, every game as a
:class:`~harness.tournaments.plan.GameLine`, the model agents' calls (``calls.jsonl``) and
``results.md``. :func:`play_tournament` is ``arena tournament`` (a round robin, or each agent
against ``vs``); :func:`read_tournament_run` parses a directory either command wrote.

Environments are specs as on the command line (``0``, ``"layout=x.txt,condition=majority<0.7"``,
``"SUITE:3"``: ``docs/environments.md``). A model agent is a spec with a model string
(``llm-policy:model=mock/echo``, ``mock/fixed:d3``, ``mock/script:FILE``). The games are played
in this process (``jobs=1``) with each agent in a player process of its own under the referee,
as the commands do; ``referee=False`` is ``--in-process`` (faster, UNENFORCED).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.env_spec import env_key
from harness.tournaments.calls_log import CALLS_FILE
from harness.tournaments.plan import GameLine, make_plan, round_robin, versus
from harness.tournaments.results import TournamentResults
from harness.tournaments.tournament import default_run_dir, read_games, run_tournament

EnvSpec = int | str | Path


@dataclass(frozen=True)
class TournamentRunResult:
    """An ``arena match`` or ``arena tournament`` directory, parsed: what a test asserts on."""

    run_dir: Path
    manifest: dict[str, Any]
    results: TournamentResults
    games: list[GameLine]
    calls: list[dict[str, Any]]  # calls.jsonl: each call record with its game (env_id, pairing, game) and side
    report: str  # results.md

    def win_rate(self, pairing: int = 0) -> float:
        """Agent A's win rate over every environment of pairing ``pairing`` (0: the first, the match)."""
        return self.results.over_envs[pairing].overall.win_rate


def read_tournament_run(run_dir: str | Path) -> TournamentRunResult:
    """Parse a finished ``arena match`` / ``arena tournament`` directory (FileNotFoundError if it did not finish)."""
    path = Path(run_dir)
    calls_path = path / CALLS_FILE
    calls = (
        [json.loads(line) for line in calls_path.read_text(encoding="utf-8").splitlines() if line.strip()] if calls_path.exists() else []
    )
    return TournamentRunResult(
        run_dir=path,
        manifest=json.loads((path / "manifest.json").read_text(encoding="utf-8")),
        results=TournamentResults.model_validate_json((path / "results.json").read_text(encoding="utf-8")),
        games=read_games(path),
        calls=calls,
        report=(path / "results.md").read_text(encoding="utf-8"),
    )


def play_match(
    agent_a: str, agent_b: str, *, out: str | Path, env: EnvSpec = 0, games: int = 2, seed: int = 0, referee: bool = True, jobs: int = 1
) -> TournamentRunResult:
    """``arena match A B --env ENV --games N --seed S`` into a new directory under ``out``, parsed."""
    return _play([agent_a], [agent_b], "match", [env], out=out, games=games, seed=seed, referee=referee, jobs=jobs)


def play_tournament(
    agents: Sequence[str],
    *,
    out: str | Path,
    envs: Sequence[EnvSpec] = (0,),
    vs: Sequence[str] | None = None,
    games: int = 2,
    seed: int = 0,
    referee: bool = True,
    jobs: int = 1,
) -> TournamentRunResult:
    """``arena tournament --agents ... --envs ... [--vs ...]`` into a new directory under ``out``, parsed."""
    return _play(
        list(agents),
        None if vs is None else list(vs),
        "tournament",
        list(envs),
        out=out,
        games=games,
        seed=seed,
        referee=referee,
        jobs=jobs,
    )


def _play(
    agents: list[str],
    opponents: list[str] | None,
    kind: str,
    envs: list[EnvSpec],
    *,
    out: str | Path,
    games: int,
    seed: int,
    referee: bool,
    jobs: int,
) -> TournamentRunResult:
    keys = [env_key(str(spec)) for spec in envs]  # EnvSpecError names a bad spec, as the commands do
    pairings = round_robin(agents) if opponents is None else versus(agents, opponents)
    plan = make_plan(pairings, keys, games, seed, referee=referee)
    run_dir = default_run_dir(f"{kind}-" + "-".join(plan.agents), Path(out))
    command = f"harness.testing.play_{kind} (agents {', '.join(plan.agents)}; envs {keys}; games {games}; seed {seed})"
    run_tournament(plan, run_dir, jobs, command=command, kind=kind)
    return read_tournament_run(run_dir)
