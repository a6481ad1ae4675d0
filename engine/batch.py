"""Numba kernels that step many games at once: the batched (vector) environment's engine.

``N`` games live in arrays, one row each: ``own``/``opp`` (``uint64[N, n_words]``, the
discs of the player to move and of its opponent), ``colour`` (``int8[N]``, the colour
to move, 0 black) and ``placed`` (``int32[N, 2]``, placements by colour, for the turn
limit). :func:`step_games` plays one placement in games ``lo..hi-1``,
passes for a player without a move, and when a game is over records its final disc
counts and starts it again from the initial position (auto-reset), so the caller never
loops over games in Python. Nothing here knows the threshold K: the caller scores the
final counts. Moves are recorded per game (``history``, PASS = -1) for callers that must
submit finished games to a budget ledger.

The kernels release the GIL (``nogil``): the caller steps disjoint ranges of games on
several threads at once (``harness.envs.games``). numba's ``prange`` cannot be used here:
a parallel loop cannot take the kernels' geometry, a tuple of uint64 words, as an argument.
"""

from __future__ import annotations

from numba import njit

from engine.bits import U64, bb_any, bb_bit, bb_count, bb_select, bb_test, bb_zero, tuple_setitem
from engine.kernels import flips_of, mover_moves, next_random

# The status of a game after a step.
RUNNING = 0
FINISHED = 1
ILLEGAL = 2


@njit(inline="always")
def _row(words, template):
    """Row ``words`` (a uint64 array) as a bitboard tuple shaped like ``template``."""
    out = bb_zero(template)
    for w in range(len(template)):
        out = tuple_setitem(out, w, words[w])
    return out


@njit(inline="always")
def _store(words, board):
    for w in range(len(board)):
        words[w] = board[w]


@njit(inline="always")
def _write_view(own, opp, legal, obstacles, planes, mask, cells):
    """Float32 planes (own, opponent, obstacle) and the int8 mask of the player to move."""
    for cell in range(cells):
        planes[0, cell] = 1.0 if bb_test(own, cell) else 0.0
        planes[1, cell] = 1.0 if bb_test(opp, cell) else 0.0
        planes[2, cell] = 1.0 if bb_test(obstacles, cell) else 0.0
        mask[cell] = 1 if bb_test(legal, cell) else 0


@njit(inline="always")
def _moves_of(own, opp, mover_placed, other_placed, turn_limit, counting, geo):
    return mover_moves(own, opp, mover_placed, other_placed, turn_limit, counting, geo)


def _reset_games(lo, hi, own, opp, colour, placed, plies, legal, planes, masks, black0, white0, obstacles, turn_limit, counting, geo):
    """Every game back to the initial position (black to move); fills the views and legal moves."""
    cells = masks.shape[1]
    for i in range(lo, hi):
        _store(own[i], black0)
        _store(opp[i], white0)
        colour[i] = 0
        placed[i, 0] = 0
        placed[i, 1] = 0
        plies[i] = 0
        moves = _moves_of(black0, white0, 0, 0, turn_limit, counting, geo)
        _store(legal[i], moves)
        _write_view(black0, white0, moves, obstacles, planes[i], masks[i], cells)


def _step_games(
    lo,
    hi,
    own,
    opp,
    colour,
    placed,
    plies,
    legal,
    planes,
    masks,
    history,
    actions,
    status,
    actor,
    black_out,
    white_out,
    black0,
    white0,
    obstacles,
    restart,
    turn_limit,
    counting,
    geo,
):
    """One placement in each game ``i`` in ``lo..hi-1`` (``actions[i]``, a flat index).

    Afterwards a player without a legal move passes (recorded in ``history`` as -1).
    ``status[i]`` is RUNNING, FINISHED or ILLEGAL (the action was not a legal placement:
    nothing changed). A finished game's counts are in ``black_out``/``white_out``; with
    ``restart`` it is already back at the start (auto-reset), else it stays at its end,
    its mask empty, until the caller resets it. ``actor[i]`` is the colour that played;
    ``history[i, :plies[i]]`` the game's moves (a finished game's until its next step).
    ``planes``/``masks``/``legal`` are the views of the player to move next: a running
    game's mover always has a placement, so a mask is never all zeros mid-game.
    """
    template = geo[0]
    cells = masks.shape[1]
    width = history.shape[1]
    for i in range(lo, hi):
        me = _row(own[i], template)
        them = _row(opp[i], template)
        moves = _row(legal[i], template)
        if status[i] == FINISHED:
            plies[i] = 0  # the finished game's moves were read after the last step
        index = actions[i]
        mover = colour[i]
        actor[i] = mover
        black_out[i] = 0
        white_out[i] = 0
        if index < 0 or index >= cells or not bb_test(moves, index):
            status[i] = ILLEGAL
            continue
        flipped = flips_of(me, them, index, geo)
        mine = bb_zero(me)
        theirs = bb_zero(me)
        bit = bb_bit(me, index)
        for w in range(len(me)):
            mine = tuple_setitem(mine, w, me[w] ^ flipped[w] | bit[w])
            theirs = tuple_setitem(theirs, w, them[w] ^ flipped[w])
        placed[i, mover] += 1
        if plies[i] < width:
            history[i, plies[i]] = index
        plies[i] += 1
        # The opponent moves next if it can; else the mover again (a pass); else the game is over.
        next_moves = _moves_of(theirs, mine, placed[i, 1 - mover], placed[i, mover], turn_limit, counting, geo)
        if bb_any(next_moves):
            me, them, mover = theirs, mine, 1 - mover
        else:
            next_moves = _moves_of(mine, theirs, placed[i, mover], placed[i, 1 - mover], turn_limit, counting, geo)
            me, them = mine, theirs
            if bb_any(next_moves):
                if plies[i] < width:
                    history[i, plies[i]] = -1
                plies[i] += 1
        if bb_any(next_moves):
            status[i] = RUNNING
            colour[i] = mover
        else:
            status[i] = FINISHED
            if mover == 0:
                black_out[i] = bb_count(me)
                white_out[i] = bb_count(them)
            else:
                black_out[i] = bb_count(them)
                white_out[i] = bb_count(me)
            colour[i] = mover
            if restart:
                me, them, mover = black0, white0, 0
                placed[i, 0] = 0
                placed[i, 1] = 0
                colour[i] = 0
                next_moves = _moves_of(me, them, 0, 0, turn_limit, counting, geo)
        _store(own[i], me)
        _store(opp[i], them)
        _store(legal[i], next_moves)
        _write_view(me, them, next_moves, obstacles, planes[i], masks[i], cells)


step_games = njit(cache=True, nogil=True)(_step_games)
reset_games = njit(cache=True, nogil=True)(_reset_games)


@njit(cache=True, nogil=True)
def random_actions(lo, hi, legal, seeds, actions, template):
    """A uniformly random legal placement for every game (``seeds``: one xorshift state per game, advanced)."""
    for i in range(lo, hi):
        moves = _row(legal[i], template)
        count = bb_count(moves)
        seed, bits = next_random(seeds[i])
        seeds[i] = seed
        actions[i] = bb_select(moves, int((bits * U64(count)) >> U64(32))) if count > 0 else -1
