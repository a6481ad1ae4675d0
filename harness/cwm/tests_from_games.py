"""Unit tests from the agent's own transcripts, run against a candidate program in the sandbox.

Two kinds, built by the harness from finished games replayed by the true engine:

- a *transition* test per logged step: the legal-move set (a pass is ``[-1]``),
  the player to move, that the state is not over, the successor of the move
  played (board, player to move, placements: turn limits and passes included),
  and whether the successor is over (the end of the game or of the turn limit);
- an *outcome* test per finished game's final position (deduplicated by final
  disc counts: the outcome depends on them alone): it is over and ``returns``
  gives the rewards the environment gave.

Scores (:class:`Score`): transition accuracy is the fraction of transition tests
passed; outcome accuracy weights each outcome test by the inverse of how often its
reward value (black's reward) occurs, so a rare draw counts as much as all the
majority's wins together; ``h`` is the mean of the two (the outcome accuracy alone
when there is no transition test). Tests run only inside a
:class:`~harness.sandbox.client.SandboxWorker`, in batches (``call_many``).
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from engine.rules import Rules
from engine.state import State
from harness.cwm.world import Outcome, Step, comparable, final_state, game_steps, rules_layout, state_json
from harness.sandbox.client import SandboxWorker
from harness.sandbox.failures import Failure, Result

BATCH_CALLS = 500
Call = tuple[str, tuple[Any, ...]]


@dataclass(frozen=True)
class UnitTest:
    """Calls to make and what each must answer (compared by ``check`` of the call's function)."""

    kind: str  # "transition" | "outcome"
    name: str
    calls: tuple[Call, ...]
    expected: tuple[Any, ...]
    weight: float = 1.0


@dataclass(frozen=True)
class TestFailure:
    """A failed test: the call that failed, what was expected and what came back (or the failure)."""

    test: UnitTest
    call: str
    expected: Any
    actual: Any
    failure: Failure | None = None

    def describe(self, chars: int = 900) -> str:
        """The failure as a line for a refinement prompt (the traceback after it)."""
        if self.test.kind == "outcome":
            board = self.test.calls[0][1][0]["board"]
            head = f"final discs black {board.count(1)}, white {board.count(2)}"
            if self.call == "returns":
                head += f": expected returns {_show(self.expected)}"
        else:
            head = f"{self.test.name}: {self.call}({_args(self.test, self.call)})"
            head += f" expected {_show(self.expected)}"
        got = f"a {self.failure.kind.value} failure: {self.failure.message}" if self.failure else _show(self.actual)
        text = f"{head}, your program returned {got}" if self.call == "returns" and not self.failure else f"{head}, got {got}"
        if self.failure is not None and self.failure.traceback:
            text += "\n" + self.failure.traceback[-chars:]
        return text


@dataclass
class Score:
    """A program's results on a set of tests."""

    transition: float | None
    outcome: float | None
    passed: int
    total: int
    failures: list[TestFailure] = field(default_factory=list)
    load_failure: Failure | None = None

    @property
    def h(self) -> float:
        """The weighted fraction of tests passed (module docstring)."""
        parts = [value for value in (self.transition, self.outcome) if value is not None]
        return sum(parts) / len(parts) if parts else 0.0

    @property
    def all_passed(self) -> bool:
        return self.total > 0 and self.passed == self.total


def transition_test(rules: Rules, step: Step) -> UnitTest:
    """The test of one logged step (see the module docstring)."""
    before, after = state_json(rules, step.state), state_json(rules, step.after)
    legal = sorted(step.legal)
    calls = (
        ("legal_actions", (before,)),
        ("current_player", (before,)),
        ("is_terminal", (before,)),
        ("apply_action", (before, step.move)),
        ("is_terminal", (after,)),
    )
    expected = (legal, step.state.to_move, False, comparable(after), step.over)
    return UnitTest("transition", f"game {step.game} ply {step.ply}", calls, expected)


def initial_test(rules: Rules) -> UnitTest:
    """``initial_state(layout)`` gives the initial position (its board, player to move, placements)."""
    expected = comparable(state_json(rules, rules.initial_state()))
    return UnitTest("transition", "the initial state", (("initial_state", (rules_layout(rules),)),), (expected,))


def outcome_test(rules: Rules, state: State, rewards: tuple[int, int], name: str) -> UnitTest:
    """The test of a final position: over, and ``returns`` gives ``rewards``."""
    final = state_json(rules, state)
    return UnitTest("outcome", name, (("is_terminal", (final,)), ("returns", (final,))), (True, [rewards[0], rewards[1]]))


def outcome_weights(tests: Sequence[UnitTest]) -> list[UnitTest]:
    """The tests with each outcome test weighted by 1 / (how many outcome tests share its reward value)."""
    counts = Counter(tuple(t.expected[1]) for t in tests if t.kind == "outcome")
    return [replace(t, weight=1.0 / counts[tuple(t.expected[1])]) if t.kind == "outcome" else t for t in tests]


class TestSuite:
    """Transition and outcome tests, deduplicated (outcomes by final counts, transitions by state and move)."""

    __test__ = False  # not a pytest class

    def __init__(self) -> None:
        self.transitions: dict[str, UnitTest] = {}
        self.outcomes: dict[tuple[int, int], UnitTest] = {}

    def add_game(self, rules: Rules, moves: Sequence[int], rewards: tuple[int, int], game: int, transitions: bool = True) -> Outcome:
        """The tests of a finished game (its transitions only if asked); returns its outcome."""
        if transitions:
            if "initial" not in self.transitions:
                self.transitions["initial"] = initial_test(rules)
            for step in game_steps(rules, moves, game):
                self.add_transition(rules, step)
        state = final_state(rules, moves)
        black, white = rules.counts(state)
        if (black, white) not in self.outcomes:
            self.outcomes[(black, white)] = outcome_test(rules, state, rewards, f"game {game}")
        return Outcome(black, white, (int(rewards[0]), int(rewards[1])))

    def add_transition(self, rules: Rules, step: Step) -> None:
        key = json.dumps(
            [step.state.black, step.state.white, step.state.to_move, step.state.placed_black, step.state.placed_white, step.move]
        )
        self.transitions.setdefault(key, transition_test(rules, step))

    @property
    def tests(self) -> list[UnitTest]:
        return outcome_weights([*self.transitions.values(), *self.outcomes.values()])

    def __len__(self) -> int:
        return len(self.transitions) + len(self.outcomes)


def random_transitions(rules: Rules, count: int, seed: int) -> list[UnitTest]:
    """``count`` transition tests from uniformly random games of the true engine (the held-out set's)."""
    rng, game = random.Random(seed), 0
    tests: list[UnitTest] = []
    while len(tests) < count:
        state, moves = rules.initial_state(), []
        while legal := rules.legal_moves(state):
            moves.append(legal[rng.randrange(len(legal))])
            state = rules.play(state, moves[-1])
        tests.extend(transition_test(rules, step) for step in game_steps(rules, moves, -1 - game))
        game += 1
    return tests[:count]


def run_tests(worker: SandboxWorker, tests: Sequence[UnitTest], batch: int = BATCH_CALLS) -> Score:
    """Every test against the program in ``worker``, ``batch`` calls per message; never raises for the program."""
    started = worker.start()
    if not started.ok:
        failures = [TestFailure(t, t.calls[0][0], t.expected[0], None, started.failure) for t in tests]
        return Score(
            0.0 if any(t.kind == "transition" for t in tests) else None,
            0.0 if any(t.kind == "outcome" for t in tests) else None,
            0,
            len(tests),
            failures,
            started.failure,
        )
    results = _answers(worker, [call for t in tests for call in t.calls], batch)
    failures, passed, position = [], {"transition": [0.0, 0.0], "outcome": [0.0, 0.0]}, 0
    count = 0
    for test in tests:
        answers = results[position : position + len(test.calls)]
        position += len(test.calls)
        failure = _first_failure(test, answers)
        tally = passed[test.kind]
        tally[1] += test.weight
        if failure is None:
            tally[0] += test.weight
            count += 1
        else:
            failures.append(failure)
    ratio = {kind: (got / out if out else None) for kind, (got, out) in passed.items()}
    return Score(ratio["transition"], ratio["outcome"], count, len(tests), failures)


def _answers(worker: SandboxWorker, calls: list[Call], batch: int) -> list[Result]:
    results: list[Result] = []
    for start in range(0, len(calls), batch):
        results.extend(worker.call_many(calls[start : start + batch]))
    return results


def _first_failure(test: UnitTest, answers: Sequence[Result]) -> TestFailure | None:
    for (method, _), expected, result in zip(test.calls, test.expected, answers):
        if not result.ok:
            return TestFailure(test, method, expected, None, result.failure)
        if not _agrees(method, expected, result.value):
            return TestFailure(test, method, expected, result.value)
    return None


def _agrees(method: str, expected: Any, actual: Any) -> bool:
    if method == "legal_actions":
        return isinstance(actual, list) and all(type(a) is int for a in actual) and sorted(actual) == expected
    if method in ("apply_action", "initial_state"):
        return comparable(actual) == expected
    if method == "is_terminal":
        return isinstance(actual, bool) and actual == expected
    if method == "current_player":
        return type(actual) is int and actual == expected
    if method == "returns":
        try:
            return len(actual) == 2 and all(abs(float(a) - e) < 1e-9 for a, e in zip(actual, expected))
        except (TypeError, ValueError):
            return False
    return bool(actual == expected)


def _show(value: Any, chars: int = 300) -> str:
    text = json.dumps(value, separators=(",", ":")) if _jsonable(value) else repr(value)
    return text if len(text) <= chars else text[:chars] + "..."


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def _args(test: UnitTest, method: str) -> str:
    for name, args in test.calls:
        if name == method:
            return ", ".join(_show(a, 2000) for a in args)
    return ""


def outcomes_of(records: Iterable[Any]) -> list[Outcome]:
    """The outcomes of ledger records (final counts and rewards)."""
    return [Outcome(r.black, r.white, (int(r.rewards[0]), int(r.rewards[1]))) for r in records]
