"""Users' own agents without touching the project: plugins named on the command line, or installed packages.

Two ways in, both for modules that declare agents with ``@agents.spec.register``:

- An installed package declares an entry point of the ``othello_arena.agents`` group
  in its ``pyproject.toml``::

      [project.entry-points."othello_arena.agents"]
      myagents = "mypkg.agents"

  The registry imports ``mypkg.agents`` when it is first built (in every process),
  so its agents are known by spec to every command.
- ``--plugin MODULE_OR_FILE`` on the commands that take agent specs calls
  :func:`load_plugins`: a dotted module name (importable from ``sys.path``) or the
  path of a ``.py`` file, which is imported under a name unique to its path.

A broken plugin (a missing file, a syntax error, an exception while importing, an
agent name that is taken) is an :class:`~agents.spec.AgentSpecError` naming it.
:func:`loaded_plugins` says where each plugin agent came from (manifests record it).

Worker processes started with 'spawn' begin with a fresh registry. They get the
parent's plugins through the environment variable
:data:`~harness.registry.importing.PLUGINS_ENV`, which :func:`load_plugins` sets and
a worker's registry reads when it is first built; a pool may also load them
explicitly and early: ``Pool(jobs, initializer=load_worker_plugins,
initargs=(plugin_sources(),))`` (tournaments do, in their own initializer).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from agents.spec import AgentSpecError
from harness.registry.importing import import_source, inherited_sources, pass_to_children, source_key
from harness.registry.specs import add_agents, agent_origins, registry


def load_plugins(sources: Iterable[str | Path]) -> None:
    """Import each plugin source (a dotted module name or a ``.py`` file) and register the agents it declares.

    Idempotent: a source loaded already (by this call, an earlier one, or the
    registry from the parent's list) is not imported again. Every source is passed
    to processes spawned from now on. Raises AgentSpecError naming the source on
    any failure; the sources before it stay loaded.
    """
    registry()  # the project's, installed and inherited agents first, so a clash is found in any order
    for source in sources:
        key = source_key(source)
        if key not in agent_origins().values():
            origin, entries = import_source(key)
            add_agents(entries, origin)
        if key not in (passed := plugin_sources()):
            pass_to_children([*passed, key])


def plugin_sources() -> tuple[str, ...]:
    """The plugin sources this process passes to the processes it spawns (its own and its parent's), in order.

    Files are absolute paths and modules dotted names, so a worker can load them
    with :func:`load_plugins` wherever its working directory is.
    """
    return tuple(inherited_sources())


def loaded_plugins() -> dict[str, str]:
    """Each agent name a plugin registered -> its source.

    The source is ``othello_arena.agents:NAME=MODULE`` for an installed entry point,
    the module name for a dotted module (and for ``add_family_module``), or the
    absolute path of a ``.py`` file.
    """
    return agent_origins()


def load_worker_plugins(sources: Sequence[str]) -> None:
    """A worker pool's initializer: load the parent's plugins (``initargs=(plugin_sources(),)``).

    It never raises: ``multiprocessing.Pool`` replaces a worker whose initializer
    raised, forever. The parent loaded these sources already, so a failure here is
    rare (a file changed since), and it is not lost: the sources are in the
    worker's :data:`~harness.registry.importing.PLUGINS_ENV`, so a fresh worker's
    registry, which failed to build, tries again when a task first uses it and
    raises the AgentSpecError there, where the task reports it.
    """
    passed = plugin_sources()
    pass_to_children([*passed, *(key for key in map(source_key, sources) if key not in passed)])
    try:
        load_plugins(sources)
    except AgentSpecError:
        pass
