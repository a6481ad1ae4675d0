"""``arena run`` for model agents: adaptation under the budget, frozen evaluation, a run directory.

Order: the config is validated and the model checked (:func:`check_api_key`) before
anything is written or played. Then ``runs/<id>/`` gets ``manifest.json``; the agent
adapts through an :class:`~harness.play.arena.Arena` (self-play, every game to
``games.jsonl`` and every model call to ``calls.jsonl`` as it happens, beliefs to
``beliefs.jsonl``); it is frozen and plays ``eval_games`` games against each
opponent, colours alternating (agent black in even games). ``metrics.json`` and
``report.md`` are computed from the files, so a resumed run counts each game once.

Concurrency: adaptation games are played one after the other (each game's prompts
carry the memory of those before it). The frozen evaluation games depend on nothing
but their number, so up to ``concurrency`` of them are played at once (asyncio tasks;
the model client allows as many calls in flight). Each game draws from its own
generators, identical requests are sent one at a time (the later ones are cache hits),
and finished games are written in game order, each game's calls just before it, so
the files hold what a sequential run (``concurrency=1``) writes. What may differ is
only what depends on timing: latencies, which of two identical requests of different
games met the model first (the other's record says cache hit), and the replies of a
model whose answers depend on the order of calls (``mock/random-legal``, the failure
draws of ``mock/flaky-*``). When a run stops early (a cost or token cap, an error),
the games after the first unfinished one are not written, and a resume plays them.

Resume (``resume=RUN``): the config comes from the manifest (model options included); the writer repairs an interrupted
tail (:func:`~harness.records.transcript.resume_point`), the ledger is rebuilt from the games on record, and play goes on;
``cache.jsonl`` answers calls made before the interruption. A cost or token cap stops the run cleanly (what was played is
kept; the metrics say why; :class:`CapReached` names the cap); so does a dead endpoint (:class:`EndpointDown`, re-raised
naming the run; game in progress unwritten). ``caps`` (on resume) sets new caps, recorded in the manifest's config.

Interrupts, caps over resumes, a full disk, the paid calls of an unfinished game: :mod:`harness.runs.run_stop`. The first
Ctrl-C (SIGINT) or SIGTERM (or a full disk) starts no new game or model call, lets those under way finish, writes
everything and raises :class:`RunInterruptedError` (:class:`DiskFull`); a second one ends the process at once.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import AgentContext
from engine import make_env
from engine.env_spec import env_slug
from engine.protocol.arena import Ledger
from engine.protocol.belief import Belief
from engine.protocol.record import GameRecord
from engine.state import BLACK, COLOUR_NAMES, WHITE
from harness.models.cache import ResponseCache
from harness.models.client import ModelClient, check_api_key
from harness.models.errors import BudgetCapReached, EndpointDown
from harness.models.pricing import cost_cap_problem
from harness.play.decisions import FailureCounts
from harness.play.game import PlyDecision, from_policy, play_game_async
from harness.play.grants import EvaluationGrants
from harness.prompting.renderer import PromptRenderer
from harness.prompting.strategist_agent import Strategy
from harness.records.commitment import commit, write_salt
from harness.records.interrupts import handling
from harness.records.lock import writer_lock
from harness.records.reserve import DiskReserve, write_atomically
from harness.records.transcript import GameEntry, TranscriptReader, TranscriptWriter
from harness.referee.isolation import write_referee_record
from harness.referee.seats import OpponentSeats
from harness.registry.outside import referee_side
from harness.referee.model_process import ModelJob, ModelSinks, RunInterrupted, agent_report
from harness.referee.model_session import AgentStopped, ModelSession, RunSinks, cache_records
from harness.referee.wire import AgentProcessGone, ProtocolViolation
from harness.registry.plugins import plugin_sources
from harness.registry.specs import canonical_spec, is_outside, make_agent
from harness.runs.llm_build import adaptation_wave, beliefs_done, game_entry, recipe_of, run_manifest
from harness.runs.llm_config import (
    AGENT_FILE,
    BELIEFS_FILE,
    CACHE_FILE,
    METRICS_FILE,
    STRATEGIES_FILE,
    AgentFailed,
    GameHook,
    LlmRunConfig,
    Progress,
    RunConfigError,
)
from harness.runs.llm_results import write_results
from harness.runs.model_agents import EvalPlayer, InProcessPlayer, RemotePlayer
from harness.runs.run_stop import (
    AppendLog,
    CapReached,
    DiskFull,
    PaidCalls,
    RunInterruptedError,
    StoppableArena,
    WatchedCache,
    cap_message,
    disk_full_reason,
    endpoint_down_call,
    raise_cap_hint,
    remaining_caps,
    run_stop_request,
    with_new_caps,
)

__all__ = ["BELIEFS_FILE", "CACHE_FILE", "METRICS_FILE", "STRATEGIES_FILE", "AgentFailed", "CapReached", "LlmRunConfig",
           "Progress", "RunConfigError", "RunInterruptedError", "run_llm", "write_results"]

def _validated(config: LlmRunConfig, check_key: bool = True) -> None:
    try:
        make_env(config.env)
        for spec in config.opponents:
            canonical_spec(spec)
        config.belief_checkpoints()
    except (KeyError, ValueError) as error:
        raise RunConfigError(str(error)) from error
    if check_key:
        check_api_key(config.model, api_base=config.model_options.api_base)  # ModelConfigError: before any game or file
        if (problem := cost_cap_problem(config.model, config.model_options, config.max_cost_usd)) is not None:
            raise RunConfigError(problem)  # a cost cap that could not hold: the model's price is unknown


def run_llm(
    config: LlmRunConfig | None = None, *, out: str | Path = "runs", resume: str | Path | None = None,
    on_game: GameHook | None = None, progress: Progress | None = None, run_id: str | None = None,
    client: ModelClient | None = None, caps: dict[str, Any] | None = None,
) -> Path:
    """Run (or resume) one model-agent run; returns its directory.

    ``client``: the model client to use instead of one built from the config (e.g. the
    cache-only client of ``arena rerun``); the API key check is then skipped. ``caps``
    (``max_tokens``, ``max_cost_usd``): new caps for a resumed run. Raises
    :class:`RunInterruptedError`, :class:`DiskFull` or :class:`CapReached` (after writing everything) when
    the run stopped on an interrupt, a full disk or a cap.
    """
    if resume is not None:
        run_dir = Path(resume)
        reader = TranscriptReader(run_dir)
        config = LlmRunConfig.model_validate(reader.manifest().config)
        if caps:
            games = reader.games()
            config = with_new_caps(config, caps, {p: sum(g.phase == p for g in games) for p in ("adapt", "eval")})
    elif config is None:
        raise RunConfigError("give a config, or resume=RUN")
    _validated(config, check_key=client is None)
    if resume is None:
        run_dir = Path(out) / (run_id or f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{config.agent}-env{env_slug(config.env)}-s{config.seed}")
        if run_dir.exists() and any(run_dir.iterdir()):
            raise RunConfigError(f"{run_dir} already holds a run: resume it or choose another --out")
    with writer_lock(run_dir):  # one writer per run: a second command on it fails at once, naming the holder
        run = _Run(config, run_dir, resume is not None, on_game, progress, client)
        try:
            with handling(run.stop):
                asyncio.run(run.play())
            run.record_unclaimed_calls()  # a clean stop (a cap, an interrupt...): the paid calls of an unfinished game
        finally:
            run.close()
        calls = TranscriptReader(run_dir).calls()
        if run.capped:
            run.stopped = cap_message(config, calls)
        metrics = write_results(run_dir, stopped=run.stopped, refereed=run.refereed)
    if run.interrupted:
        stop = DiskFull if run.reserve.error else RunInterruptedError
        raise stop(f"{run.stopped}: kept {metrics['adapt_games']} of {config.budget} adaptation games, "
                                  f"{metrics['eval_games']} of {config.eval_games * len(config.opponents)} evaluation games "
                                  f"and {metrics['calls']} model calls in {run_dir}", run_dir)
    if run.capped:
        raise CapReached(f"{run.stopped}: kept {metrics['adapt_games']} adaptation and {metrics['eval_games']} evaluation "
                         f"games in {run_dir}; continue with a higher cap: {raise_cap_hint(config, calls, run_dir)}", run_dir)
    if run.down is not None:
        raise run.down.in_run(str(run_dir))
    if run.failed is not None:
        raise AgentFailed(f"{run.stopped}. The games the referee scored before it are kept in {run_dir} "
                          f"(metrics.json and report.md say where it stopped)") from run.failed
    return run_dir


class _Run:
    def __init__(self, config: LlmRunConfig, run_dir: Path, resuming: bool, on_game: GameHook | None, progress: Progress | None,
                 client: ModelClient | None = None) -> None:
        self.config, self.run_dir, self.on_game_hook, self.progress = config, run_dir, on_game, progress
        self.env = make_env(config.env)
        self.renderer = PromptRenderer()
        self.stop, self.paid = run_stop_request(run_dir, self.interrupt, self.kill), PaidCalls()
        self.session: ModelSession | None = None
        self.reserve = DiskReserve(run_dir, lambda error: self.stop.request(disk_full_reason(error)))
        self.writer = TranscriptWriter(run_dir, resume=resuming, on_full=self.reserve.release)
        if not resuming:  # the salt is kept (0600) before the manifest commits to the condition with it
            salt, condition_sha256 = commit(self.env.condition)
            write_salt(run_dir, salt)
            self.writer.write_manifest(run_manifest(config, run_dir.name, self.renderer, condition_sha256))
        else:
            manifest = TranscriptReader(run_dir).manifest()
            if manifest.config != config.model_dump(mode="json"):  # new caps given to --resume
                self.writer.write_manifest(manifest.model_copy(update={"config": config.model_dump(mode="json")}))
        self.call_index = self.writer.resumed_from.calls_done
        games = TranscriptReader(run_dir).games() if resuming else []
        self.adapt_games = [g for g in games if g.phase == "adapt"]
        self.eval_done = sum(g.phase == "eval" for g in games)
        self.beliefs_file = AppendLog(run_dir / BELIEFS_FILE, self.reserve.release)
        self.strategies_file = AppendLog(run_dir / STRATEGIES_FILE, self.reserve.release) if config.agent == "llm-strategist" else None
        self.client = client  # given: the agent plays in this process with it (arena rerun)
        left_tokens, left_dollars = remaining_caps(config, TranscriptReader(run_dir).calls() if resuming else [])
        self.recipe = recipe_of(config.model_copy(update={"max_tokens": left_tokens, "max_cost_usd": left_dollars}),
                                beliefs_done(run_dir))
        self.interrupted = self.capped = False
        self.stopped: str | None = None  # why the run stopped early
        self.down: EndpointDown | None = None  # the endpoint failure that stopped it, if that was why
        self.failed: Exception | None = None  # the agent process's failure that stopped it, if that was why

    @property
    def refereed(self) -> bool:
        return self.config.referee and self.client is None

    def close(self) -> None:
        try:
            self.writer.close()
        finally:
            self.reserve.close()

    def interrupt(self) -> None:
        """The first interrupt (the stop request is set): tell the agent process."""
        if self.session is not None:
            self.session.interrupt()

    def kill(self) -> None:
        """The second interrupt: end the agent process at once."""
        if self.session is not None:
            self.session.kill()

    def record_unclaimed_calls(self) -> None:
        """Write the calls paid for that no record claimed (a game unfinished when the run stopped): see run_stop."""
        for fields in self.paid.unrecorded():
            self._call(fields)

    async def play(self) -> None:
        try:
            await (self._play_refereed() if self.refereed else self._play_in_process())
        except BudgetCapReached as cap:
            self.stopped, self.capped = str(cap), True
        except RunInterrupted as interrupt:
            self.stopped, self.interrupted = self.stop.reason() if self.stop.requested else str(interrupt), True
        except EndpointDown as down:  # the game in progress is not written: a resumed run plays it again
            self.stopped, self.down = str(down), down
            self._call(endpoint_down_call(down))  # the failure that stopped it, on record and in the report
        except (ProtocolViolation, AgentProcessGone, AgentStopped) as failure:  # refereed runs only
            if self.stop.requested:  # the agent process met the operator's interrupt before it could stop cleanly
                self.stopped, self.interrupted = self.stop.reason(), True
            else:
                self.stopped, self.failed = f"the agent failed: {type(failure).__name__}: {failure}", failure
        if self.stop.requested and self.stopped is None and not self._all_played():
            self.stopped, self.interrupted = self.stop.reason(), True

    def _all_played(self) -> bool:
        games = TranscriptReader(self.run_dir).games()
        return len(games) >= self.config.budget + self.config.eval_games * len(self.config.opponents)

    async def _play_in_process(self) -> None:
        config = self.config
        client = self.client or self.recipe.client(WatchedCache(self.run_dir / CACHE_FILE, self.stop, self.paid, self.reserve.release))
        sinks = ModelSinks(on_call=self._call, on_game=self._adapt_game, on_belief=self._belief, on_strategy=self._strategy)
        agent = self.recipe.build(AgentContext(self.env.rules), sinks, client, self.renderer)
        ledger = Ledger(layout=self.env.layout.name, budget=config.budget, records=tuple(g.to_game_record() for g in self.adapt_games))
        try:
            await agent.adapt_async(StoppableArena(self.env, config.budget, ledger, self.stop))
            agent.freeze()
            self._write_report(agent_report(agent))
            await self._evaluate(InProcessPlayer(agent))
        finally:
            close = getattr(agent, "close", None)
            if callable(close):
                close()  # e.g. the cwm agent's sandbox worker

    async def _play_refereed(self) -> None:
        """The agent and its model client in their own process; K, the ledger and the opponents here."""
        cache = ResponseCache(self.run_dir / CACHE_FILE, self.reserve.release)  # this process writes it; the agent gets its records
        job = ModelJob(rules=self.env.rules, budget=self.config.budget, recipe=self.recipe,
                       records=tuple(g.to_game_record() for g in self.adapt_games),
                       cache=cache_records(self.run_dir / CACHE_FILE), plugins=plugin_sources())
        def cache_put(key: str, entry: Any) -> None:
            cache.put(key, entry)
            self.paid.paid(key, entry)

        session = self.session = ModelSession(self.env, job, RunSinks(call=self._call, game=self._scored_game,
                                                                      belief=self._belief, strategy=self._strategy,
                                                                      cache_put=cache_put))
        if self.stop.requested:  # interrupted while the agent process started
            session.interrupt()
        try:
            try:
                session.adapt()
            finally:
                self._write_report(session.agent_report)
                write_referee_record(self.run_dir, session.referee.ledger.privileged, session.isolation)
            session.start_evaluation()
            try:
                await self._evaluate(RemotePlayer(session))
            finally:
                session.stop_evaluation()
        finally:
            session.close()

    def _write_report(self, report: dict[str, Any]) -> None:
        if report:
            write_atomically(self.run_dir / AGENT_FILE, json.dumps(report, indent=2) + "\n", self.reserve.release)

    def _call(self, fields: dict[str, Any]) -> None:
        fields = self.paid.recorded(fields)  # a failed call's record gets its attempts' errors from the cache
        self.writer.append_call({"call_index": self.call_index, **fields})  # a dict: validated once, by the writer
        self.call_index += 1

    def _belief(self, checkpoint: int, belief: Belief | None, error: str | None) -> None:
        self.beliefs_file.write({"checkpoint": checkpoint, "belief": belief.model_dump() if belief else None, "error": error})

    def _strategy(self, batch_start: int, strategy: Strategy, error: str | None, new: bool) -> None:
        if self.strategies_file is None:
            raise RuntimeError("a strategy reported by an agent that is not llm-strategist")
        self.strategies_file.write({"batch_start": batch_start, "strategy": strategy.model_dump(), "new": new, "error": error})

    def _game(self, entry: GameEntry, done: int, total: int) -> None:
        self.writer.append_game(entry)
        if self.progress is not None:
            self.progress(entry.phase, done, total)
        if self.on_game_hook is not None:
            self.on_game_hook(entry)

    def _adapt_game(self, phase: str, index: int, game: Any, colour: int) -> None:
        self._scored_game(index, game.record, game.forfeit_by, game.failure_counts)

    def _scored_game(self, index: int, record: GameRecord, forfeit_by: int | None, failures: FailureCounts) -> None:
        entry = game_entry(record, forfeit_by, "adapt", index, "self", "both", failures, self.config.seed,
                           names=(self.config.agent, self.config.agent), wave=adaptation_wave(self.config, index))
        self._game(entry, index + 1, self.config.budget)

    async def _evaluate(self, player: EvalPlayer) -> None:
        """The evaluation games not yet on record, up to ``concurrency`` at once, written in game order."""
        total = self.config.eval_games * len(self.config.opponents)
        grants = EvaluationGrants(self.env)
        self.opponent_seats = OpponentSeats()  # player processes of plugins' opponents, started at their first game
        numbers = iter(range(self.eval_done, total))  # shared by the workers: each game is taken once, in order
        finished: dict[int, tuple[GameEntry, int, list[PlyDecision]]] = {}
        next_to_write = self.eval_done
        writing = asyncio.Lock()  # one worker writes at a time: each game's calls, then the game, in game order
        stops: list[Exception] = []  # a cap or an interrupt: each worker ends its game in progress, then stops

        async def worker() -> None:
            nonlocal next_to_write
            for number in numbers:
                if self.stop.requested or stops:
                    return
                try:
                    finished[number] = await self._eval_game(player, grants, number)
                except (BudgetCapReached, RunInterrupted) as stop:
                    stops.append(stop)
                    return
                async with writing:
                    while next_to_write in finished:  # this game and those after it that are done already
                        entry, colour, decisions = finished.pop(next_to_write)
                        await player.report(next_to_write, colour, decisions)
                        self._game(entry, next_to_write + 1, total)
                        next_to_write += 1

        workers = [asyncio.ensure_future(worker()) for _ in range(min(self.config.concurrency, total - self.eval_done))]
        try:
            await asyncio.gather(*workers)
            if stops:
                raise stops[0]
        finally:  # on a failure (a cap, an error): stop the other games; what is not written is played on resume
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            self.opponent_seats.close()

    async def _eval_game(self, player: EvalPlayer, grants: EvaluationGrants,
                         number: int) -> tuple[GameEntry, int, list[PlyDecision]]:
        """Evaluation game ``number``: its opponent and colour follow from the number alone."""
        config = self.config
        spec, game_in_match = config.opponents[number // config.eval_games], number % config.eval_games
        if referee_side() and is_outside(spec):  # a plugin's opponent plays from a player process, never here
            remote = self.opponent_seats.player(self.env.rules, canonical_spec(spec), [config.seed, 2, number], "opponent")
            try:
                return await self._eval_game_against(player, remote, number, game_in_match)
            finally:
                self.opponent_seats.release(remote)
        opponent = make_agent(spec, AgentContext(self.env.rules, grants.grant_simulator),
                              np.random.default_rng([config.seed, 2, number]))
        return await self._eval_game_against(player, opponent, number, game_in_match)

    async def _eval_game_against(self, player: EvalPlayer, opponent: Any, number: int,
                                 game_in_match: int) -> tuple[GameEntry, int, list[PlyDecision]]:
        config = self.config
        colour = BLACK if game_in_match % 2 == 0 else WHITE
        mine, theirs = player.decider(number), from_policy(opponent)
        deciders = (mine, theirs) if colour == BLACK else (theirs, mine)
        names = (config.agent, opponent.name) if colour == BLACK else (opponent.name, config.agent)
        game, decisions = await play_game_async(self.env.rules, self.env.condition, deciders[0], deciders[1], names)
        entry = game_entry(game.record, game.forfeit_by, "eval", number, opponent.name, COLOUR_NAMES[colour], game.failures[colour],
                       config.seed)
        return entry, colour, decisions
