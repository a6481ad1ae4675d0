"""Parsers of the arguments several commands share: environment specs (``--env``/``--envs``: :func:`parse_env`,
:func:`parse_envs`, over ``engine.env_spec``, the one grammar), env ids and ranges, the ENV | --layout pair, --plugin,
and agent specs (:func:`parse_specs`, the one grammar of ``--opponents``, ``--agents``, ``--vs`` and ``match A B``;
:func:`specs_option` declares such an option). :class:`OptionGroup` declares options once for several commands.

Every problem a user can cause is raised as ``typer.BadParameter`` (or as the engine's
own error types), which ``harness.cli.main`` turns into a one-line ``error: ...``.
"""

from __future__ import annotations

import functools
import inspect
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from agents.spec import AgentSpecError
from engine import EnvKey, EnvSpecError, Layout, Rules, make_env
from engine.env_spec import SPEC_FORMS, env_key
from engine.environments import N_CONDITIONS, N_LAYOUTS, Environment
from engine.layout_text import load_layout
from engine.suite import SuiteError, read_public, suite_directory
from harness.referee.isolation import allow_unsandboxed_agents
from harness.referee.outside_agents import use_plugins as use_outside_plugins
from harness.registry.specs import parse_spec

N_ENVS = N_LAYOUTS * N_CONDITIONS
Command = TypeVar("Command", bound=Callable[..., Any])

# Parameters several commands take, as typer ``Annotated`` types.
ENV_HELP = (
    "Environment: an id 0-55, layout=FILE,condition=COND[,turns=N] (e.g. condition=majority<0.7), "
    "a .toml file with those keys, or SUITE:ENTRY (docs/environments.md)."
)
ENVS_HELP = (
    "Environments: ids (0-6, 0,3,5, all), a suite directory (all its entries) or SUITE:0-3, "
    "or one environment spec (layout=FILE,condition=COND[,turns=N], a .toml file)."
)
EnvArgument = Annotated[str | None, typer.Argument(metavar="ENV", help=ENV_HELP, show_default=False)]
LayoutOption = Annotated[Path | None, typer.Option("--layout", metavar="FILE", help="A layout text file instead of an environment.")]
PluginOption = Annotated[
    list[str] | None,
    typer.Option(
        "--plugin",
        metavar="MODULE_OR_FILE",
        show_default=False,
        help="Your own agents: a dotted module name or a .py file that declares them with @agents.spec.register "
        "(repeatable; imported only in agent processes, behind the sandbox's walls, never in this one).",
    ),
]
UnsandboxedOption = Annotated[
    bool,
    typer.Option(
        "--unsandboxed-agents",
        help="Start agent processes as plain processes, outside the sandbox's walls. Agents from plugins need it "
        "where the walls cannot stand (no bubblewrap, or not root); the run is then marked UNENFORCED.",
    ),
]


def specs_option(flag: str, help: str) -> Any:
    """A repeatable agent-spec option (one spec per flag, read by :func:`parse_specs`), for ``Annotated[list[str] | None, ...]``."""
    return typer.Option(flag, metavar="SPEC", show_default=False, help=help)


def out_file_option(what: str, default: str, metavar: str = "FILE.npz", plot: bool = True) -> Any:
    """A training command's ``--out FILE`` (no default shown): where it writes ``what`` (``default`` when not given)."""
    beside = "; the PNG goes beside it" if plot else ""
    return typer.Option("--out", metavar=metavar, show_default=False, help=f"Where to write {what} (default: {default}){beside}.")


_RANGE_ITEM = re.compile(r"^(\d+)(?:-(\d+))?$")
_RANGE_OR_ALL = re.compile(r"^(all|[\d\s,-]*)$", re.IGNORECASE)
_ENTRY_RANGE = re.compile(r"^\d+(-\d+)?(,\d+(-\d+)?)*$")
_PARAMETER_ITEM = re.compile(r"^[A-Za-z_][\w-]*\s*=")  # key=value: continues the spec before it
SPEC_GRAMMAR = (
    "one spec per flag, the flag repeats (--opponents random --opponents mcts:n=30,c=1.0); "
    "a spec's parameters follow its colon, separated by commas"
)


@dataclass(frozen=True)
class OptionGroup:
    """Typer options declared once for several commands, which receive them as one value.

    ``options``: each option's parameter name, ``Annotated`` type and default, in the order ``--help`` lists them.
    ``gather(values, arguments)``: the one value, from the group's values by name and the command's other arguments.
    """

    options: tuple[tuple[str, Any, Any], ...]
    gather: Callable[[dict[str, Any], dict[str, Any]], Any]

    def into(self, parameter: str) -> Callable[[Command], Command]:
        """A decorator: typer sees the group's options where the command's ``parameter`` stands; it receives their value."""

        def decorate(command: Command) -> Command:
            signature = inspect.signature(command, eval_str=True)
            kind = signature.parameters[parameter].kind
            group = [inspect.Parameter(name, kind, default=default, annotation=annotation) for name, annotation, default in self.options]
            shown = [shared for own in signature.parameters.values() for shared in (group if own.name == parameter else [own])]

            @functools.wraps(command)
            def with_group(*args: Any, **kwargs: Any) -> Any:
                values = {name: kwargs.pop(name, default) for name, _, default in self.options}
                return command(*args, **kwargs, **{parameter: self.gather(values, kwargs)})

            with_group.__signature__ = signature.replace(parameters=shown)  # type: ignore[attr-defined]
            return with_group  # type: ignore[return-value]

        return decorate


