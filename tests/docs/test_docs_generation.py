"""The generated parts of the manual: the command reference from the program, the file formats from the models."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
import typer
import typer.main

REPOSITORY = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPOSITORY / "docs" / "hooks"))

from cli_reference import reference_markdown, root_command, walk  # noqa: E402
from format_schemas import model_class, schema_markdown  # noqa: E402
from mkdocs_hooks import expand, on_page_markdown  # noqa: E402

FORMATS_PAGE = REPOSITORY / "docs" / "reference" / "formats.md"


def _tiny_app() -> typer.Typer:
    app = typer.Typer()

    @app.command()
    def play(
        env: int = typer.Argument(..., help="An environment id."),
        budget: int = typer.Option(20, help="Games to play; written to runs/<id>/ | nowhere else."),
        fast: bool = typer.Option(False, "--fast", help="Quicker."),
    ) -> None:
        """Play a few games.

        Writes runs/<id>/games.jsonl.
        """

    @app.command()
    def show() -> None:
        """Show the board."""

    return app


def test_every_command_option_and_default_of_a_program_is_in_its_reference():
    text = reference_markdown(typer.main.get_command(_tiny_app()))
    assert "## `arena`" in text and "### `arena play`" in text and "### `arena show`" in text
    assert "| `--budget <int>` | Games to play; written to runs/&lt;id&gt;/ \\| nowhere else. [default: 20] |" in text
    assert "| `--fast` | Quicker. |" in text
    assert "An environment id." in text and "Writes runs/&lt;id&gt;/games.jsonl." in text


def test_the_arena_reference_names_every_command_and_every_option_of_run():
    root = root_command()
    text = reference_markdown(root)
    paths = [" ".join(path) for path, _, _ in walk(root, ("arena",))]
    assert {"arena run", "arena view", "arena bench paper", "arena sweep run", "arena envs new"} <= set(paths)
    assert all(f"`{path}`" in text for path in paths)
    (run,) = [command for path, command, _ in walk(root, ("arena",)) if path == ("arena", "run")]
    options = [name for param in run.params for name in param.opts if name.startswith("--")]
    section = text.split("### `arena run`", 1)[1].split("\n### ", 1)[0]
    missing = [name for name in options if not re.search(rf"`{re.escape(name)}[ ,`]", section) and name != "--help"]
    assert not missing, f"options of arena run missing from its reference: {missing}"


def test_a_schema_is_the_models_json_schema():
    block = schema_markdown("harness.records.entries:GameEntry")
    assert block.startswith("```json\n") and block.endswith("```\n")
    schema = json.loads(block.removeprefix("```json\n").removesuffix("```\n"))
    assert schema["title"] == "GameEntry"
    assert {"game_index", "phase", "moves", "rewards", "black_discs"} <= set(schema["properties"])
    assert schema["properties"]["phase"]["enum"] == ["adapt", "eval"]


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        ("harness.records.entries", "expected module:Class"),
        ("harness.records.entries:TranscriptError", "is not a pydantic model"),
        ("harness.records.entries:NoSuchThing", "is not a pydantic model"),
    ],
)
def test_a_schema_reference_that_names_no_model_is_refused(reference, message):
    with pytest.raises(ValueError, match=message):
        model_class(reference)


def test_every_schema_the_formats_page_asks_for_is_a_model():
    references = re.findall(r"<!-- generated: schema (\S+) -->", FORMATS_PAGE.read_text(encoding="utf-8"))
    assert len(references) >= 8
    for reference in references:
        assert model_class(reference).model_json_schema()["properties"]


def test_the_hook_expands_markers_and_leaves_other_pages_alone():
    page = "# Formats\n\n<!-- generated: schema harness.records.chain:ChainSeal -->\n\ntext\n"
    expanded = expand(page)
    assert "<!-- generated:" not in expanded and '"title": "ChainSeal"' in expanded and expanded.endswith("text\n")
    plain = "# A page\n\n<!-- a comment -->\n"
    assert on_page_markdown(plain, page=None, config=None, files=None) == plain
