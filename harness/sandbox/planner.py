"""Planning on a code world model: UCT search, alpha-beta minimax and random playouts over the CWM API, stdlib only.

Runs inside the sandbox next to the candidate (one round trip per move, not one
per simulation), and in the harness on an adapter of the true engine, so the two
are timed with the same code. A *game* is any object with the CWM functions:
``current_player(state) -> 0 | 1``, ``legal_actions(state) -> list``,
``apply_action(state, action) -> state``, ``is_terminal(state) -> bool``,
``returns(state) -> [r0, r1]`` (each in [-1, 1]) and optionally
``value(state) -> [v0, v1]`` for a rollout cut short.

MCTS values are win rates from the view of the player who moved into a node: a
return r counts (r + 1) / 2, so a win is 1, a draw 0.5, a loss 0 (as in
``agents.search.mcts``). Minimax values are returns, in [-1, 1], from the view of the
player to move at the root (see :func:`minimax`).
"""

from __future__ import annotations

import json
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


def mcts(game: Game, state: Any, simulations: int, *, c: float = 1.4, max_plies: int = 200, seed: int = 0) -> dict[str, Any]:
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
            node = max(node.children, key=lambda edge: edge[1].wins / edge[1].visits + c * math.sqrt(log_n / edge[1].visits))[1]
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


EXACT, LOWER, UPPER = 0, 1, 2  # transposition-table bounds of a stored value
TT_ENTRIES = 200_000  # at most this many positions kept in one minimax call's table


class _OutOfNodes(Exception):
    """The node budget ran out in the middle of an iteration."""


def minimax(
    game: Game, state: Any, depth: int, *, max_nodes: int = 20_000, seed: int = 0, leaf_playouts: int = 0, max_plies: int = 200
) -> dict[str, Any]:
    """Iterative-deepening alpha-beta (negamax) from ``state`` to ``depth`` plies, at most ``max_nodes`` positions.

    The value of a position is the zero-sum projection ``(r_me - r_other) / 2`` of
    the program's returns (exactly ``r_me`` when the returns sum to zero, as they
    do in Othello), so negamax is right for any returns; the mover comes from
    ``current_player`` (two plies in a row by one player are searched as such). A
    leaf cut by depth is worth the program's ``value(state)`` when it has one, else
    the mean of ``leaf_playouts`` random playouts, else 0: "unknown", which keeps
    the search cheap and deterministic, prefers proven wins and avoids proven
    losses (a playout estimate at every leaf costs more than the search itself,
    and sampling is what ``mcts`` is for). Iterations deepen 1, 2, ... ``depth``;
    a later iteration that would pass ``max_nodes`` is abandoned and the last full
    one stands (the first always completes); a tree searched to its end stops the
    deepening. Positions are kept in a transposition table keyed on their
    canonical JSON (states that are not JSON are searched without it). Root
    actions are tried in an order shuffled by ``seed`` (the previous iteration's
    best first), so ties go by the seed.

    Returns ``action``, ``actions`` (ranked), ``values`` (the best one exact, the
    others upper bounds where alpha-beta cut them), ``value``, ``depth`` (the last
    full iteration), ``nodes`` (positions visited, all iterations), ``solved``
    (whether no leaf was cut by depth) and ``stopped`` ("depth", "nodes" or "solved").
    """
    if depth < 1 or max_nodes < 1:
        raise ValueError(f"minimax needs depth >= 1 and max_nodes >= 1, got depth={depth}, max_nodes={max_nodes}")
    if game.is_terminal(state):
        raise ModelError("minimax was asked for a move in a finished game")
    search = _AlphaBeta(game, random.Random(seed), max_nodes, leaf_playouts, max_plies)
    mover = _player(game, state)
    actions = _actions(game, state)
    order = list(range(len(actions)))
    search.rng.shuffle(order)
    children = [game.apply_action(state, action) for action in actions]
    search.nodes += len(children)
    best: tuple[list[int], list[float]] | None = None
    reached, stopped = 0, "depth"
    for level in range(1, depth + 1):
        search.cuts = 0
        try:
            values = search.root(mover, children, order, level, budget=best is not None)
        except _OutOfNodes:
            stopped = "nodes"
            break
        order = sorted(order, key=lambda i: -values[i])  # stable: ties keep the seeded order
        best, reached = (order, values), level
        if search.cuts == 0:
            stopped = "solved"
            break
    assert best is not None
    ranked, values = best
    return {
        "action": actions[ranked[0]],
        "actions": [actions[i] for i in ranked],
        "values": [values[i] + 0.0 for i in ranked],
        "value": values[ranked[0]] + 0.0,
        "depth": reached,
        "nodes": search.nodes,
        "solved": stopped == "solved",
        "stopped": stopped,
    }


def _actions(game: Game, state: Any) -> list[Any]:
    actions = list(game.legal_actions(state))
    if not actions:
        raise ModelError("legal_actions is empty in a state that is_terminal says is not over (a pass is an action)")
    return actions


def _key(state: Any) -> str | None:
    try:
        return json.dumps(state, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError):
        return None


