"""Numba kernels of the n-tuple networks: evaluation, 1-ply play, the League game, TD(0) self-play.

A network reaches the kernels as ``net = (expansions, orbit, luts)``: int64
``(E, n)`` cell indices, int64 ``(E,)`` orbit of each expansion, float64
``(orbits, 3 ** n)`` tables (:class:`agents.ntuple.network.NTupleNetwork`). Boards are
the engine's bitboards (tuples of uint64 words, compiled once per word count);
beside them the kernels keep ``codes``, an int64 array of absolute cell codes
(black 2, white 0, empty 1), updated in place as discs are placed and flipped.
Evaluating for white reads ``2 - code`` (board inversion), so the network
always sees the evaluating player's discs as 2.

1-ply players (the n-tuple one and the weighted-piece-counter one, output
negation) pick the placement whose resulting position they value most; ties
(within ``TIE_TOLERANCE``) are broken uniformly at random, as in the League.
Random numbers come from the engine's xorshift (``engine.kernels.next_random``)
with a seed passed in and returned, so a run is a pure function of its seed.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.posnet.kernel import table_sum
from engine.bits import ONE, U64, ZERO, bb_any, bb_bit, bb_count, bb_select, bb_xor, trailing_zeros
from engine.kernels import flips_of, legal_moves, next_random, place

TIE_TOLERANCE = 1e-9
BLACK_CODE, EMPTY_CODE, WHITE_CODE = 2, 1, 0


@njit(cache=True)
def codes_of(black, white, cells):
    """Absolute cell codes of a position: black 2, white 0, empty (and obstacle) 1."""
    codes = np.ones(cells, dtype=np.int64)
    for w in range(len(black)):
        word = black[w]
        while word != ZERO:
            codes[w * 64 + int(trailing_zeros(word))] = BLACK_CODE
            word &= word - ONE
        word = white[w]
        while word != ZERO:
            codes[w * 64 + int(trailing_zeros(word))] = WHITE_CODE
            word &= word - ONE
    return codes


@njit(cache=True)
def evaluate(codes, invert, net):
    """The network's value of ``codes`` for black (``invert=False``) or for white (``invert=True``)."""
    expansions, orbit, luts = net
    total = 0.0
    for e in range(expansions.shape[0]):
        total += luts[orbit[e], tuple_index(codes, expansions, e, invert)]
    return total


@njit(cache=True)
def tuple_index(codes, expansions, e, invert):
    """The table index of expansion ``e`` of the position: its cells' codes as base-3 digits (``invert``: white's view)."""
    index = 0
    scale = 1
    for j in range(expansions.shape[1]):
        code = codes[expansions[e, j]]
        if invert:
            code = 2 - code
        index += code * scale
        scale *= 3
    return index


@njit(cache=True)
def set_codes(codes, bits, code):
    """Write ``code`` into ``codes`` at every set bit of a bitboard."""
    for w in range(len(bits)):
        word = bits[w]
        while word != ZERO:
            codes[w * 64 + int(trailing_zeros(word))] = code
            word &= word - ONE


@njit(cache=True)
def _random_below(seed, count):
    seed, bits = next_random(seed)
    return seed, int((bits * U64(count)) >> U64(32))


@njit(cache=True)
def _pick(best_score, best_index, ties, score, index, seed):
    """Reservoir step of an argmax with uniformly random ties: returns (best, index, ties, seed)."""
    if score > best_score + TIE_TOLERANCE:
        return score, index, 1, seed
    if score >= best_score - TIE_TOLERANCE:
        ties += 1
        seed, draw = _random_below(seed, ties)
        if draw == 0:
            return best_score, index, ties, seed
        return best_score, best_index, ties, seed
    return best_score, best_index, ties, seed


@njit(cache=True)
def next_placement(remaining):
    """The lowest cell of a move bitboard, and the bitboard without it: ``(index, rest)``."""
    index = bb_select(remaining, 0)
    return index, bb_xor(remaining, bb_bit(remaining, index))


