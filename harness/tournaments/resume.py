"""Resuming an interrupted ``arena match`` or ``arena tournament`` run directory.

The plan is read back from ``manifest.json`` (pairings, environments, games, seed,
referee mode); the games on record are read from ``games.jsonl`` after cutting a
line left half-written by a killed run, and checked against the plan (each game's
seed must be the plan's); model calls in ``calls.jsonl`` whose game is not on
record (written just before a game that was then cut short) are dropped, since the
resume plays that game again. Every game's randomness comes from (seed, env,
pairing, game index) alone (:class:`~harness.tournaments.plan.GameTask`), so the
games a resume plays are those an uninterrupted run plays.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from harness.tournaments.plan import MANIFEST_SCHEMA, GameLine, Pairing, TournamentError, TournamentPlan

GAMES_FILE = "games.jsonl"
KINDS = ("match", "tournament")


class RunInterrupted(RuntimeError):
    """The run stopped before all its games were played (Ctrl-C); what was played is recorded and resumes."""

    def __init__(self, recorded: int, total: int, forced: bool) -> None:
        super().__init__(f"interrupted with {recorded} of {total} recorded")
        self.recorded, self.total, self.forced = recorded, total, forced


@dataclass(frozen=True)
class CallsSoFar:
    """What ``calls.jsonl`` holds for the games on record: the count and token/cost totals a resume continues."""

    written: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0


def read_manifest(run_dir: Path, kind: str) -> dict[str, Any]:
    """The manifest of a ``kind`` run in ``run_dir``; a TournamentError names what is wrong."""
    path = run_dir / "manifest.json"
    if not path.is_file():
        raise TournamentError(f"cannot resume {str(run_dir)!r}: no manifest.json there (not an arena {kind} run?)")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise TournamentError(f"cannot resume {str(run_dir)!r}: manifest.json is not JSON ({error})") from None
    if manifest.get("kind") != kind:
        raise TournamentError(
            f"cannot resume {str(run_dir)!r} with arena {kind}: its manifest is a "
            f"{manifest.get('kind')!r} run (resume it with the command that made it)"
        )
    if int(manifest.get("schema_version", 0)) > MANIFEST_SCHEMA:
        raise TournamentError(
            f"cannot resume {str(run_dir)!r}: it was written by a newer version (manifest schema "
            f"{manifest.get('schema_version')}, this one reads up to {MANIFEST_SCHEMA}); upgrade"
        )
    return dict(manifest)


def plan_of(manifest: dict[str, Any]) -> TournamentPlan:
    """The plan a manifest recorded."""
    pairings = tuple(Pairing(p["a"], p["b"]) for p in manifest["pairings"])
    return TournamentPlan(
        pairings,
        tuple(manifest["envs"]),
        int(manifest["games_per_pairing_and_env"]),
        int(manifest["seed"]),
        str(manifest["referee"]).startswith("process"),
    )


def recorded_games(run_dir: Path, plan: TournamentPlan) -> list[GameLine]:
    """The plan's games on record, each once (a torn last line is cut off the file first)."""
    path = run_dir / GAMES_FILE
    if not path.exists():
        return []
    cut_torn_line(path)
    seeds = {(t.env_id, t.pairing_index, t.game_index): t.game_seed for t in plan.tasks()}
    games: dict[tuple[int | str, int, int], GameLine] = {}
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not text.strip():
            continue
        try:
            line = GameLine.model_validate_json(text)
        except ValidationError as error:
            raise TournamentError(f"cannot resume: {path} line {number} is not a game line ({error.errors()[0]['msg']})") from None
        key = (line.env_id, line.pairing, line.game)
        if seeds.get(key) != line.game_seed:
            raise TournamentError(
                f"cannot resume: {path} line {number} (env {line.env_id}, pairing {line.pairing}, "
                f"game {line.game}) is not a game of the plan in manifest.json"
            )
        games.setdefault(key, line)
    return list(games.values())


def keep_calls_of(run_dir: Path, games: list[GameLine], calls_file: str) -> CallsSoFar:
    """Keep the model calls of the games on record (whole lines only) and return their totals."""
    path = run_dir / calls_file
    if not path.exists():
        return CallsSoFar()
    cut_torn_line(path)
    on_record = {(line.env_id, line.pairing, line.game) for line in games}
    kept: list[str] = []
    tokens_in = tokens_out = 0
    cost = 0.0
    for text in path.read_text(encoding="utf-8").splitlines():
        if not text.strip():
            continue
        call = json.loads(text)
        if (call.get("env_id"), call.get("pairing"), call.get("game")) in on_record:
            kept.append(text)
            tokens_in += int(call.get("tokens_in") or 0)
            tokens_out += int(call.get("tokens_out") or 0)
            cost += float(call.get("cost_usd") or 0.0)
    path.write_text("".join(text + "\n" for text in kept), encoding="utf-8")
    return CallsSoFar(len(kept), tokens_in, tokens_out, cost)


def cut_torn_line(path: Path) -> None:
    """Cut a line left half-written by a killed run, so the next line starts clean (its game is played again)."""
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        path.write_bytes(data[: data.rfind(b"\n") + 1])
