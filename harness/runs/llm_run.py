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
kept; the metrics say why); so does a dead endpoint (:class:`EndpointDown`, re-raised naming the run; game in progress unwritten).
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import AgentContext
from engine.environments import make_env
from engine.protocol.arena import Ledger
from engine.protocol.belief import Belief
from engine.protocol.record import GameRecord
from engine.state import BLACK, COLOUR_NAMES, WHITE
from harness.models.cache import ResponseCache
from harness.models.client import ModelClient, check_api_key
from harness.models.errors import BudgetCapReached, EndpointDown
from harness.play.arena import Arena
from harness.play.decisions import FailureCounts
from harness.play.game import PlyDecision, from_policy, play_game_async
from harness.play.grants import EvaluationGrants
from harness.prompting.renderer import PromptRenderer
from harness.prompting.strategist_agent import Strategy
from harness.records.commitment import commit, write_salt
from harness.records.lock import writer_lock
from harness.records.provenance import git_commit, harness_version, versions
from harness.records.transcript import (
    GameEntry,
    RunManifest,
    TranscriptReader,
    TranscriptWriter,
    open_log_for_append,
)
from harness.referee.model_process import ModelJob, ModelSinks, agent_report
from harness.referee.model_session import AgentStopped, ModelSession, RunSinks, cache_records
from harness.referee.wire import AgentProcessGone, ProtocolViolation
from harness.registry.plugins import plugin_sources
from harness.registry.specs import canonical_spec, make_agent
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
from harness.runs.llm_results import read_beliefs, write_results
from harness.runs.model_agents import EvalPlayer, InProcessPlayer, ModelAgentRecipe, RemotePlayer, cwm_settings

__all__ = ["BELIEFS_FILE", "CACHE_FILE", "METRICS_FILE", "STRATEGIES_FILE", "AgentFailed", "LlmRunConfig", "Progress",
           "RunConfigError", "run_llm", "write_results"]

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


