"""``arena demo``: the main job in one command: a model agent adapts to a hidden K, then meets the baselines.

The llm-strategist (or, with ``--agent cwm``, the code-world-model agent) adapts
on one environment within a small budget (the strategist's model is called once
per batch of self-play games; the cwm agent's model writes the game as code,
refined against the agent's own games, and plans on it in the sandbox), is
frozen, and plays evaluation games against a few opponents; the same opponents
then play fixed baselines with the same seeds, and one table puts them side by
side with Wilson 95% intervals. Without an API key the model is an embedded
offline one (``mock/reasoner`` for the strategist: it deduces K from the memory
table in its prompt; ``mock/coder`` for cwm: it writes real programs whose
threshold comes from the evidence in its prompt); with ``OPENAI_API_KEY`` set
it is ``openai/gpt-4o-mini``; ``--model`` (or a ``--model-config`` file's
``model``) or ``ARENA_MODEL`` choose any other, with the model options of
``arena run`` (:mod:`harness.cli.model_options`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, cast

import typer
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from agents.base import AgentContext
from engine import make_env
from engine.env_spec import is_sealed
from engine.environments import Environment
from harness.cli import model_options as mo
from harness.cli.console import add_name_column, fits, fitting_table, print_lines, stdout_console
from harness.cli.options import parse_env
from harness.cli.run import run_with_progress
from harness.models.client import check_api_key
from harness.registry.specs import make_agent
from harness.runs.llm_run import LlmRunConfig
from harness.tournaments.match import MatchResult, run_match

OFFLINE_MODEL = "mock/reasoner"
# the embedded offline model of each demo agent
OFFLINE_MODELS = {"llm-strategist": OFFLINE_MODEL, "cwm": "mock/coder", "llm-policy": "mock/random-legal"}
DEMO_AGENTS = tuple(OFFLINE_MODELS)
# cwm plays its budget with MCTS on its program, llm-policy asks the model for every move of both colours: fewer games
DEFAULT_BUDGETS = {"llm-strategist": 200, "cwm": 40, "llm-policy": 20}
LEGAL_MOVES_TRACKS = ("shown", "hidden")
AgentName = Literal["llm-policy", "llm-strategist", "cwm"]
LegalMovesTrack = Literal["shown", "hidden"]
KEYED_MODEL = "openai/gpt-4o-mini"
OPPONENTS = ("random", "greedy", "positional")
BASELINES = ("minimax:depth=3", "positional", "random")


def default_model(agent: str = "llm-strategist") -> tuple[str, str]:
    """(model, why): ``ARENA_MODEL`` if set, else a real model when ``OPENAI_API_KEY`` is set, else ``agent``'s offline one."""
    if os.environ.get("ARENA_MODEL"):
        return os.environ["ARENA_MODEL"], "from ARENA_MODEL"
    if os.environ.get("OPENAI_API_KEY"):
        return KEYED_MODEL, "OPENAI_API_KEY is set"
    return OFFLINE_MODELS[agent], "no API key set: the embedded offline model"


