"""A plugin agent that reports what its process started with: an environment variable, live conditions, its cwd."""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

from agents.base import Agent, choose
from agents.spec import register
from engine.condition import Condition
from engine.environments import Environment

sys.path.insert(0, str(Path(__file__).parent))  # a plugin is imported by path, in agent processes too
from cheat_tools import report  # noqa: E402


@register("launch-probe", "test agent: reports the environment variable ARENA_LAUNCH_PROBE and every live condition")
class LaunchProbe(Agent):
    def adapt(self, arena, on_progress=None) -> None:
        gc.unfreeze()  # objects the process was forked with count too
        report(
            "launch-probe",
            {
                "variable": os.environ.get("ARENA_LAUNCH_PROBE"),
                "conditions": [repr(o) for o in gc.get_objects() if isinstance(o, (Condition, Environment))],
                "cwd": os.getcwd(),
                "parent": os.getppid(),
            },
        )

    def act(self, observation) -> int:
        return choose(self.rng, observation.legal_moves)
