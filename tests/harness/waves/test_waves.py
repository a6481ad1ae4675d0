"""Adaptation in waves: the bounds, a W=16 run (ledger, records, prompts, replay, rerun), resume in the middle of a wave.

The runs use mock/random-legal, whose reply follows from each prompt (seeded by its text), so
two runs whose prompts carry the same memories play the same games whatever order their calls
were answered in. The interrupt is the operator's SIGINT, sent from the run's own game hook (in process, so it lands
between two moves) once the first game of a wave of 16 is written, the others still under way
(mock/flaky-random-legal with no re-asks: games forfeited at different plies).
"""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path
from typing import Any

import pytest

from harness.prompting.waves import Wave, wave_of
from harness.runs.llm_run import LlmRunConfig, RunInterruptedError, run_llm
from harness.runs.replay import replay_run
from harness.runs.rerun import rerun
from harness.testing.runs import RunResult, read_run, run_arena

WAVE_RUN: dict[str, Any] = dict(
    model="mock/random-legal", env=21, budget=20, eval_games=2, seed=6, checkpoints=(10,), wave=16, concurrency=32
)
GAMES_FINISHED = re.compile(r"Games finished: (\d+)\.")


def test_waves_are_cut_at_checkpoints_and_at_the_budget() -> None:
    waves = sorted({wave_of(i, 16, 20, (10,)) for i in range(20)}, key=lambda w: w.start)
    assert waves == [Wave(0, 0, 10), Wave(1, 10, 16), Wave(2, 16, 20)]
    assert [wave_of(i, 1, 5).start for i in range(5)] == [0, 1, 2, 3, 4]  # W=1: every game its own wave
    assert wave_of(7, 4, 9, (6,)) == Wave(2, 6, 8)
    with pytest.raises(ValueError, match="at least one game"):
        wave_of(0, 0, 10)


def _check_waves(result: RunResult, size: int) -> None:
    adapt = result.adapt_games
    config = result.config
    assert [g.game_index for g in adapt] == list(range(config.budget))  # every budgeted game once, in order
    assert result.metrics["adapt_games"] == config.budget
    for game in adapt:
        wave = wave_of(game.game_index, size, config.budget, config.belief_checkpoints())
        assert (game.wave, game.memory_version) == (wave.number, wave.start)
    assert all(g.wave is None and g.memory_version is None for g in result.eval_games)
    memory = {g.game_index: g.memory_version for g in adapt}
    for call in result.calls:  # each move prompt carries the memory of the games before its wave
        if call.phase == "adapt" and call.game_index is not None:
            found = GAMES_FINISHED.search(call.messages[-1]["content"])
            assert found and int(found.group(1)) == memory[call.game_index], call.call_index


def test_a_wave_of_16_plays_every_budgeted_game_once_and_replays(tmp_path: Path) -> None:
    result = run_arena(out=tmp_path / "runs", **WAVE_RUN)
    _check_waves(result, 16)
    assert "llm-policy (W=16)" in result.report
    assert replay_run(result.run_dir).ok
    again = rerun(result.run_dir, tmp_path / "rerun")
    assert again.reproduced, again.summary()


def test_an_interrupt_in_the_middle_of_a_wave_resumes_without_replaying_a_counted_game(tmp_path: Path) -> None:
    # In process (the hook runs between two moves); failed calls forfeit at once, so the games of a wave end at
    # different plies and the first is written while the others are still under way.
    config = LlmRunConfig(
        **{**WAVE_RUN, "checkpoints": (), "referee": False, "model": "mock/flaky-random-legal", "max_retries": 0, "backoff_base_s": 0.01}
    )
    whole = read_run(run_llm(config, out=tmp_path / "whole", run_id="r"))
    written: list[int] = []

    def interrupt_after_the_first(entry: Any) -> None:
        written.append(entry.game_index)
        if entry.phase == "adapt" and len(written) == 1:
            os.kill(os.getpid(), signal.SIGINT)  # the operator's Ctrl-C: no new call or game starts

    with pytest.raises(RunInterruptedError):
        run_llm(config, out=tmp_path / "cut", run_id="r", on_game=interrupt_after_the_first)
    cut = read_run(tmp_path / "cut" / "r")
    kept = [g.game_index for g in cut.adapt_games]
    assert 1 <= len(kept) < 16 and kept == list(range(len(kept)))  # stopped inside the first wave (games 0-15)
    resumed = read_run(run_llm(resume=tmp_path / "cut" / "r"))
    _check_waves(resumed, 16)
    assert [(g.phase, g.game_index, g.moves) for g in resumed.games] == [(g.phase, g.game_index, g.moves) for g in whole.games]
    first_calls = {c.game_index: c.call_index for c in reversed(resumed.calls) if c.phase == "adapt" and c.game_index is not None}
    replayed = [i for i in kept if first_calls[i] >= len(cut.calls)]
    assert not replayed, f"counted games {replayed} were played again after the resume"
