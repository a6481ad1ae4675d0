"""Bad-sample rejection (the seed paper's appendix E): final candidate programs play each other, clear losers go.

Each candidate program becomes an agent (MCTS with ``simulations`` simulations on
its own program, in its own persistent :class:`~harness.sandbox.client.SandboxWorker`),
and each program in turn is the *host*, the stand-in for the true game: it gives the
initial state of the layout, the player to move, the legal actions, the successor,
the end and the returns. On every host, every ordered pair of agents (self-play
included) plays ``games_per_pair`` games, agent ``a`` as player 0 and ``b`` as
player 1. The true engine is never consulted (the agent does not know K): the host
is the only judge.

Faults and voids (a choice; the paper makes *both* players lose on any failure):

- an agent that fails (its planning call fails in any way, or it answers an action
  the host does not list as legal) loses that game: it scores -1, the lowest return
  of the CWM API, and the game does not count for its opponent, which is neither
  rewarded nor blamed for the other's fault;
- a failure of the host (any failing call, a live state with no legal action or a
  player that is not 0 or 1, returns that are not two numbers in [-1, 1], no end
  within ``max_plies``) voids the game: it counts for nobody. A broken host is
  then found out by its own agent, which fails on the sound hosts.

Agents are ranked by their mean payoff over the games counted for them; those below
``best - margin * range`` are rejected, ``range`` being the spread of the payoffs
observed (2 when returns span [-1, 1]). A candidate whose worker does not start
(a syntax error, a crash or a loop at import) plays no game and is rejected with its
failure counted; one with no counted game is kept only when no candidate has one.
So ``kept`` is never empty when at least one candidate could start.

How the agent calls it, on its final candidates (their sources, the layout in the
program's JSON format, ``harness.cwm.world.rules_layout(rules)``)::

    rejection = reject_bad_samples([c.source for c in finals], rules_layout(rules),
                                   limits=config.refine.limits, unsandboxed=config.refine.unsandboxed,
                                   simulations=16, games_per_pair=2, margin=0.10, seed=seed)
    finals = [finals[i] for i in rejection.kept]          # never empty if one could start
    rejection.candidates[i].mean_payoff / .games / .faults / .failures   # for metrics

Cost: ``n`` candidates play ``n * n * n * games_per_pair`` games (3 candidates, 2
games per pair: 54), each move one MCTS call inside a worker plus two host round
trips. A call that loops costs ``limits.call_s`` (the worker is restarted). The
constructor of a worker raises :class:`~harness.sandbox.failures.SandboxUnavailable`
when bubblewrap cannot run and ``unsandboxed`` is False: that is the run's
configuration, not a candidate's failure, and it is not caught here.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.sandbox.client import SandboxWorker
from harness.sandbox.limits import Limits

FAULT_PAYOFF = -1.0  # what an agent scores for a game it lost by its own failure
ILLEGAL = "illegal"  # the fault kind of an action the host does not allow


@dataclass(frozen=True)
class CandidateScore:
    """One candidate: how it did as an agent, how it did as a host, what failed."""

    index: int
    started: bool
    mean_payoff: float | None  # None: no game counted for it
    games: int  # games counted for it as an agent (a self-play game counts once for each seat)
    faults: int  # of those, games it lost by its own failure (an illegal action, a failed planning call)
    voided: int  # games it voided as the host
    failures: dict[str, int] = field(default_factory=dict)  # its worker's failures by kind, plus "illegal"


@dataclass(frozen=True)
class Rejection:
    """The verdict: every candidate's score, the kept indices, and the threshold they were held to."""

    candidates: tuple[CandidateScore, ...]
    kept: tuple[int, ...]
    best: float | None  # the best mean payoff
    threshold: float | None  # kept means are at least this
    utility_range: float  # max - min of the payoffs counted
    games: int  # games played to an end, or lost by a fault
    voided: int

    @property
    def rejected(self) -> tuple[int, ...]:
        return tuple(score.index for score in self.candidates if score.index not in self.kept)


@dataclass
class _Tally:
    payoffs: list[list[float]]
    faults: Counter[int] = field(default_factory=Counter)
    illegal: Counter[int] = field(default_factory=Counter)
    voided: Counter[int] = field(default_factory=Counter)
    games: int = 0


def reject_bad_samples(
    sources: Sequence[str],
    layout: dict[str, Any],
    *,
    limits: Limits | None = None,
    unsandboxed: bool = False,
    simulations: int = 16,
    games_per_pair: int = 2,
    margin: float = 0.10,
    seed: int = 0,
    max_plies: int = 400,
    rollout_plies: int = 200,
) -> Rejection:
    """Every program hosts every ordered pair of agents ``games_per_pair`` times; see the module's docstring."""
    _check(len(sources), simulations, games_per_pair, margin, max_plies, rollout_plies)
    rng = random.Random(seed)
    workers: list[SandboxWorker] = []
    try:
        started = []
        for source in sources:
            workers.append(SandboxWorker(source, limits, unsandboxed=unsandboxed))
            started.append(workers[-1].start().ok)
        players = [index for index, ok in enumerate(started) if ok]
        tally = _Tally([[] for _ in sources])
        for host in players:
            for first in players:
                for second in players:
                    for _ in range(games_per_pair):
                        game = _Game(workers[host], (workers[first], workers[second]), rng, simulations, max_plies, rollout_plies)
                        _record(tally, game.play(layout), host, (first, second))
        return _verdict(tally, started, [dict(worker.failures) for worker in workers], margin)
    finally:
        for worker in workers:
            worker.close()


