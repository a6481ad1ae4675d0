"""Shared helpers of the environment tests: every benchmark environment and a custom layout.

Imported by its full name (``tests.harness.envs.envs_helpers``), never as ``conftest``.
"""

from __future__ import annotations

from engine.environments import Environment, make_env
from engine.layout import standard_layout
from harness.envs.scoring import custom_environment

ALL_IDS = list(range(56))
CUSTOM = "custom"


def custom() -> Environment:
    """A 6x10 board with two obstacles (not one of the seven), K = 0.7, a turn limit of 12 per player."""
    layout = standard_layout(6, 10, [(0, 0), (5, 9)], "custom 6x10")
    return custom_environment(layout, 0.7, turn_limit=12)


def environment(key: int | str) -> Environment:
    return custom() if key == CUSTOM else make_env(int(key))


ENV_KEYS = [*ALL_IDS, CUSTOM]
