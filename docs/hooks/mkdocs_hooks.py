"""MkDocs hook: fills the generated parts of the pages (the CLI reference and the file formats' schemas).

A page holds ``<!-- generated: cli -->`` (every `arena` command and option, from the program) or
``<!-- generated: schema MODULE:CLASS -->`` (a pydantic model's JSON Schema). Nothing of these
is written by hand, so the reference cannot drift from the code.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cli_reference import reference_markdown  # noqa: E402
from format_schemas import schema_markdown  # noqa: E402

MARKER = re.compile(r"<!-- generated: (cli|schema [\w.]+:\w+) -->")


def expand(markdown: str) -> str:
    """The page with every generated marker replaced by what it names."""

    def replace(match: re.Match[str]) -> str:
        what = match.group(1)
        return reference_markdown() if what == "cli" else schema_markdown(what.split(" ", 1)[1])

    return MARKER.sub(replace, markdown)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """MkDocs event: expand the markers of each page before it is rendered."""
    return expand(markdown) if "<!-- generated:" in markdown else markdown
