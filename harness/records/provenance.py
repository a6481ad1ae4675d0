"""What a run manifest records about where it ran: library versions and the git commit.

Nothing here reads environment variables or configuration files, so no secret
can end up in a manifest.
"""

from __future__ import annotations

import platform
import subprocess
from importlib import metadata
from pathlib import Path

import numba
import numpy

import harness

REPO_ROOT = Path(harness.__file__).resolve().parents[1]


def versions() -> dict[str, str]:
    """Python, numpy and numba versions, and the project's own if it is installed."""
    found = {"python": platform.python_version(), "numpy": numpy.__version__, "numba": numba.__version__}
    try:
        found["othello-arena"] = metadata.version("othello-arena")
    except metadata.PackageNotFoundError:
        pass
    return found


def git_commit(root: Path = REPO_ROOT) -> dict[str, object] | None:
    """``{"commit": sha, "dirty": bool}`` of the checkout the code runs from; None outside a git checkout."""
    if not (root / ".git").exists():
        return None
    commit = _git(root, "rev-parse", "HEAD")
    if commit is None:
        return None
    status = _git(root, "status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": bool(status) if status is not None else None}


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None
