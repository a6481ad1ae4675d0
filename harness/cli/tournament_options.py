"""The options ``arena match`` and ``arena tournament`` share (--games, --seed, --jobs, --out, --plugin, --in-process,
--resume), declared once as an option group; the commands receive them as one :class:`TournamentFlags`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from harness.cli.options import OptionGroup, PluginOption, UnsandboxedOption

DEFAULT_GAMES = 20
GamesOption = Annotated[
    int | None,
    typer.Option("--games", show_default=False, help=f"Games per pairing and environment, colours alternating (default {DEFAULT_GAMES})."),
]
SeedOption = Annotated[
    int | None, typer.Option("--seed", show_default=False, help="Seed every game's seed is derived from (0 or more; default 0).")
]
JobsOption = Annotated[
    int | None, typer.Option("--jobs", help="Worker processes (default: all cores; 1 plays in this process).", show_default=False)
]
InProcessOption = Annotated[
    bool,
    typer.Option(
        "--in-process",
        help="Build the agents in the process that holds K instead of in player processes (quick "
        "experiments; UNENFORCED: a cheating agent could read K; the results say so).",
    ),
]
OutOption = Annotated[
    Path | None, typer.Option("--out", metavar="DIR", help="Run directory (default: runs/<timestamp>-<name>).", show_default=False)
]
ResumeOption = Annotated[
    Path | None,
    typer.Option(
        "--resume",
        metavar="DIR",
        show_default=False,
        help="Finish an interrupted run with the settings its manifest recorded (flags that "
        "differ from them are refused; --jobs and --plugin may be given).",
    ),
]


@dataclass(frozen=True)
class TournamentFlags:
    """What the command line said with the shared options (None: not given)."""

    games: int | None = None
    seed: int | None = None
    jobs: int | None = None
    out: Path | None = None
    plugin: list[str] | None = None
    in_process: bool = False
    resume: Path | None = None
    unsandboxed_agents: bool = False

    def given(self) -> dict[str, object]:
        """The settings given (None: not given) that a resume compares with the manifest's."""
        return {"--games": self.games, "--seed": self.seed, "--in-process": self.in_process or None}

    def defaults(self) -> tuple[int, int]:
        """(games, seed), their defaults where not given."""
        return (DEFAULT_GAMES if self.games is None else self.games), (0 if self.seed is None else self.seed)

    def settings(self, given: dict[str, object]) -> dict[str, object]:
        """The settings the manifest records: ``given`` with games, seed and --in-process as the run has them."""
        games, seed = self.defaults()
        return given | {"--games": games, "--seed": seed, "--in-process": self.in_process}

    def words(self, plugin_words: list[str]) -> list[str]:
        """The shared options as the recorded command line writes them (--jobs and --out are added by the run)."""
        games, seed = self.defaults()
        return ["--games", str(games), "--seed", str(seed), *plugin_words, *(["--in-process"] if self.in_process else [])]


def _gather(values: dict[str, Any], arguments: dict[str, Any]) -> TournamentFlags:
    return TournamentFlags(**values)


NO_FLAGS = TournamentFlags()
# In their --help order.
TOURNAMENT_OPTIONS = OptionGroup(
    (
        ("games", GamesOption, None),
        ("seed", SeedOption, None),
        ("jobs", JobsOption, None),
        ("out", OutOption, None),
        ("plugin", PluginOption, None),
        ("in_process", InProcessOption, False),
        ("resume", ResumeOption, None),
        ("unsandboxed_agents", UnsandboxedOption, False),
    ),
    _gather,
)
