"""What the move-asker tests share: the standard 8x8 start, a prompt, a scripted ask() and one decision."""

from __future__ import annotations

import asyncio

from engine import make_env
from engine.protocol.observation import observe
from harness.prompting.moves import MoveAsker

ENV = make_env(0)  # standard 8x8
LAYOUT = ENV.layout
OBS = observe(ENV.rules, ENV.rules.initial_state())  # black to move: e3, f4, c5, d6 (in this order)
PROMPT = [{"role": "user", "content": "Your move."}]


def scripted(*replies):
    """An async ask() returning (or raising) the given replies in order; a str reply finishes with "stop"."""
    sent = []
    queue = list(replies)

    async def ask(messages):
        sent.append(messages)
        if not queue:
            raise AssertionError("the script ran out of replies")
        reply = queue.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply if isinstance(reply, tuple) else (reply, "stop")

    ask.sent = sent
    return ask


def decide(asker: MoveAsker, obs=OBS):
    return asyncio.run(asker.decide(obs, PROMPT))