def use_plugins(plugins: list[str] | None, in_process: bool = False, unsandboxed: bool = False) -> list[str]:
    """Load the ``--plugin`` sources before any spec is read; returns the option words that reproduce them.

    Files appear with their absolute paths in the words, so a recorded command works
    from any directory.
    A missing file, an import error or a taken agent name is an AgentSpecError naming
    the plugin, which the CLI prints as one ``error:`` line. The ``arena`` command's
    own process never imports them: an agent process does, and describes them
    (:mod:`harness.referee.outside_agents`).
    """
    if unsandboxed:
        allow_unsandboxed_agents()
    return use_outside_plugins(plugins or (), in_process) + (["--unsandboxed-agents"] if unsandboxed else [])


def parse_env_id(text: str) -> int:
    """An environment id (``"4"``) as an int; an unknown one raises with the valid range."""
    cleaned = text.strip()
    if not cleaned.isdigit():
        raise typer.BadParameter(f"ENV must be an environment id 0-{N_ENVS - 1}, got {text!r}")
    env_id = int(cleaned)
    make_env(env_id)  # raises UnknownEnvironmentError with the valid ids
    return env_id


def parse_env(text: str | int, option: str = "--env") -> EnvKey:
    """The key of one environment spec (``engine.env_spec``); BadParameter naming ``option`` and the problem."""
    try:
        return env_key(text)
    except (EnvSpecError, SuiteError) as error:
        raise typer.BadParameter(f"{option}: {error}") from None


def parse_envs(text: str, option: str = "--envs") -> list[EnvKey]:
    """The keys ``--envs`` names: ids/ranges/``all`` (the 56), a suite (all its entries), ``SUITE:RANGE``, or one spec.

    A suite's entries are never mixed with the 56 in one value, so results on them are never pooled.
    """
    stripped = text.strip()
    if "=" in stripped or stripped.lower().endswith(".toml"):
        return [parse_env(stripped, option)]
    if stripped and not _RANGE_OR_ALL.match(stripped):
        suite, colon, entries = stripped.rpartition(":")
        if not colon or not _ENTRY_RANGE.match(entries):
            suite, entries = stripped, ""
        try:
            directory = suite_directory(suite)
            count = len(read_public(directory)[1])
        except SuiteError as error:
            raise typer.BadParameter(f"{option} {text!r}: not ids (0-6, 0,3,5, all) and not a suite: {error}") from None
        chosen = _entry_range(entries, count, option) if entries else list(range(count))
        return [parse_env(f"{directory}:{entry}", option) for entry in chosen]
    return list(parse_env_range(text))


def _entry_range(text: str, count: int, option: str) -> list[int]:
    entries: list[int] = []
    for item in text.split(","):
        first, _, last = item.strip().partition("-")
        low, high = int(first), int(last or first)
        if not 0 <= low <= high < count:
            raise typer.BadParameter(f"{option}: suite entries {item!r} are outside 0-{count - 1} (or run backwards)")
        entries.extend(e for e in range(low, high + 1) if e not in entries)
    return entries


def parse_env_range(text: str) -> list[int]:
    """Env ids from ``0-6``, ``0,3,5``, ``0-2,9`` or ``all``: ascending ranges, ids 0-55, no repeats.

    The ids keep the order they are written in; a repeated id is kept once.
    """
    if text.strip().lower() == "all":
        return list(range(N_ENVS))
    ids: list[int] = []
    items = [item.strip() for item in text.split(",")]
    if not text.strip() or any(not item for item in items):
        raise typer.BadParameter(f"env range {text!r} is empty or has an empty item: write e.g. 0-6, 0,3,5 or all")
    for item in items:
        match = _RANGE_ITEM.match(item)
        if not match:
            raise typer.BadParameter(f"env range item {item!r} is not an id or a range: write e.g. 0-6, 0,3,5 or all")
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) is not None else first
        if last < first:
            raise typer.BadParameter(f"env range {item!r} runs backwards: write {last}-{first}")
        if last >= N_ENVS:
            raise typer.BadParameter(f"env range {item!r} goes past the last id: ids are 0-{N_ENVS - 1}")
        ids.extend(i for i in range(first, last + 1) if i not in ids)
    return ids


def read_layout_file(path: Path) -> Layout:
    """The layout in a text file (``engine.layout_text`` format); LayoutError naming the path otherwise."""
    return load_layout(path)


