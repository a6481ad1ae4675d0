"""Replay run directories offline: the records checked whole, every recorded game re-played through the engine.

- :func:`replay_run`: for an ``arena run`` directory, first the records themselves
  (:func:`harness.records.integrity.check_records`: the hash chains, the manifest's
  seal, every game index once in both phases, every call a game lists present);
  then every recorded game of a run re-played through the engine
  (``make_env(env).rules``): every move must be legal, a finished game must be over
  with the recorded disc counts and the rewards the env's condition gives them, a
  forfeited game must stop with the forfeiting colour to move and rewards -1/+1.
  Works on ``arena run`` directories (``GameEntry`` lines) and on ``arena
  tournament`` directories (``GameLine`` lines, one env per line). Before any of that,
  the commitments of the held-out suite environments the run played
  (:func:`suite_commitments`): each sealed condition's salted sha256 must equal the one
  in the suite's public file, else the environment is named and its games are not re-played.
- :func:`game_plies`: one game ply by ply, with the model's replies of that ply
  (from ``calls.jsonl``), for ``arena replay RUN --game N``.

Rerunning a run from its cache is :mod:`harness.runs.rerun`; runs side by side, :mod:`harness.runs.compare`.
"""

from __future__ import annotations

import json
import re
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from engine import EnvKey, EnvSpecError, make_env
from engine.env_spec import is_sealed
from engine.rules import Rules
from engine.state import BLACK, COLOUR_NAMES, State
from harness.play.game import move_notation
from harness.records.chain import Finding
from harness.records.commitment import condition_text, verify
from harness.records.integrity import check_records
from harness.records.transcript import (
    GAMES_FILE,
    MANIFEST_FILE,
    CallEntry,
    GameEntry,
    TranscriptError,
    TranscriptReader,
)
from harness.runs.llm_config import METRICS_FILE, REPORT_FILE
from harness.runs.llm_run import LlmRunConfig


@dataclass(frozen=True)
class ReplayGame:
    """One recorded game in a common form: which env, where it sits, moves and what was recorded."""

    env_id: EnvKey
    phase: str  # adapt / eval, or "tournament"
    game_index: int
    opponent: str  # the opponent, or "A vs B" for a tournament game
    layout: str
    moves: tuple[int, ...]
    black_discs: int
    white_discs: int
    rewards: tuple[int, int]
    forfeit_by: str | None
    line: int


@dataclass(frozen=True)
class Mismatch:
    phase: str
    game_index: int
    opponent: str
    ply: int | None  # None: about the end of the game
    message: str
    line: int

    def describe(self) -> str:
        where = f"ply {self.ply}" if self.ply is not None else "end"
        return f"{self.phase} game {self.game_index} ({self.opponent}), {where}: {self.message} [games.jsonl:{self.line}]"


@dataclass
class ReplayReport:
    kind: str  # "llm" or "tournament"
    games: Counter = field(default_factory=Counter)  # (phase, opponent) -> games checked
    bad_games: Counter = field(default_factory=Counter)  # (phase, opponent) -> games with a mismatch
    mismatches: list[Mismatch] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)  # about the records themselves (chain, seal, completeness)
    notes: list[str] = field(default_factory=list)

    @property
    def games_checked(self) -> int:
        return sum(self.games.values())

    @property
    def ok(self) -> bool:
        return not self.mismatches and not self.findings

    def summary(self) -> str:
        lines = []
        if self.kind == "llm":
            lines.append("records: " + ("intact (hash chains, seal, every game and call present)" if not self.findings
                                        else f"{len(self.findings)} finding(s)"))
            lines += ["  " + f.describe() for f in self.findings] + ["  " + note for note in self.notes]
        else:
            lines += [f.describe() for f in self.findings] + self.notes
        lines.append(f"replayed {self.games_checked} games ({self.kind} run): "
                     + (f"{len(self.mismatches)} mismatch(es) in {sum(self.bad_games.values())} game(s)" if self.mismatches
                        else "no mismatches"))
        for (phase, opponent), n in sorted(self.games.items()):
            lines.append(f"  {phase:<10} {opponent:<30} {n:>6} games, {self.bad_games[(phase, opponent)]} with mismatches")
        lines += ["  " + m.describe() for m in self.mismatches]
        return "\n".join(lines)


