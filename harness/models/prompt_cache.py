"""Provider prompt caching: the cached prompt tokens a provider reports, and the hints a provider needs.

Prompts keep their stable part first (system: the rules; then the episode memory, unchanged
within a game and within a wave) and the per-move part last, so a provider that caches prompt
prefixes serves most of every prompt from its cache. OpenAI-style providers do so by themselves
and report ``usage.prompt_tokens_details.cached_tokens``; Anthropic caches only a prefix marked
``cache_control`` and reports ``cache_read_input_tokens``. litellm's ``completion_cost`` prices
the cached tokens at the model's cached rate (``cache_read_input_token_cost``).
"""

from __future__ import annotations

from typing import Any


def cached_prompt_tokens(usage: Any) -> int:
    """Prompt tokens the provider served from its prompt cache (OpenAI's ``prompt_tokens_details.cached_tokens``,
    Anthropic's ``cache_read_input_tokens``); litellm's ``completion_cost`` prices them at the cached rate."""
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    if cached is None and isinstance(details, dict):
        cached = details.get("cached_tokens")
    if not cached:
        cached = getattr(usage, "cache_read_input_tokens", None)
    return int(cached or 0)


def with_cache_hints(model: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages as sent: for Anthropic models the system message marked ``cache_control: ephemeral`` (the
    provider caches a prompt prefix only where told to; OpenAI-style providers cache prefixes by themselves)."""
    if not model.startswith("anthropic/") and not model.startswith("claude"):
        return messages
    marked = []
    for message in messages:
        if message.get("role") == "system" and isinstance(message.get("content"), str):
            message = {**message, "content": [{"type": "text", "text": message["content"], "cache_control": {"type": "ephemeral"}}]}
        marked.append(message)
    return marked
