"""W=1 plays game for game, call for call, the run recorded before adaptation in waves existed.

The golden files in ``tests/golden/waves/`` were written by this module (``GOLDEN_UPDATE=1``)
before the wave code was added: one small llm-policy run (mock/random-legal, whose moves
follow from each prompt, so a change in the memory a prompt carries changes the games) and one
llm-strategist run (mock/reasoner, batches of 4), both under the referee. Each line is a game
(phase, index, moves, discs, rewards, failures) or a model call (phase, game, ply, attempt, the
SHA-256 of its messages, the reply, verdict, tokens), in file order. Wall-clock fields and the
fields added since (``wave``, ``memory_version``) are not compared.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from harness.testing.runs import RunResult, run_arena
from tests.golden_files import check_golden

GOLDEN_DIR = Path(__file__).resolve().parents[2] / "golden" / "waves"

CASES: dict[str, dict[str, Any]] = {
    "llm-policy": dict(model="mock/random-legal", env=21, budget=6, eval_games=2, seed=4, checkpoints=(2, 6)),
    "llm-strategist": dict(
        model="mock/reasoner", agent="llm-strategist", env=12, budget=8, eval_games=2, seed=2, batch=4, search_depth=2, checkpoints=(4, 8)
    ),
}


def wave_one(case: dict[str, Any]) -> dict[str, Any]:
    """The case with W=1 where the config knows waves (it did not when the golden files were written)."""
    from harness.runs.llm_config import LlmRunConfig

    return {**case, "wave": 1} if "wave" in LlmRunConfig.model_fields else case


def run_lines(result: RunResult) -> list[str]:
    """The run as compared lines: every game, then every call, each as sorted JSON."""
    lines = [
        {
            "game": game.phase,
            "index": game.game_index,
            "moves": list(game.moves),
            "discs": [game.black_discs, game.white_discs],
            "rewards": list(game.rewards),
            "forfeit_by": game.forfeit_by,
            "failures": game.failures.model_dump(),
            "black": game.black,
            "white": game.white,
            "opponent": game.opponent,
            "calls": list(game.call_indices or ()),
        }
        for game in result.games
    ]
    lines += [
        {
            "call": call.call_index,
            "phase": call.phase,
            "index": call.game_index,
            "ply": call.ply,
            "attempt": call.attempt,
            "messages": hashlib.sha256(json.dumps(call.messages, sort_keys=True).encode()).hexdigest(),
            "reply": call.reply,
            "verdict": call.verdict,
            "parsed": call.parsed_move,
            "tokens": [call.tokens_in, call.tokens_out],
        }
        for call in result.calls
    ]
    return [json.dumps(line, sort_keys=True) for line in lines]


@pytest.mark.parametrize("name", sorted(CASES))
def test_wave_one_plays_the_recorded_run(name: str, tmp_path: Path) -> None:
    check_golden(name, run_lines(run_arena(out=tmp_path, **wave_one(CASES[name]))), GOLDEN_DIR / f"{name}.jsonl")
