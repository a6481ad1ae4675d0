"""Planning on a code world model: UCT search and random playouts over the CWM API, standard library only.

Runs inside the sandbox next to the candidate (one round trip per move, not one
per simulation), and in the harness on an adapter of the true engine, so the two
are timed with the same code. A *game* is any object with the CWM functions:
``current_player(state) -> 0 | 1``, ``legal_actions(state) -> list``,
``apply_action(state, action) -> state``, ``is_terminal(state) -> bool``,
``returns(state) -> [r0, r1]`` (each in [-1, 1]) and optionally
``value(state) -> [v0, v1]`` for a rollout cut short.

Values are win rates from the view of the player who moved into a node: a return
r counts (r + 1) / 2, so a win is 1, a draw 0.5, a loss 0 (as in ``agents.mcts``).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any, Protocol


class Game(Protocol):
    """The CWM functions the planner calls."""

    def current_player(self, state: Any) -> int: ...
    def legal_actions(self, state: Any) -> list[Any]: ...
    def apply_action(self, state: Any, action: Any) -> Any: ...
    def is_terminal(self, state: Any) -> bool: ...
    def returns(self, state: Any) -> list[float]: ...


class ModelError(ValueError):
    """The candidate's answers do not make a game (no actions in a live state, a bad player or return)."""


@dataclass(eq=False)
class _Node:
    state: Any
    terminal: bool
    player: int = -1
    actions: list[Any] = field(default_factory=list)
    untried: list[int] = field(default_factory=list)
    children: list[tuple[int, _Node]] = field(default_factory=list)
    visits: int = 0
    wins: float = 0.0  # summed win rate of the player who moved into this node


def _node(game: Game, state: Any, rng: random.Random) -> _Node:
    if game.is_terminal(state):
        return _Node(state, True)
    actions = list(game.legal_actions(state))
    if not actions:
        raise ModelError("legal_actions is empty in a state that is_terminal says is not over (a pass is an action)")
    untried = list(range(len(actions)))
    rng.shuffle(untried)
    return _Node(state, False, _player(game, state), actions, untried)


def _player(game: Game, state: Any) -> int:
    player = game.current_player(state)
    if player not in (0, 1):
        raise ModelError(f"current_player must be 0 or 1 in a live state, got {player!r}")
    return int(player)


def _returns(game: Game, state: Any, cut: bool) -> tuple[float, float]:
    values = getattr(game, "value", None) if cut else None
    if cut and values is None:
        return (0.0, 0.0)
    pair = values(state) if values is not None else game.returns(state)
    try:
        r0, r1 = (float(v) for v in pair)
    except (TypeError, ValueError):
        raise ModelError(f"returns/value must give two numbers, got {pair!r}"[:200]) from None
    return (r0, r1)


def rollout(game: Game, state: Any, rng: random.Random, max_plies: int) -> tuple[tuple[float, float], int]:
    """A uniformly random game from ``state``: its returns (or value, or (0, 0) when cut) and its length."""
    plies = 0
    while not game.is_terminal(state):
        if plies >= max_plies:
            return _returns(game, state, cut=True), plies
        actions = game.legal_actions(state)
        if not actions:
            raise ModelError("legal_actions is empty in a state that is_terminal says is not over")
        state = game.apply_action(state, actions[rng.randrange(len(actions))])
        plies += 1
    return _returns(game, state, cut=False), plies


def mcts(game: Game, state: Any, simulations: int, *, c: float = 1.4, max_plies: int = 200,
         seed: int = 0) -> dict[str, Any]:
    """UCT from ``state``: the action with the most root visits, and each root action's visits and win rate."""
    rng = random.Random(seed)
    root = _node(game, state, rng)
    if root.terminal:
        raise ModelError("mcts was asked for a move in a finished game")
    for _ in range(simulations):
        path = [root]
        node = root
        while not node.terminal and not node.untried and node.children:
            log_n = math.log(node.visits)
            node = max(node.children, key=lambda edge: edge[1].wins / edge[1].visits
                       + c * math.sqrt(log_n / edge[1].visits))[1]
            path.append(node)
        if not node.terminal and node.untried:
            index = node.untried.pop()
            child = _node(game, game.apply_action(node.state, node.actions[index]), rng)
            node.children.append((index, child))
            path.append(child)
            node = child
        rewards, _ = rollout(game, node.state, rng, max_plies)
        for parent, child in zip(path, path[1:]):
            child.visits += 1
            child.wins += (rewards[parent.player] + 1.0) / 2.0
        root.visits += 1
    ranked = sorted(root.children, key=lambda edge: (-edge[1].visits, edge[0]))
    return {
        "action": root.actions[ranked[0][0]],
        "actions": [root.actions[index] for index, _ in ranked],
        "visits": [child.visits for _, child in ranked],
        "win_rates": [child.wins / child.visits for _, child in ranked],
        "simulations": simulations,
    }


def playouts(game: Game, state: Any, count: int, *, max_plies: int = 200, seed: int = 0) -> dict[str, Any]:
    """``count`` random playouts from ``state``: summed returns and plies (for timing and for sanity checks)."""
    rng = random.Random(seed)
    totals = [0.0, 0.0]
    plies = 0
    for _ in range(count):
        (r0, r1), length = rollout(game, state, rng, max_plies)
        totals[0] += r0
        totals[1] += r1
        plies += length
    return {"playouts": count, "plies": plies, "returns": totals}
