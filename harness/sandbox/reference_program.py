"""A correct code world model of Othello on any layout, in the shape a model must write: the sandbox's yardstick.

Never imported to play: its *source* is what a :class:`~harness.sandbox.client.SandboxWorker`
loads (``reference_source(k)``), to benchmark the sandbox with a realistic program
and to check the worker end to end against the true engine in the tests. Its
hypothesis about the hidden rule is the constant ``K``.

The layout, as the harness sends it: ``{"rows", "cols", "obstacles", "black",
"white": [[row, col], ...], "turn_limit": int | None, "turn_counting":
"per_player" | "total"}``. A state: ``{"cols", "board": flat cells (0 empty,
1 black, 2 white, 3 obstacle), "player": 0 black | 1 white, "placed": [black,
white], "limit", "counting"}``. An action: a flat cell index ``row * cols + col``,
or -1 to pass. Standard library only, as the sandbox requires.
"""

from __future__ import annotations

import inspect
from typing import Any

K = 1.01
PASS = -1
_RAYS: dict[tuple[int, int], list[list[list[int]]]] = {}


def _rays(rows: int, cols: int) -> list[list[list[int]]]:
    key = (rows, cols)
    if key not in _RAYS:
        steps = [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)]
        table = []
        for r in range(rows):
            for c in range(cols):
                rays = []
                for dr, dc in steps:
                    ray, rr, cc = [], r + dr, c + dc
                    while 0 <= rr < rows and 0 <= cc < cols:
                        ray.append(rr * cols + cc)
                        rr, cc = rr + dr, cc + dc
                    if len(ray) >= 2:
                        rays.append(ray)
                table.append(rays)
        _RAYS[key] = table
    return _RAYS[key]


def initial_state(layout: dict[str, Any]) -> dict[str, Any]:
    rows, cols = layout["rows"], layout["cols"]
    board = [0] * (rows * cols)
    for value, name in ((3, "obstacles"), (1, "black"), (2, "white")):
        for r, c in layout[name]:
            board[r * cols + c] = value
    return {
        "rows": rows,
        "cols": cols,
        "board": board,
        "player": 0,
        "placed": [0, 0],
        "limit": layout.get("turn_limit"),
        "counting": layout.get("turn_counting", "per_player"),
    }


def _may_place(state: dict[str, Any], player: int) -> bool:
    limit = state["limit"]
    if limit is None:
        return True
    if state["counting"] == "total":
        return state["placed"][0] + state["placed"][1] < limit
    return state["placed"][player] < limit


def _placements(state: dict[str, Any], player: int) -> list[int]:
    if not _may_place(state, player):
        return []
    board, me = state["board"], player + 1
    opp = 3 - me
    moves = []
    for index, rays in enumerate(_rays(state["rows"], state["cols"])):
        if board[index]:
            continue
        for ray in rays:
            if board[ray[0]] != opp:
                continue
            found = False
            for j in ray[1:]:
                v = board[j]
                if v != opp:
                    found = v == me
                    break
            if found:
                moves.append(index)
                break
    return moves


def current_player(state: dict[str, Any]) -> int:
    return state["player"]


def legal_actions(state: dict[str, Any]) -> list[int]:
    moves = _placements(state, state["player"])
    if moves:
        return moves
    return [] if not _placements(state, 1 - state["player"]) else [PASS]


def apply_action(state: dict[str, Any], action: int) -> dict[str, Any]:
    player = state["player"]
    new = dict(state, player=1 - player)
    if action == PASS:
        return new
    board, me = list(state["board"]), player + 1
    opp = 3 - me
    for ray in _rays(state["rows"], state["cols"])[action]:
        run = []
        for j in ray:
            if board[j] == opp:
                run.append(j)
                continue
            if board[j] == me:
                for k in run:
                    board[k] = me
            break
    board[action] = me
    placed = list(state["placed"])
    placed[player] += 1
    new["board"], new["placed"] = board, placed
    return new


def is_terminal(state: dict[str, Any]) -> bool:
    return not _placements(state, 0) and not _placements(state, 1)


def returns(state: dict[str, Any]) -> list[float]:
    black, white = state["board"].count(1), state["board"].count(2)
    low, high = min(K, 0.5), max(K, 0.5)

    def wins(own: int, other: int) -> bool:
        return own + other > 0 and low < own / (own + other) < high

    if wins(black, white):
        return [1.0, -1.0]
    if wins(white, black):
        return [-1.0, 1.0]
    return [0.0, 0.0]


def reference_source(k: float = K) -> str:
    """This module's source as a candidate program, its hypothesis ``K`` set to ``k``."""
    import sys

    source = inspect.getsource(sys.modules[__name__])
    return source.replace(f"\nK = {K!r}\n", f"\nK = {float(k)!r}\n", 1)


def layout_json(layout: Any, turn_limit: int | None = None, turn_counting: str = "per_player") -> dict[str, Any]:
    """An ``engine.layout.Layout`` (or anything with its fields) as the JSON layout the program takes."""
    return {
        "rows": layout.rows,
        "cols": layout.cols,
        "obstacles": sorted(map(list, layout.obstacles)),
        "black": sorted(map(list, layout.black)),
        "white": sorted(map(list, layout.white)),
        "turn_limit": turn_limit,
        "turn_counting": turn_counting,
    }
