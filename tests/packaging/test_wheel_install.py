"""The distribution on its own: `python -m build` (sdist, then the wheel from it), the wheel installed into a fresh
virtual environment, and the main commands and the pytest plugin run from a folder outside the repository.

The environment reuses the dependencies already installed for the tests (a ``.pth`` file naming this interpreter's
site-packages: nothing is downloaded), but not the project itself: its packages, its data and its ``arena`` command
come from the wheel, which the first test checks.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.records.provenance import harness_version
from harness.referee.isolation import UNSANDBOXED_ENV

pytestmark = pytest.mark.long

ROOT = Path(__file__).resolve().parents[2]
# Not copied into the build's source tree: the environment, outputs and version control at the top; caches anywhere.
NOT_SOURCE_TOP = {".git", ".venv", "runs", "build", "dist", "site", "mutants", ".mutation", "htmlcov", ".hypothesis"}
NOT_SOURCE = shutil.ignore_patterns("__pycache__", "*.egg-info", ".*cache*")
USER_TEST = """
def test_a_scripted_model_and_a_run_with_the_plugins_fixtures(scripted_model, arena_run):
    model = scripted_model(["d3"])
    assert model.name.startswith("mock/")
    run = arena_run("mock/echo", env=0, budget=1, eval_games=1)
    assert len(run.adapt_games) == 1 and len(run.eval_games) == 1 and run.calls
"""


@dataclass(frozen=True)
class Installed:
    """A virtual environment holding the wheel, and a user's folder outside the repository."""

    venv: Path
    user: Path
    env: dict[str, str]

    def arena(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return self.run(str(self.venv / "bin" / "arena"), *args, timeout=timeout)

    def run(self, *argv: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(argv, cwd=self.user, env=self.env, capture_output=True, text=True, timeout=timeout, check=False)
        assert done.returncode == 0, f"{' '.join(argv)} -> {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done


def not_source(folder: str, names: list[str]) -> set[str]:
    return set(NOT_SOURCE(folder, names)) | (NOT_SOURCE_TOP & set(names) if Path(folder) == ROOT else set())


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    shutil.copytree(ROOT, source, ignore=not_source)
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(work / "dist"), str(source)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    wheel = next((work / "dist").glob("othello_arena-*.whl"))
    environment = work / "venv"
    venv.EnvBuilder(with_pip=False).create(environment)
    purelib = Path(sysconfig.get_paths(vars={"base": str(environment), "platbase": str(environment)})["purelib"])
    (purelib / "reuse_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(environment / "bin" / "python"), "install", "--no-deps", "--no-index", str(wheel)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    user = work / "user"
    user.mkdir()
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "PYTEST", "COV_", "COVERAGE"))}
    env |= {"PATH": f"{environment / 'bin'}{os.pathsep}{env.get('PATH', '')}", "COLUMNS": "100", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env["NUMBA_CACHE_DIR"] = str(work / "numba")  # the wheel's kernels live elsewhere: compiled once, here, not in the repo's cache
    # Agent processes behind the walls see only the environment's own prefix, not the borrowed site-packages that
    # the .pth file adds: they run as plain processes here (a self-contained environment runs them walled).
    env[UNSANDBOXED_ENV] = "1"
    env.pop("OPENAI_API_KEY", None)
    env.pop("ARENA_MODEL", None)
    return Installed(environment, user, env)


def test_the_packages_their_data_and_the_command_come_from_the_wheel(installed):
    probe = (
        "import harness, engine, agents; from harness.prompting.renderer import DEFAULT_PROMPTS_DIR as d; "
        "print(harness.__file__, engine.__file__, agents.__file__, d, sorted(p.name for p in d.glob('*.j2')), sep='\\n')"
    )
    lines = installed.run(str(installed.venv / "bin" / "python"), "-c", probe).stdout.splitlines()
    assert all(Path(line).is_relative_to(installed.venv) for line in lines[:4]), lines
    assert Path(lines[3]).parts[-3:] == ("harness", "_data", "prompts")
    assert lines[4] == str(sorted(p.name for p in (ROOT / "prompts").glob("*.j2")))
    version = installed.arena("--version").stdout
    assert version.startswith("othello-arena 0.1.0 ") and harness_version() in version


def test_demo_run_replay_and_view_from_outside_the_repository(installed):
    demo = installed.arena("demo", "--budget", "4", "--batch", "2", "--games", "2", "--out", "runs").stdout
    assert "Run directory:" in demo and "true K" in demo
    installed.arena("run", "--model", "mock/echo", "--env", "0", "--budget", "2", "--eval-games", "2", "--out", "runs")
    run_dir = next(path for path in (installed.user / "runs").iterdir() if "llm-policy" in path.name)
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["versions"]["othello-arena"] == "0.1.0" and manifest["versions"]["harness"] == harness_version()
    installed.arena("replay", str(run_dir))
    installed.arena("view", str(run_dir), "--out", "page.html")
    assert "<html" in (installed.user / "page.html").read_text(encoding="utf-8").lower()


def test_a_users_pytest_file_uses_the_plugins_fixtures(installed):
    (installed.user / "test_mine.py").write_text(USER_TEST, encoding="utf-8")
    done = installed.run(str(installed.venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_mine.py")
    assert "1 passed" in done.stdout
