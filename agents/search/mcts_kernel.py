"""UCT Monte Carlo tree search as one numba kernel, the tree in preallocated arrays.

One call of :func:`mcts_search` runs ``n_simulations`` simulations from one
position and returns the root's children (move, visits, summed value). A
simulation selects down the tree by UCT (paper Eq. 20), expands one untried move
of the node it stops at, plays a random rollout of at most ``rollout_turns`` turns
from the new node (``kernels.random_playout``: a turn is a placement or a forced
pass) and scores it with the true reward table at the end of the game or at the
cap, then backs the reward up to the root.

Values are in win-rate units: win 1, draw 0.5, loss 0. With ``paper_compat``
False each node's value is from the viewpoint of the player who moved into it
(the mover at its parent), so every player picks its own best child. With
``paper_compat`` True every node holds the root player's value, as the paper's
public reference implementation does: the opponent then also picks the child
that is best for the root player.

Nodes: index 0 is the root; each simulation adds at most one node, so
``n_simulations + 1`` slots always suffice. Per node, ``boards[node]`` holds three
bitboards (own and opponent discs from the mover's view, untried moves) and
``meta[node]`` the integer fields named below; ``value`` the summed rewards. A
node's children occupy a contiguous range of ``pool``, reserved when it is first
expanded (one slot per legal move).
A forced pass is a node with a single child (move ``PASS``); a node with no
untried moves and no children is terminal. Every edge, a pass included, hands
the move to the other player, so the mover at a node is the root's mover iff
the node's depth is even.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from engine.bits import U64, bb_any, bb_bit, bb_count, bb_select, bb_xor, tuple_setitem
from engine.kernels import mover_moves, next_random, place, random_playout

PASS_MOVE = -1
NO_CHILDREN = -1

# Bitboards of a node: boards[node, OWN | OPP | UNTRIED, word].
OWN, OPP, UNTRIED = 0, 1, 2
# Integer fields of a node: meta[node, field].
PARENT, MOVE, DEPTH, MOVER_PLACED, OTHER_PLACED, UNTRIED_COUNT, IS_PASS, CHILD_START, CHILD_COUNT, VISITS = range(10)
N_FIELDS = 10


@njit(cache=True, inline="always")
def _load(boards, node, which, template):
    """Bitboard ``which`` of ``node``, shaped like ``template``."""
    out = template
    for i in range(len(template)):
        out = tuple_setitem(out, i, boards[node, which, i])
    return out


@njit(cache=True, inline="always")
def _store(boards, node, which, bitboard):
    for i in range(len(bitboard)):
        boards[node, which, i] = bitboard[i]


@njit(cache=True)
def _moves(own, opp, placed_mover, placed_other, turn_limit, counting, geo):
    """``kernels.mover_moves``, kept out of line: inlined at each call site it costs minutes of compile time."""
    return mover_moves(own, opp, placed_mover, placed_other, turn_limit, counting, geo)


@njit(cache=True)
def _place(own, opp, index, geo):
    """``kernels.place``, kept out of line (compile time, as for :func:`_moves`)."""
    return place(own, opp, index, geo)


@njit(cache=True)
def _add_node(boards, meta, new, own, opp, placed_mover, placed_other, parent, move, turn_limit, counting, geo):
    """Fill slot ``new``: the position (mover to play), its legal moves, pass or terminal."""
    _store(boards, new, OWN, own)
    _store(boards, new, OPP, opp)
    moves = _moves(own, opp, placed_mover, placed_other, turn_limit, counting, geo)
    _store(boards, new, UNTRIED, moves)
    meta[new, PARENT] = parent
    meta[new, MOVE] = move
    meta[new, DEPTH] = 0 if parent < 0 else meta[parent, DEPTH] + 1
    meta[new, MOVER_PLACED] = placed_mover
    meta[new, OTHER_PLACED] = placed_other
    meta[new, CHILD_START] = NO_CHILDREN
    meta[new, CHILD_COUNT] = 0
    meta[new, VISITS] = 0
    meta[new, IS_PASS] = 0
    if bb_any(moves):
        meta[new, UNTRIED_COUNT] = bb_count(moves)
    elif bb_any(_moves(opp, own, placed_other, placed_mover, turn_limit, counting, geo)):
        meta[new, IS_PASS] = 1
        meta[new, UNTRIED_COUNT] = 1
    else:
        meta[new, UNTRIED_COUNT] = 0


@njit(cache=True)
def _best_child(node, meta, value, pool, c):
    """The child maximising Q + c * sqrt(ln N(node) / n(child)) (the first one on ties)."""
    log_parent = math.log(meta[node, VISITS])
    best = -np.inf
    choice = -1
    start = meta[node, CHILD_START]
    for k in range(meta[node, CHILD_COUNT]):
        child = pool[start + k]
        n_child = meta[child, VISITS]
        score = value[child] / n_child + c * math.sqrt(log_parent / n_child)
        if score > best:
            best = score
            choice = child
    return choice


@njit(cache=True)
def _reserve_children(node, meta, pool, pool_used):
    """Reserve ``node``'s child range; returns the pool (grown if needed) and its new fill."""
    wanted = meta[node, UNTRIED_COUNT]
    if pool_used + wanted > len(pool):
        grown = np.empty(2 * len(pool) + wanted, np.int64)
        grown[:pool_used] = pool[:pool_used]
        pool = grown
    meta[node, CHILD_START] = pool_used
    return pool, pool_used + wanted


