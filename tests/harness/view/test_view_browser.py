"""`arena view` pages in Debian's headless Chromium: no JavaScript errors, the board of game 0 ply 10 read from the
DOM is the engine's position, the prompt shown for a ply is calls.jsonl's, keyboard stepping, a screenshot each.

Skipped, with the reason, where no chromium can run (``make browser-tools`` installs it).
"""

from __future__ import annotations

import json

from harness.view.build import write_view

SHOWN = "document.body && document.body.dataset.firstGameShown"
READY = "document.body && document.body.dataset.ready"
DOM_BOARD = "Array.from(document.querySelectorAll('#board .cell')).map(c => c.dataset.state).join('')"


def open_page(browser, page_path, query=""):
    page = browser.new_page()
    page.goto(page_path.as_uri() + query)
    page.wait_for(READY)
    return page


def test_an_arena_run_page_shows_the_engines_board_and_the_recorded_prompts(engine_cells, browser, llm_run, tmp_path):
    written = write_view(llm_run, tmp_path / "run.html")
    page = open_page(browser, written.page, "?game=0")
    page.wait_for(SHOWN)
    page.evaluate("arenaView.setPly(10)")
    assert page.evaluate("document.getElementById('board').dataset.ply") == "10"
    game = json.loads((llm_run / "games.jsonl").read_text().splitlines()[0])
    assert page.evaluate(DOM_BOARD) == engine_cells(3, game["moves"][:10])
    recorded = [json.loads(line) for line in (llm_run / "calls.jsonl").read_text().splitlines()]
    at_ply = [c for c in recorded if c["game_index"] == 0 and c["phase"] == "adapt" and c["ply"] == 10]
    assert at_ply
    for call in at_ply:
        shown = page.evaluate(f"document.querySelector('.call[data-call-index=\"{call['call_index']}\"] .prompt').textContent")
        assert shown == call["messages"][-1]["content"]
        reply = page.evaluate(f"document.querySelector('.call[data-call-index=\"{call['call_index']}\"] .reply').textContent")
        assert reply == call["reply"]
    page.evaluate("document.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowRight'}))")
    assert page.evaluate("document.getElementById('board').dataset.ply") == "11"
    assert page.evaluate(DOM_BOARD) == engine_cells(3, game["moves"][:11])
    page.evaluate("document.dispatchEvent(new KeyboardEvent('keydown', {key: 'End'}))")
    assert page.evaluate(DOM_BOARD) == engine_cells(3, game["moves"])
    page.screenshot(tmp_path / "game.png")
    page.evaluate("arenaView.showTab('overview')")
    assert page.evaluate("document.querySelectorAll('#overview svg').length") >= 3
    assert page.evaluate("document.querySelector('#outcomes').textContent").count("random") == 1
    page.screenshot(tmp_path / "overview.png")
    page.evaluate("arenaView.showTab('extra')")
    page.wait_for("document.querySelectorAll('#extra .call').length")
    assert page.errors == []
    assert (tmp_path / "game.png").read_bytes()[:4] == b"\x89PNG" and (tmp_path / "overview.png").stat().st_size > 5000


def test_a_tournament_and_a_paper_page_load_without_errors(engine_cells, browser, tournament_run, paper_run, tmp_path):
    written = write_view(tournament_run, tmp_path / "t.html")
    page = open_page(browser, written.page, "?game=0")
    page.wait_for(SHOWN)
    page.evaluate("arenaView.setPly(10)")
    game = json.loads((tournament_run / "games.jsonl").read_text().splitlines()[0])
    assert page.evaluate(DOM_BOARD) == engine_cells(0, game["moves"][:10])
    recorded = [json.loads(line) for line in (tournament_run / "calls.jsonl").read_text().splitlines()]
    first = [c for c in recorded if (c["env_id"], c["pairing"], c["game"]) == (game["env_id"], game["pairing"], game["game"])]
    for call in first:
        if call["ply"] == 10:
            shown = page.evaluate(f"document.querySelector('.call[data-call-index=\"{call['call_index']}\"] .prompt').textContent")
            assert shown == call["messages"][-1]["content"]
    page.screenshot(tmp_path / "tournament.png")
    assert page.errors == []
    paper = open_page(browser, write_view(paper_run, tmp_path / "p.html").page)
    assert "fake-adaptive vs Random" in paper.evaluate("document.querySelector('#outcomes').textContent")
    assert paper.evaluate("document.querySelectorAll('#overview svg').length") >= 1
    paper.screenshot(tmp_path / "paper.png")
    assert paper.errors == [] and (tmp_path / "paper.png").stat().st_size > 5000


def test_a_page_with_a_script_error_is_caught(browser, tmp_path):
    """The check above could fail: a page that throws is reported by the driver."""
    page_path = tmp_path / "broken.html"
    page_path.write_text("<!doctype html><body><script>document.body.dataset.ready = '1'; undefinedFunction();</script></body>")
    page = open_page(browser, page_path)
    page.wait_for("1")
    assert any("undefinedFunction" in error for error in page.errors)


def test_a_cwm_page_plots_the_programs_utility_with_the_true_k_after_the_run(browser, cwm_run, tmp_path):
    """The engine path's utility table as a plot (agent.json's utility_curve), the true K drawn once metrics.json has it."""
    run = cwm_run  # the end-to-end cwm run (env 40), played once for the tests that read it (tests/conftest.py)
    curve = json.loads((run / "agent.json").read_text())["counts"]["utility_curve"]
    assert len(curve) == 41 and curve[0][0] == 0 and curve[-1][0] == 1  # 6x8 with 8 obstacles: 40 discs at the end
    page = open_page(browser, write_view(run, tmp_path / "cwm.html").page)
    page.evaluate("arenaView.showTab('extra')")
    page.wait_for("document.querySelectorAll('#extra svg').length")
    title = page.evaluate("document.querySelector('#extra .plot-title').textContent")
    assert title.startswith("The program's return (black) against black's final share") and "2144" not in title
    assert "true K 0.2" in page.evaluate("document.querySelector('#extra svg').textContent")
    page.screenshot(tmp_path / "cwm.png")
    assert page.errors == []
