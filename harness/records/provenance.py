"""What a run manifest records about where it ran: library versions and the git commit.

Nothing here reads environment variables or configuration files, so no secret
can end up in a manifest.
"""

from __future__ import annotations

import hashlib
import importlib.util
import platform
import subprocess
from importlib import metadata
from pathlib import Path

import numba
import numpy

import harness
from harness.prompting.renderer import DEFAULT_PROMPTS_DIR

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
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


PARSER_MODULE = "harness.prompting.moves"  # its source is part of the harness version


def harness_version(prompts_dir: Path | None = None) -> str:
    """A short hash (12 hex digits) of the prompt templates (``prompts/*.j2``) and the reply parser's source.

    Two results with the same version were produced by the same prompts and the same
    parsing; a change to either changes it.
    """
    digest = hashlib.sha256()
    for path in sorted((prompts_dir or DEFAULT_PROMPTS_DIR).glob("*.j2")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    spec = importlib.util.find_spec(PARSER_MODULE)
    if spec is None or spec.origin is None:
        raise RuntimeError(f"the parser module {PARSER_MODULE} cannot be found")
    digest.update(b"parser\0" + Path(spec.origin).read_bytes())
    return digest.hexdigest()[:12]
