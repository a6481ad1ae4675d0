"""Numba kernels of the rules: legal moves, flips, random playouts, perft.

Every kernel takes the board's geometry as one tuple ``geo`` (see ``geometry.py``).
Obstacles are never empty and never hold a disc, so they stop every line exactly
like the board edge. Bitboards are tuples of uint64 words (``bits.py``);
``own``/``opp`` are the discs of the player to move and of its opponent.
"""

from __future__ import annotations

from numba import njit

from engine.bits import (
    ONE,
    U64,
    ZERO,
    bb_and,
    bb_andnot,
    bb_any,
    bb_bit,
    bb_count,
    bb_or,
    bb_select,
    bb_xor,
    bb_zero,
    lanes_and,
    lanes_down,
    lanes_merge,
    lanes_of,
    lanes_or,
    lanes_up,
    leading_zeros,
    mask_if,
    tuple_setitem,
)

# Turn-limit counting modes, as integers for the kernels.
COUNT_PER_PLAYER = 0
COUNT_TOTAL = 1
NO_LIMIT = 0


def _legal_moves(own, opp, geo):
    """Bitboard of the mover's legal placements.

    In each direction, ``run`` starts at the opponent discs next to an own disc and
    grows one cell per step along the line of opponent discs behind them, for
    ``reach`` steps (a fixed count: the loop never mispredicts); a move is an empty
    cell one step past a run. The four upward and the four downward directions are
    computed side by side as lanes.
    """
    playable, amounts, up_masks, down_masks, reach, _ = geo
    own_lanes = lanes_of(own, up_masks)
    opp_lanes = lanes_of(opp, up_masks)
    up_runs = lanes_and(up_masks, opp_lanes)
    down_runs = lanes_and(down_masks, opp_lanes)
    up = lanes_and(lanes_up(own_lanes, amounts), up_runs)
    down = lanes_and(lanes_down(own_lanes, amounts), down_runs)
    for _ in range(reach - 1):
        up = lanes_or(up, lanes_and(lanes_up(up, amounts), up_runs))
        down = lanes_or(down, lanes_and(lanes_down(down, amounts), down_runs))
    up = lanes_and(lanes_up(up, amounts), up_masks)
    down = lanes_and(lanes_down(down, amounts), down_masks)
    moves = lanes_merge(lanes_or(up, down), own)
    return bb_andnot(bb_and(moves, playable), bb_or(own, opp))


def _flips_of(own, opp, index, geo):
    """Bitboard of the opponent discs a placement at ``index`` flips (empty if none).

    Along each ray from the cell, the first cell that is not an opponent disc
    ends the line; the line flips iff that cell holds an own disc. Branch-free.
    """
    rays = geo[5]
    n = len(own)
    flipped = bb_zero(own)
    for d in range(8):
        base = (index * 8 + d) * n
        line = bb_zero(own)
        hit = ZERO
        alive = ~ZERO
        if d < 4:  # towards higher indices: the blocker is the lowest set bit
            for i in range(n):
                ray = rays[base + i]
                blockers = ray & ~opp[i]
                first = blockers & (ZERO - blockers)
                line = tuple_setitem(line, i, ray & (first - ONE) & alive)
                hit |= first & own[i] & alive
                alive &= mask_if(blockers, ~ZERO) ^ ~ZERO
        else:  # towards lower indices: the blocker is the highest set bit
            for i in range(n - 1, -1, -1):
                ray = rays[base + i]
                blockers = ray & ~opp[i]
                found = mask_if(blockers, ~ZERO)
                first = (ONE << (U64(63) - leading_zeros(blockers | ONE))) & found
                above = ~((first << ONE) - ONE)
                line = tuple_setitem(line, i, ray & (above | ~found) & alive)
                hit |= first & own[i] & alive
                alive &= ~found
        keep = mask_if(hit, ~ZERO)
        for i in range(n):
            flipped = tuple_setitem(flipped, i, flipped[i] | (line[i] & keep))
    return flipped


# Each rule kernel is compiled twice from one source: as a cached function of its own
# (quick to compile, called by everything else) and as an inlined copy for the
# random-playout loop, where inlining measures 10-25% faster but compiles slowly.
legal_moves = njit(cache=True)(_legal_moves)
flips_of = njit(cache=True)(_flips_of)
_legal_moves_inlined = njit(inline="always")(_legal_moves)
_flips_of_inlined = njit(inline="always")(_flips_of)


@njit(cache=True, inline="always")
def may_place(placed_mover, placed_other, turn_limit, counting):
    """Whether the turn limit still lets the mover place a disc."""
    if turn_limit == NO_LIMIT:
        return True
    if counting == COUNT_TOTAL:
        return placed_mover + placed_other < turn_limit
    return placed_mover < turn_limit


@njit(cache=True)
def mover_moves(own, opp, placed_mover, placed_other, turn_limit, counting, geo):
    """Legal placements of the mover under the turn limit (empty once it is used up)."""
    if may_place(placed_mover, placed_other, turn_limit, counting):
        return legal_moves(own, opp, geo)
    return bb_zero(own)


@njit(cache=True, inline="always")
def next_random(seed):
    """xorshift64* step: returns (new state, 32 random bits)."""
    seed ^= seed >> U64(12)
    seed ^= seed << U64(25)
    seed ^= seed >> U64(27)
    return seed, (seed * U64(0x2545F4914F6CDD1D)) >> U64(32)


