"""PUCT search (AlphaZero) over the engine's rules, batched across many trees.

A :class:`Tree` searches one position. Each simulation walks from the root by
``argmax Q(a) + c_puct * P(a) * sqrt(N) / (1 + N(a))`` (``Q`` from the mover's
view, 0 for an unvisited move) to a leaf: a finished game is scored by the
standard rule (more discs: +1, equal 0, fewer -1 for the mover there); any other
leaf is *expanded* with the network's priors (softmax over the legal
placements' logits; a forced pass has prior 1) and valued by its value head.
The value is backed up the path, negated whenever the mover changes.

:func:`simulate` runs simulations on many trees at once: one leaf per tree per
step, all leaves valued by one batched network call, so the network's batch is
the number of trees (many self-play games, or one agent's search). The search
only ever visits legal moves: a node's moves are ``rules.legal_moves``.

One tree alone would give the network a batch of one (about ten times slower per
leaf than a batch of 16 on one core), so ``simulate(..., leaves=k)`` descends
``k`` times per tree before the call, each descent under a *virtual loss*: every
edge on a pending path already counts one visit and a loss for its owner, so the
next descent is steered elsewhere; the backup then replaces the loss by the
leaf's value. Two descents that reach the same new leaf both back up its value.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from engine.rules import Rules
from engine.state import BLACK, PASS, WHITE, State

# evaluate(mover-view grids of boards) -> (logits per board, values for the movers)
Evaluate = Callable[[list[np.ndarray]], tuple[list[np.ndarray], np.ndarray]]
C_PUCT = 1.5


class Node:
    """A position in a tree: its legal moves, priors, visit counts and summed values per move, children."""

    __slots__ = ("state", "moves", "priors", "visits", "totals", "children", "outcome")

    def __init__(self, state: State, moves: list[int], outcome: float | None) -> None:
        self.state = state
        self.moves = moves
        self.outcome = outcome  # the mover's result when the game is over here, else None
        self.priors: np.ndarray | None = None
        self.visits = np.zeros(len(moves))
        self.totals = np.zeros(len(moves))
        self.children: dict[int, Node] = {}

    @property
    def expanded(self) -> bool:
        return self.priors is not None

    def select(self, c_puct: float) -> int:
        """The move index maximising Q + U."""
        assert self.priors is not None
        sqrt_n = math.sqrt(self.visits.sum() + 1.0)
        q = np.divide(self.totals, self.visits, out=np.zeros_like(self.totals), where=self.visits > 0)
        return int(np.argmax(q + c_puct * self.priors * sqrt_n / (1.0 + self.visits)))


def node_for(rules: Rules, state: State) -> Node:
    """An unexpanded node of ``state``, scored when the game is over there."""
    moves = rules.legal_moves(state)
    outcome = None
    if not moves:
        own, opp = state.own.bit_count(), state.opponent.bit_count()
        outcome = float(np.sign(own - opp))
    return Node(state, moves, outcome)


def play_unchecked(rules: Rules, state: State, move: int) -> State:
    """The state after a move known to be legal (a node's own move list)."""
    if move == PASS:
        return state._replace(to_move=1 - state.to_move)
    flipped = rules.flips(state, move)
    own = state.own | flipped | (1 << move)
    opp = state.opponent & ~flipped
    if state.to_move == BLACK:
        return State(own, opp, WHITE, state.placed_black + 1, state.placed_white)
    return State(opp, own, BLACK, state.placed_black, state.placed_white + 1)


class Tree:
    """The search tree of one position under ``rules``."""

    def __init__(self, rules: Rules, state: State) -> None:
        self.rules = rules
        self.root = node_for(rules, state)

    def descend(self, c_puct: float) -> list[tuple[Node, int]]:
        """The path (node, move index) from the root to a leaf; the leaf is the last node's child."""
        path: list[tuple[Node, int]] = []
        node = self.root
        while node.expanded and node.outcome is None:
            index = node.select(c_puct)
            path.append((node, index))
            move = node.moves[index]
            child = node.children.get(move)
            if child is None:
                child = node_for(self.rules, play_unchecked(self.rules, node.state, move))
                node.children[move] = child
            node = child
        return path

    def leaf(self, path: list[tuple[Node, int]]) -> Node:
        if not path:
            return self.root
        node, index = path[-1]
        return node.children[node.moves[index]]

    def policy(self) -> np.ndarray:
        """The root's visit counts as a distribution over the board's cells (zeros when the root must pass)."""
        target = np.zeros(self.rules.layout.cells, dtype=np.float32)
        total = self.root.visits.sum()
        if total > 0:
            for move, visits in zip(self.root.moves, self.root.visits):
                if move != PASS:
                    target[move] = visits / total
        return target


def expand(node: Node, logits: np.ndarray) -> None:
    """Set a node's priors: softmax of the legal placements' logits (a lone PASS gets 1)."""
    if node.moves == [PASS]:
        node.priors = np.ones(1)
        return
    chosen = logits[np.asarray(node.moves)]
    weights = np.exp(chosen - chosen.max())
    node.priors = weights / weights.sum()


def backup(path: list[tuple[Node, int]], leaf: Node, value: float, virtual: bool = False) -> None:
    """Add ``value`` (for the leaf's mover) to every edge of the path, from each edge owner's view.

    ``virtual``: the path carries a virtual loss (:func:`add_virtual_loss`), which this replaces.
    """
    mover = leaf.state.to_move
    for node, index in path:
        if virtual:
            node.totals[index] += 1.0
        else:
            node.visits[index] += 1
        node.totals[index] += value if node.state.to_move == mover else -value


def add_virtual_loss(path: list[tuple[Node, int]]) -> None:
    """Count a visit and a loss (for the edge's owner) on every edge of a pending path."""
    for node, index in path:
        node.visits[index] += 1
        node.totals[index] -= 1.0


def add_root_noise(tree: Tree, rng: np.random.Generator, alpha: float = 0.3, fraction: float = 0.25) -> None:
    """Mix Dirichlet noise into the (expanded) root's priors, as in AlphaZero's self-play."""
    root = tree.root
    if root.priors is not None and len(root.moves) > 1:
        root.priors = (1 - fraction) * root.priors + fraction * rng.dirichlet([alpha] * len(root.moves))


def simulate(trees: list[Tree], evaluate: Evaluate, simulations: int, c_puct: float = C_PUCT, leaves: int = 1) -> None:
    """Run ``simulations`` steps on every tree; each step values all trees' new leaves in one call.

    A step descends ``leaves`` times per tree under virtual loss (module docstring),
    so a tree gets ``simulations * leaves`` simulations (a step that expands the root: one).
    """
    virtual = leaves > 1
    for _ in range(simulations):
        pending: list[tuple[Tree, list[tuple[Node, int]], Node]] = []
        for tree in trees:
            for _ in range(leaves):
                path = tree.descend(c_puct)
                leaf = tree.leaf(path)
                if leaf.outcome is not None:
                    backup(path, leaf, leaf.outcome)
                    continue
                if virtual:
                    add_virtual_loss(path)
                pending.append((tree, path, leaf))
                if not path:  # the root is the leaf: it must be expanded before another descent means anything
                    break
        if not pending:
            continue
        slots: dict[int, int] = {}  # id(leaf) -> its row in the batch (a leaf reached twice is valued once)
        grids: list[np.ndarray] = []
        for tree, _, leaf in pending:
            if id(leaf) not in slots:
                slots[id(leaf)] = len(grids)
                grids.append(tree.rules.grid(leaf.state))
        logits, values = evaluate(grids)
        for _, path, leaf in pending:
            slot = slots[id(leaf)]
            if not leaf.expanded:
                expand(leaf, logits[slot])
            backup(path, leaf, float(values[slot]), virtual)


def expand_roots(trees: list[Tree], evaluate: Evaluate) -> None:
    """Expand every unexpanded, unfinished root (before adding root noise)."""
    waiting = [tree for tree in trees if not tree.root.expanded and tree.root.outcome is None]
    if waiting:
        logits, _ = evaluate([tree.rules.grid(tree.root.state) for tree in waiting])
        for tree, root_logits in zip(waiting, logits):
            expand(tree.root, root_logits)
