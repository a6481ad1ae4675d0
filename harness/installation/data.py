"""The distribution's version and the place of the prompt templates, in a clone and in an installed wheel alike.

The templates have one source, ``prompts/`` at the top of the repository. The build copies them into the wheel as
``harness/_data/prompts`` (``setup.py``), where :func:`prompts_dir` finds them through ``importlib.resources``; in
a clone (an editable install, or the source tree on ``sys.path``) there is no such copy and the repository's own
``prompts/`` is used. Everything else read at run time is package data of the package that reads it
(``pyproject.toml``'s ``[tool.setuptools.package-data]``).
"""

from __future__ import annotations

from pathlib import Path

DISTRIBUTION = "othello-arena"
PACKAGED_PROMPTS = ("_data", "prompts")  # inside the harness package of an installed wheel
REPOSITORY_PROMPTS = "prompts"  # beside the harness package in a clone
NOT_INSTALLED = "0+unknown"


def version() -> str:
    """The installed distribution's version, or ``0+unknown`` when the code runs from a source tree never installed."""
    from importlib import metadata  # here: ``import harness`` (which imports this module) stays quick

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return NOT_INSTALLED


def prompts_dir() -> Path:
    """The directory of the prompt templates: the installed package's copy, else the clone's ``prompts/``.

    The path is returned even when it does not exist (``PromptRenderer`` says so, naming both places).
    """
    from importlib import resources

    package = resources.files("harness")
    packaged = package.joinpath(*PACKAGED_PROMPTS)
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(str(package)).parent / REPOSITORY_PROMPTS


def missing_prompts_message(directory: Path, given: bool = False) -> str:
    """Why the templates directory is missing (``given``: the caller named it), and what to do."""
    if given:
        return f"prompts directory {directory} does not exist"
    return (
        f"the prompt templates are missing: no {'/'.join(('harness', *PACKAGED_PROMPTS))} in the installed package and no "
        f"{directory} (a clone's {REPOSITORY_PROMPTS}/); reinstall {DISTRIBUTION} from a wheel built by `python -m build`, "
        "or pass the templates' directory explicitly"
    )
