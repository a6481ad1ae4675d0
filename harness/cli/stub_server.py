"""``arena stub-server``: the tests' OpenAI-compatible stub server, by hand, to try a run against a flaky endpoint.

It listens on 127.0.0.1 (``--port``, 0: any free port), answers each chat request with a
legal move read from the prompt (as a function call, or a JSON object, when the request asks for
one), after ``--latency`` seconds, and injects the faults of
``--faults SPEC`` (:mod:`harness.testing.faults`: ``0.2``, ``0.2:rate_limit+illegal``,
``rate_limit=0.1,stall=0.02``). It prints where it listens and the model string to use,
then one line per request (its index and what it got), until Ctrl-C or ``--requests`` requests.
Point a run at it: ``arena run --model openai/stub-model --api-base URL ...`` (with any
``OPENAI_API_KEY``; the stub checks nothing).

``arena calls-to-script RUN --out FILE``: the replies of a run's model calls as a script
(:mod:`harness.testing.scripts`), which ``arena run --model mock/script:FILE`` answers
from, playing the run again move for move.
"""

from __future__ import annotations

import threading
from pathlib import Path

import typer
from rich.console import Console

from harness.cli.console import stdout_console
from harness.testing.faults import FaultSpec, FaultSpecError
from harness.testing.scripts import write_calls_script
from harness.testing.stub_server import LegalMoves, StubServer


def stub_server(
    port: int = typer.Option(0, "--port", help="Port on 127.0.0.1 (0: any free port; the one taken is printed)."),
    latency: float = typer.Option(0.0, "--latency", min=0.0, help="Seconds before every answer."),
    faults: str = typer.Option(
        "0",
        "--faults",
        metavar="SPEC",
        help="Share of requests that meet a fault: 0.2 (every kind), "
        "0.2:rate_limit+illegal, or rate_limit=0.1,stall=0.02. Kinds: rate_limit (429 with "
        "Retry-After), server_error (500), stall, malformed (not JSON), truncated, illegal (a move "
        "that is not legal); for moves asked as a function call or a JSON object: no_call, other_function, "
        "bad_arguments (all: every kind); a careless model's habits: noise, wrong_key, extra_call.",
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the fault draws and of the legal move picked."),
    retry_after: float = typer.Option(1.0, "--retry-after", min=0.0, help="Seconds the 429 answers ask a client to wait."),
    stall_s: float = typer.Option(60.0, "--stall-s", min=0.0, help="Seconds a stalled request is held unanswered."),
    requests: int = typer.Option(None, "--requests", min=1, help="Stop after this many requests (default: until Ctrl-C)."),
) -> None:
    """Run an OpenAI-compatible stub model endpoint on 127.0.0.1 with latency and injected faults."""
    try:
        spec = FaultSpec.parse(faults, seed=seed)
    except FaultSpecError as error:
        raise typer.BadParameter(f"--faults: {error}") from None
    console = stdout_console()
    server = StubServer(responder=LegalMoves(seed), port=port, faults=spec, latency_s=latency, retry_after=retry_after, stall_s=stall_s)
    try:
        server.start()
    except OSError as error:
        raise typer.BadParameter(f"--port {port}: cannot listen on 127.0.0.1:{port} ({error.strerror or error})") from None
    console.print(
        f"listening on {server.url} (api base); model: {server.model}; faults: {spec.describe()}; latency {latency:g} s",
        markup=False,
        soft_wrap=True,
    )
    console.print(
        f"try: arena run --model {server.model} --api-base {server.url} --env 0 --budget 2 --eval-games 2 (any OPENAI_API_KEY)",
        markup=False,
        soft_wrap=True,
    )
    shown, tick = 0, threading.Event()
    try:
        while requests is None or shown < requests or server.in_flight:
            tick.wait(0.1)
            shown = _show(console, server, shown)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        _show(console, server, shown)
        met = ", ".join(f"{kind}={count}" for kind, count in sorted(server.faults_met.items())) or "none"
        console.print(f"stopped after {len(server.requests)} request(s); faults met: {met}", markup=False)


def _show(console: Console, server: StubServer, shown: int) -> int:
    """Print the requests not shown yet (index, the fault met or ok); returns how many are shown."""
    records = list(server.requests)
    for index, record in enumerate(records[shown:], shown + 1):
        console.print(f"request {index}: {record.get('fault', 'ok')}", markup=False)
    return len(records)


def calls_to_script(
    run_dir: Path = typer.Argument(..., help="The run directory whose calls.jsonl holds the replies."),
    out: Path = typer.Option(..., "--out", help="The JSONL script to write (for --model mock/script:FILE)."),
) -> None:
    """Write a run's model replies as a script: arena run --model mock/script:FILE (same options) replays the run."""
    path, lines = write_calls_script(run_dir, out)
    stdout_console().print(
        f"wrote {lines} scripted repl{'y' if lines == 1 else 'ies'} to {path}; replay with: arena run "
        f"--model mock/script:{path} and the run's other options",
        markup=False,
        soft_wrap=True,
    )
