"""A tiny run and a tiny tournament directory for the fast replay / rerun tests (not a test module).

``make_tiny_run``: 2 adaptation games and 1 evaluation game of mock/first-legal on env 21, played
in-process (no referee process), in well under a second once the kernels are compiled.
``write_tournament``: a hand-written ``arena tournament`` directory whose games are given as
(env, moves, black discs, white discs, rewards), so replay's tournament path needs no games played.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from record_tamper import SMALL_RUN

from harness.runs.llm_run import LlmRunConfig, run_llm
from harness.tournaments.plan import GameLine

TINY_RUN = {**SMALL_RUN, "budget": 2, "eval_games": 1, "checkpoints": (2,), "referee": False}


def make_tiny_run(out: Path) -> Path:
    """The tiny run in ``out/t``."""
    return run_llm(LlmRunConfig(**TINY_RUN), out=out, run_id="t")


def copy_run(run_dir: Path, into: Path) -> Path:
    """A copy of ``run_dir`` under ``into`` (named like it), for one test to damage."""
    return Path(shutil.copytree(run_dir, into / run_dir.name))


def game_records(run_dir: Path) -> list[dict]:
    """The records of ``games.jsonl``, in file order."""
    return [json.loads(row) for row in (run_dir / "games.jsonl").read_text(encoding="utf-8").splitlines()]


def game_line(env_id: int | str, game: int, moves: list[int], black: int, white: int, rewards: tuple[int, int]) -> str:
    """One tournament ``games.jsonl`` line (random as A, black, against greedy)."""
    return GameLine(env_id=env_id, env_name=str(env_id), pairing=0, game=game, agent_a="random", agent_b="greedy",
                    a_colour="black", black="random", white="greedy", moves=tuple(moves), plies=len(moves),
                    black_discs=black, white_discs=white, rewards=rewards, a_reward=rewards[0], seed=0, game_seed=game,
                    privileged=False, seconds=0.0).model_dump_json()


def write_tournament(directory: Path, lines: list[str], manifest: object | None = None) -> Path:
    """A tournament directory holding ``lines`` as its games file and ``manifest`` (default: kind tournament)."""
    directory.mkdir(parents=True, exist_ok=True)
    body = {"kind": "tournament"} if manifest is None else manifest
    (directory / "manifest.json").write_text(json.dumps(body), encoding="utf-8")
    (directory / "games.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return directory
