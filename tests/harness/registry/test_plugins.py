"""Plugins: agents from a .py file, a dotted module or an installed entry point; their sources; workers; errors."""

from __future__ import annotations

import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

from agents.base import AgentContext
from agents.spec import AgentSpecError
from engine import make_env
from engine.protocol.policy import RandomPolicy
from harness.play.game import play_game
from harness.registry import specs
from harness.registry.importing import PLUGINS_ENV, file_module_name
from harness.registry.plugins import load_plugins, load_worker_plugins, loaded_plugins, plugin_sources
from harness.registry.specs import make_agent, registry

pytestmark = pytest.mark.usefixtures("fresh_registry")


def test_a_file_plugin_is_imported_and_its_agent_plays(write_plugin):
    path = write_plugin()
    load_plugins([str(path)])
    env = make_env(0)
    agent = make_agent("first-move", AgentContext(env.rules), np.random.default_rng(0))
    record = play_game(env.rules, env.condition, agent, RandomPolicy(np.random.default_rng(1)))
    assert record.black_policy == "first-move" and record.plies > 0
    assert type(agent).__module__ == file_module_name(path) and sys.modules[type(agent).__module__].__file__ == str(path)
    assert loaded_plugins() == {"first-move": str(path)}
    assert plugin_sources() == (str(path),)


def test_loading_is_idempotent_whatever_the_path_spelling(write_plugin, monkeypatch):
    path = write_plugin("sub/my_agent.py")
    load_plugins([path])
    entry = registry()["first-move"]
    monkeypatch.chdir(path.parent.parent)
    load_plugins(["sub/my_agent.py", f"sub/../sub/{path.name}", path])
    assert registry()["first-move"] is entry
    assert plugin_sources() == (str(path),)


def test_a_dotted_module_plugin(write_plugin, tmp_path, monkeypatch):
    write_plugin("dotted_pkg/__init__.py", text="")
    write_plugin("dotted_pkg/agents.py", name="dotted-first")
    monkeypatch.syspath_prepend(str(tmp_path))
    load_plugins(["dotted_pkg.agents"])
    assert loaded_plugins() == {"dotted-first": "dotted_pkg.agents"}
    assert plugin_sources() == ("dotted_pkg.agents",)
    assert make_agent("dotted-first", AgentContext(make_env(0).rules), np.random.default_rng(0)).name == "dotted-first"


def test_an_installed_entry_point_is_imported_when_the_registry_is_first_built(write_plugin, installed):
    site = installed({"mine": "ep_agents_lazy"})
    write_plugin("site/ep_agents_lazy.py", name="ep-first")
    assert "ep_agents_lazy" not in sys.modules  # nothing is imported before the registry is used
    assert "ep-first" in registry()
    assert loaded_plugins() == {"ep-first": "othello_arena.agents:mine=ep_agents_lazy"}
    assert sys.modules["ep_agents_lazy"].__file__ == str(site / "ep_agents_lazy.py")
    assert plugin_sources() == ()  # installed plugins are found by every process itself


def test_spawned_workers_know_the_parents_plugins_without_being_told(write_plugin, installed, tmp_path, monkeypatch):
    file_plugin = write_plugin()
    write_plugin("worker_pkg/__init__.py", text="")
    write_plugin("worker_pkg/agents.py", name="dotted-first")
    installed({"mine": "ep_agents_worker"})
    write_plugin("site/ep_agents_worker.py", name="ep-first")
    monkeypatch.syspath_prepend(str(tmp_path))
    load_plugins([file_plugin, "worker_pkg.agents"])
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        in_worker = pool.submit(loaded_plugins).result(timeout=120)
    assert (
        in_worker
        == loaded_plugins()
        == {"ep-first": "othello_arena.agents:mine=ep_agents_worker", "first-move": str(file_plugin), "dotted-first": "worker_pkg.agents"}
    )


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("def broken(:\n", "failed to import: SyntaxError"),
        ("raise RuntimeError('no GPU here')\n", "failed to import: RuntimeError: no GPU here"),
        ("import no_such_dependency_xyz\n", "failed to import: ModuleNotFoundError: No module named 'no_such_dependency_xyz'"),
        ("X = 1\n", "declares no agent: decorate its factory with @agents.spec.register"),
    ],
)
def test_a_broken_file_is_an_error_naming_it(write_plugin, text, fragment):
    path = write_plugin("broken.py", text=text)
    with pytest.raises(AgentSpecError, match="^.*" + fragment.replace("(", r"\(").replace(")", r"\)")) as caught:
        load_plugins([path])
    assert str(path) in str(caught.value) and plugin_sources() == ()
    if "failed to import" in fragment:
        assert file_module_name(path) not in sys.modules


