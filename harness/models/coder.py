"""``mock/coder``: an embedded offline "model" that answers the cwm agent's prompts with real Python source.

It reads only what a real model would: the dialogue of ``cwm_synthesize.j2`` and
``cwm_refine.j2``. Its transition rules are the ones the prompt states (Othello
on the layout it is given, passes, the layout's turn limit, read by the program
from the layout). Its reward code is its hypothesis about the hidden rule:

- asked to synthesize, it writes the rule of standard Othello, a plain majority
  (more discs wins), whatever the evidence says: a first draft, wrong wherever
  K is not above 1;
- asked to refine (failing tests shown), it reads every ``final discs black B,
  white W: ... returns [r0, r1]`` line of the dialogue (the evidence table and
  the failing outcome tests), deduces the feasible set of K exactly
  (:mod:`agents.interval.belief`) and writes the threshold rule with the
  simplest K in that set: the decimal with the fewest digits, nearest the middle;
  K = 1.01 when the set is unbounded above (any K above 1 acts alike), -0.01
  when unbounded below. Evidence no threshold explains leaves the majority rule.

Deterministic, stateless, no network or key; registered as ``mock/coder`` in
:data:`harness.models.mock.MOCK_MODELS`, like ``mock/reasoner``.
"""

from __future__ import annotations

import random
import re
from fractions import Fraction

from agents.interval.belief import HALF, InconsistentRecord, KInterval, constraints
from harness.models.messages import Messages, message_text

_EVIDENCE = re.compile(r"final discs black (\d+), white (\d+): (?:expected )?returns \[\s*(-?[\d.]+)\s*,\s*(-?[\d.]+)\s*\]")
REFINE_MARK = "Failing tests:"
MAJORITY_ABOVE, MINORITY_BELOW = Fraction("1.01"), Fraction("-0.01")

RULES = '''"""Othello on any layout with obstacles and an optional turn limit (written by mock/coder)."""
from fractions import Fraction

STEPS = [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)]


def initial_state(layout):
    rows, cols = layout["rows"], layout["cols"]
    board = [0] * (rows * cols)
    for value, name in ((3, "obstacles"), (1, "black"), (2, "white")):
        for r, c in layout[name]:
            board[r * cols + c] = value
    return {"rows": rows, "cols": cols, "board": board, "player": 0, "placed": [0, 0],
            "limit": layout.get("turn_limit"), "counting": layout.get("turn_counting", "per_player")}


def current_player(state):
    return state["player"]


def _may_place(state, player):
    limit = state["limit"]
    if limit is None:
        return True
    if state["counting"] == "total":
        return sum(state["placed"]) < limit
    return state["placed"][player] < limit


def _flips(state, index, player):
    rows, cols, board = state["rows"], state["cols"], state["board"]
    me, opp = player + 1, 2 - player
    r0, c0 = divmod(index, cols)
    flipped = []
    for dr, dc in STEPS:
        line, r, c = [], r0 + dr, c0 + dc
        while 0 <= r < rows and 0 <= c < cols and board[r * cols + c] == opp:
            line.append(r * cols + c)
            r, c = r + dr, c + dc
        if line and 0 <= r < rows and 0 <= c < cols and board[r * cols + c] == me:
            flipped.extend(line)
    return flipped


def _placements(state, player):
    if not _may_place(state, player):
        return []
    board = state["board"]
    return [i for i in range(len(board)) if board[i] == 0 and _flips(state, i, player)]


def legal_actions(state):
    moves = _placements(state, state["player"])
    if moves:
        return moves
    return [-1] if _placements(state, 1 - state["player"]) else []


def apply_action(state, action):
    player = state["player"]
    new = dict(state)
    new["player"] = 1 - player
    if action == -1:
        return new
    board = list(state["board"])
    for j in _flips(state, action, player):
        board[j] = player + 1
    board[action] = player + 1
    placed = list(state["placed"])
    placed[player] += 1
    new["board"], new["placed"] = board, placed
    return new


def is_terminal(state):
    return not _placements(state, 0) and not _placements(state, 1)
'''

