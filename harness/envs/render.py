"""Pictures of a position for the environments' ``render()``: text for a terminal (``ansi``) and an RGB image (``rgb_array``).

Both take the two players' disc planes and the obstacle plane (``[H, W]`` arrays of
0/1, black's and white's), so they serve every environment alike.
"""

from __future__ import annotations

import numpy as np

CELL_PIXELS = 24
_BOARD = np.array([0, 110, 50], dtype=np.uint8)
_GRID = np.array([0, 70, 30], dtype=np.uint8)
_OBSTACLE = np.array([120, 120, 120], dtype=np.uint8)
_BLACK = np.array([15, 15, 15], dtype=np.uint8)
_WHITE = np.array([240, 240, 240], dtype=np.uint8)


def board_text(black: np.ndarray, white: np.ndarray, obstacles: np.ndarray, to_move: str | None = None) -> str:
    """The board as text: ``X`` black, ``O`` white, ``#`` obstacle, ``.`` empty; columns a.., rows 1.. (a1 top-left)."""
    rows, cols = black.shape
    lines = ["   " + " ".join(chr(ord("a") + c) for c in range(cols))]
    for r in range(rows):
        cells = ["X" if black[r, c] else "O" if white[r, c] else "#" if obstacles[r, c] else "." for c in range(cols)]
        lines.append(f"{r + 1:>2} " + " ".join(cells))
    counts = f"X {int(black.sum())}  O {int(white.sum())}"
    lines.append(counts + (f"  ({to_move} to move)" if to_move else "  (game over)"))
    return "\n".join(lines) + "\n"


def board_image(black: np.ndarray, white: np.ndarray, obstacles: np.ndarray, cell: int = CELL_PIXELS) -> np.ndarray:
    """An RGB image (uint8 ``[H*cell, W*cell, 3]``): green board, grey obstacles, black and white discs."""
    rows, cols = black.shape
    image = np.empty((rows * cell, cols * cell, 3), dtype=np.uint8)
    image[:] = _BOARD
    centre = (cell - 1) / 2
    yy, xx = np.mgrid[0:cell, 0:cell]
    disc = (yy - centre) ** 2 + (xx - centre) ** 2 <= (0.4 * cell) ** 2
    for r in range(rows):
        for c in range(cols):
            tile = image[r * cell : (r + 1) * cell, c * cell : (c + 1) * cell]
            if obstacles[r, c]:
                tile[:] = _OBSTACLE
            elif black[r, c]:
                tile[disc] = _BLACK
            elif white[r, c]:
                tile[disc] = _WHITE
            tile[0, :] = _GRID
            tile[:, 0] = _GRID
    return image
