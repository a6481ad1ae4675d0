"""What a user reads first: every command's --help free of internal words, `arena --help` grouped by what a user came to
do with the main job first, and `arena --version`."""

from __future__ import annotations

import re

import pytest
import typer.main
from typer.core import TyperGroup
from typer.testing import CliRunner

from harness.cli.main import PANELS, app, version_line
from harness.records.provenance import harness_version

INTERNAL = re.compile(r"\bissues?\b", re.IGNORECASE)  # "issue 12", "the issue's targets": words of the tracker


def command_paths(group: TyperGroup, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command and group below ``group``, as the words that name it."""
    paths = []
    for name, command in group.commands.items():
        paths.append((*prefix, name))
        if isinstance(command, TyperGroup):
            paths += command_paths(command, (*prefix, name))
    return paths


PATHS = command_paths(typer.main.get_command(app))  # type: ignore[arg-type]


def help_of(*words: str) -> str:
    result = CliRunner().invoke(app, [*words, "--help"], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    return result.output


def test_every_command_is_reached():
    assert len(PATHS) >= 40 and ("run",) in PATHS and ("bench", "paper") in PATHS and ("envs", "new") in PATHS


@pytest.mark.parametrize("words", [(), *PATHS], ids=lambda words: " ".join(words) or "arena")
def test_no_help_text_speaks_of_issues_or_other_internal_words(words):
    found = INTERNAL.findall(help_of(*words))
    assert not found, f"arena {' '.join(words)} --help says {found}"


def test_arena_help_groups_the_commands_by_what_a_user_came_to_do_the_main_job_first():
    output = help_of()
    panels = [title for title in PANELS if f"─ {title} " in output]
    assert panels == list(PANELS) and next(iter(PANELS)) == "Evaluate a model"
    commands = re.findall(r"^│ ([a-z][a-z-]+)\s{2,}", output.split("─ Evaluate a model ")[1], re.MULTILINE)
    assert commands[0] == "run"
    assert sorted(commands) == sorted(name for names in PANELS.values() for name in names)


def test_version_names_the_distribution_and_the_prompt_templates_hash():
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.strip() == version_line()
    assert result.output.startswith("othello-arena ") and harness_version() in result.output
