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
- ``arena_match`` / ``arena_tournament``: ``arena_match("greedy", "llm-policy:model=mock/echo",
  env=0, games=2)`` / ``arena_tournament(["greedy", "random"], envs=[0, 5])`` play ``arena match`` /
  ``arena tournament`` there (:class:`~harness.testing.tournaments.TournamentRunResult`).
- ``arena_bench``: ``arena_bench(["interval"], envs=[5], budget=3, games=1)``, an ``arena bench
  paper --quick``-sized run there (:class:`~harness.testing.bench_runs.BenchRunResult`).

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
    from harness.testing.bench_runs import BenchRunResult
    from harness.testing.runs import RunResult
    from harness.testing.stub_server import StubServer
    from harness.testing.tournaments import TournamentRunResult

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


@pytest.fixture
def arena_match(tmp_path: Path) -> Callable[..., TournamentRunResult]:
    """``arena_match(A, B, env=0, games=2, ...)``: :func:`harness.testing.tournaments.play_match` into ``tmp_path / "runs"``."""
    from harness.testing.tournaments import play_match

    def run(agent_a: str, agent_b: str, **options: Any) -> TournamentRunResult:
        options.setdefault("out", tmp_path / "runs")
        return play_match(agent_a, agent_b, **options)

    return run


@pytest.fixture
def arena_tournament(tmp_path: Path) -> Callable[..., TournamentRunResult]:
    """``arena_tournament(agents, envs=(0,), vs=None, ...)``: :func:`harness.testing.tournaments.play_tournament`."""
    from harness.testing.tournaments import play_tournament

    def run(agents: Any, **options: Any) -> TournamentRunResult:
        options.setdefault("out", tmp_path / "runs")
        return play_tournament(agents, **options)

    return run


@pytest.fixture
def arena_bench(tmp_path: Path) -> Callable[..., BenchRunResult]:
    """``arena_bench(agents, envs=(5,), suite=None, budget=..., games=...)``: :func:`harness.testing.bench_runs.play_bench_paper`."""
    from harness.testing.bench_runs import play_bench_paper

    def run(agents: Any = ("interval",), **options: Any) -> BenchRunResult:
        options.setdefault("out", tmp_path / "runs")
        return play_bench_paper(agents, **options)

    return run