class _AlphaBeta:
    """One minimax call's search: fail-soft negamax alpha-beta with a transposition table."""

    def __init__(self, game: Game, rng: random.Random, max_nodes: int, leaf_playouts: int, max_plies: int) -> None:
        self.game, self.rng, self.max_nodes = game, rng, max_nodes
        self.leaf_playouts, self.max_plies = leaf_playouts, max_plies
        self.nodes = self.cuts = 0
        self.budget = False
        self.table: dict[str, tuple[int, float, int, int, bool]] = {}  # depth, value, bound, best index, cut below

    def root(self, mover: int, children: list[Any], order: list[int], depth: int, budget: bool) -> list[float]:
        """Each root child's value for ``mover`` (exact for the best, an upper bound for those cut)."""
        self.budget = budget
        values = [-math.inf] * len(children)
        alpha = -math.inf
        for index in order:
            values[index] = self.child(mover, children[index], depth - 1, alpha, math.inf)
            alpha = max(alpha, values[index])
        return values

    def child(self, mover: int, state: Any, depth: int, alpha: float, beta: float) -> float:
        """The value for ``mover`` of a position reached by its move, ``depth`` plies left to search."""
        game = self.game
        if game.is_terminal(state):
            return _zero_sum(_returns(game, state, cut=False), mover)
        if depth <= 0:
            self.cuts += 1
            return _zero_sum(self.leaf(state), mover)
        if _player(game, state) == mover:
            return self.node(state, depth, alpha, beta)
        return -self.node(state, depth, -beta, -alpha)

    def node(self, state: Any, depth: int, alpha: float, beta: float) -> float:
        """The value of a live position for its player to move."""
        key = _key(state)
        entry = self.table.get(key) if key is not None else None
        hint = -1
        if entry is not None:
            stored_depth, value, bound, hint, cut = entry
            if stored_depth >= depth and (bound == EXACT or (bound == LOWER and value >= beta) or (bound == UPPER and value <= alpha)):
                self.cuts += cut
                return value
        game = self.game
        mover, actions = _player(game, state), _actions(game, state)
        indices = list(range(len(actions)))
        if 0 <= hint < len(actions):
            indices.remove(hint)
            indices.insert(0, hint)
        cuts_before, floor = self.cuts, alpha
        best, best_index = -math.inf, indices[0]
        for index in indices:
            if self.budget and self.nodes >= self.max_nodes:
                raise _OutOfNodes
            self.nodes += 1
            value = self.child(mover, game.apply_action(state, actions[index]), depth - 1, alpha, beta)
            if value > best:
                best, best_index = value, index
            alpha = max(alpha, value)
            if alpha >= beta:
                break
        if key is not None and (key in self.table or len(self.table) < TT_ENTRIES):
            bound = UPPER if best <= floor else (LOWER if best >= beta else EXACT)
            self.table[key] = (depth, best, bound, best_index, self.cuts > cuts_before)
        return best

    def leaf(self, state: Any) -> tuple[float, float]:
        if getattr(self.game, "value", None) is not None or self.leaf_playouts <= 0:
            return _returns(self.game, state, cut=True)
        totals = [0.0, 0.0]
        for _ in range(self.leaf_playouts):
            (r0, r1), _ = rollout(self.game, state, self.rng, self.max_plies)
            totals[0] += r0
            totals[1] += r1
        return (totals[0] / self.leaf_playouts, totals[1] / self.leaf_playouts)


def _zero_sum(pair: tuple[float, float], mover: int) -> float:
    """``mover``'s share of a zero-sum projection of the returns."""
    return (pair[mover] - pair[1 - mover]) / 2.0


def returns_table(game: Game, state: Any, playable: list[int], short_placed: Any = None) -> dict[str, Any]:
    """The program's ``returns`` at every final count pair: ``black + white`` from 1 to ``len(playable)``.

    ``state`` is a template (obstacles on its board, every other cell empty); for a pair, its first
    ``black`` playable cells hold black discs and the next ``white`` white ones. A pair that leaves
    playable cells empty (a game ended by a turn limit or with no moves for either side) gets
    ``placed = short_placed`` when given. Pairs run black-major: (0, 1), ..., (0, P), (1, 0), ...
    Each answer must be two numbers; the host checks them again (finite, in [-1, 1]).
    """
    size = len(playable)
    template = list(state["board"])
    answers: list[list[float]] = []
    for black in range(size + 1):
        for white in range(size + 1 - black):
            if black + white == 0:
                continue
            board = list(template)
            for position in range(black + white):
                board[playable[position]] = 1 if position < black else 2
            position_state = dict(state, board=board)
            if short_placed is not None and black + white < size:
                position_state["placed"] = list(short_placed)
            pair = game.returns(position_state)
            if not isinstance(pair, list | tuple) or len(pair) != 2 or not all(_is_number(v) for v in pair):
                raise ModelError(f"returns at {black} black, {white} white must give two numbers, got {pair!r}"[:200])
            answers.append([float(pair[0]), float(pair[1])])
    return {"returns": answers}


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
