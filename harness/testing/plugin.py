"""The pytest plugin (entry point ``pytest11``: installing the project is enough): fixtures for mocked models.

- ``scripted_model``: a factory, ``scripted_model(replies, failures={2: "rate_limit"}, ...)``
  -> :class:`~harness.models.script.ScriptedModel` (replies from a list, a callable of the
  request, or a JSONL file path; ``.requests`` records what it was asked).
- ``stub_server``: a running :class:`~harness.testing.stub_server.StubServer` on 127.0.0.1
  (a random free port), answering a legal move from each prompt, reset for each test (one
  server per test module: ``stub_server_module``); set ``.faults = FaultSpec.parse("0.2")``,
  ``.latency_s``, ``.responder``, or ``.enqueue(...)`` replies; ``.requests`` is the log.
  ``OPENAI_API_KEY`` is set to a dummy for the test when it is unset (litellm's openai
  provider wants one; the stub checks nothing). Use ``model=stub_server.model,
  api_base=stub_server.url``.
- ``arena_run``: ``arena_run(model, env=0, budget=2, eval_games=2, ...)`` plays an ``arena run``
  in the test's ``tmp_path`` and returns it parsed (:class:`~harness.testing.runs.RunResult`).

Loading this module imports only pytest and the standard library (the fixtures import the
harness when used), so it costs nothing to a test run that does not use them; litellm is
imported only by a run or a client that calls a real (stub) endpoint.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from harness.models.script import ScriptedModel
    from harness.testing.runs import RunResult
    from harness.testing.stub_server import StubServer

DUMMY_KEY = "stub-key-not-a-secret"


@pytest.fixture
def scripted_model() -> Callable[..., ScriptedModel]:
    """A factory of scripted models: ``scripted_model(["d3", "c4"], failures={1: "timeout"})``."""
    from harness.models.script import ScriptedModel

    def make(replies: Any, **options: Any) -> ScriptedModel:
        return ScriptedModel(replies, **options)

    return make


@pytest.fixture(scope="module")
def stub_server_module() -> Iterator[StubServer]:
    """One stub server for the test module (``stub_server`` resets it for each test)."""
    from harness.testing.stub_server import LegalMoves, StubServer

    with StubServer(responder=LegalMoves()) as server:
        yield server


@pytest.fixture
def stub_server(stub_server_module: StubServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[StubServer]:
    """The module's stub server, reset (requests, queue, faults, responder) before and after the test."""
    if not os.environ.get("OPENAI_API_KEY"):
        monkeypatch.setenv("OPENAI_API_KEY", DUMMY_KEY)
    stub_server_module.reset()
    yield stub_server_module
    stub_server_module.reset()


@pytest.fixture
def arena_run(tmp_path: Path) -> Callable[..., RunResult]:
    """``arena_run(model, **options)``: :func:`harness.testing.runs.run_arena` into ``tmp_path / "runs"``."""
    from harness.testing.runs import run_arena

    def run(model: Any, **options: Any) -> RunResult:
        options.setdefault("out", tmp_path / "runs")
        return run_arena(model, **options)

    return run
