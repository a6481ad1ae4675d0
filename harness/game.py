"""One whole game between two policies, every proposed move verified by the engine.

The policies see :class:`~harness.observation.Observation` values only; the
condition (threshold K) is used once, on the final disc counts, to compute the
terminal rewards. Forced passes are played by the harness without asking the
policy. An illegal or non-integer proposal is never played: the game stops with
:class:`IllegalProposalError` / :class:`MoveTypeError` (re-asking with the
reason, for model-driven agents, is a layer above this one).
"""

from __future__ import annotations

import numbers
from fractions import Fraction
from typing import Any

from pydantic import BaseModel, ConfigDict, PrivateAttr

from engine.condition import Condition
from engine.notation import NotationError, format_move
from engine.rules import IllegalMoveError, Rules
from engine.state import BLACK, COLOUR_NAMES, PASS, State
from harness.observation import Observation, observe
from harness.policy import Policy, policy_name

GAME_RECORD_SCHEMA = 1

Step = tuple[Observation, int]


class IllegalProposalError(IllegalMoveError):
    """A policy proposed a move the rules do not allow; it was not played."""

    def __init__(self, policy: str, colour: int, move: int, legal: tuple[int, ...], rules: Rules) -> None:
        self.policy, self.colour, self.move, self.legal = policy, colour, move, legal
        options = ", ".join(_notation(m, rules) for m in legal)
        super().__init__(
            f"policy {policy!r} ({COLOUR_NAMES[colour]}) proposed the illegal move {_notation(move, rules)}; "
            f"legal moves: {options}. The move was not played."
        )


class MoveTypeError(TypeError):
    """A policy returned something that is not a move index (an int, or PASS = -1)."""

    def __init__(self, policy: str, colour: int, proposal: object, legal: tuple[int, ...], rules: Rules) -> None:
        self.policy, self.colour, self.proposal, self.legal = policy, colour, proposal, legal
        options = ", ".join(f"{_notation(m, rules)} = {m}" for m in legal)
        super().__init__(
            f"policy {policy!r} ({COLOUR_NAMES[colour]}) returned {proposal!r} of type {type(proposal).__name__}; "
            f"act() must return a flat move index (int, row * cols + col). Legal moves: {options}"
        )


class GameRecord(BaseModel):
    """The outcome of one game, JSON-serialisable (``model_dump_json``).

    ``moves`` holds every ply in order, forced passes (PASS = -1) included, and
    ``plies == len(moves)``. ``rho_black``/``rho_white`` are own/(own+opponent)
    computed exactly and shown as floats (``rho_exact`` gives the Fraction).
    ``rewards`` is (black, white) in {+1, 0, -1}. The trajectory (the
    observation and chosen move at each decision the policies were asked for;
    forced passes are not decisions) is kept on the object for learning agents
    and is not serialised. Equality compares the serialised fields only.
    """

    model_config = ConfigDict(frozen=True)

    schema_version: int = GAME_RECORD_SCHEMA
    layout: str
    black_policy: str
    white_policy: str
    moves: tuple[int, ...]
    black: int
    white: int
    rho_black: float
    rho_white: float
    rewards: tuple[int, int]
    plies: int

    _trajectory: tuple[Step, ...] = PrivateAttr(default=())

    @property
    def trajectory(self) -> tuple[Step, ...]:
        """(observation, move) at every decision, in play order (empty for a record loaded from JSON)."""
        return self._trajectory

    def rho_exact(self, colour: int) -> Fraction:
        """own / (own + opponent) discs of ``colour`` at the end, as an exact fraction."""
        own, opp = (self.black, self.white) if colour == BLACK else (self.white, self.black)
        return _rho(own, opp)

    def reward(self, colour: int) -> int:
        """The terminal reward of ``colour``."""
        return self.rewards[colour]

    def without_trajectory(self) -> GameRecord:
        """A copy that keeps only the serialised fields (what a ledger stores)."""
        return GameRecord.model_validate(self.model_dump())

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, GameRecord) and self.model_dump() == other.model_dump()

    __hash__ = None  # type: ignore[assignment]


def play_game(rules: Rules, condition: Condition, black_policy: Policy, white_policy: Policy) -> GameRecord:
    """Play one game from the initial state and return its record (trajectory attached).

    Raises :class:`IllegalProposalError` (an ``IllegalMoveError``) or
    :class:`MoveTypeError` if a policy proposes a bad move; nothing is played then.
    The same policy object may play both colours (self-play).
    """
    policies = (black_policy, white_policy)
    state = rules.initial_state()
    moves: list[int] = []
    trajectory: list[Step] = []
    while True:
        legal = rules.legal_moves(state)
        if not legal:
            break
        if legal == [PASS]:
            move = PASS
        else:
            obs = observe(rules, state)
            move = _checked(policies[state.to_move], obs, rules)
            trajectory.append((obs, move))
        state = rules.play(state, move)
        moves.append(move)
    return _record(rules, condition, state, policies, moves, trajectory)


def _checked(policy: Policy, obs: Observation, rules: Rules) -> int:
    """The policy's proposal as a plain int, after checking it is one of the legal moves."""
    proposal = policy.act(obs)
    if isinstance(proposal, bool) or not isinstance(proposal, numbers.Integral):
        raise MoveTypeError(policy_name(policy), obs.colour, proposal, obs.legal_moves, rules)
    move = int(proposal)
    if move not in obs.legal_moves:
        raise IllegalProposalError(policy_name(policy), obs.colour, move, obs.legal_moves, rules)
    return move


def _record(
    rules: Rules, condition: Condition, state: State, policies: tuple[Policy, Policy],
    moves: list[int], trajectory: list[Step],
) -> GameRecord:
    black, white = rules.counts(state)
    record = GameRecord(
        layout=rules.layout.name,
        black_policy=policy_name(policies[0]),
        white_policy=policy_name(policies[1]),
        moves=tuple(moves),
        black=black,
        white=white,
        rho_black=float(_rho(black, white)),
        rho_white=float(_rho(white, black)),
        rewards=condition.rewards(black, white),
        plies=len(moves),
    )
    record._trajectory = tuple(trajectory)
    return record


def _rho(own: int, opp: int) -> Fraction:
    return Fraction(own, own + opp) if own + opp else Fraction(0)


def _notation(move: int, rules: Rules) -> str:
    try:
        return format_move(move, rules.layout)
    except NotationError:
        return f"{move} (off the {rules.layout.rows} x {rules.layout.cols} board)"
