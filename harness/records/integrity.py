"""Is a run's record whole and unchanged? The checks ``arena replay`` makes before it re-plays the games.

:func:`check_records` reads an ``arena run`` directory without trusting it and lists
every finding, each naming the file and, where there is one, the line:

- the manifest is there (else :class:`~harness.records.entries.TranscriptError`);
- each chained file (``games.jsonl``, ``calls.jsonl``, ``cache.jsonl``): every
  line carries ``prev_hash`` and it is the hash of the line before, no line is cut
  off, and the file agrees with the manifest's seal (line count and last hash);
- every game once: adaptation games 0 .. A-1 and evaluation games 0 .. E-1, each
  exactly once, where A and E are the games per phase the seal counts (a manifest
  sealed without them: A = min(budget, sealed lines), E = the rest); A is at most
  the budget and E at most ``eval_games`` (games per opponent x opponents);
- every call once (indices 0 .. n-1), every call a game lists present and
  belonging to that game, and every call of a game on record listed by it (calls
  of a game that never finished may only form the tail of the log).

A run whose seal counts fewer games than its config asks for (stopped by a cap,
or interrupted and closed) is not a finding: a note says how far it got.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.records.chain import ChainSeal, Finding, scan_chain, seal_findings
from harness.records.entries import CALLS_FILE, CHAINED_FILES, GAMES_FILE, CallEntry, GameEntry
from harness.records.transcript import PHASES, Log, TranscriptReader, parse_log

MAX_LISTED = 5  # missing games or calls named one by one, per phase; the rest are counted


@dataclass(frozen=True)
class RecordsCheck:
    """What :func:`check_records` found (findings fail a replay; notes do not) and the logs it read."""

    findings: tuple[Finding, ...]
    notes: tuple[str, ...]
    games: Log[GameEntry]
    calls: Log[CallEntry]

    @property
    def ok(self) -> bool:
        return not self.findings


def check_records(run_dir: str | Path, *, budget: int, eval_games: int) -> RecordsCheck:
    """Check an ``arena run`` directory's records; ``eval_games``: evaluation games in all (per opponent x opponents)."""
    run_dir = Path(run_dir)
    manifest = TranscriptReader(run_dir).manifest()
    findings: list[Finding] = []
    scans = {name: scan_chain(run_dir / name) for name in CHAINED_FILES}
    for name, scan in scans.items():
        findings += scan.findings() + seal_findings(scan, manifest.chains.get(name))
    games = parse_log(scans[GAMES_FILE], GameEntry, verify=False)
    calls = parse_log(scans[CALLS_FILE], CallEntry, verify=False)
    counts = _sealed_counts(manifest.chains.get(GAMES_FILE), len(games.records), budget)
    findings += _count_findings(counts, budget, eval_games)
    for phase in PHASES:
        findings += _phase_findings(games, phase, counts[phase])
    call_findings, notes = _call_findings(games, calls)
    findings += call_findings
    complete = counts["adapt"] == budget and counts["eval"] == eval_games
    notes.insert(0, "complete: " if complete else "incomplete (stopped early, or interrupted: 'arena run --resume' finishes it): ")
    notes[0] += f"{counts['adapt']} of {budget} adaptation games and {counts['eval']} of {eval_games} evaluation games sealed"
    return RecordsCheck(tuple(findings), tuple(notes), games, calls)


def _sealed_counts(seal: ChainSeal | None, lines: int, budget: int) -> dict[str, int]:
    if seal is not None and seal.phases is not None:
        return {phase: seal.phases.get(phase, 0) for phase in PHASES}
    sealed = seal.lines if seal is not None else lines
    return {"adapt": min(budget, sealed), "eval": sealed - min(budget, sealed)}


def _count_findings(counts: dict[str, int], budget: int, eval_games: int) -> list[Finding]:
    found = []
    if counts["adapt"] > budget:
        found.append(Finding(GAMES_FILE, None, f"the manifest seals {counts['adapt']} adaptation games, more than the budget of {budget}"))
    if counts["eval"] > eval_games:
        found.append(
            Finding(GAMES_FILE, None, f"the manifest seals {counts['eval']} evaluation games, more than the {eval_games} the config plays")
        )
    return found


def _phase_findings(games: Log[GameEntry], phase: str, count: int) -> list[Finding]:
    """Games of ``phase``: each index 0 .. count-1 once, none beyond."""
    found: list[Finding] = []
    seen: dict[int, int] = {}  # game index -> line
    for position, game in enumerate(games.records):
        if game.phase != phase:
            continue
        line = games.line(position)
        if game.game_index in seen:
            found.append(
                Finding(
                    GAMES_FILE,
                    line,
                    f"{phase} game {game.game_index} appears again (first on line {seen[game.game_index]}): a line was duplicated",
                )
            )
        elif game.game_index >= count:
            found.append(
                Finding(GAMES_FILE, line, f"{phase} game {game.game_index} is beyond the {count} {phase} game(s) the manifest seals")
            )
        else:
            seen[game.game_index] = line
    missing = [index for index in range(count) if index not in seen]
    for index in missing[:MAX_LISTED]:
        after = [i for i in seen if i > index]
        if after:
            found.append(
                Finding(
                    GAMES_FILE,
                    seen[min(after)],
                    f"{phase} game {index} is missing (it should come before {phase} game {min(after)}, on this line): a line was deleted",
                )
            )
        else:
            end = games.line(len(games.records) - 1) + 1 if games.records else 1
            found.append(
                Finding(GAMES_FILE, end, f"{phase} game {index} is missing (the file ends before it): lines were deleted or cut off")
            )
    if len(missing) > MAX_LISTED:
        found.append(Finding(GAMES_FILE, None, f"{len(missing) - MAX_LISTED} more {phase} game(s) are missing"))
    return found