@dataclass(frozen=True)
class Target:
    """What a command works on: an environment (any spec), or a layout file (no turn limit)."""

    rules: Rules
    title: str
    env: Environment | None = None

    @property
    def layout(self) -> Layout:
        return self.rules.layout


def resolve_target(env_text: str | None, layout_path: Path | None) -> Target:
    """The rules for ``ENV`` or ``--layout FILE`` (exactly one of them)."""
    if env_text is not None and layout_path is not None:
        raise typer.BadParameter("give either ENV or --layout FILE, not both")
    if env_text is None and layout_path is None:
        raise typer.BadParameter(f"give an environment id or spec (ENV: {SPEC_FORMS}) or --layout FILE")
    if layout_path is not None:
        layout = read_layout_file(layout_path)
        name = layout.name or layout_path.name
        return Target(Rules(layout), f"{name} ({layout.describe()}, no turn limit)")
    env = make_env(parse_env(env_text, "ENV"))
    limit = env.condition.turn_limit
    limit_text = f", turn limit {turn_limit_text(env)}" if limit else ""
    label = f"env {env.id}: {env.name}" if isinstance(env.id, int) else env.name
    return Target(env.rules, f"{label} ({env.layout.describe()}{limit_text})", env)


def turn_limit_text(env: Environment) -> str:
    """``10 per player`` / ``10 in total`` / ``none``."""
    if not env.condition.turn_limit:
        return "none"
    return f"{env.condition.turn_limit} {_counting_words(env.condition.turn_counting)}"


def _counting_words(counting: str) -> str:
    return "per player" if counting == "per_player" else "in total"


def parse_specs(values: str | list[str] | tuple[str, ...] | None, option: str) -> list[str]:
    """The agent specs of a repeatable spec option (``--opponents``, ``--agents``, ``--vs``), each one checked.

    One spec per flag value; the flag repeats. Commas inside a spec never split it:
    ``mcts:n=30,c=1.0`` is one spec, as an item of the form ``key=value`` always
    continues the spec before it. For backward compatibility one value may still hold
    several specs where that is unambiguous: ``random,greedy,mcts:n=30,c=1.0`` is three
    specs, and a value with ``;`` is split on ``;`` only (``mcts:n=30,c=1.0;random``).
    Every spec is parsed against the registry (load ``--plugin`` sources first); an
    error names the option, the spec and the parameter.
    """
    words = [values] if isinstance(values, str) else list(values or ())
    specs = [spec for word in words for spec in _split_value(word, option)]
    if not specs:
        raise typer.BadParameter(f"{option}: no agent specs given ({SPEC_GRAMMAR})")
    for spec in specs:
        check_spec(spec, option)
    return specs


def check_spec(spec: str, where: str) -> str:
    """``spec`` itself if the registry can build it; otherwise BadParameter naming ``where``, the spec and the problem."""
    try:
        parse_spec(spec)
    except AgentSpecError as error:
        raise typer.BadParameter(f"{where} {spec!r}: {error}") from None
    return spec


def _split_value(word: str, option: str) -> list[str]:
    if ";" in word:
        items = [item.strip() for item in word.split(";")]
        if not all(items):
            raise typer.BadParameter(f"{option} {word!r} has an empty item ({SPEC_GRAMMAR})")
        return items
    specs: list[str] = []
    for item in (part.strip() for part in word.split(",")):
        if not item:
            raise typer.BadParameter(f"{option} {word!r} has an empty item ({SPEC_GRAMMAR})")
        if _PARAMETER_ITEM.match(item):
            if not specs:
                raise typer.BadParameter(f"{option} {word!r}: parameter {item!r} has no agent before it: write e.g. mcts:{item}")
            specs[-1] += ("," if ":" in specs[-1] else ":") + item
        else:
            specs.append(item)
    return specs


def refuse_newer_schema(path: Path, readable: int) -> None:
    """BadParameter when the JSON file at ``path`` carries a ``schema_version`` newer than ``readable``.

    A run directory written by a newer arena is refused in one line rather than read
    wrongly; a missing or unreadable file is left to the command that reads it.
    """
    try:
        version = json.loads(path.read_text(encoding="utf-8")).get("schema_version")
    except (OSError, ValueError, AttributeError):
        return
    if isinstance(version, int) and version > readable:
        raise typer.BadParameter(
            f"{path}: schema_version {version} is newer than this arena reads ({readable}): "
            "the run was written by a newer version of arena; upgrade it to read the run"
        )


def at_least(floor: int, *options: tuple[str, float | None], unit: str = "") -> None:
    """BadParameter naming the first option below ``floor``: ``--games must be 1 or more, got 0``.

    ``options`` are (flag, value) pairs, checked in order; a value of None (not given) passes, NaN does not.
    """
    for flag, value in options:
        if value is not None and not value >= floor:
            raise typer.BadParameter(f"{flag} must be {floor} or more{unit}, got {value}")
