"""What the cheater tests share: a directory the cheaters report to, and the plugin variable restored after each test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.registry.importing import PLUGINS_ENV


@pytest.fixture
def reports(monkeypatch, tmp_path) -> Path:
    """``$CHEAT_REPORT``: where the cheaters write what they found (``--plugin`` sets the plugin variable: restored)."""
    monkeypatch.setenv(PLUGINS_ENV, os.environ.get(PLUGINS_ENV, ""))
    directory = tmp_path / "reports"
    directory.mkdir()
    directory.chmod(0o1777)  # agent processes behind the walls write as uids of their own
    monkeypatch.setenv("CHEAT_REPORT", str(directory))
    monkeypatch.setenv("ARENA_AGENT_WRITABLE", str(directory))  # bound writable into their sandboxes
    return directory