class _Game:
    """One game on a host program between two agents (each a worker planning on its own program)."""

    def __init__(
        self,
        host: SandboxWorker,
        agents: tuple[SandboxWorker, SandboxWorker],
        rng: random.Random,
        simulations: int,
        max_plies: int,
        rollout_plies: int,
    ) -> None:
        self.host, self.agents, self.rng = host, agents, rng
        self.simulations, self.max_plies, self.rollout_plies = simulations, max_plies, rollout_plies

    def play(self, layout: dict[str, Any]) -> tuple[str, Any]:
        """("end", (r0, r1)), ("fault", (seat, kind)) or ("void", why)."""
        initial = self.host.call("initial_state", [layout])
        if not initial.ok:
            return ("void", str(initial.failure))
        state = initial.value
        for _ in range(self.max_plies):
            over, player, legal = self.host.call_many([("is_terminal", [state]), ("current_player", [state]), ("legal_actions", [state])])
            if not over.ok:
                return ("void", str(over.failure))
            if over.value:
                return _ending(self.host.call("returns", [state]))
            if not player.ok or not legal.ok or player.value not in (0, 1) or not isinstance(legal.value, list) or not legal.value:
                return ("void", "the host has no player to move or no legal action in a live state")
            seat = int(player.value)
            plan = self.agents[seat].plan(
                "mcts", state=state, simulations=self.simulations, max_plies=self.rollout_plies, seed=self.rng.randrange(2**31)
            )
            if not plan.ok:
                return ("fault", (seat, plan.failure.kind.value if plan.failure is not None else "crash"))
            action = plan.value.get("action") if isinstance(plan.value, dict) else None
            if action not in legal.value:
                return ("fault", (seat, ILLEGAL))
            after = self.host.call("apply_action", [state, action])
            if not after.ok:
                return ("void", str(after.failure))
            state = after.value
        return ("void", f"no end within {self.max_plies} plies")


def _ending(result: Any) -> tuple[str, Any]:
    pair = result.value if result.ok else None
    if (
        isinstance(pair, list)
        and len(pair) == 2
        and all(isinstance(r, int | float) and not isinstance(r, bool) and math.isfinite(r) and -1 <= r <= 1 for r in pair)
    ):
        return ("end", (float(pair[0]), float(pair[1])))
    return ("void", f"the host's returns are not two numbers in [-1, 1]: {result.failure or pair!r}"[:200])


def _record(tally: _Tally, outcome: tuple[str, Any], host: int, seats: tuple[int, int]) -> None:
    kind, detail = outcome
    if kind == "void":
        tally.voided[host] += 1
        return
    tally.games += 1
    if kind == "end":
        for seat, candidate in enumerate(seats):
            tally.payoffs[candidate].append(detail[seat])
        return
    seat, why = detail
    culprit = seats[seat]
    tally.payoffs[culprit].append(FAULT_PAYOFF)
    tally.faults[culprit] += 1
    if why == ILLEGAL:
        tally.illegal[culprit] += 1


def _verdict(tally: _Tally, started: list[bool], failures: list[dict[str, int]], margin: float) -> Rejection:
    means = [sum(p) / len(p) if p else None for p in tally.payoffs]
    counted = [payoff for payoffs in tally.payoffs for payoff in payoffs]
    spread = max(counted) - min(counted) if counted else 0.0
    judged = [mean for mean in means if mean is not None]
    best = max(judged) if judged else None
    threshold = best - margin * spread if best is not None else None
    if threshold is not None:
        kept = tuple(i for i, mean in enumerate(means) if mean is not None and mean >= threshold - 1e-12)
    else:
        kept = tuple(i for i, ok in enumerate(started) if ok)
    scores = tuple(
        CandidateScore(
            i,
            started[i],
            means[i],
            len(tally.payoffs[i]),
            tally.faults[i],
            tally.voided[i],
            {**failures[i], **({ILLEGAL: tally.illegal[i]} if tally.illegal[i] else {})},
        )
        for i in range(len(started))
    )
    return Rejection(scores, kept, best, threshold, spread, tally.games, sum(tally.voided.values()))


def _check(candidates: int, simulations: int, games_per_pair: int, margin: float, max_plies: int, rollout_plies: int) -> None:
    if candidates < 1:
        raise ValueError("reject_bad_samples needs at least one candidate source")
    for name, value in (
        ("simulations", simulations),
        ("games_per_pair", games_per_pair),
        ("max_plies", max_plies),
        ("rollout_plies", rollout_plies),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name}={value!r}: give a whole number of 1 or more")
    if not 0 <= margin <= 1:
        raise ValueError(f"margin={margin!r}: give a fraction of the utility range between 0 and 1")
