"""The sweep file: a TOML grid validated by pydantic, and the cells it expands to.

```toml
envs = ["0-6", "layout=boards/x.txt,condition=majority<0.7", "runs/s1:3"]  # ids, ranges, all, env specs
agents = ["adaptive-minimax", "interval"]   # any agent spec (`arena agents`): one bench-paper cell each
seeds = [0, 1]
budget = 200                                # adaptation games per cell
games = 10                                  # evaluation games per opponent
checkpoint_games = 4                        # bench cells: games per checkpoint opponent
opponents = ["random", "mcts:n=30"]         # default: the paper's (bench cells), ["random"] (model cells)
hints = ["ratio"]                           # model cells: one cell per hint level

[[models]]                                  # model agents: one `arena run` cell each
agent = "llm-policy"
model = "mock/random-legal"
options = { concurrency = 1 }               # any other LlmRunConfig field

[limits."mock"]                             # per provider (the model name's prefix before "/")
requests_per_minute = 60

[tournament]                                # head-to-head: one `arena tournament` cell per seed
agents = ["random", "greedy", "mcts:n=30"]  # a round robin of these (2 or more)
envs = ["0-3"]                              # default: the sweep's envs
games = 4                                   # games per pairing and environment (the fixed round robin)
adaptive = true                             # `--adaptive`: stop once the order is decided
alpha = 0.05                                # and max_games, max_cost_usd, batch as `arena tournament`'s flags
```

Errors name the key (``models.0.agent: ...``). Seeds reach each cell's own config, so a
cell's games depend on nothing but the cell: any backend, job count or order gives the
same files.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from engine import EnvKey
from engine.env_spec import N_PAPER_ENVS, EnvSpecError, env_key, env_slug
from harness.bench.paper_plan import Opponent, PaperPlan, make_paper_plan, opponent_label
from harness.registry.specs import canonical_spec
from harness.runs.llm_config import LlmRunConfig
from harness.tournaments.plan import is_privileged

SCHEMA = 1
RANGE = re.compile(r"^\s*(\d+)\s*-\s*(\d+)\s*$")


class SweepError(ValueError):
    """A sweep file that cannot be run; the message names the key and what would be right."""


class ModelEntry(BaseModel):
    """A model agent of the grid: ``arena run``'s agent and model, its hint levels, any other run option."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent: Literal["llm-policy", "llm-strategist", "cwm"] = "llm-policy"
    model: str
    hints: tuple[Literal["none", "ratio", "family"], ...] | None = None  # default: the sweep's hints
    options: dict[str, Any] = {}


class ProviderLimits(BaseModel):
    """Limits shared by every worker of the sweep for one provider."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    requests_per_minute: int | None = Field(default=None, ge=1)
    tokens_per_minute: int | None = Field(default=None, ge=1)
    concurrency: int | None = Field(default=None, ge=1)
    max_cost_usd: float | None = Field(default=None, gt=0)  # the provider's spending over the whole sweep (harness.sweep.limiter)
    port: int = Field(default=0, ge=0, le=65535)  # the proxy's port (0: any free one; fix it to resume limited cells)


class TournamentEntry(BaseModel):
    """The sweep's head-to-head cells: a round robin (``adaptive``: the adaptive schedule) of ``agents``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agents: tuple[str, ...] = Field(min_length=2)
    envs: tuple[int | str, ...] | None = Field(default=None, min_length=1)  # default: the sweep's envs
    games: int = Field(default=20, ge=1)  # per pairing and environment (the fixed round robin; adaptive: its default cap)
    adaptive: bool = False
    alpha: float = Field(default=0.05, gt=0, lt=1)
    max_games: int | None = Field(default=None, ge=2)
    max_cost_usd: float | None = Field(default=None, gt=0)
    batch: int = Field(default=2, ge=2, multiple_of=2)


class TournamentCell(BaseModel):
    """One tournament cell's exact settings (``arena tournament``'s plan and, adaptive, its schedule's settings)."""

    model_config = ConfigDict(frozen=True)

    agents: tuple[str, ...]
    envs: tuple[EnvKey, ...]
    games: int
    seed: int
    referee: bool = True
    adaptive: bool = False
    alpha: float = 0.05
    max_games: int | None = None
    max_cost_usd: float | None = None
    batch: int = 2


