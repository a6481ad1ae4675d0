"""Shared pytest setup: ``tests/`` importable (for ``reference_othello``), the hypothesis profile, long tests first."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

# Test modules import ``reference_othello`` at collection time, before any fixture
# could run, so the path is set here at import; pytest's default "prepend" import
# mode does the same, this keeps it true under ``--import-mode=importlib`` too.
TESTS_DIR = str(Path(__file__).resolve().parent)
if TESTS_DIR not in sys.path:
    sys.path.insert(0, TESTS_DIR)

# "ci" (the default): no per-example deadline (the first call of a numba kernel
# compiles it) and a bounded number of examples; "thorough" for a long local hunt.
settings.register_profile("ci", deadline=None, max_examples=40, print_blob=True)
settings.register_profile("thorough", deadline=None, max_examples=1000, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def cwm_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The end-to-end cwm run (``tests/harness/runs/test_cwm_run.py``'s ``config()``: env 40, mock/coder), played
    once per test process for the tests that only read it (its report, replay and rerun, the resume's reference, the
    viewer's page); skipped where bubblewrap cannot run. A test that changes a run plays its own.
    """
    from harness.runs.llm_run import run_llm
    from harness.sandbox.command import bubblewrap_problem
    from tests.harness.runs.test_cwm_run import config

    if bubblewrap_problem() is not None:
        pytest.skip(f"bubblewrap cannot run: {bubblewrap_problem()}")
    return run_llm(config(), out=tmp_path_factory.mktemp("cwm-run"), run_id="r")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``long`` (end-to-end runs of many seconds) first, in their order, then the rest.

    ``make test`` runs the suite on several xdist workers, which take tests in collection order:
    started first, the long ones run side by side while the short ones fill the gaps, instead of
    one of them holding a worker alone at the end.
    """
    items.sort(key=lambda item: item.get_closest_marker("long") is None)
