"""What defines an ``arena run``: :class:`LlmRunConfig` (recorded in the manifest), the run's file names and errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from engine import EnvKey
from harness.models.options import ModelOptions
from harness.prompting.beliefs import parse_checkpoints
from harness.prompting.waves import wave_label, wave_size
from harness.records.transcript import GameEntry

AGENTS = ("llm-policy", "llm-strategist", "cwm")
STRATEGIES_FILE = "strategies.jsonl"
BELIEFS_FILE, CACHE_FILE, METRICS_FILE, REPORT_FILE = "beliefs.jsonl", "cache.jsonl", "metrics.json", "report.md"
AGENT_FILE = "agent.json"  # what the agent reported about itself after adapting (cwm: counts, refinement steps)
DEFAULT_CHECKPOINTS = (10, 50, 200, 2000)
REFEREED = ("referee process (enforced: the agent and its model client ran in a process of their own that never held K, "
            "the budget ledger or the opponents; every game re-played and scored by the referee)")
IN_PROCESS = ("in-process (UNENFORCED: the agent and its model client share the process that holds K; "
              "our own agents do not look, but nothing stops code that would)")
Progress = Callable[[str, int, int], None]  # phase, games done, games in the phase
GameHook = Callable[[GameEntry], None]


class RunConfigError(ValueError):
    """A run that cannot start as configured (a user error)."""


class AgentFailed(RuntimeError):
    """The agent's process broke the protocol, crashed or failed; what was played is kept in the run directory."""


class CapChange(BaseModel):
    """Caps given to ``arena run --resume``, and the games on record when they took effect."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    adapt_games: int = Field(ge=0)
    eval_games: int = Field(ge=0)
    max_tokens: int | None = None
    max_cost_usd: float | None = None


class LlmRunConfig(BaseModel):
    """Everything that defines a run (recorded in the manifest; never secrets)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent: Literal["llm-policy", "llm-strategist", "cwm"] = "llm-policy"
    model: str
    env: EnvKey  # an id 0-55, or an environment spec's canonical text (engine.env_spec)
    budget: int = Field(ge=0)
    eval_games: int = Field(ge=0)
    opponents: tuple[str, ...] = ("random",)
    seed: int = 0
    max_retries: int = Field(default=2, ge=0)
    on_failure: Literal["forfeit", "random"] = "forfeit"
    hint: Literal["none", "ratio", "family"] = "ratio"
    legal_moves: Literal["shown", "hidden"] = "shown"  # llm-policy: whether each move prompt lists the legal moves (a track)
    move_format: Literal["text", "tool", "json"] = "text"  # llm-policy: a MOVE: line, a play_move call, a JSON Schema object
    max_cost_usd: float | None = None
    max_tokens: int | None = None
    checkpoints: tuple[int, ...] | None = None
    memory_tokens: int = 1500
    backoff_base_s: float = Field(default=1.0, gt=0)  # first retry wait of the model client
    batch: int = Field(default=50, ge=1)  # llm-strategist: games per strategy (one model call each): its waves
    wave: int = Field(default=1, ge=1)  # llm-policy: adaptation games played at once on one memory (harness.prompting.waves)
    search_depth: int = Field(default=3, ge=1)  # llm-strategist: Minimax depth in plies
    endgame: int = Field(default=10, ge=0)  # llm-strategist: exact solve at this many empty cells or fewer
    jobs: int = Field(default=1, ge=1)  # llm-strategist: worker processes searching a batch's games (same games at any N)
    concurrency: int = Field(default=32, ge=1)  # model calls in flight and evaluation games played at once
    model_options: ModelOptions = ModelOptions()  # endpoint, sampling, timeout, pass-through arguments (never keys)
    cwm_explore: int = Field(default=20, ge=0)  # cwm: exploration games (at most) before the first program
    cwm_random: int = Field(default=8, ge=0)  # cwm: of which uniformly random (the rest steered to informative shares)
    cwm_mode: Literal["tree", "conversation"] = "tree"  # cwm: refinement by REx tree search or by conversation
    cwm_calls: int = Field(default=12, ge=1)  # cwm: model calls over the whole adaptation
    cwm_simulations: int = Field(default=1000, ge=1)  # cwm: MCTS simulations per evaluation move (either path)
    cwm_adapt_simulations: int = Field(default=50, ge=1)  # cwm: the same in its self-play games after exploration
    cwm_planner: Literal["mcts", "minimax"] = "mcts"  # cwm: the search on the program
    cwm_depth: int = Field(default=4, ge=1)  # cwm: minimax's deepest iteration
    cwm_reject: int = Field(default=3, ge=0)  # cwm: best programs of an episode that play each other (< 2: no rejection)
    cwm_heldout: int = Field(default=10_000, ge=0)  # cwm: random-play transitions of the true engine in the held-out tests
    cwm_transitions: Literal["engine", "program"] = "engine"  # cwm: plan on the engine (program's returns table) or the program
    cwm_spot_check: float = Field(default=0.1, ge=0.0, le=1.0)  # cwm, engine path: share of moves checked against the program
    unsandboxed: bool = False  # cwm: run generated code without bubblewrap (rlimits only; the report says UNSANDBOXED)
    referee: bool = True  # the agent in a process of its own, its games scored by the referee (False: in-process, unenforced)
    cap_changes: tuple[CapChange, ...] = ()  # caps raised (or set) on resume, in order; the caps above are the latest

    @model_validator(mode="after")
    def _move_format_of_llm_policy(self) -> LlmRunConfig:
        if self.move_format != "text" and self.agent != "llm-policy":
            raise ValueError(f"move_format {self.move_format!r} is llm-policy's; {self.agent} gives its answers as text (leave it out)")
        return self

    def wave_size(self) -> int | None:
        """Adaptation games per wave: llm-policy's ``wave``, llm-strategist's ``batch``; None for cwm (no waves)."""
        return wave_size(self.agent, {"wave": self.wave, "batch": self.batch})

    def agent_label(self) -> str:
        """The agent's name with its wave size where it has waves (``llm-policy (W=16)``), as tables show it."""
        return wave_label(self.agent, self.wave_size())

    def belief_checkpoints(self) -> tuple[int, ...]:
        if self.checkpoints is not None:
            return parse_checkpoints(",".join(map(str, self.checkpoints)), self.budget) if self.checkpoints else ()
        return tuple(c for c in DEFAULT_CHECKPOINTS if c <= self.budget)
