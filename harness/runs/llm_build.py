"""What ``arena run`` builds from its config: the agent's recipe, each game's entry, the manifest."""

from __future__ import annotations

from pathlib import Path

from engine.protocol.record import GameRecord
from engine.state import COLOUR_NAMES
from harness.play.decisions import FailureCounts
from harness.prompting.renderer import PromptRenderer
from harness.prompting.waves import Wave, wave_of
from harness.records.provenance import git_commit, harness_version, versions
from harness.records.transcript import GameEntry, RunManifest
from harness.runs.llm_config import LlmRunConfig
from harness.runs.llm_results import read_beliefs
from harness.runs.model_agents import ModelAgentRecipe, cwm_settings


def recipe_of(config: LlmRunConfig, beliefs_done: list[int]) -> ModelAgentRecipe:
    """The agent's settings from the run's config: everything but the environment."""
    return ModelAgentRecipe(
        agent=config.agent, model=config.model, budget=config.budget, seed=config.seed, hint=config.hint,
        legal_moves=config.legal_moves, move_format=config.move_format,
        max_retries=config.max_retries, on_failure=config.on_failure, memory_tokens=config.memory_tokens,
        checkpoints=config.belief_checkpoints(), batch=config.batch, search_depth=config.search_depth,
        endgame=config.endgame, concurrency=config.concurrency, max_cost_usd=config.max_cost_usd,
        max_tokens=config.max_tokens, backoff_base_s=config.backoff_base_s, model_options=config.model_options,
        beliefs_done=tuple(beliefs_done),
        cwm=cwm_settings(config), wave=config.wave, jobs=config.jobs,
    )


def game_entry(record: GameRecord, forfeit_by: int | None, phase: str, index: int, opponent: str, agent_colour: str,
           failures: FailureCounts, seed: int, names: tuple[str, str] | None = None, wave: Wave | None = None) -> GameEntry:
    black, white = names or (record.black_policy, record.white_policy)
    return GameEntry.model_validate(dict(  # phase, colour and forfeit checked against the entry's literals here
        wave=None if wave is None else wave.number, memory_version=None if wave is None else wave.memory_version,
        game_index=index, phase=phase, layout=record.layout, black=black, white=white,
        opponent=opponent, agent_colour=agent_colour, moves=record.moves, black_discs=record.black,
        white_discs=record.white, rewards=record.rewards,
        forfeit_by=None if forfeit_by is None else COLOUR_NAMES[forfeit_by], failures=failures, seed=seed,
    ))


def adaptation_wave(config: LlmRunConfig, index: int) -> Wave | None:
    """The wave of adaptation game ``index`` (None for an agent without waves: cwm)."""
    size = config.wave_size()
    return None if size is None else wave_of(index, size, config.budget, config.belief_checkpoints())


def beliefs_done(run_dir: Path) -> list[int]:
    return [line["checkpoint"] for line in read_beliefs(run_dir)]


def run_manifest(config: LlmRunConfig, run_id: str, renderer: PromptRenderer, condition_sha256: str) -> RunManifest:
    """The run's manifest; ``condition_sha256`` commits to the hidden condition (the salt is not in it)."""
    return RunManifest(
        run_id=run_id, config=config.model_dump(mode="json"), versions=versions() | {"harness": harness_version()},
        git=git_commit(),
        template_hashes=renderer.template_hashes(), seeds={"run": config.seed}, condition_sha256=condition_sha256,
    )