# ------------------------------------------------------------------------------ reading


def read_json(path: Path, what: str, missing: str) -> Any:
    """A JSON file of a run, or a TranscriptError naming the file: ``missing`` if absent."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TranscriptError(missing, path) from None
    except ValueError as error:
        raise TranscriptError(f"invalid {what}: {error}", path) from None


def run_kind(run_dir: str | Path) -> str:
    """``llm`` (an ``arena run`` directory) or ``tournament``; TranscriptError otherwise."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise TranscriptError("no such run directory", run_dir)
    manifest = read_json(run_dir / MANIFEST_FILE, "manifest", "the run has no manifest")
    if isinstance(manifest, dict) and "config" in manifest and "run_id" in manifest:
        return "llm"
    if isinstance(manifest, dict) and manifest.get("kind") in ("tournament", "match") or (run_dir / "results.json").exists():
        return "tournament"
    raise TranscriptError("neither an 'arena run' nor an 'arena tournament' manifest", run_dir / MANIFEST_FILE)


def llm_config(run_dir: str | Path) -> LlmRunConfig:
    manifest = TranscriptReader(run_dir).manifest()
    try:
        return LlmRunConfig.model_validate(manifest.config)
    except ValidationError as error:
        raise TranscriptError(f"invalid run config: {error.errors()[0]['msg']}", Path(run_dir) / MANIFEST_FILE) from None


def recorded_games(run_dir: str | Path) -> tuple[str, list[ReplayGame]]:
    """The run's kind and its games as recorded (read without checking the chain: :func:`replay_run` reports it)."""
    run_dir = Path(run_dir)
    kind = run_kind(run_dir)
    if kind == "llm":
        with warnings.catch_warnings():  # a torn last line is a finding of check_records
            warnings.simplefilter("ignore")
            log = TranscriptReader(run_dir, verify=False).games_log()
        return kind, _llm_games(llm_config(run_dir).env, log.records, [log.line(i) for i in range(len(log.records))])
    return kind, _tournament_games(run_dir)


def _llm_games(env_id: EnvKey, games: tuple[GameEntry, ...], lines: list[int]) -> list[ReplayGame]:
    return [ReplayGame(env_id, g.phase, g.game_index, g.opponent, g.layout, g.moves, g.black_discs, g.white_discs,
                       g.rewards, g.forfeit_by, line) for g, line in zip(games, lines)]


def _tournament_games(run_dir: Path, skip: frozenset[EnvKey] = frozenset()) -> list[ReplayGame]:
    """The games of a tournament directory, but those on the environments in ``skip`` (a broken commitment)."""
    from harness.tournaments.plan import GameLine

    path = run_dir / GAMES_FILE
    if not path.exists():
        raise TranscriptError("the run has no games file", path)
    games = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        if not raw.strip():
            continue
        try:
            line = GameLine.model_validate_json(raw)
        except ValidationError as error:
            problem = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'line'}: {e['msg']}" for e in error.errors())
            raise TranscriptError(f"corrupted tournament game line: {problem}", path, number) from None
        if line.env_id in skip:
            continue
        layout = make_env(line.env_id).layout.name
        games.append(ReplayGame(line.env_id, f"env {line.env_id}", line.game, f"{line.agent_a} vs {line.agent_b}", layout,
                                line.moves, line.black_discs, line.white_discs, line.rewards, None, number))
    return games


# ------------------------------------------------------------------------------ replay


