"""Tournaments under the referee: the same games as in-process, player processes reused, failures named.

Under the referee every unprivileged agent is built and asked for its moves in a
player process (one per side and worker); the game loop and K stay here. These
tests show that nothing of the games changes with that (seeds and colours are
preserved), and that an agent that crashes, raises, returns a bad move or breaks
the protocol stops the run with an error naming the game and the agent, with
the games before it kept in games.jsonl.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.spec import AgentSpecError
from engine import make_env
from engine.protocol.observation import observe
from harness.referee.seats import AgentFailed, Seat, Seats
from harness.registry import specs
from harness.registry.importing import PLUGINS_ENV
from harness.registry.plugins import load_plugins
from harness.tournaments.plan import GameFailed, make_plan, play_task, round_robin, versus
from harness.tournaments.results import UNENFORCED_NOTE
from harness.tournaments.tournament import IN_PROCESS_MODE, REFEREE_MODE, read_games, run_tournament

PLUGIN = Path(__file__).parents[1] / "referee" / "tournament_cheaters.py"
SEEDED = ["random", "greedy", "positional", "minimax:depth=1", "mcts:n=8"]  # mcts: privileged, on the referee's side


@pytest.fixture
def plugin(monkeypatch) -> Path:
    _fresh_registry(monkeypatch)
    load_plugins([PLUGIN])
    return PLUGIN


def _fresh_registry(monkeypatch) -> None:
    """Start from the registry a new process has and leave no plugin agent behind (other tests list the agents)."""
    for name, empty in (("_REGISTRY", {}), ("_ORIGINS", {}), ("_collected", []), ("_installed", [])):
        monkeypatch.setattr(specs, name, empty)
    monkeypatch.setenv(PLUGINS_ENV, "")  # --plugin / load_plugins set it for the processes they start


def _lines_without_timing(run_dir: Path) -> list[dict]:
    lines = [json.loads(text) for text in (run_dir / "games.jsonl").read_text().splitlines()]
    for line in lines:
        del line["seconds"]
    return sorted(lines, key=lambda line: (line["env_id"], line["pairing"], line["game"]))


def test_referee_and_in_process_play_the_same_games(tmp_path):
    pairings = round_robin(SEEDED)
    refereed = run_tournament(make_plan(pairings, [0, 30], 2, 11), tmp_path / "referee", jobs=1)
    in_process = run_tournament(make_plan(pairings, [0, 30], 2, 11, referee=False), tmp_path / "local", jobs=1)
    games = _lines_without_timing(tmp_path / "referee")
    assert len(games) == 10 * 2 * 2 and games == _lines_without_timing(tmp_path / "local")
    assert {line["privileged"] for line in games} == {True, False}
    assert refereed.enforced and not in_process.enforced
    assert refereed.per_env == in_process.per_env and refereed.over_envs == in_process.over_envs
    assert UNENFORCED_NOTE in in_process.notes and UNENFORCED_NOTE not in refereed.notes


def test_the_manifest_and_results_say_which_mode(tmp_path):
    plan = make_plan(versus(["greedy"], ["random"]), [0], 1, 0)
    run_tournament(plan, tmp_path / "referee", jobs=1)
    run_tournament(make_plan(plan.pairings, [0], 1, 0, referee=False), tmp_path / "local", jobs=1)
    assert json.loads((tmp_path / "referee" / "manifest.json").read_text())["referee"] == REFEREE_MODE
    assert json.loads((tmp_path / "local" / "manifest.json").read_text())["referee"] == IN_PROCESS_MODE
    assert "UNENFORCED" in IN_PROCESS_MODE and "UNENFORCED" not in REFEREE_MODE
    assert UNENFORCED_NOTE in (tmp_path / "local" / "results.md").read_text()
    assert "UNENFORCED" not in (tmp_path / "referee" / "results.md").read_text()


def test_a_seat_builds_a_fresh_agent_per_game_in_one_process():
    env = make_env(0)
    seat = Seat("a")
    try:
        first = seat.new_game(env.rules, "random", 5, 0).act(_observation(env))
        for _ in range(3):
            assert seat.new_game(env.rules, "random", 5, 0).act(_observation(env)) == first  # same seed, same move
        assert seat.started == 1
    finally:
        seat.close()


def test_a_seat_starts_a_new_process_after_a_crash(plugin):
    env = make_env(0)
    seat = Seat("a")
    try:
        player = seat.new_game(env.rules, "crash:colour=black,after=0", 0, 0, "A, black")
        with pytest.raises(
            AgentFailed,
            match=r"'crash:colour=black,after=0' \(A, black\): its player process exited "
            r"with code 3",
        ):
            player.act(_observation(env))
        assert seat.new_game(env.rules, "random", 0, 0).act(_observation(env)) in env.rules.legal_moves(env.rules.initial_state())
        assert seat.started == 2
    finally:
        seat.close()


def _observation(env):
    return observe(env.rules, env.rules.initial_state())


@pytest.mark.parametrize(
    "how, reason",
    [
        ("exit", "its player process exited with code 3"),
        ("raise", "failed to choose a move: RuntimeError: boom"),
        ("type", "failed to choose a move: TypeError: act\\(\\) returned 'd3'"),
        ("wire", "broke the referee's protocol: op 'move': field 'move' must be an integer"),
    ],
)
def test_a_failing_agent_stops_the_run_naming_the_game_and_the_agent(plugin, tmp_path, how, reason):
    """The agent fails in game 1 (its first game as white); game 0 stays in games.jsonl."""
    plan = make_plan(versus([f"crash:how={how}"], ["greedy"]), [7], 3, 0)
    spec = plan.pairings[0].a
    with pytest.raises(
        GameFailed,
        match=rf"^env 7, {spec} vs greedy, game 1: AgentFailed: agent '{spec}' "
        rf"\(A, white\): {reason}",
    ):
        run_tournament(plan, tmp_path / "run", jobs=1)
    assert [line.game for line in read_games(tmp_path / "run")] == [0]
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "failed" and manifest["games_played"] == 1 and "game 1" in manifest["error"]


def test_a_failing_agent_in_a_worker_is_named_too(plugin, tmp_path):
    plan = make_plan(versus(["random"], ["crash:colour=black"]), [0], 4, 0)
    with pytest.raises(
        GameFailed,
        match=r"env 0, random vs crash:colour=black, game [13]: AgentFailed: agent "
        r"'crash:colour=black' \(B, black\): its player process exited with code 3",
    ):
        run_tournament(plan, tmp_path / "run", jobs=2)
    assert all(line.game % 2 == 0 for line in read_games(tmp_path / "run"))  # only games it played as white
    assert json.loads((tmp_path / "run" / "manifest.json").read_text())["status"] == "failed"


def test_an_agent_the_player_process_cannot_build_is_a_spec_error_before_anything_is_written(tmp_path):
    plan = make_plan(versus(["minimax:depth=0"], ["random"]), [0], 1, 0)  # built here only in-process
    with pytest.raises(AgentSpecError, match=r"minimax depth=0: give a whole number >= 1"):
        run_tournament(plan, tmp_path / "run", jobs=1)
    assert not (tmp_path / "run").exists()
    with pytest.raises(AgentSpecError, match=r"minimax depth=0"):
        make_plan(plan.pairings, [0], 1, 0, referee=False)


def test_one_shared_player_process_plays_the_same_games_as_two(tmp_path):
    plan = make_plan(round_robin(["random", "greedy", "positional"]), [0], 2, 3)
    with Seats() as two, Seats(shared=True) as one:
        per_side = [play_task(task, two) for task in plan.tasks()]
        shared = [play_task(task, one) for task in plan.tasks()]
        assert (two.a.started, two.b.started, one.a.started) == (1, 1, 1) and one.b is one.a
    assert [line.model_copy(update={"seconds": 0.0}) for line in shared] == [line.model_copy(update={"seconds": 0.0}) for line in per_side]