class SweepFile(BaseModel):
    """The validated sweep file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    envs: tuple[int | str, ...] = Field(min_length=1)
    agents: tuple[str, ...] = ()
    models: tuple[ModelEntry, ...] = ()
    seeds: tuple[int, ...] = (0,)
    hints: tuple[Literal["none", "ratio", "family"], ...] = ("ratio",)
    budget: int = Field(default=2000, ge=1)
    games: int = Field(default=20, ge=1)
    checkpoint_games: int = Field(default=20, ge=1)
    opponents: tuple[str, ...] | None = None
    quick: bool = False
    referee: bool = True
    limits: dict[str, ProviderLimits] = {}
    tournament: TournamentEntry | None = None

    @field_validator("seeds")
    @classmethod
    def _seeds(cls, seeds: tuple[int, ...]) -> tuple[int, ...]:
        if not seeds or any(s < 0 for s in seeds) or len(set(seeds)) != len(seeds):
            raise ValueError("give one or more distinct whole numbers 0 or more, e.g. seeds = [0, 1]")
        return seeds


class Cell(BaseModel):
    """One run of the sweep: its directory name and the exact config that run gets (picklable, JSON-able)."""

    model_config = ConfigDict(frozen=True)

    id: str
    kind: Literal["bench", "model", "tournament"]
    env: EnvKey  # tournament cells: their first environment
    seed: int
    agent: str  # the agent spec (bench), "llm-policy:model=M,hint=H" (model), "tournament of A, B, ..." (tournament)
    plan: PaperPlan | None = None  # bench cells: a one-pair `arena bench paper` plan
    config: LlmRunConfig | None = None  # model cells: the `arena run` config
    tournament: TournamentCell | None = None  # tournament cells


class Sweep(BaseModel):
    """A sweep file with its cells (recorded in ``DIR/sweep.json``)."""

    model_config = ConfigDict(frozen=True)

    schema_version: int = SCHEMA
    source: str  # the file's text
    file: SweepFile
    cells: tuple[Cell, ...]


def load_sweep(path: str | Path) -> Sweep:
    """Read, validate and expand a sweep file; :class:`SweepError` names what is wrong."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise SweepError(f"cannot read the sweep file {str(path)!r}: {error.strerror}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise SweepError(f"{path}: not valid TOML: {error}") from None
    return parse_sweep(data, text, path.parent)


def parse_sweep(data: dict[str, Any], text: str = "", base: Path | None = None) -> Sweep:
    """Validate ``data`` (a parsed sweep file) and expand its cells; relative layout paths start at ``base``."""
    try:
        sweep_file = SweepFile.model_validate(data)
    except ValidationError as error:
        raise SweepError(_described(error)) from None
    if not sweep_file.agents and not sweep_file.models and sweep_file.tournament is None:
        raise SweepError(
            'agents / models / tournament: the grid has no agent: give agents = ["interval"], a [[models]] table or a [tournament] table'
        )
    envs = _env_keys(sweep_file.envs, base)
    cells = [*_bench_cells(sweep_file, envs), *_model_cells(sweep_file, envs), *_tournament_cells(sweep_file, envs, base)]
    return Sweep(source=text, file=sweep_file, cells=tuple(cells))


def _described(error: ValidationError) -> str:
    """One line per problem, each naming its key (``models.0.model: Field required``)."""
    parts = []
    for item in error.errors():
        key = ".".join(str(part) for part in item["loc"]) or "(top level)"
        message = "unknown key (check its spelling)" if item["type"] == "extra_forbidden" else item["msg"]
        parts.append(f"{key}: {message}")
    return "; ".join(parts)


def _env_keys(items: tuple[int | str, ...], base: Path | None, key: str = "envs") -> list[EnvKey]:
    """The keys ``envs`` names, in order, without repeats: ids, ``a-b`` ranges, ``all``, or environment specs."""
    keys: list[EnvKey] = []
    for index, item in enumerate(items):
        where = f"{key}.{index}"
        if isinstance(item, str) and item.strip() == "all":
            found: list[EnvKey] = list(range(N_PAPER_ENVS))
        elif isinstance(item, str) and (match := RANGE.match(item)):
            first, last = int(match[1]), int(match[2])
            if first > last or last >= N_PAPER_ENVS:
                raise SweepError(f'{where}: range {item!r} must run upwards within 0-{N_PAPER_ENVS - 1}, e.g. "0-6"')
            found = list(range(first, last + 1))
        else:
            try:
                found = [env_key(item, base)]
            except (EnvSpecError, KeyError, ValueError) as error:
                raise SweepError(f"{where}: {error}") from None
        keys.extend(k for k in found if k not in keys)
    return keys


