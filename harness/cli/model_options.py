"""The model options ``arena run`` and ``arena demo`` share: typer options (one group, :data:`MODEL_OPTIONS`, which the
commands receive as :class:`ModelFlags`), a model config file, and their merge.

``--model-config FILE`` (TOML, or JSON for a ``.json`` file) holds any of ``model``,
``api_base``, ``temperature``, ``top_p``, ``max_reply_tokens``, ``reasoning_effort``,
``timeout``, ``max_consecutive_failures``, ``price_per_mtok_in``, ``price_per_mtok_out`` and a
``model_args`` table; a flag given on the
command line wins over the file (``--model-arg`` keys over the file's ``model_args``).
``--model-arg KEY=VALUE`` reads VALUE as JSON when it parses (``7``, ``true``,
``{"top_k": 5}``), else as a string. The result is a
:class:`~harness.models.options.ModelOptions`, validated there (ranges, no credentials);
a problem is a ``typer.BadParameter`` naming the flag (or the file) and what would be right.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from harness.cli.options import OptionGroup
from harness.models.options import REASONING_EFFORTS, ModelOptions

_PANEL = "Model options"


def _option(*declarations: str, help: str, metavar: str | None = None) -> Any:
    """A model option: listed under "Model options" in ``--help``, no default shown (None: not given)."""
    return typer.Option(*declarations, metavar=metavar, rich_help_panel=_PANEL, show_default=False, help=help)


ModelConfigOption = Annotated[
    Path | None,
    _option(
        "--model-config",
        metavar="FILE",
        help="A TOML (or .json) file with the model and its options (keys as the flags, with underscores); flags win.",
    ),
]
ApiBaseOption = Annotated[
    str | None,
    _option(
        "--api-base",
        metavar="URL",
        help="The endpoint, e.g. http://localhost:8000/v1 for vLLM or llama.cpp's server (default: the provider's).",
    ),
]
TemperatureOption = Annotated[float | None, _option("--temperature", help="Sampling temperature, 0 or more (default: 0).")]
TopPOption = Annotated[float | None, _option("--top-p", help="Nucleus sampling, more than 0 and at most 1.")]
MaxReplyTokensOption = Annotated[
    int | None, _option("--max-reply-tokens", help="The longest reply, in tokens (litellm's max_tokens; default: the provider's).")
]
ReasoningEffortOption = Annotated[
    str | None,
    _option(
        "--reasoning-effort",
        metavar="LEVEL",
        help=f"For reasoning models (OpenAI o-series and gpt-5, Claude, Gemini 2.5): {', '.join(REASONING_EFFORTS)}.",
    ),
]
TimeoutOption = Annotated[
    float | None,
    _option("--timeout", metavar="SECONDS", help="Seconds per attempt before it counts as a timeout and is retried (default: 60)."),
]
ModelArgOption = Annotated[
    list[str] | None,
    _option(
        "--model-arg",
        metavar="KEY=VALUE",
        help="Passed to litellm.acompletion as it is (repeatable; VALUE as JSON when it parses, else text), "
        "e.g. seed=7, drop_params=true. Never an API key or header: keys come from the environment.",
    ),
]
MaxConsecutiveFailuresOption = Annotated[
    int | None,
    _option(
        "--max-consecutive-failures",
        metavar="N",
        help="Stop the run (resumable) after N model calls in a row fail for good (default: 5). Connection refused, "
        "DNS, HTTP 401/403/404 and an unknown provider stop it at the first call.",
    ),
]
PricePerMtokInOption = Annotated[
    float | None,
    _option(
        "--price-per-mtok-in",
        metavar="USD",
        help="The model's price per million prompt tokens, with --price-per-mtok-out: every reply is costed at it "
        "(default: litellm's price table), so --max-cost-usd holds for a model the table does not know.",
    ),
]
PricePerMtokOutOption = Annotated[
    float | None, _option("--price-per-mtok-out", metavar="USD", help="The model's price per million reply tokens.")
]

_FLAGS = {
    "api_base": "--api-base",
    "temperature": "--temperature",
    "top_p": "--top-p",
    "max_reply_tokens": "--max-reply-tokens",
    "reasoning_effort": "--reasoning-effort",
    "timeout": "--timeout",
    "max_consecutive_failures": "--max-consecutive-failures",
    "price_per_mtok_in": "--price-per-mtok-in",
    "price_per_mtok_out": "--price-per-mtok-out",
    "model_args": "--model-arg",
}
FILE_KEYS = ("model", *_FLAGS)


@dataclass(frozen=True)
class ModelFlags:
    """What the command line said about the model (None: not given)."""

    config_file: Path | None = None
    model: str | None = None
    api_base: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    max_reply_tokens: int | None = None
    reasoning_effort: str | None = None
    timeout: float | None = None
    max_consecutive_failures: int | None = None
    price_per_mtok_in: float | None = None
    price_per_mtok_out: float | None = None
    model_args: list[str] = field(default_factory=list)

    def given(self) -> list[str]:
        """The model flags given on the command line (``--model`` aside), as flags."""
        named = [_FLAGS[name] for name in _FLAGS if name != "model_args" and getattr(self, name) is not None]
        return (["--model-config"] if self.config_file else []) + named + (["--model-arg"] if self.model_args else [])


NO_FLAGS = ModelFlags()


def _gather(values: dict[str, Any], arguments: dict[str, Any]) -> ModelFlags:
    """The model options' values, with the command's own ``--model``, as ModelFlags."""
    config_file, model_args = values.pop("model_config"), values.pop("model_arg")
    return ModelFlags(config_file, arguments.get("model"), model_args=list(model_args or []), **values)


# The model options of ``arena run`` and ``arena demo``, in their --help order; the command receives them as ModelFlags.
MODEL_OPTIONS = OptionGroup(
    (
        ("model_config", ModelConfigOption, None),
        ("api_base", ApiBaseOption, None),
        ("temperature", TemperatureOption, None),
        ("top_p", TopPOption, None),
        ("max_reply_tokens", MaxReplyTokensOption, None),
        ("reasoning_effort", ReasoningEffortOption, None),
        ("timeout", TimeoutOption, None),
        ("model_arg", ModelArgOption, None),
        ("max_consecutive_failures", MaxConsecutiveFailuresOption, None),
        ("price_per_mtok_in", PricePerMtokInOption, None),
        ("price_per_mtok_out", PricePerMtokOutOption, None),
    ),
    _gather,
)


def resolve(flags: ModelFlags) -> tuple[str | None, ModelOptions]:
    """(model, options): the config file's values with the flags laid over them, validated."""
    from_file = read_model_config(flags.config_file) if flags.config_file is not None else {}
    values = {name: value for name, value in from_file.items() if name != "model"}
    for name in _FLAGS:
        value = getattr(flags, name)
        if name == "model_args":
            values["model_args"] = {**values.get("model_args", {}), **parse_model_args(value)}
        elif value is not None:
            values[name] = value
    try:
        options = ModelOptions(**values)
    except ValidationError as error:
        raise typer.BadParameter(_message(error, flags, from_file)) from None
    return flags.model or from_file.get("model"), options