def run_llm(
    config: LlmRunConfig | None = None, *, out: str | Path = "runs", resume: str | Path | None = None,
    on_game: GameHook | None = None, progress: Progress | None = None, run_id: str | None = None,
    client: ModelClient | None = None,
) -> Path:
    """Run (or resume) one model-agent run; returns its directory.

    ``client``: the model client to use instead of one built from the config (e.g. the
    cache-only client of ``arena rerun``); the API key check is then skipped.
    """
    if resume is not None:
        run_dir = Path(resume)
        config = LlmRunConfig.model_validate(TranscriptReader(run_dir).manifest().config)
    elif config is None:
        raise RunConfigError("give a config, or resume=RUN")
    _validated(config, check_key=client is None)
    if resume is None:
        run_dir = Path(out) / (run_id or f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{config.agent}-env{config.env}-s{config.seed}")
        if run_dir.exists() and any(run_dir.iterdir()):
            raise RunConfigError(f"{run_dir} already holds a run: resume it or choose another --out")
    with writer_lock(run_dir):  # one writer per run: a second command on it fails at once, naming the holder
        run = _Run(config, run_dir, resume is not None, on_game, progress, client)
        try:
            asyncio.run(run.play())
        finally:
            run.close()
        write_results(run_dir, stopped=run.stopped, refereed=run.refereed)
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
        self.writer = TranscriptWriter(run_dir, resume=resuming)
        if not resuming:  # the salt is kept (0600) before the manifest commits to the condition with it
            salt, condition_sha256 = commit(self.env.condition)
            write_salt(run_dir, salt)
            self.writer.write_manifest(_manifest(config, run_dir.name, self.renderer, condition_sha256))
        self.call_index = self.writer.resumed_from.calls_done
        games = TranscriptReader(run_dir).games() if resuming else []
        self.adapt_games = [g for g in games if g.phase == "adapt"]
        self.eval_done = sum(g.phase == "eval" for g in games)
        self.beliefs_file = open_log_for_append(run_dir / BELIEFS_FILE)
        self.strategies_file = open_log_for_append(run_dir / STRATEGIES_FILE) if config.agent == "llm-strategist" else None
        self.client = client  # given: the agent plays in this process with it (arena rerun)
        self.recipe = recipe_of(config, _beliefs_done(run_dir))
        self.stopped: str | None = None  # why the run stopped early
        self.down: EndpointDown | None = None  # the endpoint failure that stopped it, if that was why
        self.failed: Exception | None = None  # the agent process's failure that stopped it, if that was why

    @property
    def refereed(self) -> bool:
        return self.config.referee and self.client is None

    def close(self) -> None:
        self.writer.close()
        self.beliefs_file.close()
        if self.strategies_file is not None:
            self.strategies_file.close()

    async def play(self) -> None:
        try:
            await (self._play_refereed() if self.refereed else self._play_in_process())
        except BudgetCapReached as cap:
            self.stopped = str(cap)
        except EndpointDown as down:  # the game in progress is not written: a resumed run plays it again
            self.stopped, self.down = str(down), down
        except (ProtocolViolation, AgentProcessGone, AgentStopped) as failure:  # refereed runs only
            self.stopped, self.failed = f"the agent failed: {type(failure).__name__}: {failure}", failure

    async def _play_in_process(self) -> None:
        config = self.config
        client = self.client or self.recipe.client(ResponseCache(self.run_dir / CACHE_FILE))
        sinks = ModelSinks(on_call=self._call, on_game=self._adapt_game, on_belief=self._belief, on_strategy=self._strategy)
        agent = self.recipe.build(AgentContext(self.env.rules), sinks, client, self.renderer)
        ledger = Ledger(layout=self.env.layout.name, budget=config.budget, records=tuple(g.to_game_record() for g in self.adapt_games))
        try:
            await agent.adapt_async(Arena(self.env, config.budget, ledger))
            agent.freeze()
            self._write_report(agent_report(agent))
            await self._evaluate(InProcessPlayer(agent))
        finally:
            close = getattr(agent, "close", None)
            if callable(close):
                close()  # e.g. the cwm agent's sandbox worker

    async def _play_refereed(self) -> None:
        """The agent and its model client in their own process; K, the ledger and the opponents here."""
        cache = ResponseCache(self.run_dir / CACHE_FILE)  # this process writes the file; the agent process gets its records
        job = ModelJob(rules=self.env.rules, budget=self.config.budget, recipe=self.recipe,
                       records=tuple(g.to_game_record() for g in self.adapt_games),
                       cache=cache_records(self.run_dir / CACHE_FILE), plugins=plugin_sources())
        session = ModelSession(self.env, job, RunSinks(call=self._call, game=self._scored_game, belief=self._belief,
                                                       strategy=self._strategy, cache_put=cache.put))
        try:
            try:
                session.adapt()
            finally:
                self._write_report(session.agent_report)
            session.start_evaluation()
            try:
                await self._evaluate(RemotePlayer(session))
            finally:
                session.stop_evaluation()
        finally:
            session.close()

    def _write_report(self, report: dict[str, Any]) -> None:
        if report:
            (self.run_dir / AGENT_FILE).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")

    def _call(self, fields: dict[str, Any]) -> None:
        self.writer.append_call({"call_index": self.call_index, **fields})  # a dict: validated once, by the writer
        self.call_index += 1

    def _belief(self, checkpoint: int, belief: Belief | None, error: str | None) -> None:
        line = {"checkpoint": checkpoint, "belief": belief.model_dump() if belief else None, "error": error}
        self.beliefs_file.write(json.dumps(line) + "\n")
        self.beliefs_file.flush()

    def _strategy(self, batch_start: int, strategy: Strategy, error: str | None, new: bool) -> None:
        if self.strategies_file is None:
            raise RuntimeError("a strategy reported by an agent that is not llm-strategist")
        line = {"batch_start": batch_start, "strategy": strategy.model_dump(), "new": new, "error": error}
        self.strategies_file.write(json.dumps(line) + "\n")
        self.strategies_file.flush()

    def _game(self, entry: GameEntry, done: int, total: int) -> None:
        self.writer.append_game(entry)
        if self.progress is not None:
            self.progress(entry.phase, done, total)
        if self.on_game_hook is not None:
            self.on_game_hook(entry)

    def _adapt_game(self, phase: str, index: int, game: Any, colour: int) -> None:
        self._scored_game(index, game.record, game.forfeit_by, game.failure_counts)

    def _scored_game(self, index: int, record: GameRecord, forfeit_by: int | None, failures: FailureCounts) -> None:
        entry = _entry(record, forfeit_by, "adapt", index, "self", "both", failures, self.config.seed,
                       names=(self.config.agent, self.config.agent))
        self._game(entry, index + 1, self.config.budget)

    async def _evaluate(self, player: EvalPlayer) -> None:
        """The evaluation games not yet on record, up to ``concurrency`` at once, written in game order."""
        total = self.config.eval_games * len(self.config.opponents)
        grants = EvaluationGrants(self.env)
        numbers = iter(range(self.eval_done, total))  # shared by the workers: each game is taken once, in order
        finished: dict[int, tuple[GameEntry, int, list[PlyDecision]]] = {}
        next_to_write = self.eval_done
        writing = asyncio.Lock()  # one worker writes at a time: each game's calls, then the game, in game order

        async def worker() -> None:
            nonlocal next_to_write
            for number in numbers:
                finished[number] = await self._eval_game(player, grants, number)
                async with writing:
                    while next_to_write in finished:  # this game and those after it that are done already
                        entry, colour, decisions = finished.pop(next_to_write)
                        await player.report(next_to_write, colour, decisions)
                        self._game(entry, next_to_write + 1, total)
                        next_to_write += 1

        workers = [asyncio.ensure_future(worker()) for _ in range(min(self.config.concurrency, total - self.eval_done))]
        try:
            await asyncio.gather(*workers)
        finally:  # on a failure (a cap, an error): stop the other games; what is not written is played on resume
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)

    async def _eval_game(self, player: EvalPlayer, grants: EvaluationGrants,
                         number: int) -> tuple[GameEntry, int, list[PlyDecision]]:
        """Evaluation game ``number``: its opponent and colour follow from the number alone."""
        config = self.config
        spec, game_in_match = config.opponents[number // config.eval_games], number % config.eval_games
        opponent = make_agent(spec, AgentContext(self.env.rules, grants.grant_simulator),
                              np.random.default_rng([config.seed, 2, number]))
        colour = BLACK if game_in_match % 2 == 0 else WHITE
        mine, theirs = player.decider(number), from_policy(opponent)
        deciders = (mine, theirs) if colour == BLACK else (theirs, mine)
        names = (config.agent, opponent.name) if colour == BLACK else (opponent.name, config.agent)
        game, decisions = await play_game_async(self.env.rules, self.env.condition, deciders[0], deciders[1], names)
        entry = _entry(game.record, game.forfeit_by, "eval", number, opponent.name, COLOUR_NAMES[colour], game.failures[colour],
                       config.seed)
        return entry, colour, decisions


def recipe_of(config: LlmRunConfig, beliefs_done: list[int]) -> ModelAgentRecipe:
    """The agent's settings from the run's config: everything but the environment."""
    return ModelAgentRecipe(
        agent=config.agent, model=config.model, budget=config.budget, seed=config.seed, hint=config.hint,
        max_retries=config.max_retries, on_failure=config.on_failure, memory_tokens=config.memory_tokens,
        checkpoints=config.belief_checkpoints(), batch=config.batch, search_depth=config.search_depth,
        endgame=config.endgame, concurrency=config.concurrency, max_cost_usd=config.max_cost_usd,
        max_tokens=config.max_tokens, backoff_base_s=config.backoff_base_s, model_options=config.model_options,
        beliefs_done=tuple(beliefs_done),
        cwm=cwm_settings(config),
    )


def _entry(record: GameRecord, forfeit_by: int | None, phase: str, index: int, opponent: str, agent_colour: str,
           failures: FailureCounts, seed: int, names: tuple[str, str] | None = None) -> GameEntry:
    black, white = names or (record.black_policy, record.white_policy)
    return GameEntry.model_validate(dict(  # phase, colour and forfeit checked against the entry's literals here
        game_index=index, phase=phase, layout=record.layout, black=black, white=white,
        opponent=opponent, agent_colour=agent_colour, moves=record.moves, black_discs=record.black,
        white_discs=record.white, rewards=record.rewards,
        forfeit_by=None if forfeit_by is None else COLOUR_NAMES[forfeit_by], failures=failures, seed=seed,
    ))


def _beliefs_done(run_dir: Path) -> list[int]:
    return [line["checkpoint"] for line in read_beliefs(run_dir)]


def _manifest(config: LlmRunConfig, run_id: str, renderer: PromptRenderer, condition_sha256: str) -> RunManifest:
    """The run's manifest; ``condition_sha256`` commits to the hidden condition (the salt is not in it)."""
    return RunManifest(
        run_id=run_id, config=config.model_dump(mode="json"), versions=versions() | {"harness": harness_version()},
        git=git_commit(),
        template_hashes=renderer.template_hashes(), seeds={"run": config.seed}, condition_sha256=condition_sha256,
    )
