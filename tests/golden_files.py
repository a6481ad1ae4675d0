"""The golden-file comparison of the golden-run tests (not a test module): rewrite with ``GOLDEN_UPDATE=1``, else compare."""

from __future__ import annotations

import os
from pathlib import Path


def check_golden(name: str, written: list[str], golden_path: Path, *, counted: str = "lines", unit: str = "line") -> None:
    """``written`` is ``golden_path`` line for line (``GOLDEN_UPDATE=1`` writes it there first).

    A failure names the case ``name`` and the first differing ``unit``; a length mismatch says
    ``{len(written)} {counted}, {len(golden)} in {golden_path.name}``.
    """
    if os.environ.get("GOLDEN_UPDATE") == "1":
        golden_path.write_text("".join(line + "\n" for line in written), encoding="utf-8")
    golden = golden_path.read_text(encoding="utf-8").splitlines()
    assert len(written) == len(golden), f"{name}: {len(written)} {counted}, {len(golden)} in {golden_path.name}"
    for number, (got, expected) in enumerate(zip(written, golden), start=1):
        assert got == expected, f"{name}: {unit} {number} differs from {golden_path.name}"