def replay_run(run_dir: str | Path) -> ReplayReport:
    """Check the records of ``run_dir`` and re-play every recorded game; see the module docstring for what is checked."""
    run_dir = Path(run_dir)
    if run_kind(run_dir) == "llm":
        config = llm_config(run_dir)
        suite_findings, suite_notes, broken = suite_commitments([config.env])
        check = check_records(run_dir, budget=config.budget, eval_games=config.eval_games * len(config.opponents))
        log = check.games
        kind, games = "llm", _llm_games(config.env, log.records, [log.line(i) for i in range(len(log.records))])
        findings, notes = commitment_check(run_dir, config.env) if not broken else ([], [])
        report = ReplayReport(kind, findings=list(check.findings) + suite_findings + findings,
                              notes=list(check.notes) + suite_notes + notes)
    else:
        manifest = read_json(run_dir / MANIFEST_FILE, "manifest", "the run has no manifest")
        suite_findings, suite_notes, broken = suite_commitments(manifest.get("envs") or [])
        kind, games = "tournament", _tournament_games(run_dir, broken)
        report = ReplayReport(kind, findings=suite_findings, notes=suite_notes)
    games = [game for game in games if game.env_id not in broken]
    envs: dict[EnvKey, Any] = {}
    for game in games:
        env = envs.setdefault(game.env_id, make_env(game.env_id))
        found = check_game(env.rules, env.condition, game)
        key = (game.phase, game.opponent)
        report.games[key] += 1
        if found:
            report.bad_games[key] += 1
            report.mismatches += found
    return report


def suite_commitments(keys: Sequence[EnvKey]) -> tuple[list[Finding], list[str], frozenset[EnvKey]]:
    """(findings, notes, broken keys) on the commitments of the held-out suite entries among ``keys``.

    Each entry is rebuilt through :func:`engine.suite.suite_env`, which recomputes the salted sha256
    of the sealed condition and compares it with the public file's commitment (and the public file
    with the digest the sealed file recorded): a mismatch is a finding naming the environment.
    """
    sealed = sorted({key for key in keys if is_sealed(key)}, key=str)
    findings, broken = [], set()
    for key in sealed:
        try:
            make_env(key)
        except EnvSpecError as error:
            broken.add(key)
            findings.append(Finding(key.rpartition(":")[0] if isinstance(key, str) else str(key), None,
                                    f"commitment FAILED for environment {key}: {error}"))
    if not sealed or findings:
        return findings, [], frozenset(broken)
    return [], [f"commitments OK: the salted sha256 of the sealed condition of each of the {len(sealed)} held-out "
                "environment(s) equals its commitment in the suite's public.json"], frozenset()


_REPORT_LINE = re.compile(r"^Condition: (?P<condition>.+) \(salt (?P<salt>\S+), committed in the manifest as sha256 "
                          r"(?P<sha256>[0-9a-f]+)\)\.$", re.MULTILINE)


def commitment_check(run_dir: Path, env_id: EnvKey) -> tuple[list[Finding], list[str]]:
    """(findings, notes) on the commitment to the condition: the condition and salt revealed in metrics.json and
    report.md must give the manifest's sha256, and the condition must be env ``env_id``'s real one."""
    committed = TranscriptReader(run_dir).manifest().condition_sha256
    if committed is None:
        return [], ["commitment: none in the manifest (a run written before commitments): the condition is not checked"]
    true_text = condition_text(make_env(env_id).condition)
    revealed: list[tuple[str, str | None, str | None, str | None]] = []  # (file, condition, salt, sha256)
    findings: list[Finding] = []
    metrics_path = run_dir / METRICS_FILE
    if not metrics_path.exists():
        return [], ["commitment: not revealed yet (no metrics.json: the run has not ended)"]
    try:
        shown = json.loads(metrics_path.read_text(encoding="utf-8")).get("commitment")
    except (ValueError, AttributeError):
        shown = None
    if not isinstance(shown, dict):
        findings.append(Finding(METRICS_FILE, None, "the manifest commits to a condition (sha256 "
                                                    f"{committed}), but no commitment is revealed here"))
    else:
        revealed.append((METRICS_FILE, shown.get("condition"), shown.get("salt"), shown.get("sha256")))
    report_path = run_dir / REPORT_FILE
    if report_path.exists():
        match = _REPORT_LINE.search(report_path.read_text(encoding="utf-8"))
        if match is None:
            findings.append(Finding(REPORT_FILE, None, "no 'Condition: ... (salt ..., committed in the manifest as sha256 ...)' line"))
        else:
            revealed.append((REPORT_FILE, match["condition"], match["salt"], match["sha256"]))
    for name, text, salt, sha256 in revealed:
        if sha256 != committed:
            findings.append(Finding(name, None, f"the revealed sha256 {sha256} is not the manifest's {committed}"))
        if not isinstance(text, str) or not isinstance(salt, str) or not verify(text, salt, committed):
            findings.append(Finding(name, None, f"the revealed condition {text!r} and salt {salt!r} do not give the manifest's "
                                                f"sha256 {committed}"))
        if text != true_text:
            findings.append(Finding(name, None, f"the revealed condition {text!r} is not env {env_id}'s condition"))
    if not findings:
        return [], [f"commitment: the condition revealed at the end matches the manifest's sha256 and env {env_id}"]
    return findings, []


