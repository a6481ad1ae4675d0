"""What the model-driven agents share when built from a spec (``llm-policy:model=M``, ``llm-strategist:...``):
their parameters and their model client, checked before any game."""

from __future__ import annotations

import numpy as np

from agents.spec import AgentSpecError, Param
from harness.models.client import ModelClient, check_api_key
from harness.models.errors import ModelConfigError
from harness.prompting.renderer import HINT_LEVELS

SPEC_PARAMS = {
    "model": Param(str, "", "the model: litellm provider/model, or mock/<name> (required)"),
    "hint": Param(str, "ratio", "what the prompt says about the hidden rule", choices=HINT_LEVELS),
    "retries": Param(int, 2, "re-asks after an unusable reply (then a random legal move)"),
    "temperature": Param(float, 0.0, "sampling temperature"),
}


def spec_client(name: str, model: str, rng: np.random.Generator) -> ModelClient:
    """The model client of an agent built from a spec (checked before any game: a missing key is a spec error)."""
    if not model:
        raise AgentSpecError(model_driven_message(name))
    try:
        check_api_key(model)
    except ModelConfigError as error:
        raise AgentSpecError(f"{name}:model={model}: {error}") from None
    return ModelClient(model, seed=int(rng.integers(2**31)), concurrency=1)


def model_driven_message(name: str) -> str:
    """Why a model-driven agent cannot be built from a spec, and how to run it."""
    return (
        f"{name} is model-driven: name its model in the spec ({name}:model=mock/first-legal, a frozen player "
        f"for matches and tournaments), or adapt it within a budget with `arena run --agent {name} --model M`"
    )
