"""A run killed while writing beliefs.jsonl or strategies.jsonl resumes to the files an uninterrupted run writes."""

from __future__ import annotations

import json

import pytest
from run_checks import Killed

from harness.records.transcript import TranscriptReader
from harness.runs.llm_run import BELIEFS_FILE, STRATEGIES_FILE, LlmRunConfig, run_llm

pytestmark = pytest.mark.long  # end-to-end: collected first (tests/conftest.py)

POLICY = dict(agent="llm-policy", model="mock/first-legal", env=21, budget=8, eval_games=0, seed=0, checkpoints=(2, 5))
STRATEGIST = dict(agent="llm-strategist", model="mock/reasoner", env=12, budget=12, batch=4, eval_games=0, seed=0, checkpoints=(4, 8))


@pytest.fixture(scope="module")
def whole_run(tmp_path_factory):
    """The uninterrupted run of some settings, played once for the cases that share them (the strategist's two logs)."""
    played = {}

    def whole(settings):
        key = settings["agent"]
        if key not in played:
            played[key] = run_llm(LlmRunConfig(**settings), out=tmp_path_factory.mktemp("whole"), run_id="r")
        return played[key]

    return whole


def _lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize(
    ("settings", "aux", "last_game"), [(POLICY, BELIEFS_FILE, 4), (STRATEGIST, STRATEGIES_FILE, 7), (STRATEGIST, BELIEFS_FILE, 7)]
)
def test_a_torn_last_line_of_an_auxiliary_log_is_repaired_on_resume(whole_run, tmp_path, settings, aux, last_game):
    """Killed while writing the line that follows game ``last_game`` (a belief at a checkpoint, a batch's strategy)."""
    config = LlmRunConfig(**settings)
    whole = whole_run(settings)

    def hook(entry):
        if entry.phase == "adapt" and entry.game_index == last_game:
            raise Killed

    with pytest.raises(Killed):
        run_llm(config, out=tmp_path / "cut", run_id="r", on_game=hook)
    cut = tmp_path / "cut" / "r"
    written, expected = (cut / aux).read_text(encoding="utf-8"), (whole / aux).read_text(encoding="utf-8")
    assert expected.startswith(written) and len(expected) > len(written)
    next_line = expected[len(written) :].splitlines()[0]
    with (cut / aux).open("a", encoding="utf-8") as handle:  # the kill came halfway through writing it
        handle.write(next_line[: len(next_line) // 2])
    with pytest.warns(UserWarning, match="incomplete last line"):
        run_llm(resume=cut)
    assert _lines(cut / aux) == _lines(whole / aux)
    assert TranscriptReader(cut).games() == TranscriptReader(whole).games()
    assert json.loads((cut / "metrics.json").read_text())["adapt_games"] == settings["budget"]
