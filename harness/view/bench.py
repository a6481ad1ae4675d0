"""``arena bench view``: how fast a large run's page opens in headless Chromium.

Writes a synthetic run (:mod:`harness.view.synthetic`; 2,000 games and 100,000 model calls by default), writes its
page, then opens it in Debian's headless Chromium a few times with a fresh tab and reports the time from the start
of navigation to the first game shown (the page's own ``performance.now()`` when game 0's board is drawn), and
the sizes of the page and its chunks. Figures, never asserted in tests.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from harness.view.browser import Browser
from harness.view.build import write_view
from harness.view.synthetic import write_synthetic_run

FIRST_GAME_SHOWN = "document.body && document.body.dataset.firstGameShown"


@dataclass(frozen=True)
class ViewBench:
    games: int
    calls: int
    calls_bytes: int
    generate_s: float
    build_s: float
    page_bytes: int
    chunk_bytes: int
    first_game_ms: tuple[float, ...]  # per opening, from navigation start

    def lines(self) -> list[str]:
        median = statistics.median(self.first_game_ms)
        return [
            f"run: {self.games:,} games, {self.calls:,} model calls ({self.calls_bytes / 2**20:.0f} MiB of calls.jsonl); "
            f"generated in {self.generate_s:.1f} s",
            f"arena view: page {self.page_bytes / 1024:.0f} KiB + chunks {self.chunk_bytes / 2**20:.1f} MiB, "
            f"written in {self.build_s:.1f} s",
            f"first game shown (headless Chromium, navigation start to game 0's board): median {median:.0f} ms over "
            f"{len(self.first_game_ms)} openings ({', '.join(f'{ms:.0f}' for ms in self.first_game_ms)} ms)",
        ]


def bench_view(work_dir: Path, games: int = 2000, calls: int = 100_000, openings: int = 5) -> ViewBench:
    """Generate the run in ``work_dir``, write its page, open it ``openings`` times; the figures."""
    run_dir = work_dir / "synthetic-run"
    started = time.perf_counter()
    if not (run_dir / "games.jsonl").exists():
        write_synthetic_run(run_dir, games=games, calls=calls)
    generated = time.perf_counter() - started
    started = time.perf_counter()
    written = write_view(run_dir)
    built = time.perf_counter() - started
    times = []
    with Browser() as browser:
        for _ in range(openings):
            page = browser.new_page()
            page.goto(written.page.as_uri() + "?game=0")
            times.append(float(page.wait_for(FIRST_GAME_SHOWN, timeout_s=120)))
            if page.errors:
                raise RuntimeError(f"the page reported errors: {page.errors[:3]}")
    return ViewBench(
        written.games,
        written.calls,
        (run_dir / "calls.jsonl").stat().st_size,
        generated,
        built,
        written.page_bytes,
        written.chunk_bytes,
        tuple(times),
    )
