"""What a program can read inside the sandbox: the interpreter, the standard library, the worker's own modules.

A program walks every file it can read (``/proc`` included, symlink targets too)
and looks, in the sandbox, for what must not be there: lines of the project's
README and the manual (the rule family, the id scheme, the published K), the environment table,
the repository's absolute path, a fake API key in the parent's environment and a
secret file the parent holds. The needles travel as call arguments (in memory),
never in a file. The audit hook is off: what the kernel lets it read is what counts.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from pathlib import Path

import pytest
from sandbox_limits import TEST_LIMITS

REPOSITORY = Path(__file__).resolve().parents[3]
ENVIRONMENT_TABLE = Path("/work/shared/reference/environments.json")
LIMITS = dataclasses.replace(TEST_LIMITS, call_s=300.0, start_s=60.0)
READ_CAP = 4 << 20  # bytes read of each file (/dev/zero and the like never end)

WALK = f"""
import os, stat

def _proc_dirs(root, dirs):
    if root == '/proc':
        return [d for d in dirs if not d.isdigit() or d in ('1', str(os.getpid()))]
    if root.startswith('/proc/') and root.count('/') == 2 and root[6:].isdigit():
        return [d for d in dirs if d not in ('task', 'map_files')]
    return dirs

def initial_state(needles):
    lines, substrings = set(needles['lines']), needles['substrings']
    hits, read = [], 0
    def look(where, text):
        for index, needle in enumerate(substrings):
            if needle in text:
                hits.append([where, 'substring', index])
        for line in text.splitlines():
            if line.strip() in lines:
                hits.append([where, 'line', line.strip()[:80]])
                break
    for root, dirs, files in os.walk('/', followlinks=False):
        dirs[:] = _proc_dirs(root, dirs)
        for name in dirs + files:
            path = os.path.join(root, name)
            look(path, path)
            try:
                info = os.lstat(path)
                if stat.S_ISLNK(info.st_mode):
                    look(path + ' -> link', os.readlink(path))
                    continue
                if not stat.S_ISREG(info.st_mode):
                    continue
                with open(path, 'rb') as handle:
                    data = handle.read({READ_CAP})
            except OSError:
                continue
            read += 1
            look(path, data.decode('utf-8', 'replace'))
            if len(hits) > 200:
                return {{'read': read, 'hits': hits}}
    return {{'read': read, 'hits': hits}}
"""


def _project_lines() -> list[str]:
    """Lines of the README and the manual (docs/) and string values of the environment table long enough to be the project's own."""
    pages = [REPOSITORY / "README.md", *sorted((REPOSITORY / "docs").rglob("*.md"))]
    lines = [line.strip() for page in pages for line in page.read_text(encoding="utf-8").splitlines()]
    if ENVIRONMENT_TABLE.exists():
        table = json.loads(ENVIRONMENT_TABLE.read_text())
        lines += [value.strip() for value in table.values() if isinstance(value, str)]
    return sorted({line for line in lines if len(line) >= 40})


def test_nothing_of_the_project_or_the_host_is_readable_inside(make_worker, game_source, monkeypatch, tmp_path):
    api_key = "sk-fake-" + uuid.uuid4().hex
    monkeypatch.setenv("OPENAI_API_KEY", api_key)
    secret = "secret-file-" + uuid.uuid4().hex
    (tmp_path / "credentials").write_text(secret)
    published_k = [line for line in _project_lines() if "K" in line]
    assert published_k, "the README and the manual name K: the needles must include it"
    needles = {"lines": _project_lines(), "substrings": [str(REPOSITORY), api_key, secret, str(tmp_path)]}
    worker = make_worker(game_source + WALK, LIMITS, guard=False)
    found = worker.call("initial_state", [needles]).unwrap()
    assert found["read"] > 100  # it did read the interpreter and the standard library
    shown = [hit if hit[1] == "line" else [hit[0], needles["substrings"][hit[2]]] for hit in found["hits"]]
    assert found["hits"] == [], f"{len(found['hits'])} found inside, the first: {shown[:8]}"


def test_the_project_package_metadata_is_not_installed_inside(make_worker, game_source):
    body = (
        "import importlib.metadata, sys\n"
        "def initial_state(state):\n"
        "    names = sorted({d.metadata['Name'] for d in importlib.metadata.distributions()})\n"
        "    return [names, [p for p in sys.path if 'site-packages' in p]]\n"
    )
    worker = make_worker(game_source + body, LIMITS, guard=False)
    distributions, site_paths = worker.call("initial_state", [None]).unwrap()
    assert distributions == [] and site_paths == []


@pytest.mark.parametrize(
    "path",
    [
        "/proc/meminfo",
        "/proc/loadavg",
        "/proc/stat",
        "/proc/uptime",
        "/proc/vmstat",
        "/proc/cpuinfo",
        "/proc/cmdline",
        "/proc/pressure/memory",
    ],
)
def test_host_wide_figures_in_proc_are_hidden(make_worker, game_source, path):
    body = (
        "def initial_state(state):\n"
        "    try:\n"
        f"        return open({path!r}).read()\n"
        "    except OSError as error:\n"
        "        return type(error).__name__\n"
    )
    worker = make_worker(game_source + body, LIMITS, guard=False)
    seen = worker.call("initial_state", [None]).unwrap()
    assert seen in ("", "FileNotFoundError", "PermissionError"), f"{path} inside: {seen[:200]!r}"


def test_bubblewraps_command_line_and_the_mounts_show_no_host_path_of_the_project(make_worker, game_source):
    body = (
        "import os\n"
        "def initial_state(state):\n"
        "    seen = {}\n"
        "    for path in ('/proc/1/cmdline', '/proc/self/cmdline', '/proc/self/mountinfo', '/proc/1/mountinfo'):\n"
        "        try:\n"
        "            seen[path] = open(path, 'rb').read().decode(errors='replace')\n"
        "        except OSError as error:\n"
        "            seen[path] = type(error).__name__\n"
        "    seen['fds'] = []\n"
        "    for fd in os.listdir('/proc/self/fd'):\n"
        "        try:\n"
        "            seen['fds'].append(os.readlink(f'/proc/self/fd/{fd}'))\n"
        "        except OSError:\n"
        "            pass\n"
        "    return seen\n"
    )
    worker = make_worker(game_source + body, LIMITS, guard=False)
    seen = worker.call("initial_state", [None]).unwrap()
    for path, text in seen.items():
        assert str(REPOSITORY) not in str(text), f"{path}: {text[:400]!r}"
    assert "--ro-bind" not in seen["/proc/1/cmdline"]  # bubblewrap read its arguments from a file descriptor
    opened_files = [target for target in seen["fds"] if target.startswith("/") and not target.startswith(("/dev/", "/proc/"))]
    assert opened_files == []  # pipes and devices only: no file the launch opened (its arguments, the filter) is left open
