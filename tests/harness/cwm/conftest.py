"""cwm fixtures: skipped only where bubblewrap cannot run (as the sandbox tests are), a scripted model client."""

from __future__ import annotations

import pytest

from harness.sandbox.command import bubblewrap_problem


@pytest.fixture
def sandbox_ready() -> None:
    problem = bubblewrap_problem()
    if problem is not None:
        pytest.skip(f"bubblewrap cannot run here ({problem}): install the Debian package bubblewrap, as root")
