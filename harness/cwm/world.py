"""JSON views of the true game for the CWM API: layouts, states, finished games, and code in a reply.

The harness talks to a candidate program in the state format of
:mod:`harness.sandbox.reference_program` (the prompt states it): a layout
``{"rows", "cols", "obstacles", "black", "white", "turn_limit", "turn_counting"}``
and a state ``{"rows", "cols", "board", "player", "placed", "limit", "counting"}``
with ``board`` the flat cells (0 empty, 1 black, 2 white, 3 obstacle) and an
action a flat cell index (``-1`` a pass). Everything here is computed from the
public rules and the moves of finished games; nothing reads the condition.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from engine.rules import Rules
from engine.state import State
from harness.sandbox.reference_program import layout_json

STATE_FIELDS = ("board", "player", "placed")  # what a successor is compared on
_FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)


def rules_layout(rules: Rules) -> dict[str, Any]:
    """The layout the program's ``initial_state`` takes (the turn limit included)."""
    return layout_json(rules.layout, rules.turn_limit, rules.turn_counting)


def state_json(rules: Rules, state: State) -> dict[str, Any]:
    """The true engine's ``state`` in the program's format."""
    layout = rules.layout
    board = [0] * layout.cells
    for r, c in layout.obstacles:
        board[r * layout.cols + c] = 3
    for index in range(layout.cells):
        if state.black >> index & 1:
            board[index] = 1
        elif state.white >> index & 1:
            board[index] = 2
    return {
        "rows": layout.rows,
        "cols": layout.cols,
        "board": board,
        "player": state.to_move,
        "placed": [state.placed_black, state.placed_white],
        "limit": rules.turn_limit,
        "counting": rules.turn_counting,
    }


def comparable(state: Any) -> Any:
    """The fields a successor is compared on (the whole value when it is not a dict)."""
    if isinstance(state, dict):
        return {name: state.get(name) for name in STATE_FIELDS}
    return state


@dataclass(frozen=True)
class Step:
    """One logged step of a game: the state, the move played, the true legal moves, successor, end."""

    game: int
    ply: int
    state: State
    move: int
    legal: tuple[int, ...]
    after: State
    over: bool


def game_steps(rules: Rules, moves: Sequence[int], game: int = 0) -> list[Step]:
    """Every step of a finished game, replayed by the true engine from its moves (forced passes included)."""
    state, steps = rules.initial_state(), []
    for ply, move in enumerate(moves):
        legal = tuple(rules.legal_moves(state))
        after = rules.play(state, move)
        steps.append(Step(game, ply, state, move, legal, after, rules.is_over(after)))
        state = after
    return steps


def final_state(rules: Rules, moves: Sequence[int]) -> State:
    """The position a game's moves end in."""
    state = rules.initial_state()
    for move in moves:
        state = rules.play(state, move)
    return state


@dataclass(frozen=True)
class Outcome:
    """Final disc counts and the rewards (black, white) the environment gave."""

    black: int
    white: int
    rewards: tuple[int, int]


def evidence_rows(outcomes: Iterable[Outcome]) -> list[dict[str, Any]]:
    """Distinct outcomes with how many games ended so, sorted by black's share: what the prompt shows."""
    counts = Counter((o.black, o.white, o.rewards) for o in outcomes)
    rows = [{"black": b, "white": w, "rewards": list(r), "games": n} for (b, w, r), n in counts.items()]
    return sorted(rows, key=lambda row: (row["black"] / max(1, row["black"] + row["white"]), row["black"]))


def extract_code(reply: str | None) -> str | None:
    """The program in a reply: the last fenced Python block, else the whole reply if it defines functions."""
    if not reply:
        return None
    blocks = [block for block in _FENCE.findall(reply) if "def " in block]
    if blocks:
        return blocks[-1].strip() + "\n"
    return reply.strip() + "\n" if "def " in reply else None
