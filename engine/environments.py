"""The 56 benchmark environments: 7 layouts x 8 conditions, id = 7 * condition + layout."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from engine.condition import Condition, as_fraction
from engine.layout import Layout, standard_layout
from engine.rules import Rules

N_LAYOUTS = 7
N_CONDITIONS = 8


class UnknownEnvironmentError(KeyError):
    """An environment id outside 0-55."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Environment:
    """A benchmark instance: a visible layout and a hidden condition.

    ``id`` is 0-55 for the paper's environments; any other environment (``engine.env_spec``)
    has its canonical spec text as id and a ``title`` that never names its condition.
    """

    id: int | str
    layout: Layout
    condition: Condition
    title: str = ""

    @property
    def name(self) -> str:
        return self.title or f"{self.layout.name} / {self.condition.label}"

    @property
    def layout_index(self) -> int:
        """The paper's layout number (0-6); -1 for an environment outside the 56."""
        return self.id % N_LAYOUTS if isinstance(self.id, int) else -1

    @property
    def condition_index(self) -> int:
        """The paper's condition number (0-7); -1 for an environment outside the 56."""
        return self.id // N_LAYOUTS if isinstance(self.id, int) else -1

    @property
    def rules(self) -> Rules:
        """What an agent may know: the layout and the turn limit, never K."""
        return Rules(self.layout, self.condition.turn_limit, self.condition.turn_counting)


@cache
def reference_data() -> dict[str, Any]:
    """The benchmark's data file (layouts, conditions, perft vectors)."""
    data: dict[str, Any] = json.loads(resources.files("engine").joinpath("data/environments.json").read_text())
    return data


@cache
def layouts() -> tuple[Layout, ...]:
    return tuple(
        standard_layout(entry["rows"], entry["cols"], [tuple(c) for c in entry["obstacles"]], entry["name"])
        for entry in reference_data()["layouts"]
    )


@cache
def conditions() -> tuple[Condition, ...]:
    return tuple(
        Condition(as_fraction(entry["K"]), entry["turns"], "per_player", entry["label"]) for entry in reference_data()["conditions"]
    )


def make_env(env_id: int, turn_counting: str = "per_player") -> Environment:
    """Environment ``env_id`` (0-55); ``turn_counting='total'`` gives the reference's blitz counting."""
    if isinstance(env_id, bool) or not isinstance(env_id, int) or not 0 <= env_id < N_LAYOUTS * N_CONDITIONS:
        raise UnknownEnvironmentError(
            f"unknown environment id {env_id!r}: valid ids are 0-{N_LAYOUTS * N_CONDITIONS - 1} "
            f"(id = 7 * condition + layout; `arena envs` lists them)"
        )
    condition = conditions()[env_id // N_LAYOUTS]
    if turn_counting != condition.turn_counting:
        condition = Condition(condition.k, condition.turn_limit, turn_counting, condition.label)
    return Environment(env_id, layouts()[env_id % N_LAYOUTS], condition)


def all_envs() -> list[Environment]:
    return [make_env(i) for i in range(N_LAYOUTS * N_CONDITIONS)]
