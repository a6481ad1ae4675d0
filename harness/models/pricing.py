"""Whether a cost cap can hold: the model's price is known (litellm's local price table, or given by the user).

A model that litellm's price table does not know (a local server, a new model) is costed at $0 a call, so
a ``--max-cost-usd`` cap on it would never stop anything. :func:`cost_cap_problem` names that case, so the run
refuses the cap before it starts, unless the user gives the model's price (``--price-per-mtok-in`` and
``--price-per-mtok-out``, :class:`~harness.models.options.ModelOptions`), which then costs every reply.
Offline models (``mock/...``) cost nothing, knowingly: a cap on one is kept (it never stops the run).
"""

from __future__ import annotations

from harness.models.client import MOCK_PREFIX, import_litellm
from harness.models.options import ModelOptions


def price_known(model: str, options: ModelOptions | None = None) -> bool:
    """Whether the calls of ``model`` are costed: an offline model (free), a given price, or litellm's price table."""
    if model.startswith(MOCK_PREFIX) or (options is not None and options.priced):
        return True
    try:
        import_litellm().cost_per_token(model=model, prompt_tokens=1, completion_tokens=1)
    except Exception:  # noqa: BLE001 - litellm raises many kinds for a model it does not price
        return False
    return True


def cost_cap_problem(model: str, options: ModelOptions | None, max_cost_usd: float | None) -> str | None:
    """Why ``--max-cost-usd`` cannot hold for ``model`` (None when it can, or when no cap is set)."""
    if max_cost_usd is None or price_known(model, options):
        return None
    return (
        f"--max-cost-usd {max_cost_usd:g}: {model} is not in litellm's price table, so its calls would count as $0 "
        "and the cap would never stop the run; give the model's price with --price-per-mtok-in USD and "
        "--price-per-mtok-out USD (US dollars per million prompt and reply tokens), or cap tokens with "
        "--max-tokens instead"
    )
