"""Planning on the engine, scored by the program: the cwm agent's fast path.

The rules of play are public and the engine implements them exactly; what a
code world model must discover is the reward, and the benchmark's reward
depends only on the final disc counts. So once a program passes every
transition test, the agent asks its sandbox once (the ``returns_table``
planner op, one round trip) for the program's ``returns`` at every final count
pair the layout allows (``black + white`` from 1 to the playable cells: games
that fill the board, and games that end with empty cells, by a turn limit or
with no move for either side), checks every answer (two finite numbers in
[-1, 1], one pair per count pair; anything else is a classified failure of the
candidate, which then keeps the program path), and plans with the project's
numba MCTS and alpha-beta kernels, the table as their terminal utility.

:class:`UtilityTable` holds the program's returns from each colour's view
(``[own, opp]``, the kernels' convention). :class:`EnginePlanner` picks moves
with it: MCTS (random rollouts to the end of the game, scored by the table) or
iterative-deepening alpha-beta with an exact solve near the end.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.base import AgentContext
from agents.interval.agent import IntervalConfig, Searcher, best_share_centre, final_total, play_weights
from agents.search.api import SearchTables
from agents.search.features import weights_array
from agents.search.mcts import search as mcts_search
from engine.protocol.observation import Observation
from engine.rules import Rules
from engine.state import PASS
from harness.cwm.world import Step, comparable, state_json
from harness.sandbox.client import SandboxWorker
from harness.sandbox.failures import Failure, FailureKind

TRANSITIONS = ("engine", "program")
ENDGAME_EMPTIES = 10  # minimax on the table solves exactly at this many empty cells or fewer
_RETURN_BOUND = 1.0 + 1e-9  # returns are in [-1, 1]; a rounding error past it is not a failure


@dataclass(frozen=True)
class UtilityTable:
    """The program's returns at every final count pair: ``by_colour[c][own, opp]`` is colour ``c``'s return."""

    by_colour: tuple[np.ndarray, np.ndarray]
    pairs: int

    def for_colour(self, colour: int) -> np.ndarray:
        return self.by_colour[colour]

    @property
    def symmetric(self) -> bool:
        """Whether both colours get the same return for the same own and opponent counts."""
        return bool(np.array_equal(self.by_colour[0], self.by_colour[1]))

    def describe(self) -> str:
        """The table's shape, as the report prints it."""
        black = self.by_colour[0]
        side = black.shape[0]
        values = sorted({round(float(v), 6) for v in np.concatenate([t.ravel() for t in self.by_colour])})
        shown = ", ".join(f"{v:g}" for v in values[:6]) + (", ..." if len(values) > 6 else "")
        colours = "the same for both colours" if self.symmetric else "different for black and white"
        return f"{self.pairs} final count pairs ({side}x{side}), returns in {{{shown}}}, {colours}"

    def curve(self, total: int) -> list[list[float]]:
        """Black's return against black's final share, for games ending with ``total`` discs (the viewer's plot)."""
        return [[round(own / total, 4), float(self.by_colour[0][own, total - own])] for own in range(total + 1)]

    def returns(self, black: int, white: int) -> tuple[float, float]:
        """The program's returns (black, white) for final counts."""
        return float(self.by_colour[0][black, white]), float(self.by_colour[1][white, black])


