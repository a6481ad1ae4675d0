"""The user's view: an agent and its test in a directory of their own, run by pytest with only the project installed.

``examples/testing/`` holds the agent (~25 lines) and its test (~40 lines) that
``docs/testing-with-mocks.md`` shows; they are copied outside the repository and run in a
subprocess with this interpreter (the project's venv). The plugin's fixtures come from the
``pytest11`` entry point; nothing is imported from the project's ``tests/``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.long  # end-to-end: collected first (tests/conftest.py)

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "testing"
FILES = ("my_agent.py", "test_my_agent.py")


def test_the_documented_example_passes_in_a_directory_of_its_own(tmp_path):
    work = tmp_path / "my-research"
    work.mkdir()
    for name in FILES:
        shutil.copy(EXAMPLE / name, work / name)
    assert not (ROOT in work.parents or work == ROOT)
    sources = "\n".join((work / name).read_text(encoding="utf-8") for name in FILES)
    assert not re.search(r"^\s*(from|import)\s+(tests|stub_server|conftest|reference_othello)\b", sources, re.MULTILINE)
    assert all(fixture in sources for fixture in ("scripted_model", "stub_server", "arena_run", "arena_match", 'FaultSpec.parse("0.2'))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER")}
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-rA"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "4 passed" in result.stdout
    assert not (work / "runs").exists()  # the run helper wrote into pytest's tmp_path, not the user's directory