@njit(cache=True)
def mcts_search(
    own, opp, placed_mover, placed_other, turn_limit, counting, geo, table, n_simulations, c, rollout_turns, paper_compat, seed
):
    """UCT search from (own, opp) with the mover to play; returns (moves, visits, value sums) of the root's children.

    ``table[own, opp]`` is the true reward (+1/0/-1) of a player scored with
    ``own`` discs against ``opp``. ``rollout_turns``: at most that many turns per
    rollout, ``0`` scores the new node as it stands, ``-1`` plays to the end.
    Value sums are from the root mover's viewpoint in both backup modes.
    """
    capacity = n_simulations + 1
    boards = np.empty((capacity, 3, len(own)), np.uint64)
    meta = np.empty((capacity, N_FIELDS), np.int64)
    value = np.zeros(capacity, np.float64)
    pool = np.empty(capacity * 8, np.int64)
    pool_used = 0
    _add_node(boards, meta, 0, own, opp, placed_mover, placed_other, -1, PASS_MOVE, turn_limit, counting, geo)
    nodes = 1

    for _ in range(n_simulations):
        # Selection: descend while the node is fully expanded and not terminal.
        node = 0
        while meta[node, UNTRIED_COUNT] == 0 and meta[node, CHILD_COUNT] > 0:
            node = _best_child(node, meta, value, pool, c)
        # Expansion of one untried move (a terminal node adds nothing and is scored as it stands).
        if meta[node, UNTRIED_COUNT] > 0:
            if meta[node, CHILD_START] == NO_CHILDREN:
                pool, pool_used = _reserve_children(node, meta, pool, pool_used)
            state_own = _load(boards, node, OWN, own)
            state_opp = _load(boards, node, OPP, own)
            if meta[node, IS_PASS]:
                child_own, child_opp, child_move = state_opp, state_own, PASS_MOVE
                child_mover, child_other = meta[node, OTHER_PLACED], meta[node, MOVER_PLACED]
            else:
                untried = _load(boards, node, UNTRIED, own)
                seed, bits = next_random(seed)
                index = bb_select(untried, int((bits * U64(meta[node, UNTRIED_COUNT])) >> U64(32)))
                _store(boards, node, UNTRIED, bb_xor(untried, bb_bit(own, index)))
                after_own, after_opp = _place(state_own, state_opp, index, geo)
                child_own, child_opp, child_move = after_opp, after_own, index
                child_mover, child_other = meta[node, OTHER_PLACED], meta[node, MOVER_PLACED] + 1
            _add_node(boards, meta, nodes, child_own, child_opp, child_mover, child_other, node, child_move, turn_limit, counting, geo)
            meta[node, UNTRIED_COUNT] -= 1
            pool[meta[node, CHILD_START] + meta[node, CHILD_COUNT]] = nodes
            meta[node, CHILD_COUNT] += 1
            node = nodes
            nodes += 1

        # Rollout from the leaf, scored for the leaf's mover in win-rate units.
        mine, theirs, _, seed = random_playout(
            _load(boards, node, OWN, own),
            _load(boards, node, OPP, own),
            meta[node, MOVER_PLACED],
            meta[node, OTHER_PLACED],
            turn_limit,
            counting,
            geo,
            seed,
            rollout_turns,
        )
        reward = (table[mine, theirs] + 1) * 0.5
        leaf_side = meta[node, DEPTH] & 1
        root_reward = reward if leaf_side == 0 else 1.0 - reward

        # Backup to the root.
        while node >= 0:
            meta[node, VISITS] += 1
            if paper_compat:
                value[node] += root_reward
            elif meta[node, DEPTH] & 1 == leaf_side:  # moved into by the leaf mover's opponent
                value[node] += 1.0 - reward
            else:
                value[node] += reward
            node = meta[node, PARENT]

    count = meta[0, CHILD_COUNT]
    root_moves = np.empty(count, np.int64)
    root_visits = np.empty(count, np.int64)
    root_values = np.empty(count, np.float64)
    for k in range(count):
        child = pool[meta[0, CHILD_START] + k]
        root_moves[k] = meta[child, MOVE]
        root_visits[k] = meta[child, VISITS]
        root_values[k] = value[child]
    return root_moves, root_visits, root_values