@njit(cache=True)
def place(own, opp, index, geo):
    """(own, opp) after the mover places at ``index`` (assumed legal)."""
    flipped = flips_of(own, opp, index, geo)
    return bb_or(bb_xor(own, flipped), bb_bit(own, index)), bb_xor(opp, flipped)


@njit(cache=True)
def random_playout(own, opp, placed_mover, placed_other, turn_limit, counting, geo, seed, max_turns=-1):
    """Play uniformly random legal moves to the end of the game, or for ``max_turns`` turns.

    A turn is a placement or a forced pass; ``max_turns < 0`` means no cap. Returns
    (mover's discs, opponent's discs, placements made, new seed), the counts from
    the point of view of the player to move at the start.
    """
    swapped = False
    plies = 0
    turns = 0
    passes = 0
    while turns != max_turns and passes < 2:
        turns += 1
        moves = bb_zero(own)
        if may_place(placed_mover, placed_other, turn_limit, counting):
            moves = _legal_moves_inlined(own, opp, geo)
        if bb_any(moves):
            passes = 0
            seed, bits = next_random(seed)
            index = bb_select(moves, int((bits * U64(bb_count(moves))) >> U64(32)))
            flipped = _flips_of_inlined(own, opp, index, geo)
            own = bb_or(bb_xor(own, flipped), bb_bit(own, index))
            opp = bb_xor(opp, flipped)
            placed_mover += 1
            plies += 1
        else:
            passes += 1
        own, opp = opp, own
        placed_mover, placed_other = placed_other, placed_mover
        swapped = not swapped
    if swapped:
        own, opp = opp, own
    return bb_count(own), bb_count(opp), plies, seed


@njit(cache=True)
def random_games(own, opp, placed_mover, placed_other, games, turn_limit, counting, geo, seed):
    """Play ``games`` random games from one position; returns the placements made in all."""
    total = 0
    for _ in range(games):
        _, _, plies, seed = random_playout(own, opp, placed_mover, placed_other, turn_limit, counting, geo, seed)
        total += plies
    return total


@njit(cache=True)
def perft(own, opp, placed_mover, placed_other, depth, turn_limit, counting, geo):
    """Leaf count at ``depth`` plies: a forced pass is one ply, a finished game one leaf."""
    if depth == 0:
        return 1
    moves = mover_moves(own, opp, placed_mover, placed_other, turn_limit, counting, geo)
    if not bb_any(moves):
        if not bb_any(mover_moves(opp, own, placed_other, placed_mover, turn_limit, counting, geo)):
            return 1
        return perft(opp, own, placed_other, placed_mover, depth - 1, turn_limit, counting, geo)
    if depth == 1:
        return bb_count(moves)
    total = 0
    remaining = moves
    while bb_any(remaining):
        index = bb_select(remaining, 0)
        remaining = bb_xor(remaining, bb_bit(own, index))
        child_own, child_opp = place(own, opp, index, geo)
        total += perft(child_opp, child_own, placed_other, placed_mover + 1, depth - 1, turn_limit, counting, geo)
    return total


REPLAY_FINISHED = 0
REPLAY_ILLEGAL = 1
REPLAY_UNFINISHED = 2


@njit(cache=True)
def replay(black, white, moves, cells, turn_limit, counting, geo):
    """Check a game's move list from the initial position (black to move).

    ``moves`` is an int64 array of flat indices, PASS = -1 for a forced pass.
    Returns (status, ply, black discs, white discs): ``REPLAY_FINISHED`` if every
    move was legal and the game is over after the last one, ``REPLAY_ILLEGAL`` with
    the first illegal ply, ``REPLAY_UNFINISHED`` if the moves end before the game
    does. The counts are those after the last legal move.
    """
    own, opp = black, white
    placed_mover, placed_other = 0, 0
    for ply in range(len(moves)):
        move = moves[ply]
        legal = mover_moves(own, opp, placed_mover, placed_other, turn_limit, counting, geo)
        if move == -1:
            other = mover_moves(opp, own, placed_other, placed_mover, turn_limit, counting, geo)
            if bb_any(legal) or not bb_any(other):
                return _replayed(REPLAY_ILLEGAL, ply, own, opp, ply)
        else:
            if move < 0 or move >= cells or not bb_any(bb_and(legal, bb_bit(own, move))):
                return _replayed(REPLAY_ILLEGAL, ply, own, opp, ply)
            own, opp = place(own, opp, move, geo)
            placed_mover += 1
        own, opp = opp, own
        placed_mover, placed_other = placed_other, placed_mover
    ply = len(moves)
    if bb_any(mover_moves(own, opp, placed_mover, placed_other, turn_limit, counting, geo)) or bb_any(
        mover_moves(opp, own, placed_other, placed_mover, turn_limit, counting, geo)
    ):
        return _replayed(REPLAY_UNFINISHED, ply, own, opp, ply)
    return _replayed(REPLAY_FINISHED, ply, own, opp, ply)


@njit(cache=True, inline="always")
def _replayed(status, ply, mover, other, plies_played):
    """(status, ply, black count, white count): black moved at even plies, so after an odd number white is to move."""
    if plies_played % 2 == 0:
        return status, ply, bb_count(mover), bb_count(other)
    return status, ply, bb_count(other), bb_count(mover)
