"""Fixtures of the registry tests: a registry as a new process has it, and plugin sources written into tmp_path."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness.registry import specs
from harness.registry.importing import PLUGINS_ENV

AGENT_SOURCE = '''"""A plugin agent: the first legal move."""
from agents.base import Agent
from agents.spec import register


class {cls}(Agent):
    def act(self, observation):
        return observation.legal_moves[0]


@register({name!r}, "the first legal move (a test plugin)")
def factory(context, rng):
    return {cls}(context, rng)
'''


@pytest.fixture
def fresh_registry(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """The registry before its first use, no plugin sources passed down; everything restored afterwards.

    Modules imported from ``tmp_path`` are forgotten afterwards too.
    """
    for name, empty in (("_REGISTRY", {}), ("_ORIGINS", {}), ("_collected", []), ("_installed", [])):
        monkeypatch.setattr(specs, name, empty)
    monkeypatch.setenv(PLUGINS_ENV, "")  # recorded, so a value set by a test is removed afterwards
    yield
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", None) or "").startswith(str(tmp_path)):
            del sys.modules[name]


@pytest.fixture
def write_plugin(tmp_path: Path) -> Callable[..., Path]:
    """Write a module declaring agent ``name`` to ``tmp_path/relative`` (or ``text`` instead) and return its path."""

    def write(relative: str = "my_agent.py", name: str = "first-move", text: str | None = None) -> Path:
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text if text is not None else AGENT_SOURCE.format(cls="FirstMove", name=name), encoding="utf-8")
        return path

    return write


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[dict[str, str]], Path]:
    """A fake installed distribution declaring ``othello_arena.agents`` entry points (name -> value), on sys.path."""

    def install(entry_points: dict[str, str]) -> Path:
        site = tmp_path / "site"
        info = site / "fake_plugin-1.0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-plugin\nVersion: 1.0\n", encoding="utf-8")
        lines = [f"{name} = {value}" for name, value in entry_points.items()]
        (info / "entry_points.txt").write_text("[othello_arena.agents]\n" + "\n".join(lines) + "\n", encoding="utf-8")
        monkeypatch.syspath_prepend(str(site))
        return site

    return install
