"""Transcript entries to write in the records tests: a game, a model call, a manifest (not a test module).

Each takes keyword changes over its defaults, so a test names only what it needs to differ.
"""

from __future__ import annotations

from typing import Any

from harness.play.decisions import FailureCounts
from harness.records.entries import CallEntry, GameEntry, RunManifest


def game(index: int, phase: str = "adapt", **changes: Any) -> GameEntry:
    """Game ``index`` of ``phase``: a self-play game black won 10-5 with one parse error."""
    fields = dict(
        game_index=index,
        phase=phase,
        layout="Standard 8x8",
        black="llm-policy",
        white="llm-policy",
        opponent="self",
        agent_colour="both",
        moves=(19, 18, -1),
        black_discs=10,
        white_discs=5,
        rewards=(1, -1),
        failures=FailureCounts(parse_error=1),
        seed=1000 + index,
    )
    return GameEntry(**(fields | changes))


def call(index: int, game_index: int | None, ply: int | None = 0, **changes: Any) -> CallEntry:
    """Call ``index``, at ``ply`` of adapt game ``game_index``: a legal move d3."""
    fields = dict(
        call_index=index,
        game_index=game_index,
        phase="adapt",
        ply=ply,
        messages=[{"role": "user", "content": "Your move."}],
        reply="MOVE: d3",
        finish_reason="stop",
        parsed_move="d3",
        verdict="legal",
        tokens_in=120,
        tokens_out=4,
        cost_usd=0.0001,
        latency_s=0.2,
        cache_key="abc",
        template_hash="h1",
    )
    return CallEntry(**(fields | changes))


def manifest(**config: Any) -> RunManifest:
    """The manifest of run-1 on mock/echo, ``config`` added to its config."""
    return RunManifest(
        run_id="run-1",
        config={"model": "mock/echo", "max_tokens": 64, **config},
        versions={"python": "3.11"},
        git={"commit": "abc", "dirty": False},
        template_hashes={"policy": "h1"},
        seeds={"run": 7},
    )
