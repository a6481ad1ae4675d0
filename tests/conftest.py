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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``long`` (end-to-end runs of many seconds) first, in their order, then the rest.

    ``make test`` runs the suite on several xdist workers, which take tests in collection order:
    started first, the long ones run side by side while the short ones fill the gaps, instead of
    one of them holding a worker alone at the end.
    """
    items.sort(key=lambda item: item.get_closest_marker("long") is None)
