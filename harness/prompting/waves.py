"""Adaptation in waves: which games share one memory, and which memory version a game's prompts carry.

A model agent plays its adaptation games in waves of ``W`` games at once; the
memory its prompts carry is the memory of every game before the wave, updated when
the wave ends. Waves start every ``W`` games and at each belief checkpoint (a
checkpoint inside a wave cuts it, so the belief sees exactly that many games), and
the last wave is cut to the budget. ``W = 1`` is one game after another, each
game's prompts carrying every game before it: the order before waves existed.
llm-strategist's batches are its waves (one strategy per batch).

The bounds follow from the game's index alone, so a resumed run (and the referee's
side, which writes each game's ``wave`` and ``memory_version``) computes the same
waves: a run interrupted in the middle of a wave finishes that wave with the memory
it started with. :func:`wave_label` is the one place that writes W beside an agent's
name (run reports, ``arena compare``, tournaments, bench paper tables, the leaderboard).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Wave:
    """One wave: its number (from 0), its first game and the game after its last (``memory_version == start``)."""

    number: int
    start: int
    end: int

    @property
    def memory_version(self) -> int:
        """The games in the memory the wave's prompts carry: every game before the wave."""
        return self.start


def wave_of(index: int, size: int, budget: int, checkpoints: Sequence[int] = ()) -> Wave:
    """The wave holding adaptation game ``index`` (waves of ``size`` games, cut at each checkpoint and at ``budget``)."""
    if size < 1:
        raise ValueError(f"a wave holds at least one game, not {size}")
    cuts = sorted({c for c in checkpoints if 0 < c < budget})
    start = max([index - index % size, *(c for c in cuts if c <= index)])
    end = min([start - start % size + size, max(budget, index + 1), *(c for c in cuts if c > start)])
    number = start // size + sum(1 for c in cuts if c <= start and c % size)  # every start before: a multiple or a cut
    return Wave(number, start, end)


WAVE_PARAMS = {"llm-policy": "wave", "llm-strategist": "batch"}  # the run setting that is each agent's W


def wave_size(agent: str, settings: Mapping[str, Any]) -> int | None:
    """The W of a run of ``agent`` (its name or spec) from the run's settings (``wave``, or the strategist's
    ``batch``; 1 where not recorded: runs before waves); None for an agent without waves."""
    param = WAVE_PARAMS.get(agent.partition(":")[0])
    return None if param is None else int(settings.get(param) or 1)


def wave_label(agent: str, wave: int | None = 1) -> str:
    """An agent's name (or spec) as every table shows it: ``llm-policy (W=16)`` for an agent that adapts in waves,
    the name alone for the others. An agent built from a spec (tournaments, bench paper) plays one game after
    another: W=1."""
    if wave is None or agent.partition(":")[0] not in WAVE_PARAMS:
        return agent
    return f"{agent} (W={wave})"