@njit(cache=True)
def try_placement(codes, own, opp, index, mover, geo):
    """Write the mover's disc at ``index`` and its flips into ``codes``; returns the flips for :func:`undo_placement`."""
    flipped = flips_of(own, opp, index, geo)
    set_codes(codes, flipped, mover)
    codes[index] = mover
    return flipped


@njit(cache=True)
def undo_placement(codes, flipped, index, mover):
    """Take back :func:`try_placement` in ``codes``."""
    codes[index] = EMPTY_CODE
    set_codes(codes, flipped, 2 - mover)


@njit(cache=True)
def ntuple_scores(codes, own, opp, moves, white_moves, net, geo, scores, indices):
    """Each placement's resulting value for the mover; fills ``scores``/``indices``, returns how many."""
    mover = WHITE_CODE if white_moves else BLACK_CODE
    k = 0
    remaining = moves
    while bb_any(remaining):
        indices[k], remaining = next_placement(remaining)
        flipped = try_placement(codes, own, opp, indices[k], mover, geo)
        scores[k] = evaluate(codes, white_moves, net)
        undo_placement(codes, flipped, indices[k], mover)
        k += 1
    return k


@njit(cache=True)
def ntuple_move(codes, own, opp, moves, white_moves, net, geo, scores, indices, seed):
    """The 1-ply n-tuple player's placement (random among ties); returns (index, seed)."""
    count = ntuple_scores(codes, own, opp, moves, white_moves, net, geo, scores, indices)
    best, chosen, ties = -np.inf, -1, 0
    for k in range(count):
        best, chosen, ties, seed = _pick(best, chosen, ties, scores[k], indices[k], seed)
    return chosen, seed


@njit(cache=True)
def wpc_move(table, own, opp, moves, geo, seed):
    """The 1-ply WPC player's placement (own +, opponent -; random among ties); returns (index, seed).

    Placing at ``m`` and flipping ``F`` raises the mover's WPC by ``table[m] + 2 * sum(table[F])``.
    """
    best, chosen, ties = -np.inf, -1, 0
    remaining = moves
    while bb_any(remaining):
        index = bb_select(remaining, 0)
        remaining = bb_xor(remaining, bb_bit(remaining, index))
        score = table[index] + 2.0 * table_sum(table, flips_of(own, opp, index, geo))
        best, chosen, ties, seed = _pick(best, chosen, ties, score, index, seed)
    return chosen, seed


@njit(cache=True)
def _epsilon_move(ntuple_moves, epsilon, codes, own, opp, moves, white_moves, net, table, geo, scores, indices, seed):
    """A random placement with probability ``epsilon``, else the n-tuple (``ntuple_moves``) or WPC player's: (index, seed)."""
    seed, bits = next_random(seed)
    if bits * (1.0 / 4294967296.0) < epsilon:
        seed, rank = _random_below(seed, bb_count(moves))
        return bb_select(moves, rank), seed
    if ntuple_moves:
        return ntuple_move(codes, own, opp, moves, white_moves, net, geo, scores, indices, seed)
    return wpc_move(table, own, opp, moves, geo, seed)


@njit(cache=True)
def _apply(codes, own, opp, index, white_moves, geo):
    """Place for the mover, keeping ``codes`` in step; returns (own, opp) after the move."""
    try_placement(codes, own, opp, index, WHITE_CODE if white_moves else BLACK_CODE, geo)
    return place(own, opp, index, geo)


@njit(cache=True)
def league_game(net, table, ntuple_black, epsilon, black, white, geo, cells, seed):
    """One epsilon-game of the 1-ply n-tuple player against the WPC player; returns (ntuple discs, wpc discs, seed).

    Each move is uniformly random with probability ``epsilon``, else the player's choice.
    """
    codes = codes_of(black, white, cells)
    scores = np.empty(cells, dtype=np.float64)
    indices = np.empty(cells, dtype=np.int64)
    own, opp = black, white
    white_moves = False
    while True:
        moves = legal_moves(own, opp, geo)
        if bb_any(moves):
            index, seed = _epsilon_move(
                white_moves != ntuple_black, epsilon, codes, own, opp, moves, white_moves, net, table, geo, scores, indices, seed
            )
            own, opp = _apply(codes, own, opp, index, white_moves, geo)
        elif not bb_any(legal_moves(opp, own, geo)):
            break
        own, opp = opp, own
        white_moves = not white_moves
    blacks, whites = (bb_count(opp), bb_count(own)) if white_moves else (bb_count(own), bb_count(opp))
    if ntuple_black:
        return blacks, whites, seed
    return whites, blacks, seed


