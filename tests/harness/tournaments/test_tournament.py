"""Tournaments: deterministic whatever the number of workers, every game recorded, results that add up."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.base import Agent
from agents.spec import AgentEntry, AgentSpecError
from harness.registry import specs as agent_registry
from harness.registry.specs import registry
from harness.tournaments.plan import GameFailed, Pairing, TournamentError, make_plan, round_robin, versus
from harness.tournaments.results import PRIVILEGED_NOTE, Rates, TournamentResults
from harness.tournaments.tournament import check_run_dir, read_games, run_tournament

ENVS = (0, 5)
GAMES = 4


def _tiny_plan(seed: int = 7):
    return make_plan(round_robin(["random", "greedy"]), ENVS, GAMES, seed)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory) -> tuple[Path, TournamentResults]:
    """random vs greedy on envs 0 and 5, 4 games each, in this process."""
    run_dir = tmp_path_factory.mktemp("runs") / "tiny"
    return run_dir, run_tournament(_tiny_plan(), run_dir, jobs=1, command="test")


def _lines_without_timing(run_dir: Path) -> list[dict]:
    lines = [json.loads(text) for text in (run_dir / "games.jsonl").read_text().splitlines()]
    for line in lines:
        del line["seconds"]
    return sorted(lines, key=lambda line: (line["env_id"], line["pairing"], line["game"]))


def test_one_worker_and_two_workers_give_the_same_games(tiny_run, tmp_path):
    run_dir, results = tiny_run
    parallel = run_tournament(_tiny_plan(), tmp_path / "two", jobs=2, command="test")
    assert parallel == results
    assert (tmp_path / "two" / "results.json").read_text() == (run_dir / "results.json").read_text()
    assert _lines_without_timing(tmp_path / "two") == _lines_without_timing(run_dir)


def test_every_game_is_one_json_line(tiny_run):
    run_dir, _ = tiny_run
    lines = read_games(run_dir)
    assert len(lines) == len((run_dir / "games.jsonl").read_text().splitlines()) == len(ENVS) * GAMES
    assert {(line.env_id, line.game) for line in lines} == {(env, game) for env in ENVS for game in range(GAMES)}
    for line in lines:
        assert (line.agent_a, line.agent_b) == ("random", "greedy")
        assert line.a_colour == ("black" if line.game % 2 == 0 else "white")
        assert (line.black, line.white) == (("random", "greedy") if line.a_colour == "black" else ("greedy", "random"))
        assert line.a_reward == line.rewards[0 if line.a_colour == "black" else 1]
        assert line.plies == len(line.moves) > 0
        assert line.black_discs + line.white_discs > 0
        assert line.seed == 7 and not line.privileged and line.simulator == {}


def test_run_directory_files(tiny_run):
    run_dir, results = tiny_run
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    assert manifest["games_played"] == manifest["total_games"] == len(ENVS) * GAMES
    assert manifest["envs"] == list(ENVS) and manifest["seed"] == 7 and manifest["jobs"] == 1
    assert {"python", "numpy", "numba"} <= set(manifest["versions"])
    assert manifest["command"] == "test" and manifest["privileged_agents"] == []
    assert TournamentResults.model_validate_json((run_dir / "results.json").read_text()) == results
    markdown = (run_dir / "results.md").read_text()
    assert "| random | greedy | overall | 8 |" in markdown
    assert "## Per environment" in markdown and PRIVILEGED_NOTE not in markdown


def _assert_consistent(rates: Rates) -> None:
    assert rates.win + rates.draw + rates.lose == rates.games
    assert rates.win_rate == pytest.approx(rates.win / rates.games)
    for outcome in ("win", "draw", "lose"):
        low, high = getattr(rates, f"{outcome}_ci")
        assert 0 <= low <= getattr(rates, f"{outcome}_rate") <= high <= 1


def test_results_add_up(tiny_run):
    run_dir, results = tiny_run
    lines = read_games(run_dir)
    (overall,) = results.over_envs
    assert [row.env_id for row in results.per_env] == list(ENVS)
    for row in (*results.per_env, overall):
        for rates in (row.overall, row.a_black, row.a_white):
            _assert_consistent(rates)
        assert row.a_black.tally.games == row.a_white.tally.games == row.overall.games // 2
        for field in ("win", "draw", "lose"):
            assert getattr(row.a_black, field) + getattr(row.a_white, field) == getattr(row.overall, field)
    for field in ("games", "win", "draw", "lose"):
        assert sum(getattr(row.overall, field) for row in results.per_env) == getattr(overall.overall, field)
    assert overall.overall.win == sum(line.a_reward == 1 for line in lines)
    assert overall.a_black.lose == sum(line.a_reward == -1 and line.a_colour == "black" for line in lines)


def test_games_depend_on_the_pairing_not_on_the_rest_of_the_tournament(tiny_run, tmp_path):
    run_dir, _ = tiny_run
    plan = make_plan(versus(["random"], ["greedy", "corner"]), [5], GAMES, 7)
    run_tournament(plan, tmp_path / "wider", jobs=1)
    wider = [line for line in _lines_without_timing(tmp_path / "wider") if line["agent_b"] == "greedy"]
    alone = [line for line in _lines_without_timing(run_dir) if line["env_id"] == 5]
    assert wider == alone
    run_tournament(_tiny_plan(seed=8), tmp_path / "seed8", jobs=1)
    moves = [line["moves"] for line in _lines_without_timing(run_dir)]
    assert [line["moves"] for line in _lines_without_timing(tmp_path / "seed8")] != moves


def test_privileged_agents_are_granted_a_recorded_simulator(tmp_path):
    plan = make_plan(versus(["mcts:n=4"], ["random"]), [0], 2, 0)
    results = run_tournament(plan, tmp_path / "mcts", jobs=1)
    assert results.privileged_agents == ("mcts:n=4",)
    assert results.over_envs[0].a_privileged and not results.over_envs[0].b_privileged
    assert any(PRIVILEGED_NOTE in note for note in results.notes)
    for line in read_games(tmp_path / "mcts"):
        assert line.privileged and set(line.simulator) == {"a"}
        assert line.simulator["a"].grants and line.simulator["a"].uses >= 1
    markdown = (tmp_path / "mcts" / "results.md").read_text()
    assert "mcts:n=4\\*" in markdown and PRIVILEGED_NOTE in markdown
    assert json.loads((tmp_path / "mcts" / "manifest.json").read_text())["privileged_agents"] == ["mcts:n=4"]


def test_pairings():
    assert round_robin(["random", "greedy", "corner"]) == (
        Pairing("random", "greedy"),
        Pairing("random", "corner"),
        Pairing("greedy", "corner"),
    )
    assert versus(["greedy"], ["random", "greedy"]) == (Pairing("greedy", "random"), Pairing("greedy", "greedy"))
    with pytest.raises(TournamentError, match="at least two agents"):
        round_robin(["random"])
    with pytest.raises(TournamentError, match="listed twice"):
        round_robin(["random", "greedy", "random"])


def test_bad_specs_and_plans():
    with pytest.raises(AgentSpecError, match="valid agents: .*random"):
        round_robin(["random", "nonesuch"])
    with pytest.raises(AgentSpecError, match="no parameter"):
        versus(["random:depth=3"], ["greedy"])
    with pytest.raises(TournamentError, match="games"):
        make_plan(round_robin(["random", "greedy"]), [0], 0, 0)
    with pytest.raises(TournamentError, match="seed"):
        make_plan(round_robin(["random", "greedy"]), [0], 1, -1)


def test_a_value_the_agent_rejects_is_a_spec_error():
    with pytest.raises(AgentSpecError, match="mcts:n=0"):
        make_plan(versus(["mcts:n=0"], ["random"]), [0], 1, 0)


def test_a_used_run_directory_is_refused(tmp_path):
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "games.jsonl").write_text("")
    with pytest.raises(TournamentError, match="not empty"):
        check_run_dir(tmp_path / "used")
    with pytest.raises(TournamentError, match="not empty"):
        run_tournament(_tiny_plan(), tmp_path / "used", jobs=1)
    check_run_dir(tmp_path / "fresh")
    assert not (tmp_path / "fresh").exists()


class _Crashing(Agent):
    name = "crashing"

    def act(self, observation):
        raise RuntimeError("boom")


def test_a_failing_game_stops_the_run_and_is_named(tmp_path, monkeypatch):
    """In-process: an agent registered in this process only (player processes would not know it; see test_refereed)."""
    registry()  # load the families first, so the entry below is not overwritten
    monkeypatch.setitem(agent_registry._REGISTRY, "crashing", AgentEntry("crashing", _Crashing, "raises"))
    plan = make_plan(versus(["crashing"], ["random"]), [0], 2, 0, referee=False)
    with pytest.raises(GameFailed, match="env 0, crashing vs random, game 0: RuntimeError: boom"):
        run_tournament(plan, tmp_path / "crash", jobs=1)
    manifest = json.loads((tmp_path / "crash" / "manifest.json").read_text())
    assert manifest["status"] == "failed" and "boom" in manifest["error"] and manifest["games_played"] == 0
