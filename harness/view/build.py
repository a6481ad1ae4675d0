"""Writing the viewer: one HTML page (styles, script and index inlined) and a folder of per-game chunks beside it.

``RUN/view.html`` and ``RUN/view.data/`` by default (``--out FILE``: ``FILE`` and ``FILE``'s stem + ``.data``).
The page opens from ``file://`` with no network: chunks are scripts it adds when a game is opened.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from engine import make_env
from engine.rules import Rules
from harness.view.boards import game_boards
from harness.view.data import GameChunk, GameSummary, ViewIndex, chunk_script
from harness.view.overview import overview
from harness.view.sources import CallIndex, RunSource, SourceGame, index_calls, read_run

PAGE_NAME = "view.html"
_STATIC = ("page.html", "viewer.css", "viewer.js")


@dataclass(frozen=True)
class ViewWritten:
    """What :func:`write_view` wrote."""

    page: Path
    chunk_dir: Path
    games: int
    calls: int
    page_bytes: int
    chunk_bytes: int
    index: ViewIndex


def default_page(run_dir: Path) -> Path:
    return run_dir / PAGE_NAME


def chunk_dir_of(page: Path) -> Path:
    return page.with_name(page.stem + ".data")


def chunk_name(chunk_id: int | str) -> str:
    return f"g{chunk_id:05d}.js" if isinstance(chunk_id, int) else f"{chunk_id}.js"


def write_view(run_dir: str | Path, out: str | Path | None = None, *, live: bool = False, keep_chunks: bool = False) -> ViewWritten:
    """Write the page of ``run_dir`` (any kind of run) to ``out`` (default ``RUN/view.html``) and its chunks beside it.

    ``keep_chunks``: a game whose chunk is already there is not written again (a live run's finished games never
    change: their calls are written before them).
    """
    source = read_run(run_dir)
    page = Path(out) if out is not None else default_page(source.run_dir)
    chunks = chunk_dir_of(page)
    if chunks.exists() and not keep_chunks:
        shutil.rmtree(chunks)
    chunks.mkdir(parents=True, exist_ok=True)
    calls = index_calls(source)
    summaries, chunk_bytes = [], 0
    rules: dict[int | str, Rules] = {}
    strategies = sorted(source.extras.get("strategies") or [], key=lambda line: int(line.get("batch_start", 0)))
    for game in source.games:
        offsets = calls.by_game.get(game.call_key, [])
        target = chunks / chunk_name(game.id)
        if keep_chunks and target.exists():
            summaries.append(_summary(game, len(offsets)))
            continue
        if game.env_id not in rules:
            rules[game.env_id] = make_env(game.env_id).rules  # type: ignore[arg-type, unused-ignore]  # a key, where supported
        game_rules = rules[game.env_id]
        game_calls = calls.read(offsets)
        chunk = GameChunk(
            id=game.id,
            rows=game_rules.layout.rows,
            cols=game_rules.layout.cols,
            moves=game.moves,
            boards=game_boards(game_rules, game.moves),
            record=game.record,
            calls=tuple(game_calls),
            strategy=_strategy_for(game, strategies),
        )
        chunk_bytes += _write(target, chunk_script(game.id, chunk.model_dump(mode="json")))
        summaries.append(_summary(game, len(game_calls)))
    extra = _extra(source, calls)
    if extra is not None:
        chunk_bytes += _write(chunks / chunk_name("x"), chunk_script("x", extra))
    index = ViewIndex(
        kind=source.kind,
        title=source.title(),
        run_dir=str(source.run_dir),
        overview=overview(source, calls),
        games=tuple(summaries),
        chunk_dir=chunks.name,
        extra_chunk=extra is not None,
        live=live,
    )
    page_bytes = _write(page, render_page(index))
    return ViewWritten(page, chunks, len(summaries), int(calls.totals.get("calls", 0)), page_bytes, chunk_bytes, index)


def render_page(index: ViewIndex) -> str:
    """The HTML page with its styles, script and ``index`` inlined."""
    static = {name: resources.files("harness.view").joinpath("static", name).read_text(encoding="utf-8") for name in _STATIC}
    data = index.model_dump_json().replace("</", "<\\/")
    return (
        static["page.html"]
        .replace("/*STYLE*/", static["viewer.css"])
        .replace("/*INDEX*/", data)
        .replace("/*SCRIPT*/", static["viewer.js"])
        .replace("{{TITLE}}", _escape(index.title))
    )


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _write(path: Path, text: str) -> int:
    data = text.encode("utf-8")
    path.write_bytes(data)
    return len(data)


def _summary(game: SourceGame, calls: int) -> GameSummary:
    colour = game.agent_colour
    own, other = (game.white_discs, game.black_discs) if colour == "white" else (game.black_discs, game.white_discs)
    reward = game.rewards[1] if colour == "white" else game.rewards[0]
    return GameSummary(
        id=game.id,
        phase=game.phase,
        index=game.index,
        env_id=game.env_id,
        layout=game.layout,
        black=game.black,
        white=game.white,
        opponent=game.opponent,
        plies=len(game.moves),
        black_discs=game.black_discs,
        white_discs=game.white_discs,
        rewards=game.rewards,
        agent_reward=reward,
        agent_rho=own / (own + other) if own + other else 0.0,
        calls=calls,
        forfeit_by=game.forfeit_by,
    )


def _strategy_for(game: SourceGame, strategies: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The llm-strategist's strategy in force for ``game``: the last batch begun by it (evaluation: the final one)."""
    chosen = None
    for line in strategies:
        if game.phase == "adapt" and int(line.get("batch_start", 0)) > game.index:
            break
        chosen = line
    return chosen


def _extra(source: RunSource, calls: CallIndex) -> dict[str, Any] | None:
    """Chunk ``x``: the calls outside games (beliefs, strategies, programs), the strategies, the cwm agent's report."""
    outside = calls.read(calls.outside)
    strategies = source.extras.get("strategies") or []
    report = source.extras.get("agent_report")
    if not outside and not strategies and not report:
        return None
    return {"calls": outside, "strategies": strategies, "agent_report": report}
