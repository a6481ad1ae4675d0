"""`arena run` / `arena demo` model options: every one reaches the stub server as given and is recorded; bad ones are one error line."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from harness.models.mock import first_legal
from harness.records.transcript import TranscriptReader
from harness.testing.stub_server import StubServer, ok
from tests.harness.cli.cli_args import MODEL, options, stub_run_args

# Shaped like a provider key (the refusal is tested) but assembled here, so no key-like literal is in the file.
FAKE_KEY = "sk" + "-" + "x" * 24


@pytest.fixture
def stub(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-a-secret")  # a dummy: the stub checks nothing
    rng = random.Random(0)
    with StubServer(responder=lambda request, index: ok(first_legal(request.get("messages", []), rng))) as server:
        yield server


def run_args(stub: StubServer, out: Path, *extra: str) -> list[str]:
    return stub_run_args(stub.url, out, *extra, budget="1", eval_games="1")


def the_run(out: Path) -> Path:
    (run_dir,) = out.iterdir()
    return run_dir


def test_every_model_option_arrives_as_given_and_is_recorded(invoke, stub, tmp_path):
    result = invoke(
        *run_args(
            stub,
            tmp_path,
            *options(
                temperature="0.7",
                top_p="0.9",
                max_reply_tokens="64",
                reasoning_effort="medium",
                timeout="5",
                max_consecutive_failures="4",
                model_arg=["seed=7", 'stop=["\\n\\n"]', "presence_penalty=0.25", 'extra_body={"top_k": 5}'],
            ),
        )
    )
    assert result.exit_code == 0, result.output
    assert stub.requests
    for params in stub.params:
        assert params["temperature"] == 0.7 and params["top_p"] == 0.9 and params["max_tokens"] == 64
        assert params["reasoning_effort"] == "medium" and params["seed"] == 7 and params["stop"] == ["\n\n"]
        assert params["presence_penalty"] == 0.25 and params["top_k"] == 5
    assert all(r["headers"]["authorization"] == "<redacted>" for r in stub.requests)
    recorded = TranscriptReader(the_run(tmp_path)).manifest().config["model_options"]
    assert recorded == {
        "api_base": stub.url,
        "temperature": 0.7,
        "top_p": 0.9,
        "max_reply_tokens": 64,
        "reasoning_effort": "medium",
        "timeout": 5.0,
        "max_consecutive_failures": 4,
        "model_args": {"seed": 7, "stop": ["\n\n"], "presence_penalty": 0.25, "extra_body": {"top_k": 5}},
    }
    assert "test-key-not-a-secret" not in (the_run(tmp_path) / "manifest.json").read_text()


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_a_model_config_file_with_the_flags_winning(invoke, stub, tmp_path, suffix):
    values = {"model": MODEL, "api_base": stub.url, "temperature": 0.2, "top-p": 0.5, "model_args": {"seed": 1, "min_p": 0.1}}
    path = tmp_path / f"model{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps(values), encoding="utf-8")
    else:
        path.write_text(
            f'model = "{MODEL}"\napi_base = "{stub.url}"\ntemperature = 0.2\ntop-p = 0.5\n\n[model_args]\nseed = 1\nmin_p = 0.1\n',
            encoding="utf-8",
        )
    out = tmp_path / "runs"
    result = invoke(
        "run",
        *options(model_config=path, env="26", budget="1", eval_games="0", checkpoints="", out=out, temperature="0.9", model_arg="seed=3"),
    )
    assert result.exit_code == 0, result.output
    assert stub.params and all(p["temperature"] == 0.9 and p["top_p"] == 0.5 and p["seed"] == 3 and p["min_p"] == 0.1 for p in stub.params)
    config = TranscriptReader(the_run(out)).manifest().config
    assert config["model"] == MODEL and config["model_options"]["model_args"] == {"seed": 3, "min_p": 0.1}


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("extra", "fragments"),
    [
        (["--model-arg", "api_key=" + FAKE_KEY], ["'api_key' looks like a credential", "environment variable"]),
        (["--model-arg", 'extra_headers={"X-Trace": "1"}'], ["'extra_headers' looks like a credential"]),
        (["--model-arg", "Authorization=Bearer x"], ["'Authorization' looks like a credential"]),
        (["--model-arg", "temperature=0.5"], ["use --temperature"]),
        (["--model-arg", "seed"], ["--model-arg 'seed': give KEY=VALUE"]),
        (["--temperature", "-1"], ["--temperature -1.0: input should be greater than or equal to 0"]),
        (["--top-p", "1.5"], ["--top-p 1.5: input should be less than or equal to 1"]),
        (["--top-p", "0"], ["--top-p 0.0: input should be greater than 0"]),
        (["--reasoning-effort", "huge"], ["--reasoning-effort 'huge': input should be 'minimal', 'low', 'medium' or 'high'"]),
        (["--timeout", "0"], ["--timeout 0.0: input should be greater than 0"]),
        (["--max-reply-tokens", "0"], ["--max-reply-tokens 0: input should be greater than or equal to 1"]),
        (["--max-consecutive-failures", "0"], ["--max-consecutive-failures 0"]),
        (["--api-base", "localhost:8000"], ["--api-base 'localhost:8000'", "http(s)://host:port/path"]),
        (["--model-config", "no/such.toml"], ["--model-config no/such.toml: no such file"]),
    ],
)
def test_bad_model_options_are_one_error_line(invoke, user_error, extra, fragments):
    user_error(invoke("run", "--model", "mock/first-legal", "--env", "0", *extra), *fragments)


def test_bad_model_config_files_are_one_error_line(invoke, user_error, tmp_path):
    bad = write(tmp_path, "bad.toml", "temperature = \n")
    user_error(invoke("run", "--model-config", bad, "--env", "0"), f"--model-config {bad}: not valid TOML")
    unknown = write(tmp_path, "unknown.toml", "temp = 0.3\n")
    user_error(invoke("run", "--model-config", unknown, "--env", "0"), "unknown key 'temp'", "valid keys: model, api_base")
    out_of_range = write(tmp_path, "range.json", '{"model": "mock/first-legal", "top_p": 2}')
    user_error(invoke("run", "--model-config", out_of_range, "--env", "0"), f"top_p in {out_of_range} 2")


def test_resume_takes_the_recorded_options_and_refuses_new_ones(invoke, user_error, tmp_path):
    user_error(
        invoke("run", "--resume", tmp_path, "--temperature", "0.5", "--model-arg", "seed=1"),
        "--resume continues",
        "with the model options (and referee mode) recorded in its",
        "leave out --temperature, --model-arg",
    )


def test_demo_takes_the_model_options_too(invoke, user_error, tmp_path):
    result = invoke(
        "demo", *options(model="mock/reasoner", budget="4", batch="2", games="1", temperature="0.3", model_arg="seed=2", out=tmp_path)
    )
    assert result.exit_code == 0, result.output
    recorded = TranscriptReader(the_run(tmp_path)).manifest().config["model_options"]
    assert recorded["temperature"] == 0.3 and recorded["model_args"] == {"seed": 2}
    user_error(invoke("demo", "--model", "mock/reasoner", "--top-p", "7"), "--top-p 7.0: input should be less than or equal to 1")


@pytest.mark.parametrize("command", [["run"], ["demo"]])
def test_help_lists_the_model_options(invoke, command):
    result = invoke(*command, "--help")
    assert result.exit_code == 0, result.output
    for flag in (
        "--model-config",
        "--api-base",
        "--temperature",
        "--top-p",
        "--max-reply-tokens",
        "--reasoning-effort",
        "--timeout",
        "--model-arg",
        "--max-consecutive-failures",
    ):
        assert flag in result.output
