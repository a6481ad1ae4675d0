"""``cwm``: the model writes the game as code; the agent tests it on its own games, refines it and plans with it.

``adapt(arena)``: (1) *explore*: ``explore_random`` random self-play games (every ``holdout_every``-th held out, to
measure test accuracy), then, up to ``explore_games``, games steered towards the final share that splits the K still
feasible (:func:`agents.interval.agent.probe_policies`). (2) *Synthesize and refine*
(:class:`~harness.cwm.refine.Synthesizer`, ``conversation`` or ``tree`` mode) against the unit tests of the shown games
(:mod:`harness.cwm.tests_from_games`); several programs with the best score play each other
(:mod:`harness.cwm.rejection`) and clear losers are discarded. (3) *Play* the rest of the budget by self-play. A
program that passed every transition test (training and held-out) plans on the engine with its returns as the
terminal utility (:mod:`harness.cwm.engine_path`; ``transitions="engine"``, a share ``spot_check`` of moves checked
against the program); any other plans on the program in the sandbox (MCTS or alpha-beta, ``worker.plan``). The true
engine verifies every move: a disagreement is a model error and a transition test; a finished game whose rewards the
program's ``returns`` contradicts (a *surprise*) becomes an outcome test; after either, the program is refined again
while model calls are left (``max_calls``).

It reports every model call to ``on_call``, every game to ``on_game``, and after each refinement episode the K interval
the program's reward code implies (:func:`~harness.cwm.probe.implied_interval`) to ``on_belief``. ``steps`` holds the
accuracy of every candidate tested; ``counts()`` the totals, the path of each program and the time by phase. Frozen
evaluation (``decider``/``act``) plans with the last program (a random legal move if none). :meth:`close` stops its
worker.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from agents.interval.agent import IntervalConfig, final_total, probe_policies
from agents.interval.belief import InconsistentRecord, KInterval, probe_target
from agents.search.api import SearchTables
from engine.protocol.belief import Belief
from engine.protocol.observation import Observation
from harness.cwm.config import CwmConfig
from harness.cwm.engine_path import EnginePlanner, PathChooser, PhaseTimes, spot_check
from harness.cwm.finalists import choose_final
from harness.cwm.probe import implied_interval
from harness.cwm.refine import Candidate, Synthesizer
from harness.cwm.tests_from_games import TestSuite, UnitTest, random_transitions, run_tests
from harness.cwm.world import Outcome, Step, evidence_rows, final_state, state_json
from harness.play.decisions import MoveDecision
from harness.play.game import Decide, from_policy
from harness.prompting.model_agent import ModelAgent, game_rng, named
from harness.sandbox.client import SandboxWorker

FAILING_TESTS_KEPT, FAILING_TEST_CHARS = 5, 300  # per program version in agent.json: the first failures, cut


class CwmAgent(ModelAgent[CwmConfig]):
    """A code world model, refined against the agent's games and planned on by MCTS; see the module docstring."""

    name = "cwm"
    config_class = CwmConfig

    def setup(self) -> None:
        self.synth = Synthesizer(
            self.client,
            self.rules,
            renderer=self.renderer,
            config=self.config.refine,
            on_call=self.on_call,
            seed=self.seed,
            on_candidate=self._measure,
            budget=self.budget,
        )
        self.train, self.heldout = TestSuite(), TestSuite()
        self.shown: list[Outcome] = []
        self.totals: set[int] = {final_total(self.rules)}  # final disc totals: a full board, then those seen
        self.best: Candidate | None = None
        self.worker: SandboxWorker | None = None
        self.steps: list[dict[str, Any]] = []
        self.rejections: list[dict[str, Any]] = []  # every bad-sample rejection: when, the payoffs, who was kept
        self.model_errors = self.surprises = self.plan_failures = 0
        self.interval: KInterval | None = None
        self.feasible = KInterval.everything()  # what the outcomes themselves allow (all games, held-out ones too)
        self.steered = 0  # exploration games steered towards an informative share
        self._unchanged = 0  # steered games in a row that left the feasible set as it was
        self._explored = False  # exploration is over (it never starts again)
        self._tables: SearchTables | None = None
        self._random_tests: list[UnitTest] | None = None
        self._new_tests = False
        self.seconds = PhaseTimes()
        self.paths = PathChooser(self.context, self.config, self.seconds)
        self.spot_checks = 0

    # ------------------------------------------------------------------ adaptation

    async def adapt_async(self, arena: Any) -> None:
        """Explore, synthesize, refine, then play the rest of the budget on the program (module docstring)."""
        self.rebuild_memory(arena)
        for index, record in enumerate(arena.ledger.records):  # a resumed run: the same decisions as when they were played
            self._learn(index, record, exploration=self._exploring(index))
        while arena.remaining > 0 and self._exploring(arena.games_played):
            await self._play(arena, *self._exploration_deciders(arena.games_played), exploration=True)
        await self._improve(arena.games_played, first=self.best is None)
        while arena.remaining > 0:
            await self._play(arena, self.decider("adapt", arena.games_played), exploration=False)
            if self._new_tests and self.synth.calls < self.config.max_calls:
                await self._improve(arena.games_played, first=False)
        if self.worker is not None:
            self.interval = implied_interval(self.worker, self.rules, self.totals)  # over every total seen

    def _exploring(self, index: int) -> bool:
        """Whether game ``index`` explores: one of the first ``explore_random``, or, up to ``explore_games``,
        while every game before it explored and some reachable share is still informative."""
        if index < self.config.explore_random:
            return True
        if self._explored or index >= self.config.explore_games or probe_target(self.feasible, self.totals) is None:
            self._explored = True
        return not self._explored

    def _exploration_deciders(self, index: int) -> tuple[Decide, Decide]:
        """Random play for the first ``explore_random`` games, then a probe towards the share that splits the feasible set."""
        if index < self.config.explore_random:
            decide = self._random_decider("adapt", index)
            return decide, decide
        target = probe_target(self.feasible, self.totals)
        assert target is not None  # _exploring said so
        if self._tables is None:
            self._tables = SearchTables(self.rules.layout)
        rng = game_rng(self.seed, "adapt", index, 2)
        random_plies = int(rng.integers(0, 2 * self._unchanged + 1))  # vary the games once probes stop teaching
        black, white = probe_policies(self.rules, self._tables, IntervalConfig(), rng, float(target), index, random_plies)
        return from_policy(black), from_policy(white)

    async def _play(self, arena: Any, decide_black: Decide, decide_white: Decide | None = None, *, exploration: bool) -> None:
        index = arena.games_played
        game, _ = await self.self_play(arena, decide_black, decide_white)
        self.remember(game.record, index % 2)
        self._learn(index, game.record, exploration)
        self.emit_game(index, game)

    def _learn(self, index: int, record: Any, exploration: bool) -> None:
        """Turn a finished game into tests: all its steps if a shown exploration game, else its outcome."""
        moves, rewards = list(record.moves), (int(record.rewards[0]), int(record.rewards[1]))
        every = self.config.holdout_every
        held = exploration and index < self.config.explore_random and every and index % every == every - 1
        self.totals.add(record.black + record.white)
        self._narrow(record, steered=exploration and index >= self.config.explore_random)
        if held:
            self.heldout.add_game(self.rules, moves, rewards, index)
            return
        known = (record.black, record.white) in self.train.outcomes
        outcome = self.train.add_game(self.rules, moves, rewards, index, transitions=exploration)
        self.shown.append(outcome)
        if not exploration and not known and self.worker is not None:
            answer = self.worker.call("returns", [state_json(self.rules, final_state(self.rules, moves))])
            if not answer.ok or list(answer.value or []) != list(rewards):
                self.surprises += 1
                self._new_tests = True

    def _narrow(self, record: Any, steered: bool) -> None:
        """The feasible set after one more finished game; counts steered games and those that taught nothing."""
        before = self.feasible
        try:
            self.feasible = self.feasible.update(record)
        except InconsistentRecord:  # no threshold rule explains the outcomes: keep what was known
            return
        if steered:
            self.steered += 1
            self._unchanged = self._unchanged + 1 if self.feasible == before else 0

    async def _improve(self, games_played: int, first: bool) -> None:
        """Synthesize (first time) or re-test the best program on the tests now known, then refine it."""
        self._new_tests = False
        tests, evidence = self.train.tests, evidence_rows(self.shown)
        left = self.config.max_calls - self.synth.calls
        if left <= 0 or not tests:
            return
        started = time.perf_counter()
        try:
            await self._improve_timed(tests, evidence, games_played, first, left)
        finally:
            self.seconds.add("synthesis", time.perf_counter() - started)

    async def _improve_timed(
        self, tests: list[UnitTest], evidence: list[dict[str, Any]], games_played: int, first: bool, left: int
    ) -> None:
        episode = len(self.synth.tested)
        if first or self.best is None:
            start = await self.synth.synthesize(tests, evidence, games_played)
            left -= 1
        else:
            start = await self.synth.rescore(self.best, tests)
        best = await self.synth.refine(start, tests, evidence, games_played, min(left, self.config.refine.calls_per_episode))
        best, rejection = choose_final(
            best,
            self.synth.tested[episode:],
            self.rules,
            self.config.rejection,
            self.config.refine,
            seed=self.seed * 100_003 + games_played,
        )
        if rejection is not None:
            self.rejections.append({"games_played": games_played, **rejection})
        if best.source is not None and (self.best is None or best.source != self.best.source):
            self._use(best)
        elif best.source is not None:
            self.best = best
            self._choose_path(best)
        self._report_belief(games_played)

    def _use(self, candidate: Candidate) -> None:
        self.close()
        self.worker = None
        self.best = candidate
        assert candidate.source is not None
        self.worker = SandboxWorker(candidate.source, self.config.refine.limits, unsandboxed=self.config.refine.unsandboxed)
        self.interval = implied_interval(self.worker, self.rules, self.totals)
        self._choose_path(candidate)

    def _choose_path(self, candidate: Candidate) -> None:
        """The engine path for a program that passed every transition test, else the program path (``paths``)."""
        assert candidate.source is not None and self.worker is not None
        if refused := self.paths.choose(self.worker, candidate.source, candidate.call, candidate.score.transition, len(self.shown)):
            self.synth.sandbox_failures[refused.kind.value] += 1

    def _report_belief(self, games_played: int) -> None:
        if self.worker is not None:
            self.interval = implied_interval(self.worker, self.rules, self.totals)
        if self.on_belief is not None and self.first_belief(games_played):
            error = None if self.interval is not None else "the program's returns fit no threshold K"
            self.emit_belief(games_played, self.belief() if self.interval is not None else None, error)

    async def _measure(self, candidate: Candidate, worker: SandboxWorker) -> None:
        """Train and held-out accuracy of a candidate just tested (``steps``)."""
        started = time.perf_counter()
        if self._random_tests is None:
            self._random_tests = random_transitions(self.rules, self.config.heldout_transitions, self.seed)
        held_games = run_tests(worker, self.heldout.tests) if len(self.heldout) else None
        held_random = run_tests(worker, self._random_tests) if self._random_tests else None
        transitions = [s.transition for s in (held_games, held_random) if s is not None and s.transition is not None]
        if candidate.source is not None:
            self.paths.heldout[candidate.source] = min(transitions) if transitions else None
        self.seconds.add("held-out tests", time.perf_counter() - started)
        self.steps.append(
            {
                "model_calls": self.synth.calls,
                "train_transition": candidate.score.transition,
                "train_outcome": candidate.score.outcome,
                "train_h": candidate.score.h,
                "test_transition": min(transitions) if transitions else None,
                "test_transition_random": held_random.transition if held_random else None,
                "test_outcome": held_games.outcome if held_games else None,
                "tests": candidate.score.total,
                "failing_tests": [failure.describe(FAILING_TEST_CHARS) for failure in candidate.score.failures[:FAILING_TESTS_KEPT]],
            }
        )

    # ------------------------------------------------------------------ play

    def _random_decider(self, phase: str, game_index: int) -> Callable[[Observation], MoveDecision]:
        rng = game_rng(self.seed, phase, game_index, 1)

        def decide(obs: Observation) -> MoveDecision:
            return MoveDecision(int(obs.legal_moves[rng.integers(len(obs.legal_moves))]), False, [])

        return named(decide, self.name)

    def decider(self, phase: str, game_index: int) -> Callable[[Observation], MoveDecision]:
        """MCTS on the program in the sandbox, every move checked against the engine's legal moves."""
        rng = game_rng(self.seed, phase, game_index)
        fallback = self._random_decider(phase, game_index)

        def decide(obs: Observation) -> MoveDecision:
            worker, legal = self.worker, sorted(obs.legal_moves)
            if worker is None:
                return fallback(obs)
            if self.paths.engine is not None:
                return self._engine_move(self.paths.engine, worker, obs, rng, phase)
            state = state_json(self.rules, obs.state)
            answer = worker.call("legal_actions", [state])
            if not answer.ok or not isinstance(answer.value, list) or sorted(answer.value) != legal:
                return self._model_error(obs, legal, rng, phase)
            started = time.perf_counter()
            plan = self._plan(worker, state, phase, int(rng.integers(2**31)))
            self.seconds.add("planning", time.perf_counter() - started)
            if not plan.ok or plan.value.get("action") not in legal:
                self.plan_failures += 1
                return MoveDecision(int(legal[rng.integers(len(legal))]), False, [])
            return MoveDecision(int(plan.value["action"]), False, [])

        return named(decide, self.name)

    def _engine_move(
        self, engine: EnginePlanner, worker: SandboxWorker, obs: Observation, rng: np.random.Generator, phase: str
    ) -> MoveDecision:
        """The engine path's move (the kernels on the program's table); a sampled share of moves spot-checked."""
        started = time.perf_counter()
        simulations = self.config.simulations if phase == "eval" else self.config.adapt_simulations
        move = engine.move(obs, simulations, rng)
        self.seconds.add("planning", time.perf_counter() - started)
        if self.config.spot_check > 0 and rng.random() < self.config.spot_check:
            self._spot_check(worker, obs, move, phase)
        return MoveDecision(move, False, [])

    def _spot_check(self, worker: SandboxWorker, obs: Observation, move: int, phase: str) -> None:
        """A disagreement with the engine on the move played is a model error and, while adapting, a transition test."""
        self.spot_checks += 1
        step = spot_check(worker, self.rules, obs, move)
        if step is None:
            return
        self.model_errors += 1
        if phase == "adapt":
            self.train.add_transition(self.rules, step)
            self._new_tests = True

    def _plan(self, worker: SandboxWorker, state: dict[str, Any], phase: str, seed: int) -> Any:
        """One planning call inside the program's worker: MCTS or minimax, as configured."""
        config = self.config
        if config.planner == "minimax":
            return worker.plan(
                "minimax",
                state=state,
                depth=config.depth,
                max_nodes=config.max_nodes,
                seed=seed,
                leaf_playouts=config.leaf_playouts,
                max_plies=config.max_plies,
            )
        simulations = config.simulations if phase == "eval" else config.adapt_simulations
        return worker.plan("mcts", state=state, simulations=simulations, c=config.uct_c, max_plies=config.max_plies, seed=seed)

    def _model_error(self, obs: Observation, legal: list[int], rng: np.random.Generator, phase: str) -> MoveDecision:
        """A legal-move disagreement: counted, a random legal move played, the step a new transition test."""
        move = int(legal[rng.integers(len(legal))])
        self.model_errors += 1
        if phase == "adapt":
            after = self.rules.play(obs.state, move)
            self.train.add_transition(
                self.rules, Step(-1, obs.move_number, obs.state, move, tuple(sorted(obs.legal_moves)), after, self.rules.is_over(after))
            )
            self._new_tests = True
        return MoveDecision(move, False, [])

    def act(self, observation: Observation) -> int:
        """A frozen move: MCTS on the last program."""
        decision = self.decider("eval", 0)(observation)
        assert decision.move is not None
        return decision.move

    # ------------------------------------------------------------------ what it knows

    def belief(self) -> Belief:
        """The K interval the program's reward code implies, reported like the interval agent's."""
        if self.interval is None:
            return Belief(regime="unknown", k_low=0.0, k_high=1.0, confidence=0.0, rationale="no program whose returns fit a threshold K")
        belief = self.interval.belief()
        return belief.model_copy(update={"rationale": f"K in {self.interval.describe()}, implied by the program's returns"})

    def counts(self) -> dict[str, Any]:
        """Totals for metrics: model calls, code errors, model errors, surprises, sandbox failures by kind."""
        failures = dict(self.synth.sandbox_failures)
        if self.worker is not None:
            for kind, count in self.worker.failures.items():
                failures[kind] = failures.get(kind, 0) + count
        return {
            "model_calls": self.synth.calls,
            "code_errors": self.synth.code_errors,
            "model_errors": self.model_errors,
            "surprises": self.surprises,
            "steered_games": self.steered,
            "plan_failures": self.plan_failures,
            "sandbox_failures": failures,
            "k_interval": self.interval.describe() if self.interval is not None else None,
            "feasible": self.feasible.describe(),
            "rejections": len(self.rejections),
            "rejected": sum(len(r["calls"]) - len(r["kept"]) for r in self.rejections),
            "tests": len(self.train),
            "heldout_tests": len(self.heldout),
            "transitions": self.config.transitions,
            "path": self.paths.record[-1]["path"] if self.paths.record else None,
            "paths": self.paths.record,
            "utility_table": self.paths.table_text,
            "utility_curve": self.paths.curve,
            "spot_checks": self.spot_checks,
            "cgroup": self.worker.cgroup_applied if self.worker is not None else None,  # the worker's memory/pids cgroup
            "seconds": self.seconds.report(),
        }

    def __deepcopy__(self, memo: dict[int, Any]) -> CwmAgent:
        """A copy sharing the model client, the synthesizer and the program's worker (a process cannot be copied).

        A frozen copy (the referee's checkpoint and evaluation players) plans and counts model errors in its own
        counters; it never refines, so the shared parts are not written. Closing either closes the worker for both.
        """
        duplicate = copy.copy(self)
        memo[id(self)] = duplicate
        return duplicate

    def close(self) -> None:
        """Stop the program's worker (a later move starts it again)."""
        if self.worker is not None:
            self.worker.close()
