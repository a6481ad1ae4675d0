"""Testing your own agents, prompts and analyses with mocked models: the public testing API.

Everything a user's test needs, under one name (the pytest plugin :mod:`harness.testing.plugin`
hands out the same objects as fixtures; ``docs/testing-with-mocks.md`` has a complete example):

- :class:`ScriptedModel` (replies from a list, a callable of the request, or a JSONL file;
  ``requests`` records each request's messages and parameters; ``failures={call: kind}``
  injects any kind of the failure taxonomy, :data:`INJECTABLE_KINDS`), :class:`ScriptLine`,
  :class:`RecordedRequest`, :func:`load_script`, :func:`write_script`;
- :class:`StubServer`, an OpenAI-compatible server on 127.0.0.1 (``arena stub-server`` by hand)
  with latency, :class:`FaultSpec` fault injection and a request log, and its behaviours
  (:func:`ok`, :func:`rate_limit`, :func:`server_error`, :func:`stall`, :func:`malformed`,
  :func:`truncated`), :class:`LegalMoves`, :func:`free_port`;
- :func:`run_arena` (an ``arena run`` into a directory, returned parsed as a :class:`RunResult`:
  manifest, config, games and calls as the project's pydantic records, metrics, report),
  :func:`read_run`; :func:`play_match` / :func:`play_tournament` (``arena match`` /
  ``arena tournament``, returned as a :class:`TournamentRunResult`: ``TournamentResults``,
  ``GameLine`` games, model calls), :func:`read_tournament_run`; :func:`play_bench_paper`
  (``arena bench paper --quick``-sized, returned as a :class:`BenchRunResult`: ``PaperPlan``,
  ``EnvAgentResult`` pairs, ``PaperSummary``, report), :func:`read_bench_run`;
- :func:`script_from_calls` / :func:`write_calls_script` (``arena calls-to-script``): a run's
  replies as a script, so ``--model mock/script:FILE`` plays it again move for move.

A harness part at the top, below ``cli``: may import ``engine``, ``agents`` and every other
harness part. Names are loaded on first use, so importing this package (or the plugin) is cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.models.replies import INJECTABLE_KINDS, TAXONOMY_KINDS, MockExhausted
    from harness.models.script import RecordedRequest, ScriptedModel, ScriptError, ScriptLine, load_script, write_script
    from harness.testing.bench_runs import BenchRunResult, play_bench_paper, read_bench_run
    from harness.testing.faults import FAULT_KINDS, FaultSpec, FaultSpecError
    from harness.testing.runs import RunResult, read_run, run_arena
    from harness.testing.scripts import script_from_calls, write_calls_script
    from harness.testing.stub_server import (
        Behaviour,
        LegalMoves,
        StubServer,
        free_port,
        malformed,
        ok,
        rate_limit,
        server_error,
        stall,
        truncated,
    )
    from harness.testing.tournaments import TournamentRunResult, play_match, play_tournament, read_tournament_run

_HOMES = {
    "harness.models.replies": ("INJECTABLE_KINDS", "TAXONOMY_KINDS", "MockExhausted"),
    "harness.models.script": ("RecordedRequest", "ScriptedModel", "ScriptError", "ScriptLine", "load_script", "write_script"),
    "harness.testing.faults": ("FAULT_KINDS", "FaultSpec", "FaultSpecError"),
    "harness.testing.runs": ("RunResult", "read_run", "run_arena"),
    "harness.testing.tournaments": ("TournamentRunResult", "play_match", "play_tournament", "read_tournament_run"),
    "harness.testing.bench_runs": ("BenchRunResult", "play_bench_paper", "read_bench_run"),
    "harness.testing.scripts": ("script_from_calls", "write_calls_script"),
    "harness.testing.stub_server": (
        "Behaviour",
        "LegalMoves",
        "StubServer",
        "free_port",
        "malformed",
        "ok",
        "rate_limit",
        "server_error",
        "stall",
        "truncated",
    ),
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}
__all__ = [
    "FAULT_KINDS",
    "INJECTABLE_KINDS",
    "TAXONOMY_KINDS",
    "BenchRunResult",
    "Behaviour",
    "FaultSpec",
    "FaultSpecError",
    "LegalMoves",
    "MockExhausted",
    "RecordedRequest",
    "RunResult",
    "ScriptError",
    "ScriptLine",
    "ScriptedModel",
    "StubServer",
    "TournamentRunResult",
    "free_port",
    "load_script",
    "malformed",
    "ok",
    "play_bench_paper",
    "play_match",
    "play_tournament",
    "rate_limit",
    "read_bench_run",
    "read_run",
    "read_tournament_run",
    "run_arena",
    "script_from_calls",
    "server_error",
    "stall",
    "truncated",
    "write_calls_script",
    "write_script",
]
assert sorted(__all__) == sorted(_MODULE_OF), "every public name has one home"


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use (``harness.testing.run_arena`` pulls in the run machinery)."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'harness.testing' has no attribute {name!r}; public names: {', '.join(__all__)}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
