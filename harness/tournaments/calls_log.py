"""The model calls of a tournament's model agents, written to the run directory as games finish."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.tournaments.plan import GameLine
from harness.tournaments.resume import CallsSoFar

CALLS_FILE = "calls.jsonl"


class CallsLog:
    """``calls.jsonl``: every model call of the run's model agents (``llm-policy:model=...`` specs), one line each.

    A line is the agent's call record (messages, reply, verdict, tokens, ...) with
    ``call_index`` (from 0, in the order written), the game it belongs to
    (``env_id``, ``pairing``, ``game``) and the side (``a``/``b``) and agent
    spec that made it; a game's calls are written just before the game. The file
    is created with the first call, so runs without model agents have none.
    """

    def __init__(self, path: Path, so_far: CallsSoFar | None = None) -> None:
        self.path = path
        self._file: Any = None
        so_far = so_far or CallsSoFar()  # a resumed run goes on counting from the calls on record
        self.written = so_far.written
        self.tokens_in, self.tokens_out = so_far.tokens_in, so_far.tokens_out
        self.cost_usd = so_far.cost_usd

    def write(self, line: GameLine) -> None:
        for call in line.calls:
            if self._file is None:
                self._file = self.path.open("a", encoding="utf-8")
            own = {key: value for key, value in call.items() if key != "game_index"}  # the agent's own count: 0 here
            record = {"call_index": self.written, "env_id": line.env_id, "pairing": line.pairing, "game": line.game, **own}
            self._file.write(json.dumps(record, ensure_ascii=False) + "\n")
            self.written += 1
            self.tokens_in += int(call.get("tokens_in") or 0)
            self.tokens_out += int(call.get("tokens_out") or 0)
            self.cost_usd += float(call.get("cost_usd") or 0.0)
        if self._file is not None:
            self._file.flush()

    def summary(self) -> str:
        """One line for results.md (empty when no model agent played)."""
        if not self.written:
            return ""
        return (
            f"\nModel calls: {self.written} (every one in {CALLS_FILE}); tokens {self.tokens_in} in, "
            f"{self.tokens_out} out; cost ${self.cost_usd:.4f}.\n"
        )

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
