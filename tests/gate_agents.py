"""Random, Greedy and Corner that wait at a gate: a plugin that makes a tournament stop at a known point.

With ``GATE_ENV`` unset they are the project's agents under other names (the same moves from the
same generator). With ``GATE_ENV="GAMES_FILES:CUT:RELEASE_FILE"`` every move waits while
the file ``GAMES_FILES`` (a glob pattern: a run directory's name may not be known in advance)
holds at least ``CUT`` games and ``RELEASE_FILE`` does not exist: once the run has
recorded ``CUT`` games, every game still playing holds still, so a signal sent then lands in the
middle of the run however slowly the test process is scheduled; creating ``RELEASE_FILE`` lets the
games in flight finish.
"""

from __future__ import annotations

import glob
import os
import threading
from pathlib import Path

from agents.base import Agent
from agents.heuristic import simple  # the module, not its classes: their registrations must not be declared twice
from agents.spec import register
from engine.protocol.observation import Observation

GATE_ENV = "ARENA_TEST_GATE"
POLL_S = 0.005
HANG_GUARD_S = 120.0


def gate_value(games_files: Path | str, cut: int, release_file: Path) -> str:
    """The value of ``GATE_ENV`` that holds a run once ``games_files`` (a path or glob) has ``cut`` games."""
    return f"{games_files}:{cut}:{release_file}"


def _closed(games_files: str, cut: int, release_file: Path) -> bool:
    found = sorted(glob.glob(games_files))
    recorded = Path(found[0]).read_bytes().count(b"\n") if found else 0
    return recorded >= cut and not release_file.exists()


def wait_at_gate() -> None:
    """Hold the calling move while the gate in ``GATE_ENV`` is closed (at most the hang guard)."""
    value = os.environ.get(GATE_ENV)
    if not value:
        return
    games, cut, release = value.rsplit(":", 2)
    pause = threading.Event()
    for _ in range(int(HANG_GUARD_S / POLL_S)):
        if not _closed(games, int(cut), Path(release)):
            return
        pause.wait(POLL_S)


def _gated(base: type[Agent], name: str) -> type[Agent]:
    class Gated(base):  # type: ignore[misc, valid-type]
        def act(self, observation: Observation) -> int:
            wait_at_gate()
            return super().act(observation)

    Gated.__name__ = Gated.__qualname__ = f"Gated{base.__name__}"
    Gated.name = name
    return register(name, f"{base.__name__} that waits at the test's gate")(Gated)


GatedRandom = _gated(simple.RandomAgent, "gated-random")
GatedGreedy = _gated(simple.GreedyAgent, "gated-greedy")
GatedCorner = _gated(simple.CornerAgent, "gated-corner")