@mo.MODEL_OPTIONS.into("model_flags")
def demo(
    env: Annotated[
        str,
        typer.Option("--env", metavar="ENV", help="Environment: an id 0-55 (14: on the standard board), or a spec (docs/environments.md)."),
    ] = "14",
    agent: Annotated[
        str,
        typer.Option(
            "--agent",
            help="The model agent: llm-strategist, cwm (a code world model: "
            "docs/cwm.md; needs bubblewrap), or llm-policy (the model "
            "picks every move).",
        ),
    ] = "llm-strategist",
    model: Annotated[str | None, typer.Option("--model", help="litellm model string or mock/<name> (default: see above).")] = None,
    budget: Annotated[
        int | None, typer.Option("--budget", help="Adaptation games (self-play; default 200, cwm 40, llm-policy 20).", show_default=False)
    ] = None,
    batch: Annotated[int, typer.Option("--batch", help="Games per strategy (one model call each).")] = 25,
    games: Annotated[int, typer.Option("--games", help="Evaluation games per opponent, colours alternating.")] = 10,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the run and the matches.")] = 0,
    out: Annotated[Path, typer.Option("--out", help="Parent directory of the run directory.")] = Path("runs"),
    model_flags: mo.ModelFlags = mo.NO_FLAGS,  # --model-config, --api-base, ...: mo.MODEL_OPTIONS
    reveal: Annotated[bool, typer.Option("--reveal", help="Show the condition (and K) from the start, not only after the run.")] = False,
    legal_moves: Annotated[
        str | None,
        typer.Option(
            "--legal-moves",
            help="llm-policy: shown (each move prompt lists the legal moves; the default) or hidden (the "
            "model finds them): a separate track, never pooled with the other.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Adapt the llm-strategist (or cwm, or llm-policy) to a hidden K, then compare it with baselines against the same opponents.

    Prints the agent's beliefs over the budget, a table of win/draw/lose
    rates per opponent (Wilson 95% intervals) for it and for fixed baselines,
    and the run directory (replay it with ``arena replay``). The condition
    (K) is printed only after the run, labelled so, unless ``--reveal``.
    """
    if agent not in DEMO_AGENTS:
        raise typer.BadParameter(f"--agent {agent!r}: choose one of {', '.join(DEMO_AGENTS)}")
    if legal_moves is not None and legal_moves not in LEGAL_MOVES_TRACKS:
        raise typer.BadParameter(f"--legal-moves {legal_moves!r}: choose shown or hidden")
    if legal_moves is not None and agent != "llm-policy":
        raise typer.BadParameter(
            f"--legal-moves: only llm-policy sees move prompts ({agent} never gets a legal-move "
            "list); leave it out, or use --agent llm-policy"
        )
    budget = DEFAULT_BUDGETS[agent] if budget is None else budget
    if games < 1:
        raise typer.BadParameter(f"--games must be 1 or more, got {games}")
    if budget < 1:
        raise typer.BadParameter(f"--budget must be 1 or more, got {budget}")
    environment = make_env(parse_env(env))
    if reveal and is_sealed(environment.id):
        raise typer.BadParameter(
            "--reveal: a suite's conditions are sealed until a run has finished (the report reveals them); leave out --reveal"
        )
    named, options = mo.resolve(model_flags)
    chosen, why = (named, "from --model" if model else "from --model-config") if named else default_model(agent)
    check_api_key(chosen, api_base=options.api_base)  # an unknown model or a missing key: an error before anything is printed
    console = stdout_console()
    shown = f"condition {environment.condition.label}, K = {environment.condition.k} (--reveal)" if reveal else "K stays hidden"
    console.print(
        f"{agent} with {chosen} ({why}) adapts on env {environment.id} ({environment.layout.name}) within {budget} games; {shown}.",
        markup=False,
    )
    checkpoints = (batch, budget // 2, budget) if agent == "llm-strategist" else (budget,)
    config = LlmRunConfig(
        agent=cast(AgentName, agent),
        model=chosen,
        env=environment.id,
        legal_moves=cast(LegalMovesTrack, legal_moves or "shown"),
        budget=budget,
        eval_games=games,
        opponents=OPPONENTS,
        seed=seed,
        batch=batch,
        search_depth=3,
        endgame=10,
        checkpoints=tuple(sorted({c for c in checkpoints if 0 < c <= budget})),
        model_options=options,
    )
    run_dir = run_with_progress(config, out=out)
    metrics = _read_json(run_dir / "metrics.json")
    console.print(f"Revealed after the run: env {environment.id} is {environment.name}, true K = {metrics['true_k']}.", markup=False)
    for line in _belief_lines(metrics):
        console.print(line, markup=False)
    baselines = {spec: {opponent: _match(environment, spec, opponent, games, seed) for opponent in OPPONENTS} for spec in BASELINES}
    table, legend = demo_table(environment, agent, metrics, baselines, console)  # the model is named in the first line
    console.print(table)
    for legend_line in legend:  # a very narrow terminal: the agents as #1, #2, ..., named here whole
        console.print(legend_line, soft_wrap=True)
    print_lines(
        console,
        f"Run directory: {run_dir}",
        f"  arena replay {run_dir}   checks its records, and the condition against the manifest's commitment",
        f"  arena view {run_dir}     writes its page: every game, ply by ply, with the model's calls",
    )


def _read_json(path: Path) -> dict[str, Any]:
    import json

    return json.loads(path.read_text(encoding="utf-8"))


def _belief_lines(metrics: dict[str, Any]) -> list[str]:
    lines = []
    for entry in metrics["beliefs"]:
        belief = entry["belief"]
        if belief is None:
            lines.append(f"  belief after {entry['checkpoint']:>4} games: none ({entry['error']})")
            continue
        verdict = "contains K" if entry["score"]["contains_k"] else "misses K"
        lines.append(
            f"  belief after {entry['checkpoint']:>4} games: {belief['regime']}, K in "
            f"[{belief['k_low']:.3f}, {belief['k_high']:.3f}] ({verdict})"
        )
    return lines


def _match(environment: Environment, spec: str, opponent: str, games: int, seed: int) -> MatchResult:
    context = AgentContext(environment.rules)
    return run_match(environment, lambda rng: make_agent(spec, context, rng), lambda rng: make_agent(opponent, context, rng), games, seed)


def _cell(wins: int, draws: int, total: int, stacked: bool = False) -> str:
    from harness.tournaments.stats import wilson

    low, high = wilson(wins, total)
    win = f"{wins / total:.0%} [{100 * low:.0f}-{100 * high:.0f}]"
    return f"{win}\n{draws / total:.0%} draws" if stacked else f"{win} / {draws / total:.0%}"


def demo_table(
    environment: Environment, agent: str, metrics: dict[str, Any], baselines: dict[str, dict[str, MatchResult]], console: Console
) -> tuple[Table, list[Text]]:
    """The comparison table with one-line cells if it fits the console, else with each cell's draw rate under its win
    rate; on a console too narrow even for that, the agents as #1, #2, ... and a legend."""
    for stacked in (False, True):
        table = comparison_table(environment, agent, metrics, baselines, stacked=stacked)
        if fits(table, console):
            return table, []
    return fitting_table(
        lambda label: comparison_table(environment, agent, metrics, baselines, label, stacked=True),
        [agent, *baselines, *OPPONENTS],
        console,
    )


def comparison_table(
    environment: Environment,
    agent_label: str,
    metrics: dict[str, Any],
    baselines: dict[str, dict[str, MatchResult]],
    label: Callable[[str], str] = str,
    stacked: bool = False,
) -> Table:
    """Rows: the adapted agent and the baselines; columns: opponents; cells: win % [Wilson 95%] / draw %.

    ``label`` gives the name shown for an agent (a narrow terminal: a short one, named in a legend); ``stacked``
    puts each cell's draw rate on a line of its own, under the win rate."""
    legend = "win % [Wilson 95%], draws under it" if stacked else "win % [Wilson 95% interval] / draw %"
    table = Table(title=f"env {environment.id} ({environment.name})", box=box.SIMPLE_HEAD, caption=f"{legend}; the baselines do not adapt")
    add_name_column(table, "agent")
    for opponent in OPPONENTS:
        add_name_column(table, f"vs {label(opponent)}", justify="right")
    evaluation = metrics["evaluation"]
    table.add_row(
        label(agent_label),
        *(_cell(evaluation[o]["win"]["count"], evaluation[o]["draw"]["count"], evaluation[o]["games"], stacked) for o in OPPONENTS),
    )
    for spec, results in baselines.items():
        cells = []
        for opponent in OPPONENTS:
            tally = results[opponent].overall
            cells.append(_cell(tally.count("win"), tally.count("draw"), tally.games, stacked))
        table.add_row(label(spec), *cells)
    return table


def greedy_factory(rules: Any):
    """A factory of the registered ``greedy`` agent (most flips, ties by its generator) on ``rules``."""
    context = AgentContext(rules)
    return lambda rng: make_agent("greedy", context, rng)


__all__ = ["comparison_table", "default_model", "demo", "demo_table", "greedy_factory"]
