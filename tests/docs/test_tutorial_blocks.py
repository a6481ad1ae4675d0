"""Every shell block of the tutorials and the README runs, with mock models, as a reader would run it.

Each page's blocks run in order in one bash session (``cd`` and ``export`` carry over, as in a
terminal) in a scratch directory that holds what a clone holds next to the reader: ``.venv``,
``examples/`` and ``docs/``. API keys are removed from the environment, so a block that would call a
paid model fails unless its marker substitutes a mock (tests/docs/doc_blocks.py: the markers).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
from doc_blocks import Block, MarkerError, page_blocks

REPOSITORY = Path(__file__).resolve().parents[2]
TUTORIALS = sorted((REPOSITORY / "docs" / "tutorials").glob("*.md"))
PAGES = [REPOSITORY / "README.md", *TUTORIALS]
LINKED = (".venv", "examples", "docs")  # what the reader has beside them in a clone
SECRET_VARIABLES = re.compile(r"(_API_KEY|_API_TOKEN|^ARENA_MODEL)$")
PAGE_TIMEOUT_S = 900
READY_TIMEOUT_S = 60


def _blocks(page: Path) -> list[Block]:
    return page_blocks(page)


ALL_BLOCKS = [block for page in PAGES for block in _blocks(page)]


def _free_port() -> int:
    from harness.testing import free_port

    return int(free_port())


def _environment() -> dict[str, str]:
    environment = {name: value for name, value in os.environ.items() if not SECRET_VARIABLES.search(name)}
    environment["PATH"] = f"{REPOSITORY / '.venv' / 'bin'}{os.pathsep}{environment.get('PATH', '')}"
    environment["NUMBA_CACHE_DIR"] = environment.get("NUMBA_CACHE_DIR", str(REPOSITORY / ".numba_cache"))
    environment["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    environment.pop("VIRTUAL_ENV", None)
    return environment


def _driver(blocks: list[Block], scratch: Path, port: int) -> str:
    """One bash script that runs the page's blocks in order, each announced, servers in the background."""
    pids = scratch / ".docs-test-pids"
    lines = ["set -euo pipefail", f"trap 'for pid in $(cat {pids} 2>/dev/null); do kill -- -$pid 2>/dev/null || true; done' EXIT"]
    for number, block in enumerate(blocks, 1):
        if block.file is not None:
            target = scratch / block.file
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.script(port), encoding="utf-8")
            continue
        if not block.is_shell:
            continue
        if block.skip is not None:
            lines.append(f"echo {shlex.quote(f'::skip {block.where} ({block.skip})')}")
            continue
        script = scratch / f".docs-test-block-{number}.sh"
        script.write_text(block.script(port), encoding="utf-8")
        lines.append(f"echo {shlex.quote(f'::block {block.where}')}")
        if block.background:
            log = scratch / f".docs-test-block-{number}.log"
            lines.append(f"setsid bash {script} > {log} 2>&1 & echo $! >> {pids}")  # its own group: killed whole
            lines.append(f"timeout {READY_TIMEOUT_S} bash -c 'until [ -s {log} ]; do sleep 0.1; done'; cat {log}")
        else:
            lines.append(f"source {script}")
            lines.append(f'echo "::done {block.where} at ${{SECONDS}} s"')
    return "\n".join(lines) + "\n"


@pytest.mark.long
@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_shell_block_of_the_page_runs(page, tmp_path):
    scratch = tmp_path / "clone"
    scratch.mkdir()
    for name in LINKED:
        (scratch / name).symlink_to(REPOSITORY / name)
    driver = scratch / ".docs-test-driver.sh"
    driver.write_text(_driver(_blocks(page), scratch, _free_port()), encoding="utf-8")
    result = subprocess.run(["bash", str(driver)], cwd=scratch, env=_environment(), capture_output=True, text=True, timeout=PAGE_TIMEOUT_S)
    output = result.stdout + result.stderr
    failed = re.findall(r"^::block (\S+)", result.stdout, re.MULTILINE)
    assert result.returncode == 0, f"{failed[-1] if failed else page.name}: exit {result.returncode}\n{output[-6000:]}"
    print("\n".join(line for line in result.stdout.splitlines() if line.startswith("::")))


@pytest.mark.parametrize("block", ALL_BLOCKS, ids=lambda block: block.where)
def test_each_block_is_run_or_says_why_not(block):
    """A block is a shell block to run, a file to write, or something the reader only reads; its markers apply."""
    assert block.language, f"{block.where}: a fenced block without a language (bash, toml, python, text, ...)"
    if block.is_shell and block.skip is None:
        block.script(port=8000)  # every substitution finds its text
    assert not (block.skip and block.substitutions), f"{block.where}: skipped and substituted: choose one"
    assert not (block.background and not block.is_shell), f"{block.where}: only a shell block runs in the background"


def test_every_tutorial_has_shell_blocks_that_run():
    for page in TUTORIALS:
        assert any(block.is_shell and block.skip is None for block in _blocks(page)), f"{page.name}: nothing is run"


def test_markers_that_cannot_apply_are_refused(tmp_path):
    page = tmp_path / "page.md"
    cases = {
        "<!-- docs-test: skip -->\n```bash\nls\n```\n": "must say why",
        "<!-- docs-test: run-fast -->\n```bash\nls\n```\n": "unknown docs-test action",
        "<!-- docs-test: substitute ls -->\n```bash\nls\n```\n": "OLD => NEW",
        "<!-- docs-test: skip slow -->\nSome prose.\n```bash\nls\n```\n": "just above its block",
        "```bash\nls\n": "never closes",
    }
    for text, message in cases.items():
        page.write_text(text)
        with pytest.raises(MarkerError, match=message):
            page_blocks(page)
    page.write_text("<!-- docs-test: substitute gpt-4o => mock/echo -->\n```bash\narena run --model mock/x\n```\n")
    with pytest.raises(MarkerError, match="not in the block"):
        page_blocks(page)[0].script(port=1)


def test_a_substituted_block_gets_the_page_port(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- docs-test: substitute openai/gpt-4o-mini => mock/echo; 8000 => {port} -->\n"
        "```bash\narena run --model openai/gpt-4o-mini --api-base http://127.0.0.1:8000/v1\n```\n"
    )
    (block,) = page_blocks(page)
    assert block.script(port=4321) == "arena run --model mock/echo --api-base http://127.0.0.1:4321/v1\n"


def test_the_readme_stays_the_way_in():
    readme = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250, "the README is the way in; the manual is docs/ (mkdocs.yml)"
    commands = [block.text.strip() for block in _blocks(REPOSITORY / "README.md") if block.is_shell]
    assert commands[:2] == ["make demo", "make test"], "the two set-up commands come first"
    assert any(text.startswith("arena stub-server") for text in commands) and any("arena view" in text for text in commands)
