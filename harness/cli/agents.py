"""``arena agents``: the registered agents, their spec parameters and whether they are privileged."""

from __future__ import annotations

from rich import box
from rich.table import Table
from rich.text import Text

from agents.spec import AgentEntry, Param
from harness.cli.console import stdout_console
from harness.cli.options import PluginOption, use_plugins
from harness.registry.plugins import loaded_plugins
from harness.registry.specs import registry
from harness.tournaments.results import PRIVILEGED_NOTE


def agents(plugin: PluginOption = None) -> None:
    """List the agents a spec can name: name, parameters (default, type), privileged, model-driven, description.

    A spec is the name, optionally with parameters: ``minimax:depth=5``,
    ``mcts:n=100``; parameters left out take their defaults. Agents from plugins
    (--plugin, or installed packages) say where they come from.
    """
    use_plugins(plugin)
    stdout_console().print(agents_table(registry(), loaded_plugins()))


def agents_table(entries: dict[str, AgentEntry], origins: dict[str, str] | None = None) -> Table:
    """One row per registered agent, in name order; a plugin agent's description ends with its source."""
    table = Table(
        title="Agents (spec: name or name:key=value,key=value)",
        caption=(
            f"privileged: {PRIVILEGED_NOTE.removeprefix('privileged: ')}; marked * in results. "
            "model-driven: NAME:model=M plays frozen in match/tournament (calls recorded); "
            "`arena run --agent NAME --model M` adapts it within a budget"
        ),
        box=box.SIMPLE_HEAD,
    )
    for column in ("name", "parameters (default)", "privileged", "model-driven", "description"):
        table.add_column(column)
    for name in sorted(entries):
        entry = entries[name]
        params = "\n".join(param_text(key, param) for key, param in entry.params.items()) or "-"
        description = Text(entry.description, overflow="fold")  # fold: a long plugin path is shown whole
        if origins and name in origins:
            description.append(f"\n(plugin: {origins[name]})", style="dim")
        table.add_row(name, Text(params), "yes" if entry.privileged else "no", "yes" if entry.model_driven else "no", description)
    return table


def param_text(key: str, param: Param) -> str:
    """``n=100 (int): simulations per move``; choices, when limited, follow the type."""
    kind = param.kind.__name__
    if param.choices is not None:
        kind += ": " + "|".join(map(str, param.choices))
    default = str(param.default).lower() if isinstance(param.default, bool) else str(param.default)
    return f"{key}={default} ({kind})" + (f": {param.help}" if param.help else "")