@njit(cache=True)
def league_points(net, table, double_games, epsilon, black, white, geo, cells, seed):
    """Points of the n-tuple player over ``double_games`` pairs of games (one per colour): win 1, draw 0.5."""
    points = 0.0
    for game in range(2 * double_games):
        mine, theirs, seed = league_game(net, table, game % 2 == 0, epsilon, black, white, geo, cells, seed)
        if mine > theirs:
            points += 1.0
        elif mine == theirs:
            points += 0.5
    return points


@njit(cache=True)
def _td_update(luts, expansions, orbit, codes, invert, step):
    """Add ``step`` to the table entry of every expansion of the position (``invert``: white's view)."""
    for e in range(expansions.shape[0]):
        luts[orbit[e], tuple_index(codes, expansions, e, invert)] += step


@njit(cache=True)
def td_games(net, table, versus_table, games, alpha, epsilon, black, white, geo, cells, seed):
    """TD(0) on afterstates with board inversion; ``net``'s tables are updated in place. Returns the seed.

    Self-play (``versus_table=False``: both colours are the learner) or against the
    1-ply WPC player of ``table`` (the learner takes black in even games, white in
    odd ones; only its afterstates learn). A learner's value of an afterstate (the
    position after its own move, from its view) is the network's sum; after its
    next move ``V(s) += alpha * (V(s') - V(s))`` (the gradient step on the tables
    of ``s``; the value is the plain sum, no squashing: a tanh saturates once the
    hundreds of expansions add up, and learning stops), and at the end the target is the outcome from its view (+1 more
    discs, 0 equal, -1 fewer). Every move is random with probability ``epsilon``.
    """
    expansions, orbit, luts = net
    scores = np.empty(cells, dtype=np.float64)
    indices = np.empty(cells, dtype=np.int64)
    previous = np.empty((2, cells), dtype=np.int64)
    for game in range(games):
        codes = codes_of(black, white, cells)
        has_previous = np.zeros(2, dtype=np.bool_)
        learner = np.ones(2, dtype=np.bool_)
        if versus_table:
            learner[1 - game % 2] = False
        own, opp = black, white
        side = 0
        while True:
            moves = legal_moves(own, opp, geo)
            if bb_any(moves):
                index, seed = _epsilon_move(
                    learner[side], epsilon, codes, own, opp, moves, side == 1, net, table, geo, scores, indices, seed
                )
                own, opp = _apply(codes, own, opp, index, side == 1, geo)
                if learner[side]:
                    value = evaluate(codes, side == 1, net)
                    if has_previous[side]:
                        _td_step(luts, expansions, orbit, previous[side], side == 1, alpha, value, net)
                    previous[side, :] = codes
                    has_previous[side] = True
            elif not bb_any(legal_moves(opp, own, geo)):
                break
            own, opp = opp, own
            side = 1 - side
        margin = bb_count(own) - bb_count(opp)  # from the view of ``side``
        for player in range(2):
            if has_previous[player]:
                mine = margin if player == side else -margin
                target = 1.0 if mine > 0 else (-1.0 if mine < 0 else 0.0)
                _td_step(luts, expansions, orbit, previous[player], player == 1, alpha, target, net)
    return seed


@njit(cache=True)
def _td_step(luts, expansions, orbit, codes, invert, alpha, target, net):
    """Move the value of ``codes`` towards ``target`` by one gradient step of size ``alpha``."""
    old = evaluate(codes, invert, net)
    _td_update(luts, expansions, orbit, codes, invert, alpha * (target - old))
