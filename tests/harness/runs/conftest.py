"""Fixtures of the replay tests: one small mock-model run per test process, and a copy of it for each test to damage."""

from __future__ import annotations

import shutil

import pytest
from record_tamper import SMALL_RUN

from harness.runs.llm_run import LlmRunConfig, run_llm


@pytest.fixture(scope="session")
def base_run(tmp_path_factory):
    """10 adaptation games and 2 evaluation games of mock/first-legal on env 21 (12 games, 660 calls).

    Played once per test process for the five modules that read it; read-only (a test that damages it takes ``run_dir``).
    """
    return run_llm(LlmRunConfig(**SMALL_RUN), out=tmp_path_factory.mktemp("runs"), run_id="r")


@pytest.fixture
def run_dir(base_run, tmp_path):
    copy = tmp_path / "r"
    shutil.copytree(base_run, copy)
    return copy


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """One tiny run per test module (``tiny_run.make_tiny_run``); tests damage copies of it (``run``)."""
    from tiny_run import make_tiny_run

    return make_tiny_run(tmp_path_factory.mktemp("tiny"))


@pytest.fixture
def run(tiny, tmp_path):
    """A copy of the module's tiny run, this test's to damage."""
    from tiny_run import copy_run

    return copy_run(tiny, tmp_path)
