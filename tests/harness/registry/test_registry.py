"""Agent spec strings: lookup, parameters, conversion, canonical form, and the errors on bad input."""

from __future__ import annotations

import numpy as np
import pytest

from agents.base import Agent, AgentContext
from agents.heuristic.simple import GreedyAgent
from agents.spec import AgentEntry, AgentSpecError, Param
from engine import make_env
from harness.registry import specs as registry_module
from harness.registry.specs import canonical_spec, make_agent, parse_spec, registry

SIMPLE = ("random", "greedy", "corner", "positional")


class Dummy(Agent):
    """A test agent that remembers its parameters."""

    def __init__(self, context, rng, depth=3, rate=0.5, wide=False, mode="fast"):
        super().__init__(context, rng)
        self.params = {"depth": depth, "rate": rate, "wide": wide, "mode": mode}


@pytest.fixture
def dummy(monkeypatch):
    """A registered ``dummy`` agent with int/float/bool/str parameters (removed afterwards)."""
    params = {
        "depth": Param(int, 3, "search depth"),
        "rate": Param(float, 0.5, "a rate"),
        "wide": Param(bool, False, "a switch"),
        "mode": Param(str, "fast", "a choice", choices=("fast", "slow")),
    }
    registry()  # import the families first, so the patch is undone on a complete registry
    monkeypatch.setitem(registry_module._REGISTRY, "dummy", AgentEntry("dummy", Dummy, "test agent", params))
    return "dummy"


@pytest.fixture
def context():
    return AgentContext(make_env(0).rules)


def test_the_simple_agents_are_listed_with_descriptions():
    entries = registry()
    for name in SIMPLE:
        assert entries[name].name == name
        assert entries[name].description
        assert not entries[name].privileged


def test_make_agent_builds_the_registered_class(context):
    agent = make_agent("greedy", context, np.random.default_rng(0))
    assert isinstance(agent, GreedyAgent)
    assert agent.name == "greedy"


def test_unknown_agent_lists_the_valid_names(context):
    with pytest.raises(AgentSpecError) as caught:
        make_agent("gredy:depth=2", context, np.random.default_rng(0))
    message = str(caught.value)
    assert "unknown agent 'gredy'" in message
    assert "arena agents" in message
    for name in SIMPLE:
        assert name in message


def test_empty_spec_is_an_unknown_agent():
    with pytest.raises(AgentSpecError, match="valid agents: .*greedy"):
        parse_spec("")


def test_unknown_parameter_lists_the_valid_ones(dummy):
    with pytest.raises(AgentSpecError) as caught:
        parse_spec("dummy:detph=5")
    message = str(caught.value)
    assert "detph" in message
    assert "depth=<int>" in message and "rate=<float>" in message and "wide=<bool>" in message and "mode=<str>" in message


def test_a_parameter_on_an_agent_without_parameters_says_none():
    with pytest.raises(AgentSpecError, match="valid parameters: none"):
        parse_spec("greedy:depth=2")


def test_a_parameter_without_a_value_is_an_error(dummy):
    with pytest.raises(AgentSpecError, match=r"parameter 'depth' needs a value, e\.g\. depth=<int>"):
        parse_spec("dummy:depth")


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("dummy:depth=deep", "dummy:depth='deep' is not a valid int"),
        ("dummy:depth=2.5", "is not a valid int"),
        ("dummy:rate=fast", "dummy:rate='fast' is not a valid float"),
        ("dummy:wide=maybe", "dummy:wide='maybe' is not a valid bool"),
        ("dummy:mode=medium", "choose one of fast, slow"),
    ],
)
def test_bad_values_say_what_was_expected(dummy, spec, fragment):
    with pytest.raises(AgentSpecError) as caught:
        parse_spec(spec)
    assert fragment in str(caught.value)


def test_values_are_converted_and_defaults_filled_in(dummy, context):
    entry, values = parse_spec(" dummy: depth=7 , wide=yes ")
    assert entry.name == "dummy"
    assert values == {"depth": 7, "rate": 0.5, "wide": True, "mode": "fast"}
    agent = make_agent("dummy:rate=0.25,mode=slow", context, np.random.default_rng(0))
    assert agent.params == {"depth": 3, "rate": 0.25, "wide": False, "mode": "slow"}
    assert agent.name == "dummy:rate=0.25,mode=slow"


@pytest.mark.parametrize(
    ("spec", "canonical"),
    [
        ("greedy", "greedy"),
        (" greedy ", "greedy"),
        ("greedy:", "greedy"),
        ("dummy", "dummy"),
        ("dummy:depth=3", "dummy:depth=3"),  # written-out defaults are kept
        ("dummy:mode=slow,depth=5", "dummy:depth=5,mode=slow"),  # declared order
        ("dummy:wide=1", "dummy:wide=true"),
        ("dummy:wide=False", "dummy:wide=false"),
        ("dummy:rate=.75", "dummy:rate=0.75"),
    ],
)
def test_canonical_spec(dummy, spec, canonical):
    assert canonical_spec(spec) == canonical
    assert canonical_spec(canonical) == canonical


def test_agents_refuse_the_global_random_module(context):
    with pytest.raises(TypeError, match="numpy Generator"):
        make_agent("random", context, np.random)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["llm-policy", "llm-strategist", "cwm"])
def test_model_driven_agents_are_listed_and_point_to_arena_run(name):
    entry = registry()[name]
    assert entry.model_driven and not entry.privileged
    assert {n for n, e in registry().items() if e.model_driven} == {"llm-policy", "llm-strategist", "cwm"}
    with pytest.raises(AgentSpecError, match=rf"arena run --agent {name} --model"):
        make_agent(name, AgentContext(make_env(0).rules), np.random.default_rng(0))
