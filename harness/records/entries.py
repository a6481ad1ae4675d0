"""The records of a run: the manifest, one line per game, one per model call (versioned pydantic models).

Schema 2 (this code writes it) adds the hash chain: each line of ``games.jsonl`` and
``calls.jsonl`` carries ``prev_hash`` (written and checked by
:mod:`harness.records.transcript`, not a field of the records), each game lists its
calls (``call_indices``), and the manifest seals each chained file (``chains``).
Schema 1 records (written before chains) are still read; ``arena replay`` reports
that they cannot be checked.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from harness.play.decisions import FailureCounts
from harness.records.chain import ChainSeal

TRANSCRIPT_SCHEMA = 2
LEGACY_SCHEMAS = frozenset({1})  # read, never written: no hash chain, no call_indices, no seal
MANIFEST_FILE, GAMES_FILE, CALLS_FILE, CACHE_FILE = "manifest.json", "games.jsonl", "calls.jsonl", "cache.jsonl"
CHAINED_FILES = (GAMES_FILE, CALLS_FILE, CACHE_FILE)

_SECRET_VALUE = re.compile(r"(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{16,}")
_SECRET_KEY_PARTS = ("api_key", "apikey", "secret", "password", "passwd")
# A key containing "token" is a secret unless it is a count or limit of tokens.
_TOKEN_COUNT_KEY = re.compile(r"tokens|token_(?:count|limit|budget|usage)|num_token", re.IGNORECASE)


class TranscriptError(ValueError):
    """A transcript that cannot be read or written as asked; names the file and line when there is one."""

    def __init__(self, message: str, path: Path | None = None, line: int | None = None) -> None:
        self.path, self.line = path, line
        where = f"{path}:{line}: " if path is not None and line is not None else f"{path}: " if path else ""
        super().__init__(where + message)


class VersionedRecord(BaseModel):
    """A record with a schema version this code reads (it writes :data:`TRANSCRIPT_SCHEMA`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = TRANSCRIPT_SCHEMA

    @field_validator("schema_version")
    @classmethod
    def _known_version(cls, version: int) -> int:
        if version != TRANSCRIPT_SCHEMA and version not in LEGACY_SCHEMAS:
            readable = ", ".join(map(str, sorted({TRANSCRIPT_SCHEMA, *LEGACY_SCHEMAS})))
            raise ValueError(f"schema_version {version} is not supported (this code reads versions {readable})")
        return version

    @property
    def legacy(self) -> bool:
        """Written before hash chains (schema 1)."""
        return self.schema_version in LEGACY_SCHEMAS


def secret_paths(value: Any, path: str = "") -> list[str]:
    """Where ``value`` (nested dicts/lists) holds a key or a value that looks like a secret."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}.{key}" if path else str(key)
            name = str(key).lower()
            if any(part in name for part in _SECRET_KEY_PARTS) or ("token" in name and not _TOKEN_COUNT_KEY.search(name)):
                found.append(here)
            else:
                found.extend(secret_paths(item, here))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found.extend(secret_paths(item, f"{path}[{index}]"))
    elif isinstance(value, str) and _SECRET_VALUE.search(value):
        found.append(path or "<value>")
    return found


class RunManifest(VersionedRecord):
    """What a run was: its id, config, package versions, git commit, prompt template hashes, seeds. Never secrets.

    Refused (the error names the place, never the value): a key containing
    ``api_key``, ``secret``, ``password``, or ``token`` (except token counts and
    limits such as ``max_tokens``, ``tokens_in``, ``token_budget``), and any
    string that looks like an API key (``sk-`` and 16 or more key characters).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    run_id: str
    config: dict[str, Any] = {}
    versions: dict[str, str] = {}
    git: dict[str, Any] | None = None
    template_hashes: dict[str, str] = {}
    seeds: dict[str, int] = {}
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    # The seal of each chained file (games.jsonl, calls.jsonl, cache.jsonl): written with the manifest and
    # renewed whenever the writer closes, so it says how far an interrupted run got and seals a finished one.
    chains: dict[str, ChainSeal] = {}
    sealed_at: datetime | None = None
    # The commitment to the hidden condition (:mod:`harness.records.commitment`): sha256 of a salt and the condition's
    # canonical text, written before the first game; the salt and the condition are revealed only in metrics.json and
    # report.md at the end. None in manifests written before commitments.
    condition_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")

    @model_validator(mode="before")
    @classmethod
    def _no_secrets(cls, data: Any) -> Any:
        places = secret_paths(data) if isinstance(data, dict) else []
        if places:
            raise ValueError(
                f"the manifest would record something that looks like a secret at {', '.join(places)}; "
                "API keys are read from the environment and never written to a run"
            )
        return data


class GameEntry(VersionedRecord):
    """One finished game (``games.jsonl``). ``moves``: flat indices, PASS = -1; ``rewards``: (black, white)."""

    game_index: int = Field(ge=0)
    phase: Literal["adapt", "eval"]
    layout: str
    black: str
    white: str
    opponent: str
    agent_colour: Literal["black", "white", "both"]
    moves: tuple[int, ...]
    black_discs: int = Field(ge=0)
    white_discs: int = Field(ge=0)
    rewards: tuple[int, int]
    forfeit_by: Literal["black", "white"] | None = None
    failures: FailureCounts = FailureCounts()
    seed: int | None = None
    call_indices: tuple[int, ...] | None = None  # the game's model calls in calls.jsonl; the writer fills it in
    # Adaptation games of llm-policy and llm-strategist (harness.prompting.waves): the wave the game was played in and the
    # memory version its prompts carried (the games in that memory). None: an evaluation game, cwm, or a run before waves.
    wave: int | None = Field(default=None, ge=0)
    memory_version: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _forfeit_rewards(self) -> GameEntry:
        if self.forfeit_by is not None:
            expected = (-1, 1) if self.forfeit_by == "black" else (1, -1)
            if self.rewards != expected:
                raise ValueError(f"a game forfeited by {self.forfeit_by} must have rewards {expected}, not {self.rewards}")
        return self

    def to_game_record(self) -> Any:
        """The :class:`~harness.play.game.GameRecord` of this game (e.g. to rebuild an arena ledger on resume)."""
        from engine.protocol.record import GameRecord, rho_fraction

        return GameRecord(
            layout=self.layout,
            black_policy=self.black,
            white_policy=self.white,
            moves=self.moves,
            black=self.black_discs,
            white=self.white_discs,
            rho_black=float(rho_fraction(self.black_discs, self.white_discs)),
            rho_white=float(rho_fraction(self.white_discs, self.black_discs)),
            rewards=self.rewards,
            plies=len(self.moves),
        )


class ParseCandidate(BaseModel):
    """A move the reply parser saw in a reply but did not take: its notation, the parser stage, where it sits."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    move: str
    source: str
    span: tuple[int, int]


class CallEntry(VersionedRecord):
    """One model call (``calls.jsonl``); ``game_index`` None for calls outside a game (belief elicitation)."""

    call_index: int = Field(ge=0)
    game_index: int | None = None
    phase: Literal["adapt", "eval"] | None = None
    ply: int | None = None
    attempt: int = Field(default=0, ge=0)
    messages: list[dict[str, Any]]
    reply: str | None = None
    finish_reason: str | None = None
    parsed_move: str | None = None
    verdict: Literal["legal", "illegal", "unparsed", "call_failed"] | None = None
    failure_kind: str | None = None
    tokens_in: int = Field(default=0, ge=0)
    tokens_out: int = Field(default=0, ge=0)
    cached_tokens_in: int = Field(default=0, ge=0)  # of tokens_in, from the provider's prompt cache (the cached rate)
    concurrency: float | None = None  # the model client's concurrency limit when the call ended (AIMD under the ceiling)
    cost_usd: float = Field(default=0.0, ge=0)
    latency_s: float = Field(default=0.0, ge=0)
    retries: int = Field(default=0, ge=0)
    errors: list[str] = Field(default_factory=list)  # the client's failed attempts before this reply, classified
    reason: str | None = None  # why the reply was not used (verifier), or how the call failed for good
    cache_key: str | None = None
    cache_hit: bool = False
    template_hash: str | None = None
    # The parse audit (``arena audit``): where in ``reply`` the move was read, (start, end) character offsets,
    # and every other candidate the parser saw. None on calls that read no move and on records written before.
    parse_span: tuple[int, int] | None = None
    parse_candidates: tuple[ParseCandidate, ...] | None = None
    # Moves as function calls: the reply's calls ({"id", "name", "arguments"}); ``reply`` then holds the arguments
    # of its play_move call. The provider's reasoning text and reasoning tokens (of tokens_out) where it reports them.
    tool_calls: list[dict[str, Any]] | None = None
    reasoning: str | None = None
    reasoning_tokens: int = Field(default=0, ge=0)
    reasoning_cost_usd: float = Field(default=0.0, ge=0)