MAJORITY_RETURNS = '''

def returns(state):
    """Hypothesis: standard Othello, the player with more discs wins."""
    black, white = state["board"].count(1), state["board"].count(2)
    if black > white:
        return [1, -1]
    if white > black:
        return [-1, 1]
    return [0, 0]
'''

THRESHOLD_RETURNS = '''

K = Fraction("{k}")  # hypothesis: a player wins iff its share own / (own + opponent) lies strictly between 0.5 and K


def returns(state):
    """{why}"""
    black, white = state["board"].count(1), state["board"].count(2)
    low, high = min(K, Fraction(1, 2)), max(K, Fraction(1, 2))

    def wins(own, other):
        return own + other > 0 and low < Fraction(own, own + other) < high

    if wins(black, white):
        return [1, -1]
    if wins(white, black):
        return [-1, 1]
    return [0, 0]
'''


def evidence(text: str) -> list[tuple[int, int, int]]:
    """(black, white, black's return) of every final-discs line in ``text``."""
    return [(int(b), int(w), int(round(float(r0)))) for b, w, r0, _ in _EVIDENCE.findall(text)]


def feasible_k(games: list[tuple[int, int, int]]) -> KInterval | None:
    """The K every game allows (None when no threshold explains them all)."""
    interval = KInterval.everything()
    for black, white, reward in games:
        for constraint in constraints(black, white, reward):
            interval = interval.intersect(constraint)
        if interval.is_empty:
            return None
    return interval


def simplest_k(interval: KInterval) -> Fraction:
    """The simplest K in ``interval``: fewest decimal digits, then nearest its middle (see the module docstring)."""
    if interval.upper is None:
        return MAJORITY_ABOVE if interval.contains(MAJORITY_ABOVE) else (interval.lower or HALF) + Fraction(1, 100)
    if interval.lower is None:
        return MINORITY_BELOW if interval.contains(MINORITY_BELOW) else interval.upper - Fraction(1, 100)
    middle = (interval.lower + interval.upper) / 2
    for digits in range(1, 7):
        step = Fraction(1, 10**digits)
        first = (interval.lower / step).__floor__()
        candidates = [n * step for n in range(first, (interval.upper / step).__ceil__() + 1) if interval.contains(n * step)]
        if candidates:
            return min(candidates, key=lambda k: (abs(k - middle), k))
    return middle


def program_for(text: str) -> str:
    """The program the coder writes for a dialogue whose text is ``text``."""
    if REFINE_MARK not in text:
        return RULES + MAJORITY_RETURNS
    games = evidence(text)
    try:
        interval = feasible_k(games)
    except InconsistentRecord:  # pragma: no cover - feasible_k returns None instead
        interval = None
    if interval is None or not games:
        return RULES + MAJORITY_RETURNS
    k = simplest_k(interval)
    why = f"K = {k} is the simplest threshold in {interval.describe()}, the set every finished game allows."
    return RULES + THRESHOLD_RETURNS.format(k=str(k) if k.denominator != 1 else f"{k.numerator}", why=why)


ALL_STEPS = "STEPS = [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)]"
ORTHOGONAL_STEPS = "STEPS = [(-1, 0), (0, -1), (0, 1), (1, 0)]"


def coded_program_without_diagonals(messages: Messages, rng: random.Random) -> str:
    """``mock/coder-no-diagonals``: mock/coder's reply with a planted bug its refinements never fix: no flips along
    diagonals (its transitions are wrong; the cwm agent must notice and not plan on the engine with it)."""
    return coded_program(messages, rng).replace(ALL_STEPS, ORTHOGONAL_STEPS)


def coded_program(messages: Messages, rng: random.Random) -> str:
    """The reply of ``mock/coder``: a short note and the whole program in a python block."""
    text = "\n".join(message_text(m) for m in messages if m.get("role") != "assistant")
    program = program_for(text)
    note = "Here is the corrected program." if REFINE_MARK in text else "Here is the program."
    return f"{note}\n\n```python\n{program}```\n"