def _bench_cells(sweep_file: SweepFile, envs: list[EnvKey]) -> list[Cell]:
    if not sweep_file.agents:
        return []
    try:
        plan = make_paper_plan(
            envs,
            sweep_file.agents,
            budget=sweep_file.budget,
            games=sweep_file.games,
            checkpoint_games=sweep_file.checkpoint_games,
            quick=sweep_file.quick,
        )
        if sweep_file.opponents is not None:
            opponents = tuple(
                Opponent(label=opponent_label(spec), spec=canonical_spec(spec), privileged=is_privileged(spec))
                for spec in sweep_file.opponents
            )
            plan = plan.model_copy(update={"opponents": opponents, "missing_opponents": ()})
        plan = plan.model_copy(update={"referee": sweep_file.referee})
    except (KeyError, ValueError) as error:
        raise SweepError(f"agents / envs / opponents: {error}") from None
    cells = []
    for env in envs:
        for agent in plan.agents:
            for seed in sweep_file.seeds:
                cell_plan = plan.model_copy(update={"env_ids": (env,), "agents": (agent,), "seed": seed})
                cells.append(
                    Cell(
                        id=_cell_id("bench", agent, env, seed, cell_plan.model_dump_json()),
                        kind="bench",
                        env=env,
                        seed=seed,
                        agent=agent,
                        plan=cell_plan,
                    )
                )
    return cells


def _model_cells(sweep_file: SweepFile, envs: list[EnvKey]) -> list[Cell]:
    cells = []
    for index, entry in enumerate(sweep_file.models):
        for hint in entry.hints or sweep_file.hints:
            for env in envs:
                for seed in sweep_file.seeds:
                    fields = {
                        "agent": entry.agent,
                        "model": entry.model,
                        "env": env,
                        "budget": sweep_file.budget,
                        "eval_games": sweep_file.games,
                        "seed": seed,
                        "hint": hint,
                        "referee": sweep_file.referee,
                        **({"opponents": sweep_file.opponents} if sweep_file.opponents is not None else {}),
                        **entry.options,
                    }
                    try:
                        config = LlmRunConfig.model_validate(fields)
                    except ValidationError as error:
                        raise SweepError("; ".join(f"models.{index}.options.{part}" for part in _described(error).split("; "))) from None
                    name = f"{entry.agent}:model={entry.model},hint={hint}"
                    cells.append(
                        Cell(
                            id=_cell_id(entry.agent, f"{entry.model}-{hint}", env, seed, config.model_dump_json()),
                            kind="model",
                            env=env,
                            seed=seed,
                            agent=name,
                            config=config,
                        )
                    )
    return cells


def _tournament_cells(sweep_file: SweepFile, envs: list[EnvKey], base: Path | None) -> list[Cell]:
    """One tournament cell per seed: the round robin (or adaptive schedule) of ``tournament.agents`` on its envs."""
    entry = sweep_file.tournament
    if entry is None:
        return []
    agents: list[str] = []
    for index, spec in enumerate(entry.agents):
        try:
            agents.append(canonical_spec(spec))
        except (KeyError, ValueError) as error:
            raise SweepError(f"tournament.agents.{index}: {error}") from None
        if agents[-1] in agents[:-1]:
            raise SweepError(f"tournament.agents.{index}: {agents[-1]!r} is listed twice; list each agent once")
    keys = envs if entry.envs is None else _env_keys(entry.envs, base, "tournament.envs")
    cells = []
    for seed in sweep_file.seeds:
        settings = TournamentCell(
            agents=tuple(agents),
            envs=tuple(keys),
            games=entry.games,
            seed=seed,
            referee=sweep_file.referee,
            **entry.model_dump(exclude={"agents", "envs", "games"}),
        )
        schedule = "adaptive" if entry.adaptive else "round_robin"
        cells.append(
            Cell(
                id=_cell_id("tournament", schedule, keys[0], seed, settings.model_dump_json()),
                kind="tournament",
                env=keys[0],
                seed=seed,
                agent=f"tournament of {', '.join(agents)}",
                tournament=settings,
            )
        )
    return cells


def _cell_id(kind: str, agent: str, env: EnvKey, seed: int, config_json: str) -> str:
    """``<agent>-env<slug>-s<seed>-<6 hex of the config>``: readable, safe as a file name, unique per config."""
    slug = re.sub(r"[^A-Za-z0-9]+", "_", agent).strip("_")[:40]
    digest = hashlib.sha256(config_json.encode()).hexdigest()[:6]
    return f"{kind}-{slug}-env{env_slug(env)}-s{seed}-{digest}"
