"""`arena view` without a browser: what the page and its chunks hold for each kind of run, the CLI, the live server."""

from __future__ import annotations

import json
import threading
import urllib.request

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from harness.records.transcript import TranscriptWriter
from harness.view.build import chunk_dir_of, chunk_name, write_view
from harness.view.data import ViewIndex, read_chunk_script
from harness.view.serve import make_server, server_url


def page_index(page) -> ViewIndex:
    text = page.read_text(encoding="utf-8")
    start = text.index('id="arena-index">') + len('id="arena-index">')
    return ViewIndex.model_validate_json(text[start : text.index("</script>", start)].replace("<\\/", "</"))


def chunk(page, chunk_id):
    return read_chunk_script((chunk_dir_of(page) / chunk_name(chunk_id)).read_text(encoding="utf-8"))


def calls_of(run_dir):
    return [json.loads(line) for line in (run_dir / "calls.jsonl").read_text(encoding="utf-8").splitlines()]


def test_an_arena_run_page_holds_every_game_its_boards_and_calls(engine_cells, llm_run, tmp_path):
    written = write_view(llm_run, tmp_path / "page.html")
    index = page_index(written.page)
    assert index.kind == "llm" and len(index.games) == written.games == 4
    assert index.title.startswith("llm-policy (W=1) with mock/random-legal")  # W beside a model agent's name everywhere
    assert [(g.phase, g.index) for g in index.games] == [("adapt", 0), ("adapt", 1), ("eval", 0), ("eval", 1)]
    calls = calls_of(llm_run)
    assert written.calls == len(calls) and index.overview["usage"]["calls"] == len(calls)
    assert [row["label"] for row in index.overview["outcomes"]["rows"]] == ["random"]
    assert index.overview["outcomes"]["rows"][0]["games"] == 2
    game = chunk(written.page, 0)
    for ply in (0, 10, len(game["moves"])):
        assert game["boards"][ply]["cells"] == engine_cells(3, game["moves"][:ply])
    recorded = [c for c in calls if c["game_index"] == 0 and c["phase"] == "adapt"]
    assert [c["call_index"] for c in game["calls"]] == [c["call_index"] for c in recorded]
    assert [c["messages"] for c in game["calls"]] == [c["messages"] for c in recorded]
    assert index.extra_chunk  # the belief call at checkpoint 2 is outside any game
    assert [c["call_index"] for c in chunk(written.page, "x")["calls"]] == [c["call_index"] for c in calls if c["game_index"] is None]
    assert "https://" not in written.page.read_text() and "http://" not in written.page.read_text()  # nothing from a network


def test_a_tournament_page_keys_calls_by_game_and_a_paper_page_shows_its_outcomes(engine_cells, tournament_run, paper_run, tmp_path):
    written = write_view(tournament_run, tmp_path / "t.html")
    index = page_index(written.page)
    assert index.kind == "tournament" and len(index.games) == 2
    calls = calls_of(tournament_run)
    for summary in index.games:
        game = chunk(written.page, summary.id)
        line = game["record"]
        mine = [c["call_index"] for c in calls if (c["env_id"], c["pairing"], c["game"]) == (line["env_id"], line["pairing"], line["game"])]
        assert [c["call_index"] for c in game["calls"]] == mine and mine
        assert game["boards"][-1]["cells"] == engine_cells(0, game["moves"])
    paper = page_index(write_view(paper_run, tmp_path / "p.html").page)
    assert paper.kind == "paper" and paper.games == ()
    rows = paper.overview["outcomes"]["rows"]
    assert [r["label"] for r in rows] == ["fake-adaptive vs Random"] and rows[0]["games"] == 10
    low, high = rows[0]["win"][2:]
    assert 0 <= low <= rows[0]["win"][1] <= high <= 1
    assert [p[0] for p in paper.overview["checkpoints"][0]["points"]] == [10, 50, 100, 200]


def test_the_cli_writes_the_page_and_names_a_bad_directory(llm_run, tmp_path):
    result = CliRunner().invoke(app, ["view", str(llm_run), "--out", str(tmp_path / "v.html")])
    assert result.exit_code == 0, result.output
    assert "wrote" in result.output and (tmp_path / "v.data" / "g00000.js").exists()
    result = CliRunner().invoke(app, ["view", str(tmp_path / "missing")])
    assert result.exit_code == 2 and "no such run directory" in result.output and "Traceback" not in result.output
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(app, ["view", str(tmp_path / "empty")])
    assert result.exit_code == 2 and "no manifest.json" in result.output
    result = CliRunner().invoke(app, ["view", str(llm_run), "--serve", "--port", "70000"])
    assert result.exit_code == 2 and "--port 70000" in result.output


def test_the_live_server_shows_games_as_they_land(tmp_path):
    from harness.view.synthetic import write_synthetic_run

    run_dir = write_synthetic_run(tmp_path / "live", games=2, calls=20)
    server, _ = make_server(run_dir, port=0, folder=tmp_path / "served")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = server_url(server)
        assert server.server_address[0] == "127.0.0.1"
        first = json.loads(urllib.request.urlopen(url + "index.json", timeout=30).read())
        assert len(first["games"]) == 2 and first["live"] is True
        page = urllib.request.urlopen(url, timeout=30).read().decode()
        assert 'id="arena-index"' in page
        assert urllib.request.urlopen(url + "view.data/g00001.js", timeout=30).read().startswith(b"window.arenaChunk(")
        more = write_synthetic_run(tmp_path / "more", games=3, calls=30)
        with TranscriptWriter(run_dir, resume=True) as writer:  # the run goes on: a third game lands
            from harness.records.transcript import TranscriptReader

            third = TranscriptReader(more).games()[2]
            writer.append_game(third.model_copy(update={"call_indices": ()}))
        after = json.loads(urllib.request.urlopen(url + "index.json", timeout=30).read())
        assert len(after["games"]) == 3
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("games, calls", [(3, 10), (2, 7)])
def test_a_synthetic_run_has_the_calls_asked_for_and_replays(tmp_path, games, calls):
    from harness.runs.replay import replay_run
    from harness.view.synthetic import write_synthetic_run

    run_dir = write_synthetic_run(tmp_path / "s", games=games, calls=calls)
    written = write_view(run_dir)
    assert written.games == games and written.calls == games * (calls // games)
    report = replay_run(run_dir)
    assert not report.mismatches, report.summary()
