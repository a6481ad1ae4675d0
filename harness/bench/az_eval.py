"""Win rates of an agent (the ``az`` agent by default) on chosen boards, with Wilson intervals, resumable.

Board sets (:data:`BOARD_SETS`): ``check`` is the quick check (standard 8x8,
standard 6x6, and 8x8 with four blocked cells); ``held-out`` is standard 8x8
and three boards no ``az`` training saw, drawn from a seed no training run uses
(8x8 with four random blocked cells, 7x7 with three, a size the training never
plays, and 10x10 with eight); ``benchmark`` is the 7 benchmark layouts (the
obstacle ones are among the training boards). Outcomes use the standard rule
(more discs wins); colours alternate, the agent is black in even games; a draw
is half a win in the rate and the interval is Wilson's. A game's generators are
seeded by (seed, board name, opponent spec, game number), so a game is the same
whichever boards and opponents a call names beside it. ``opening``: the first
``opening`` discs of every game are placed at random (both sides, from the
game's own generator), so that players that are deterministic but for random
ties (``positional``, ``ntuple``) meet in many openings, not only their own.

With a results file every game is appended as one JSON line as soon as it ends
(spec, seed, opening, board, opponent, game number, the agent's reward); a later
call with the same file plays only the games it does not hold yet for that spec,
seed and opening.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from agents.base import AgentContext
from engine.environments import layouts as benchmark_layouts
from engine.environments import make_env
from engine.layout import Layout, standard_layout
from engine.layout_gen import random_layout
from engine.rules import Rules
from harness.bench.league import EpsilonPolicy
from harness.bench.record import WinDrawLoss
from harness.play.game import play_game
from harness.registry.specs import make_agent

HELD_OUT_SEED = 18_018
BOARD_SETS = ("check", "held-out", "benchmark")


@dataclass(frozen=True)
class WinRow:
    """One board and opponent: the agent's wins, draws and losses."""

    board: str
    opponent: str
    record: WinDrawLoss


def held_out_layouts(benchmark: bool = False) -> list[Layout]:
    """Standard 8x8 and three boards from :data:`HELD_OUT_SEED` (module docstring); the benchmark's seven too if asked."""
    rng = np.random.default_rng(HELD_OUT_SEED)
    boards = [
        standard_layout(8, 8, name="Standard 8x8"),
        random_layout(rng, rows=8, cols=8, obstacle_density=4 / 64, name="held-out 8x8, 4 blocked"),
        random_layout(rng, rows=7, cols=7, obstacle_density=3 / 49, name="held-out 7x7, 3 blocked"),
        random_layout(rng, rows=10, cols=10, obstacle_density=8 / 100, name="held-out 10x10, 8 blocked"),
    ]
    return boards + list(benchmark_layouts()) if benchmark else boards


def board_set(name: str) -> list[Layout]:
    """The boards of one of :data:`BOARD_SETS` (module docstring)."""
    if name == "check":
        standard, blocked = held_out_layouts()[:2]
        return [standard, standard_layout(6, 6, name="Standard 6x6"), blocked]
    if name == "held-out":
        return held_out_layouts()
    if name == "benchmark":
        return list(benchmark_layouts())
    raise ValueError(f"board set {name!r}: give one of {', '.join(BOARD_SETS)}")


def read_results(path: Path, spec: str, seed: int, opening: int = 0) -> dict[tuple[str, str, int], float]:
    """The rewards a results file holds for ``spec``, ``seed`` and ``opening``, by (board, opponent, game)."""
    done: dict[tuple[str, str, int], float] = {}
    if not path.is_file():
        return done
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            key = (str(row["board"]), str(row["opponent"]), int(row["game"]))
            if row["spec"] == spec and int(row["seed"]) == seed and int(row.get("opening", 0)) == opening:
                done[key] = float(row["reward"])
        except (ValueError, KeyError, TypeError):
            raise ValueError(f"{path}:{number}: not a line of `arena bench az` results (give a new --out file)") from None
    return done


def win_rates(
    spec: str,
    opponents: list[str],
    boards: list[Layout],
    games: int,
    seed: int = 0,
    on_game: Callable[[], None] | None = None,
    results: Path | None = None,
    opening: int = 0,
) -> list[WinRow]:
    """Play ``games`` games of ``spec`` against each opponent on each board (module docstring).

    ``results``: the JSON-lines file games are appended to and resumed from.
    """
    if games < 1:
        raise ValueError(f"games={games}: give 1 or more")
    if opening < 0:
        raise ValueError(f"opening={opening}: give 0 or more random discs")
    done = read_results(results, spec, seed, opening) if results is not None else {}
    condition = make_env(0).condition  # Majority: more discs wins
    rows = []
    for board in boards:
        rules = Rules(board)
        for opponent in opponents:
            b, o = zlib.crc32(board.name.encode()), zlib.crc32(opponent.encode())
            tally = [0, 0, 0]
            for game in range(games):
                reward = done.get((board.name, opponent, game))
                if reward is None:
                    agent = make_agent(spec, AgentContext(rules), np.random.default_rng([seed, b, o, game, 1]))
                    other = make_agent(opponent, AgentContext(rules), np.random.default_rng([seed, b, o, game, 2]))
                    opener = np.random.default_rng([seed, b, o, game, 3])
                    players = [EpsilonPolicy(agent, 0.0, opener, opening), EpsilonPolicy(other, 0.0, opener, opening)]
                    colour = game % 2
                    black, white = players if colour == 0 else players[::-1]
                    reward = float(play_game(rules, condition, black, white).rewards[colour])
                    if results is not None:
                        with results.open("a") as handle:
                            handle.write(
                                json.dumps(
                                    {
                                        "spec": spec,
                                        "seed": seed,
                                        "opening": opening,
                                        "board": board.name,
                                        "opponent": opponent,
                                        "game": game,
                                        "reward": reward,
                                    }
                                )
                                + "\n"
                            )
                tally[0 if reward > 0 else 1 if reward == 0 else 2] += 1
                if on_game is not None:
                    on_game()
            rows.append(WinRow(board.name, opponent, WinDrawLoss(tally[0], tally[1], tally[2])))
    return rows
