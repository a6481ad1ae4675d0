"""The model client's setup and what it sends, pinned (mutants of `make mutation MODULES=client`).

litellm's import settings, the API-key check (`check_api_key`, `_missing_keys`, `ModelClient.check`), the
constructor, the per-attempt deadline and the request as litellm or the direct path receives it. A fake litellm
module stands in for :func:`harness.models.client.import_litellm`: no server, no network.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

import harness.models.client as client_module
from harness.models.client import KEYED_PROVIDERS, ModelClient, check_api_key, import_litellm
from harness.models.errors import ModelConfigError
from harness.models.messages import ModelResponse

MODEL = "openai/fake-model"
QUESTION = [{"role": "user", "content": "Legal moves: d3, c4\nYour move?"}]
OFFLINE = SimpleNamespace()  # a model object the client never calls in these tests


def ask(client: ModelClient, messages: list[dict[str, Any]] | None = None, **params: Any) -> ModelResponse:
    return asyncio.run(client.complete(client.request(messages or QUESTION, **params)))


# --- import_litellm -------------------------------------------------------------------------------------------


def test_import_litellm_keeps_the_cost_map_local_and_quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    monkeypatch.delenv("LITELLM_LOCAL_MODEL_COST_MAP", raising=False)
    litellm = import_litellm()
    monkeypatch.setattr(litellm, "suppress_debug_info", False)
    assert import_litellm() is litellm
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"].lower() == "true"
    assert litellm.suppress_debug_info is True


def test_import_litellm_leaves_a_value_already_set(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import_litellm()
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"


# --- check_api_key and _missing_keys, against a fake litellm --------------------------------------------------


def fake_litellm(
    monkeypatch: pytest.MonkeyPatch,
    *,
    provider: str = "groq",
    report: Any = None,
    validate: Callable[..., Any] | None = None,
    with_validate: bool = True,
) -> SimpleNamespace:
    """A litellm stand-in: ``get_llm_provider`` records its arguments and answers ``provider``."""
    calls: list[dict[str, Any]] = []

    def get_llm_provider(**kwargs: Any) -> tuple[str, str, None, None]:
        calls.append(kwargs)
        return kwargs["model"], provider, None, None

    def validate_environment(**kwargs: Any) -> Any:
        calls.append({"validate": kwargs})
        return report

    fake = SimpleNamespace(get_llm_provider=get_llm_provider, calls=calls, suppress_debug_info=True)
    if with_validate:
        fake.validate_environment = validate or validate_environment
    monkeypatch.setattr(client_module, "import_litellm", lambda: fake)
    return fake


def test_check_api_key_asks_litellm_for_the_provider_with_the_api_base(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = fake_litellm(monkeypatch, provider="custom_openai")
    check_api_key("llama-3", api_base="http://localhost:8000/v1")
    assert fake.calls == [{"model": "llama-3", "api_base": "http://localhost:8000/v1"}]  # not keyed: no validation


def test_check_api_key_names_every_variable_litellm_reports_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_litellm(monkeypatch, provider="groq", report={"keys_in_environment": False, "missing_keys": ["A_KEY", "B_KEY"]})
    monkeypatch.setenv("GROQ_API_KEY", "set")  # the table would say nothing is missing: litellm's report decides
    with pytest.raises(ModelConfigError) as caught:
        check_api_key("groq/llama")
    assert str(caught.value) == (
        "model 'groq/llama' needs A_KEY, B_KEY set in the environment (export it before running; it is never written to the run's files)"
    )


def test_check_api_key_falls_back_on_the_provider_table(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_litellm(monkeypatch, provider="mistral", with_validate=False)
    monkeypatch.delenv("MISTRAL_API_KEY", raising=False)
    with pytest.raises(ModelConfigError, match=r"^model 'mistral/small' needs MISTRAL_API_KEY set in the environment"):
        check_api_key("mistral/small")
    check_api_key("mistral/small", api_key="given")  # a key passed: nothing to check


def test_missing_keys_takes_litellm_report(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GROQ_API_KEY", "set")
    fake = fake_litellm(monkeypatch, report={"keys_in_environment": False, "missing_keys": ["A_KEY", "B_KEY"]})
    assert client_module._missing_keys(fake, "groq/llama", "groq") == ["A_KEY", "B_KEY"]
    assert fake.calls == [{"validate": {"model": "groq/llama"}}]


def test_missing_keys_without_names_in_the_report_names_the_provider_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GROQ_API_KEY", "set")
    for report in ({"keys_in_environment": False}, {"keys_in_environment": False, "missing_keys": []}):
        fake = fake_litellm(monkeypatch, report=report)
        assert client_module._missing_keys(fake, "groq/llama", "groq") == ["GROQ_API_KEY"]


def test_missing_keys_trusts_a_report_that_says_nothing_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GROQ_API_KEY", raising=False)  # the table would name it: the report decides
    for report in ({}, {"keys_in_environment": True, "missing_keys": ["IGNORED"]}):
        fake = fake_litellm(monkeypatch, report=report)
        assert client_module._missing_keys(fake, "groq/llama", "groq") == []


@pytest.mark.parametrize("broken", ["no validate", "raises", "not a dict"])
def test_missing_keys_falls_back_on_the_environment(monkeypatch: pytest.MonkeyPatch, broken: str) -> None:
    def raising(**kwargs: Any) -> Any:
        raise RuntimeError("validate_environment failed")

    fake = fake_litellm(monkeypatch, with_validate=broken != "no validate", report=None, validate=raising if broken == "raises" else None)
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    assert client_module._missing_keys(fake, "groq/llama", "groq") == ["GROQ_API_KEY"]
    monkeypatch.setenv("GROQ_API_KEY", "set")
    assert client_module._missing_keys(fake, "groq/llama", "groq") == []
    assert KEYED_PROVIDERS["groq"] == "GROQ_API_KEY"


# --- ModelClient.__init__ and check -------------------------------------------------------------------------


def test_concurrency_below_one_is_refused_in_words() -> None:
    with pytest.raises(ValueError, match=r"^concurrency must be at least 1$"):
        ModelClient("mock/first-legal", concurrency=0)


def test_litellm_is_imported_at_construction_only_for_a_real_model(monkeypatch: pytest.MonkeyPatch) -> None:
    imports: list[str] = []
    monkeypatch.setattr(client_module, "import_litellm", lambda: imports.append("litellm"))
    ModelClient(MODEL, mock=OFFLINE)
    ModelClient("mock/first-legal")
    assert imports == []
    fresh = ModelClient(MODEL, api_base="http://127.0.0.1:9/v1")
    assert imports == ["litellm"] and (fresh.in_flight, fresh.max_in_flight) == (0, 0)


def test_an_offline_model_gets_the_client_seed() -> None:
    from harness.models.mock import make_offline_model

    prompt = [{"role": "user", "content": "Legal moves: a1, b2, c3, d4, e5, f6, g7, h8\nYour move?"}]
    texts: dict[int, list[str]] = {}
    for seed in (0, 5):
        client = ModelClient("mock/random-legal", seed=seed)
        model = make_offline_model("mock/random-legal", seed=seed)
        texts[seed] = [ask(client, prompt, n=i).text for i in range(8)]
        assert texts[seed] == [model.complete(prompt, {"n": i}).text for i in range(8)]
    assert texts[0] != texts[5]
    default = ModelClient("mock/random-legal")
    assert [ask(default, prompt, n=i).text for i in range(8)] == texts[0]  # the default seed is 0


def test_check_calls_check_api_key_with_the_client_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    checked: list[tuple[Any, ...]] = []
    monkeypatch.setattr(client_module, "check_api_key", lambda model, **kw: checked.append((model, kw)))
    monkeypatch.setattr(client_module, "import_litellm", lambda: None)
    ModelClient(MODEL, api_base="http://127.0.0.1:9/v1", api_key="k").check()
    ModelClient(MODEL, mock=OFFLINE).check()  # offline: nothing to check
    assert checked == [(MODEL, {"api_key": "k", "api_base": "http://127.0.0.1:9/v1"})]


def test_check_refuses_a_model_without_its_key(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_litellm(monkeypatch, provider="mistral", with_validate=False)
    monkeypatch.delenv("MISTRAL_API_KEY", raising=False)
    with pytest.raises(ModelConfigError, match="MISTRAL_API_KEY"):
        ModelClient("mistral/small").check()
    ModelClient("mistral/small", api_key="given").check()


def test_the_deadline_adds_a_grace_for_litellm_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client_module, "import_litellm", lambda: None)
    assert ModelClient(MODEL, timeout_s=10.0)._deadline_s() == 15.0  # half the timeout
    assert ModelClient(MODEL, timeout_s=2.0)._deadline_s() == 4.0  # at least 2 s
    assert ModelClient(MODEL, mock=OFFLINE, timeout_s=10.0)._deadline_s() == 10.0


# --- the request as litellm or the direct path gets it ----------------------------------------------------------


def litellm_recorder(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def acompletion(**kwargs: Any) -> str:
        sent.append(kwargs)
        return "raw"

    fake = SimpleNamespace(model_cost={}, acompletion=acompletion, suppress_debug_info=True)
    monkeypatch.setattr(client_module, "import_litellm", lambda: fake)
    monkeypatch.setattr(client_module, "direct_path", lambda *args: False)
    monkeypatch.setattr(
        client_module, "response_from_litellm", lambda litellm, model, raw: ModelResponse(model=model, text=f"{raw} via {litellm is fake}")
    )
    return sent


def test_litellm_gets_the_params_our_timeout_no_sdk_retries_the_base_and_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    sent = litellm_recorder(monkeypatch)
    system = [{"role": "system", "content": "You play Othello."}, *QUESTION]
    client = ModelClient("anthropic/claude-x", api_base="http://127.0.0.1:9", api_key="k", timeout_s=7.0)
    assert ask(client, system, temperature=0.2).text == "raw via True"
    assert sent[0]["model"] == "anthropic/claude-x"
    assert sent[0]["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral"}  # the hint is sent
    assert {k: v for k, v in sent[0].items() if k not in ("model", "messages")} == {
        "temperature": 0.2,
        "timeout": 7.0,
        "max_retries": 0,
        "api_base": "http://127.0.0.1:9",
        "api_key": "k",
    }
    bare = ModelClient(MODEL, timeout_s=7.0)
    ask(bare, timeout=3)
    assert {k: v for k, v in sent[1].items() if k not in ("model", "messages")} == {"timeout": 3, "max_retries": 0}
    assert sent[1]["messages"] == QUESTION


def test_the_direct_path_gets_the_base_the_key_and_the_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    litellm_recorder(monkeypatch)
    asked: list[tuple[Any, ...]] = []
    decided: list[tuple[Any, ...]] = []

    async def complete_direct(*args: Any) -> ModelResponse:
        asked.append(args)
        return ModelResponse(model=args[0], text="direct")

    monkeypatch.setattr(client_module, "complete_direct", complete_direct)
    monkeypatch.setattr(client_module, "direct_path", lambda *args: decided.append(args) or True)
    client = ModelClient(MODEL, api_base="http://127.0.0.1:9/v1", api_key="k", timeout_s=7.0)
    assert ask(client, temperature=0.1).text == "direct"
    assert decided == [(MODEL, "http://127.0.0.1:9/v1", {"temperature": 0.1}, {})]
    assert asked == [(MODEL, "http://127.0.0.1:9/v1", QUESTION, {"temperature": 0.1}, "k", 7.0)]
    ask(ModelClient(MODEL, timeout_s=7.0))
    assert asked[1][1] == "" and asked[1][4] is None
