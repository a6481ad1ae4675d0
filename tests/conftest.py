"""Shared pytest setup: ``tests/`` importable (for ``reference_othello``) and the hypothesis profile."""

from __future__ import annotations

import os
import sys
from pathlib import Path

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
