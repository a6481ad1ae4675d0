"""Fixtures of the environment tests (helpers shared as plain functions live in ``envs_helpers``)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def layout_file(tmp_path: Path) -> Path:
    path = tmp_path / "board.txt"
    path.write_text("; name: file board\n. . . . . .\n. # . . # .\n. . B W . .\n. . W B . .\n. # . . # .\n. . . . . .\n")
    return path
