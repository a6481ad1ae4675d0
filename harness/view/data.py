"""What the viewer writes: the page's index (inlined in the HTML) and one chunk per game (beside it).

The index holds the overview and one short summary per game; a game's chunk holds its record, the board at every
ply and its model calls (:class:`~harness.records.entries.CallEntry` dumps, validated on the way), so the page loads
a game's transcript only when the game is opened. Chunks are gzip-compressed JSON, base64 inside a tiny script
(``window.arenaChunk(id, "...")``), so they load from ``file://`` where ``fetch`` cannot.
"""

from __future__ import annotations

import base64
import gzip
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

VIEW_SCHEMA = 1
RunKind = Literal["llm", "tournament", "paper"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Board(_Frozen):
    """The board before a ply: one character a cell, row by row (``.`` empty, ``X`` black, ``O`` white, ``#`` obstacle)."""

    cells: str
    to_move: Literal["black", "white"]
    legal: tuple[int, ...]
    black: int
    white: int


class GameSummary(_Frozen):
    """One row of the page's game list (``id``: the chunk's number, the game's place in the run's games file)."""

    id: int
    phase: str
    index: int
    env_id: int | str
    layout: str
    black: str
    white: str
    opponent: str
    plies: int
    black_discs: int
    white_discs: int
    rewards: tuple[int, int]
    agent_reward: int  # the viewed agent's (A's in a tournament; black's in self-play)
    agent_rho: float
    calls: int
    forfeit_by: str | None = None


class GameChunk(_Frozen):
    """Everything the game view shows of one game."""

    id: int
    rows: int
    cols: int
    moves: tuple[int, ...]
    boards: tuple[Board, ...]  # before each ply, then the final position
    record: dict[str, Any]  # the games-file line as recorded
    calls: tuple[dict[str, Any], ...]  # CallEntry dumps (a tournament's also carry env_id, pairing, game, side, agent)
    strategy: dict[str, Any] | None = None  # llm-strategist: the strategy in force for this game


class ViewIndex(_Frozen):
    """The page's index: what the overview shows and the list of games."""

    schema_version: int = VIEW_SCHEMA
    kind: RunKind
    title: str
    run_dir: str
    overview: dict[str, Any]
    games: tuple[GameSummary, ...]
    chunk_dir: str  # relative to the page
    extra_chunk: bool = False  # model calls outside games (beliefs, strategies, programs) in chunk "x"
    live: bool = False


def chunk_script(chunk_id: int | str, payload: dict[str, Any]) -> str:
    """The chunk file's text: a call of ``window.arenaChunk`` with the payload gzip-compressed, base64-encoded."""
    packed = gzip.compress(json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8"), compresslevel=6, mtime=0)
    return f'window.arenaChunk({json.dumps(str(chunk_id))},"{base64.b64encode(packed).decode("ascii")}");\n'


def read_chunk_script(text: str) -> dict[str, Any]:
    """The payload of a chunk file (the inverse of :func:`chunk_script`; used by tests and tools)."""
    encoded = text.rsplit(',"', 1)[1].split('"', 1)[0]
    payload: dict[str, Any] = json.loads(gzip.decompress(base64.b64decode(encoded)))
    return payload