def table_request(rules: Rules) -> dict[str, Any]:
    """The ``returns_table`` arguments for a layout: the empty board, its playable cells, placements at a turn limit."""
    layout = rules.layout
    state = state_json(rules, rules.initial_state())
    template = [3 if value == 3 else 0 for value in state["board"]]
    playable = [index for index, value in enumerate(template) if value != 3]
    limit = rules.turn_limit
    short: list[int] | None = None
    if limit is not None:
        short = [limit, limit] if rules.turn_counting == "per_player" else [limit - limit // 2, limit // 2]
    assert len(playable) == layout.cells - len(layout.obstacles)
    return {"state": {**state, "board": template}, "playable": playable, "short_placed": short}


def count_pairs(playable: int) -> list[tuple[int, int]]:
    """(black, white) for every final count pair, in the order ``returns_table`` answers them."""
    return [(black, white) for black in range(playable + 1) for white in range(playable + 1 - black) if black + white > 0]


def read_table(rules: Rules, answer: Any, pairs: list[tuple[int, int]]) -> UtilityTable | Failure:
    """The table from a ``returns_table`` answer, or a ``bad_output`` failure naming the first bad entry."""
    rows = answer.get("returns") if isinstance(answer, dict) else None
    if not isinstance(rows, list) or len(rows) != len(pairs):
        got = f"{len(rows)} entries" if isinstance(rows, list) else type(rows).__name__
        return Failure(FailureKind.BAD_OUTPUT, f"returns_table: expected {len(pairs)} pairs of returns, got {got}")
    side = rules.layout.cells + 1
    black, white = np.zeros((side, side)), np.zeros((side, side))
    for (b, w), row in zip(pairs, rows):
        if not isinstance(row, list) or len(row) != 2 or not all(_valid_return(v) for v in row):
            return Failure(FailureKind.BAD_OUTPUT, f"returns at {b} black, {w} white: {str(row)[:80]} (want two numbers in [-1, 1])")
        black[b, w] = max(-1.0, min(1.0, float(row[0])))
        white[w, b] = max(-1.0, min(1.0, float(row[1])))
    for table in (black, white):
        table.flags.writeable = False
    return UtilityTable((black, white), len(pairs))


def _valid_return(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and abs(value) <= _RETURN_BOUND


def utility_table(worker: SandboxWorker, rules: Rules) -> UtilityTable | Failure:
    """Ask the program once for its returns at every final count pair; the checked table or why not."""
    request = table_request(rules)
    result = worker.plan("returns_table", **request)
    if not result.ok:
        assert result.failure is not None
        return result.failure
    return read_table(rules, result.value, count_pairs(len(request["playable"])))


class EnginePlanner:
    """Moves chosen by the project's kernels on the engine, finished games scored by a program's utility table."""

    def __init__(self, context: AgentContext, table: UtilityTable, planner: str, depth: int, uct_c: float) -> None:
        self.rules, self.table, self.planner, self.depth, self.uct_c = context.rules, table, planner, depth, uct_c
        self._searchers: dict[int, Searcher] = {}
        self._tables: SearchTables | None = None

    def move(self, observation: Observation, simulations: int, rng: np.random.Generator) -> int:
        """The planned move for the player to move (a lone legal move without a search)."""
        legal = sorted(observation.legal_moves)
        if len(legal) == 1:
            return int(legal[0])
        colour = observation.state.to_move
        if self.planner == "minimax":
            return self._searcher(colour).move(observation, rng)
        seed = int(rng.integers(1, 2**63))
        found = mcts_search(self.rules, self.table.for_colour(colour), observation.state, simulations, self.uct_c, -1, False, seed)
        best = sorted(found.most_visited())
        return int(best[int(rng.integers(len(best)))]) if best else PASS

    def _searcher(self, colour: int) -> Searcher:
        """The interval agent's search (alpha-beta, exact near the end) on this colour's utility, its evaluation
        weights chosen for the final share the utility rewards most."""
        if colour not in self._searchers:
            rules, settings = self.rules, IntervalConfig()
            if self._tables is None:
                self._tables = SearchTables(rules.layout)
            utility = np.array(self.table.for_colour(colour))
            centre = best_share_centre(utility, final_total(rules))
            weights = weights_array(dict(play_weights(centre, rules.turn_limit is not None)))
            depth = self.depth if rules.turn_limit is None else max(self.depth, settings.limit_depth)
            self._searchers[colour] = Searcher(  # from ``depth``, deeper while the next iteration fits the interval agent's nodes
                self._tables, utility, weights, depth, settings.endgame, settings.limit_plies, settings.nodes, settings.exact_nodes
            )
        return self._searchers[colour]


class PhaseTimes(dict[str, float]):
    """Wall seconds of a cwm agent by phase: synthesis (with all tests), held-out tests, the utility table, planning."""

    def add(self, phase: str, seconds: float) -> None:
        self[phase] = self.get(phase, 0.0) + seconds

    def report(self) -> dict[str, float]:
        """By phase, rounded; synthesis without the held-out tests run inside it."""
        times = dict(self)
        if "synthesis" in times:
            times["synthesis"] = max(0.0, times["synthesis"] - times.get("held-out tests", 0.0))
        return {phase: round(times[phase], 1) for phase in ("synthesis", "held-out tests", "utility table", "planning") if phase in times}


class PathChooser:
    """Which path each program plans on, the utility tables asked for (once per program), and the record reported."""

    def __init__(self, context: AgentContext, config: Any, seconds: PhaseTimes) -> None:
        """``config``: the agent's CwmConfig (its transitions, planner, depth and uct_c); ``seconds``: where the table's time goes."""
        self.context, self.transitions, self.seconds = context, config.transitions, seconds
        self.planner, self.depth, self.uct_c = config.planner, config.depth, config.uct_c
        self.engine: EnginePlanner | None = None  # set while the current program plans on the engine
        self.record: list[dict[str, Any]] = []  # each change of program or path: when, which call, which path, why
        self.heldout: dict[str, float | None] = {}  # per program source: its held-out transition accuracy
        self.table_text: str | None = None  # the shape of the table planned with
        self.curve: list[list[float]] | None = None  # its utility against the final share on a full board
        self._tables: dict[str, UtilityTable | Failure] = {}

    def choose(self, worker: SandboxWorker, source: str, call: int, train: float | None, games_played: int) -> Failure | None:
        """Set the path for the program ``source`` (its worker, the call that wrote it, its training transition accuracy);
        the failure that refused its utility table, if one did (it then plans on the program)."""
        path, why = path_for(self.transitions, train, self.heldout.get(source))
        refused = None
        if path == "engine":
            started = time.perf_counter()
            fresh = source not in self._tables
            if fresh:
                self._tables[source] = utility_table(worker, self.context.rules)
            table = self._tables[source]
            self.seconds.add("utility table", time.perf_counter() - started)
            if isinstance(table, Failure):
                refused = table if fresh else None
                path, why = "program", f"its returns table was refused: {table.kind.value}: {table.message}"[:300]
            else:
                self.table_text, self.curve = table.describe(), table.curve(final_total(self.context.rules))
                self.engine = EnginePlanner(self.context, table, self.planner, self.depth, self.uct_c)
        if path == "program":
            self.engine = None
        if not self.record or (self.record[-1]["call"], self.record[-1]["path"]) != (call, path):
            self.record.append({"games_played": games_played, "call": call, "path": path, "why": why})
        return refused


def path_for(transitions: str, train: float | None, heldout: float | None) -> tuple[str, str]:
    """``engine`` when asked for and the program passed every transition test (its training and held-out accuracy, those
    known, all 1), else ``program``; with the reason the report prints."""
    if transitions == "program":
        return "program", "--cwm-transitions program"
    known = [value for value in (train, heldout) if value is not None]
    if known and all(value == 1.0 for value in known):
        return "engine", "it passed every transition test"
    shown = ", ".join(f"{name} {value:.3f}" for name, value in (("train", train), ("held-out", heldout)) if value is not None)
    return "program", f"it failed transition tests ({shown or 'none run'})"


def spot_check(worker: SandboxWorker, rules: Rules, observation: Observation, move: int) -> Step | None:
    """The program's legal moves and successor for ``move`` against the engine's: None when they agree, else the step
    as the engine played it (a new transition test)."""
    state, after = observation.state, rules.play(observation.state, move)
    shown = state_json(rules, state)
    legal, moved = worker.call_many([("legal_actions", [shown]), ("apply_action", [shown, move])])
    agrees = (
        legal.ok
        and isinstance(legal.value, list)
        and sorted(legal.value) == sorted(observation.legal_moves)
        and moved.ok
        and comparable(moved.value) == comparable(state_json(rules, after))
    )
    if agrees:
        return None
    return Step(-1, observation.move_number, state, move, tuple(sorted(observation.legal_moves)), after, rules.is_over(after))