def check_game(rules: Rules, condition: Any, game: ReplayGame) -> list[Mismatch]:
    def bad(ply: int | None, message: str) -> list[Mismatch]:
        return [Mismatch(game.phase, game.game_index, game.opponent, ply, message, game.line)]

    if game.layout != rules.layout.name:
        return bad(None, f"layout {game.layout!r} recorded, the env's is {rules.layout.name!r}")
    state = rules.initial_state()
    for ply, move in enumerate(game.moves):
        legal = rules.legal_moves(state)
        if move not in legal:
            shown = ", ".join(move_notation(m, rules) for m in legal) or "none (the game is over)"
            return bad(ply, f"{COLOUR_NAMES[state.to_move]} played {move_notation(move, rules)}, not legal (legal: {shown})")
        state = rules.play(state, move)
    counts = rules.counts(state)
    found: list[Mismatch] = []
    if counts != (game.black_discs, game.white_discs):
        found += bad(None, f"final counts {counts[0]}-{counts[1]}, recorded {game.black_discs}-{game.white_discs}")
    if game.forfeit_by is None:
        if not rules.is_over(state):
            found += bad(None, f"the game is not over after {len(game.moves)} plies and no forfeit is recorded")
        expected = condition.rewards(*counts)
    else:
        if rules.is_over(state) or COLOUR_NAMES[state.to_move] != game.forfeit_by:
            found += bad(None, f"forfeit by {game.forfeit_by} recorded, but "
                               + ("the game is over" if rules.is_over(state) else f"{COLOUR_NAMES[state.to_move]} is to move"))
        expected = (-1, 1) if game.forfeit_by == COLOUR_NAMES[BLACK] else (1, -1)
    if tuple(game.rewards) != tuple(expected):
        found += bad(None, f"rewards {tuple(game.rewards)} recorded, the condition gives {tuple(expected)}")
    return found


# ------------------------------------------------------------------------------ one game, ply by ply


@dataclass(frozen=True)
class Ply:
    ply: int
    colour: str
    move: int
    notation: str
    state: State  # after the move
    replies: tuple[CallEntry, ...]  # every attempt of this ply, in order


def game_plies(run_dir: str | Path, game_index: int, phase: str = "adapt") -> tuple[GameEntry, Rules, list[Ply]]:
    """The game ``(phase, game_index)`` of an ``arena run`` directory, ply by ply with the model's replies."""
    run_dir = Path(run_dir)
    if run_kind(run_dir) != "llm":
        raise TranscriptError("--game steps through 'arena run' directories only (a tournament has no model replies)", run_dir)
    reader = TranscriptReader(run_dir)
    games = {(g.phase, g.game_index): g for g in reader.games()}
    game = games.get((phase, game_index))
    if game is None:
        have = sorted(i for p, i in games if p == phase)
        span = f"{have[0]}-{have[-1]}" if have else "none"
        raise TranscriptError(f"no {phase} game {game_index} in this run ({phase} games: {span})", run_dir / GAMES_FILE)
    calls: dict[int, list[CallEntry]] = {}
    for call in reader.calls():
        if call.phase == phase and call.game_index == game_index and call.ply is not None:
            calls.setdefault(call.ply, []).append(call)
    rules = make_env(llm_config(run_dir).env).rules
    state, plies = rules.initial_state(), []
    for ply, move in enumerate(game.moves):
        colour = COLOUR_NAMES[state.to_move]
        if move not in rules.legal_moves(state):
            raise TranscriptError(f"{phase} game {game_index}: illegal move at ply {ply} (run 'arena replay' for details)",
                                  run_dir / GAMES_FILE)
        state = rules.play(state, move)
        plies.append(Ply(ply, colour, move, move_notation(move, rules), state, tuple(calls.get(ply, ()))))
    return game, rules, plies