def read_model_config(path: Path) -> dict[str, Any]:
    """The options in a model config file (TOML, or JSON when it ends in .json), keys checked."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise typer.BadParameter(f"--model-config {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise typer.BadParameter(f"--model-config {path}: cannot be read ({error})") from None
    try:
        data = json.loads(text) if path.suffix.lower() == ".json" else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as error:
        kind = "JSON" if path.suffix.lower() == ".json" else "TOML (name a JSON file *.json)"
        raise typer.BadParameter(f"--model-config {path}: not valid {kind}: {error}") from None
    if not isinstance(data, dict):
        raise typer.BadParameter(f"--model-config {path}: give a table of options, e.g. temperature = 0.2")
    values = {str(key).replace("-", "_"): value for key, value in data.items()}
    unknown = sorted(set(values) - set(FILE_KEYS))
    if unknown:
        raise typer.BadParameter(f"--model-config {path}: unknown key {unknown[0]!r}; valid keys: {', '.join(FILE_KEYS)}")
    if "model" in values and not isinstance(values["model"], str):
        raise typer.BadParameter(f"--model-config {path}: model must be a string such as 'openai/gpt-4o-mini'")
    if not isinstance(values.get("model_args", {}), dict):
        raise typer.BadParameter(f"--model-config {path}: model_args must be a table, e.g. [model_args] seed = 7")
    return values


def parse_model_args(words: list[str]) -> dict[str, Any]:
    """``KEY=VALUE`` words as a dict; VALUE as JSON when it parses, else as text."""
    args: dict[str, Any] = {}
    for word in words:
        key, sep, raw = word.partition("=")
        key = key.strip()
        if not sep or not key:
            raise typer.BadParameter(f"--model-arg {word!r}: give KEY=VALUE, e.g. --model-arg seed=7")
        try:
            args[key] = json.loads(raw)
        except ValueError:
            args[key] = raw
    return args


def _message(error: ValidationError, flags: ModelFlags, from_file: dict[str, Any]) -> str:
    """The validation errors as ``--flag value: what is wrong`` (naming the file for a value from it)."""
    parts = []
    for item in error.errors():
        if not item["loc"] and "price" in str(item["msg"]):  # a rule across fields (the price's two halves): its own words
            parts.append(str(item["msg"]).removeprefix("Value error, "))
            continue
        name = str(item["loc"][0]) if item["loc"] else "model_args"
        where = _FLAGS.get(name, name)
        if name != "model_args" and getattr(flags, name, None) is None and name in from_file:
            where = f"{name} in {flags.config_file}"
        text = str(item["msg"]).removeprefix("Value error, ")
        shown = "" if name == "model_args" else f" {item.get('input')!r}"
        parts.append(f"{where}{shown}: {text[:1].lower()}{text[1:]}")
    return "; ".join(parts)