@pytest.mark.parametrize(
    ("source", "fragment"),
    [
        ("missing/agent.py", "plugin file '{tmp}/missing/agent.py' does not exist"),
        ("notes.txt", "plugin file '{tmp}/notes.txt' is not a .py file"),
        ("folder/", "plugin file '{tmp}/folder' is not a file"),
        ("no_such_plugin_module", "cannot import plugin module 'no_such_plugin_module'"),
        ("  ", "--plugin needs a value"),
    ],
)
def test_a_source_that_is_not_there_is_an_error_naming_it(tmp_path, monkeypatch, source, fragment):
    (tmp_path / "notes.txt").write_text("not python")
    (tmp_path / "folder").mkdir()
    monkeypatch.chdir(tmp_path)
    with pytest.raises(AgentSpecError, match=fragment.format(tmp=tmp_path).replace(".", r"\.")):
        load_plugins([source])


def test_a_taken_name_is_refused_and_nothing_of_that_plugin_is_registered(write_plugin):
    two = (
        "from agents.spec import register\n"
        '@register("brand-new", "first of two")\ndef new(context, rng):\n    raise AssertionError\n'
        '@register("greedy", "a second greedy")\ndef impostor(context, rng):\n    raise AssertionError\n'
    )
    path = write_plugin("impostor.py", text=two)
    with pytest.raises(AgentSpecError, match=rf"agent name 'greedy' \(from '{path}'\) is taken by 'agents.heuristic.simple'"):
        load_plugins([path])
    assert "brand-new" not in registry() and registry()["greedy"].factory.__module__ == "agents.heuristic.simple"
    mine, other = write_plugin("mine.py"), write_plugin("other.py")
    load_plugins([mine])
    with pytest.raises(AgentSpecError, match=rf"'first-move' \(from '{other}'\) is taken by '{mine}': choose another name"):
        load_plugins([other])


def test_a_broken_entry_point_is_an_error_naming_it_every_time(write_plugin, installed):
    installed({"good": "ep_agents_good", "bad": "ep_agents_bad"})
    write_plugin("site/ep_agents_good.py", name="ep-good")
    write_plugin("site/ep_agents_bad.py", text="raise ImportError('needs torch')\n")
    message = "entry point othello_arena.agents:bad=ep_agents_bad (an installed plugin) failed to load: ImportError: needs torch"
    for _ in range(2):
        with pytest.raises(AgentSpecError, match=r"^" + message.replace("(", r"\(").replace(")", r"\)")):
            registry()


def test_an_entry_point_taking_a_name_is_refused(write_plugin, installed):
    installed({"greedy2": "ep_agents_taken"})
    write_plugin("site/ep_agents_taken.py", name="greedy")
    with pytest.raises(AgentSpecError, match="'greedy' \\(from othello_arena.agents:greedy2=ep_agents_taken\\) is taken"):
        registry()


def test_a_worker_initializer_never_raises_and_the_worker_reports_the_error_later(write_plugin):
    path = write_plugin()
    load_worker_plugins([str(path)])  # a worker's first registry build loads it
    assert loaded_plugins() == {"first-move": str(path)}
    path.write_text("raise RuntimeError('changed since')\n", encoding="utf-8")
    sys.modules.pop(file_module_name(path))
    for state in (specs._REGISTRY, specs._ORIGINS, specs._collected, specs._installed):  # a new worker
        state.clear()
    load_worker_plugins([str(path)])
    with pytest.raises(AgentSpecError, match="changed since"):
        make_agent("first-move", AgentContext(make_env(0).rules), np.random.default_rng(0))


def test_a_malformed_plugin_list_in_the_environment_is_an_error(monkeypatch):
    monkeypatch.setenv(PLUGINS_ENV, "my_agent.py")
    with pytest.raises(AgentSpecError, match=f"environment variable {PLUGINS_ENV}='my_agent.py' is not a JSON list"):
        registry()
    assert os.environ[PLUGINS_ENV] == "my_agent.py"
