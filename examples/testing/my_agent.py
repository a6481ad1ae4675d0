"""A user's prompt variant: ask the model for one move, keep it if it is legal, else the first legal move."""

from __future__ import annotations

from typing import Any

from harness.models.client import ModelClient


class OneLineMover:
    """Asks ``client`` for a move in one line; never returns an illegal one."""

    def __init__(self, client: ModelClient, temperature: float = 0.0) -> None:
        self.client, self.temperature = client, temperature
        self.fallbacks = 0  # replies that were not a legal move

    def messages(self, board: str, legal: list[str]) -> list[dict[str, Any]]:
        return [
            {"role": "system", "content": "You play Othello. Answer with one move, nothing else."},
            {"role": "user", "content": f"{board}\nLegal moves: {', '.join(legal)}\nYour move?"},
        ]

    async def choose(self, board: str, legal: list[str]) -> str:
        request = self.client.request(self.messages(board, legal), temperature=self.temperature)
        reply = (await self.client.complete(request)).text.strip().lower()
        if reply in legal:
            return reply
        self.fallbacks += 1
        return legal[0]
