"""``arena view RUN``: one self-contained HTML page of a run; ``arena bench view``: how fast a large one opens.

``arena view RUN [--out FILE] [--open]`` writes ``RUN/view.html`` (or ``FILE``) and its per-game chunks beside it
(``view.data/``), for any run directory: ``arena run`` (llm-policy, llm-strategist, cwm), ``match``, ``tournament``,
``bench paper``. It needs no network and opens from ``file://``. ``--serve [--port P]`` serves the page of a run
that is still being written on 127.0.0.1 instead, showing new games as they land.
"""

from __future__ import annotations

import tempfile
import webbrowser
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from harness.cli.console import stderr_console, stdout_console
from harness.view.bench import bench_view
from harness.view.browser import BrowserError, browser_problem
from harness.view.build import write_view
from harness.view.serve import make_server, server_url


def view(
    run_dir: Annotated[
        Path, typer.Argument(metavar="RUN", show_default=False, help="A run directory: arena run, match, tournament or bench paper.")
    ],
    out: Annotated[
        Path | None,
        typer.Option("--out", metavar="FILE", show_default=False, help="The page to write (default RUN/view.html); chunks go beside it."),
    ] = None,
    open_page: Annotated[bool, typer.Option("--open", help="Open the page in the default browser.")] = False,
    serve: Annotated[bool, typer.Option("--serve", help="Serve the page of a live run on 127.0.0.1 until Ctrl-C.")] = False,
    port: Annotated[int, typer.Option("--port", help="--serve: the port (0: any free one).")] = 8000,
) -> None:
    """Write one self-contained HTML page of a run: overview, plots, every game ply by ply with its model calls."""
    if not 0 <= port <= 65535:
        raise typer.BadParameter(f"--port {port}: give a port 0-65535 (0: any free one)")
    if serve and out is not None:
        raise typer.BadParameter("--serve writes its page to a folder of its own: leave out --out")
    if serve:
        _serve(run_dir, port, open_page)
        return
    written = write_view(run_dir, out)
    console = stdout_console()
    console.print(
        Text(
            f"wrote {written.page} ({written.page_bytes / 1024:.0f} KiB) and {written.games} game chunks in "
            f"{written.chunk_dir} ({written.chunk_bytes / 1024:.0f} KiB; {written.calls} model calls)"
        ),
        soft_wrap=True,
    )
    if open_page:
        webbrowser.open(written.page.resolve().as_uri())


def _serve(run_dir: Path, port: int, open_page: bool) -> None:
    try:
        server, live = make_server(run_dir, port)
    except OSError as error:
        raise typer.BadParameter(f"--port {port}: cannot listen on 127.0.0.1:{port} ({error.strerror}); try another, or --port 0") from None
    url = server_url(server)
    stdout_console().print(Text(f"serving {run_dir} at {url} (live: new games appear as they land); Ctrl-C stops"), soft_wrap=True)
    if open_page:
        webbrowser.open(url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        stderr_console().print(Text("stopped"))
    finally:
        server.server_close()
        del live


def bench_view_command(
    games: Annotated[int, typer.Option("--games", min=1, help="Games of the synthetic run.")] = 2000,
    calls: Annotated[int, typer.Option("--calls", min=1, help="Model calls of the synthetic run.")] = 100_000,
    openings: Annotated[int, typer.Option("--openings", min=1, help="Times the page is opened (fresh tab each).")] = 5,
    work_dir: Annotated[
        Path | None,
        typer.Option(
            "--dir",
            metavar="DIR",
            show_default=False,
            help="Where the synthetic run goes (kept; reused when there). Default: a temporary folder, removed after.",
        ),
    ] = None,
) -> None:
    """Time a synthetic 2,000-game, 100,000-call run's page in headless Chromium: time to the first game shown."""
    problem = browser_problem()
    if problem is not None:
        raise typer.BadParameter(f"bench view needs a headless browser: {problem}")
    console = stdout_console()
    try:
        if work_dir is not None:
            work_dir.mkdir(parents=True, exist_ok=True)
            result = bench_view(work_dir, games, calls, openings)
        else:
            with tempfile.TemporaryDirectory(prefix="arena-bench-view-") as folder:
                result = bench_view(Path(folder), games, calls, openings)
    except BrowserError as error:
        raise typer.BadParameter(f"the browser failed: {error}") from None
    for line in result.lines():
        console.print(Text(line), soft_wrap=True)
