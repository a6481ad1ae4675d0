"""The build's one step beyond ``pyproject.toml``: the prompt templates go into the wheel.

Their one source is ``prompts/`` at the top of the repository (data that every model call's hash covers, kept apart
from the code). The wheel gets a copy as ``harness/_data/prompts``, where ``harness.installation.data.prompts_dir``
finds it through ``importlib.resources``; an editable install reads ``prompts/`` in place.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

PROMPTS = Path("prompts")
PACKAGED = Path("harness", "_data", "prompts")


class BuildWithPrompts(build_py):
    """``build_py``, then ``prompts/*.j2`` copied into the built ``harness`` package."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return  # the clone's prompts/ is read in place
        templates = sorted(PROMPTS.glob("*.j2"))
        if not templates:
            raise SystemExit(f"no prompt templates in {PROMPTS.resolve()}: build from the repository's root (or its sdist)")
        target = Path(self.build_lib, PACKAGED)
        self.mkpath(str(target))
        for template in templates:
            self.copy_file(str(template), str(target / template.name))


setup(cmdclass={"build_py": BuildWithPrompts})
