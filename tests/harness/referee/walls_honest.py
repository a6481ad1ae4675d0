"""The honest twin of ``walls_cheater.py``: the same agent name, the same play (random's), no attack at all.

A command run with the cheater must score exactly as the same command run with this plugin.
"""

from __future__ import annotations

from agents.heuristic.simple import RandomAgent
from agents.spec import register


@register("walls-cheater", "test agent: the cheater's honest twin (plays as random)")
class HonestTwin(RandomAgent):
    name = "walls-cheater"

    def adapt(self, arena, on_progress=None) -> None:
        return None
