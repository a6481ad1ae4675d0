"""``arena agents``: the registered agents, their spec parameters and whether they are privileged."""

from __future__ import annotations

from rich import box
from rich.console import Group, RenderableType
from rich.padding import Padding
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
    console = stdout_console()
    table = agents_table(registry(), loaded_plugins())
    if table_fits(registry(), console.width):
        console.print(table)
        return
    for block in agents_listing(registry(), loaded_plugins()):  # a narrow console: one block an agent, nothing cut
        console.print(block)


READABLE = 40  # columns the parameters and the descriptions each need in the table to stay readable
PADDING = 2  # a column's padding in the table


def table_fits(entries: dict[str, AgentEntry], width: int) -> bool:
    """Whether the table fits ``width`` with the names and flags whole and :data:`READABLE` columns for the rest."""
    fixed = max(map(len, entries), default=0) + len("privileged") + len("model-driven")
    return fixed + 2 * READABLE + 5 * PADDING <= width


def agents_listing(entries: dict[str, AgentEntry], origins: dict[str, str] | None = None) -> list[RenderableType]:
    """The table's content stacked: per agent, its name and flags on one line, its description and parameters
    indented under it (a wrapped line keeps the indent)."""
    blocks: list[RenderableType] = [Text(str(agents_table(entries, origins).title), style="bold")]
    for name in sorted(entries):
        entry = entries[name]
        flags = f"  privileged: {_yes(entry.privileged)}, model-driven: {_yes(entry.model_driven)}"
        parts: list[RenderableType] = [Text(name, style="bold").append(flags), Padding(Text(entry.description), (0, 0, 0, 2))]
        if origins and name in origins:
            parts.append(Padding(Text(f"(plugin: {origins[name]})", style="dim", overflow="fold"), (0, 0, 0, 2)))
        parts += [Padding(Text(param_text(key, param)), (0, 0, 0, 4)) for key, param in entry.params.items()]
        blocks.append(Group(*parts))
    return blocks


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


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
        table.add_column(column, no_wrap=column in ("name", "privileged", "model-driven"))
    for name in sorted(entries):
        entry = entries[name]
        params = "\n".join(param_text(key, param) for key, param in entry.params.items()) or "-"
        description = Text(entry.description, overflow="fold")  # fold: a long plugin path is shown whole
        if origins and name in origins:
            description.append(f"\n(plugin: {origins[name]})", style="dim")
        table.add_row(name, Text(params), _yes(entry.privileged), _yes(entry.model_driven), description)
    return table


def param_text(key: str, param: Param) -> str:
    """``n=100 (int): simulations per move``; choices, when limited, follow the type."""
    kind = param.kind.__name__
    if param.choices is not None:
        kind += ": " + "|".join(map(str, param.choices))
    default = str(param.default).lower() if isinstance(param.default, bool) else str(param.default)
    return f"{key}={default} ({kind})" + (f": {param.help}" if param.help else "")