def _call_findings(games: Log[GameEntry], calls: Log[CallEntry]) -> tuple[list[Finding], list[str]]:
    """Calls 0 .. n-1 once each; the calls each game lists are there and belong to it, and vice versa."""
    found: list[Finding] = []
    where: dict[int, int] = {}  # call index -> position in the log
    for position, call in enumerate(calls.records):
        if call.call_index in where:
            found.append(
                Finding(
                    CALLS_FILE,
                    calls.line(position),
                    f"call {call.call_index} appears again (first on line {calls.line(where[call.call_index])})",
                )
            )
        else:
            where[call.call_index] = position
    missing = [index for index in range(max(where, default=-1) + 1) if index not in where]
    for index in missing[:MAX_LISTED]:
        after = min(i for i in where if i > index)
        found.append(
            Finding(
                CALLS_FILE,
                calls.line(where[after]),
                f"call {index} is missing (it should come before call {after}, on this line): a line was deleted",
            )
        )
    if len(missing) > MAX_LISTED:
        found.append(Finding(CALLS_FILE, None, f"{len(missing) - MAX_LISTED} more call(s) are missing"))
    listed: dict[int, tuple[str, int, int]] = {}  # call index -> (phase, game index, games.jsonl line) of the game listing it
    for position, game in enumerate(games.records):
        line = games.line(position)
        if game.call_indices is None:
            if not game.legacy:
                found.append(
                    Finding(
                        GAMES_FILE,
                        line,
                        f"{game.phase} game {game.game_index} does not list its calls (call_indices), which every chained game line does",
                    )
                )
            continue
        for index in game.call_indices:
            listed[index] = (game.phase, game.game_index, line)
            if index not in where:
                found.append(
                    Finding(GAMES_FILE, line, f"{game.phase} game {game.game_index} lists call {index}, which {CALLS_FILE} does not hold")
                )
                continue
            call = calls.records[where[index]]
            if (call.phase, call.game_index) != (game.phase, game.game_index):
                found.append(
                    Finding(
                        CALLS_FILE,
                        calls.line(where[index]),
                        f"call {index} is of {call.phase} game "
                        f"{call.game_index}, but {game.phase} game {game.game_index} ({GAMES_FILE}:{line}) lists it",
                    )
                )
    found_back, notes = _unlisted_calls(games, calls, listed)
    return found + found_back, notes


def _unlisted_calls(
    games: Log[GameEntry], calls: Log[CallEntry], listed: dict[int, tuple[str, int, int]]
) -> tuple[list[Finding], list[str]]:
    """Calls of a game that the game does not list: one finding per game (at its first such call)."""
    on_record: dict[tuple[str, int], tuple[GameEntry, int]] = {
        (g.phase, g.game_index): (g, games.line(i)) for i, g in enumerate(games.records)
    }
    last_listed = max(listed, default=-1)
    unlisted: dict[tuple[str, int], list[tuple[int, int]]] = {}  # (phase, game) -> [(call index, line)]
    unfinished: list[int] = []
    for position, call in enumerate(calls.records):
        if call.game_index is None or call.phase is None or call.call_index in listed:
            continue
        game = on_record.get((call.phase, call.game_index))
        if game is None and call.call_index > last_listed:
            unfinished.append(call.call_index)  # the orphan tail of a game the run stopped in
        elif game is None or game[0].call_indices is not None:
            unlisted.setdefault((call.phase, call.game_index), []).append((call.call_index, calls.line(position)))
    found = []
    for (phase, index), stray in unlisted.items():
        what = f"call {stray[0][0]}" + (f" and {len(stray) - 1} more (to line {stray[-1][1]})" if len(stray) > 1 else "")
        game = on_record.get((phase, index))
        why = (
            f"which {GAMES_FILE} does not hold (and later games do)"
            if game is None
            else f"but that game ({GAMES_FILE}:{game[1]}) does not list {'it' if len(stray) == 1 else 'them'}"
        )
        found.append(Finding(CALLS_FILE, stray[0][1], f"{what} {'is' if len(stray) == 1 else 'are'} of {phase} game {index}, {why}"))
    notes = [f"calls {unfinished[0]}-{unfinished[-1]} belong to a game the run stopped in (not on record)"] if unfinished else []
    return found, notes
