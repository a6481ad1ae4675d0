"""Another distribution that provides `agents`, `engine` or `harness` is named in one line, with what to do.

The other distribution is written by hand into a folder (its package and a ``.dist-info`` with its name and file
list), which is then put on the import path: nothing is built or downloaded.
"""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import harness
from harness.installation.names import REPORTED, find_clash

ROOT = Path(harness.__file__).resolve().parents[1]
ARENA = Path(sys.executable).with_name("arena")
OTHER = "other-agents-sdk"


def other_distribution(site: Path, name: str = "agents", files: tuple[str, ...] = ("__init__.py",)) -> Path:
    """``site`` holding package ``name`` of the distribution :data:`OTHER` (its metadata and RECORD)."""
    info = site / "other_agents_sdk-1.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {OTHER}\nVersion: 1.0\n", encoding="utf-8")
    (site / name).mkdir(exist_ok=True)
    for file in files:
        (site / name / file).write_text("raise ImportError('the other SDK')\n", encoding="utf-8")
    record = [f"{name}/{file},," for file in files] + [f"{info.name}/METADATA,,", f"{info.name}/RECORD,,"]
    (info / "RECORD").write_text("\n".join(record) + "\n", encoding="utf-8")
    return site


def clean_env(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", REPORTED)}
    return env | extra


def test_arena_version_names_both_distributions_in_one_line_and_stops(tmp_path):
    site = other_distribution(tmp_path / "site")
    done = subprocess.run(
        [str(ARENA), "--version"], env=clean_env(PYTHONPATH=str(site)), capture_output=True, text=True, timeout=120, check=False
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and done.stdout == "" and len(lines) == 1, (done.returncode, done.stdout, done.stderr)
    line = lines[0]
    assert f"'{OTHER}'" in line and "othello-arena" in line and str(site / "agents") in line
    assert "pipx install othello-arena" in line and "uv tool install othello-arena" in line


def test_import_harness_says_it_once_and_child_processes_stay_quiet(tmp_path):
    site = other_distribution(tmp_path / "site")
    child = "import subprocess, sys; subprocess.run([sys.executable, '-c', 'import harness'], check=True)"
    program = f"import harness; {child}"
    done = subprocess.run(
        [sys.executable, "-c", program], env=clean_env(PYTHONPATH=str(site)), capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0 and len(done.stderr.strip().splitlines()) == 1 and OTHER in done.stderr


def test_without_another_distribution_there_is_no_clash_and_no_line():
    assert find_clash() is None
    done = subprocess.run([sys.executable, "-c", "import harness"], env=clean_env(), capture_output=True, text=True, timeout=60, check=True)
    assert done.stderr == ""


def test_a_package_that_ours_hides_is_named_but_not_fatal(tmp_path):
    site = other_distribution(tmp_path / "site")
    clash = find_clash(ROOT, [str(ROOT), str(site)])
    assert clash is not None and not clash.fatal and clash.name == "agents" and clash.other == (site / "agents").resolve()
    assert "hides" in clash.line() and "cannot run" not in clash.line()


def test_a_package_that_import_resolves_to_is_fatal(tmp_path):
    site = other_distribution(tmp_path / "site", name="engine")
    clash = find_clash(ROOT, [str(site), str(ROOT)], resolve=lambda name: site / name if name == "engine" else ROOT / name)
    assert clash is not None and clash.fatal and clash.name == "engine"
    assert clash.line().startswith("othello-arena cannot run here: `import engine` gives")


def test_a_folder_without_init_hides_nothing(tmp_path):
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "notes.txt").write_text("not a package", encoding="utf-8")
    assert find_clash(ROOT, [str(tmp_path), str(ROOT)]) is None


def installed_copy(site: Path) -> Path:
    """``site`` holding a wheel-like install of this distribution's three ``__init__.py`` files and their RECORD."""
    info = site / "othello_arena-0.1.0.dist-info"
    info.mkdir(parents=True)
    record = []
    for name in ("engine", "agents", "harness"):
        (site / name).mkdir()
        data = (ROOT / name / "__init__.py").read_bytes()
        (site / name / "__init__.py").write_bytes(data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name}/__init__.py,sha256={digest},{len(data)}")
    (info / "RECORD").write_text("\n".join(record) + "\n", encoding="utf-8")
    return site


def test_files_of_another_distribution_mixed_into_an_installed_folder(tmp_path):
    site = installed_copy(tmp_path / "site")
    assert find_clash(site, [str(site)], resolve=lambda name: site / name) is None
    (site / "agents" / "run.py").write_text("# the other SDK's\n", encoding="utf-8")
    clash = find_clash(site, [str(site)], resolve=lambda name: site / name)
    assert clash is not None and clash.mixed and not clash.fatal and "both installed files into" in clash.line()


def test_an_overwritten_init_of_an_installed_folder_is_fatal(tmp_path):
    site = installed_copy(tmp_path / "other")
    (site / "agents" / "__init__.py").write_text("from .agent import Agent\n", encoding="utf-8")
    clash = find_clash(site, [str(site)], resolve=lambda name: site / name)
    assert clash is not None and clash.mixed and clash.fatal and clash.name == "agents"
