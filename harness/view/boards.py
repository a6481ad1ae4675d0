"""The board before every ply of a recorded game, from the engine (the page never re-implements the rules)."""

from __future__ import annotations

from collections.abc import Sequence

from engine.rules import IllegalMoveError, Rules
from engine.state import BLACK, State
from harness.view.data import Board

EMPTY, BLACK_DISC, WHITE_DISC, OBSTACLE = ".", "X", "O", "#"


def board_of(rules: Rules, state: State) -> Board:
    """``state`` as the page draws it: cells row by row, the mover, its legal placements, the disc counts."""
    layout = rules.layout
    obstacles = layout.mask(layout.obstacles)
    cells = []
    for index in range(layout.cells):
        bit = 1 << index
        cells.append(OBSTACLE if obstacles & bit else BLACK_DISC if state.black & bit else WHITE_DISC if state.white & bit else EMPTY)
    legal = tuple(move for move in rules.legal_moves(state) if move >= 0)
    black, white = rules.counts(state)
    return Board(cells="".join(cells), to_move="black" if state.to_move == BLACK else "white", legal=legal, black=black, white=white)


def game_boards(rules: Rules, moves: Sequence[int]) -> tuple[Board, ...]:
    """The board before each of ``moves`` and after the last; stops early at a move the engine refuses."""
    state = rules.initial_state()
    boards = [board_of(rules, state)]
    for move in moves:
        try:
            state = rules.play(state, move)
        except IllegalMoveError:
            break  # `arena replay` reports it; the page shows the game up to there
        boards.append(board_of(rules, state))
    return tuple(boards)
