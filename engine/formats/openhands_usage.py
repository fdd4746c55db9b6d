"""Recorded usage in OpenHands files: LiteLLM usage per response (V0) and per-call TokenUsage (V0 and V1).

OpenHands calls models through LiteLLM, whose `usage.prompt_tokens` already holds the cached
tokens: for Anthropic it adds `cache_read_input_tokens` and `cache_creation_input_tokens` to the
provider's `input_tokens` (litellm/llms/anthropic/chat/transformation.py, `calculate_usage`), for
OpenAI it is the provider's `prompt_tokens`, cache read included. The per-call `TokenUsage`
(openhands/llm/metrics.py in V0, openhands/sdk/llm/utils/metrics.py in V1: `prompt_tokens`,
`completion_tokens`, `cache_read_tokens`, `cache_write_tokens`, `reasoning_tokens`, `context_window`,
`response_id`) copies those counts. So the uncached input is `prompt - cache read - cache write`.
The SDK notes one exception (MetricsSnapshot.cache_hit_rate): ACP agents report cache reads apart
from `prompt_tokens`, which shows as a cache read larger than the prompt; then the prompt is the
uncached input already.
"""

from __future__ import annotations

from typing import Any

from engine.formats.jsonshape import Where
from engine.thread.model import RecordedUsage


def split_litellm(prompt: int | None, completion: int | None, read: int | None, write: int | None,
                  reasoning: int | None = None) -> RecordedUsage | None:
    if prompt is None and completion is None:
        return None
    fresh = prompt
    if prompt is not None and (read or 0) <= prompt:
        # Inclusive counts (LiteLLM): take the cache out; a write that does not fit was not counted in.
        fresh = prompt - (read or 0)
        if (write or 0) <= fresh:
            fresh -= write or 0
    return RecordedUsage(input_tokens=fresh, output_tokens=completion, cache_read_input_tokens=read,
                         cache_creation_input_tokens=write, reasoning_tokens=reasoning)


def _details(raw: dict[str, Any], key: str, field: str) -> Any:
    details = raw.get(key)
    return details.get(field) if isinstance(details, dict) else None


def from_litellm(raw: Any, where: Where, at: str) -> RecordedUsage | None:
    """A LiteLLM `ModelResponse.usage` (V0 `tool_call_metadata.model_response.usage`)."""
    if raw is None:
        return None
    u = where.want_dict(raw, at, "a usage object")
    prompt = where.want_int(u.get("prompt_tokens"), f"{at}.prompt_tokens")
    completion = where.want_int(u.get("completion_tokens"), f"{at}.completion_tokens")
    read = where.want_int(u.get("cache_read_input_tokens"), f"{at}.cache_read_input_tokens")
    if read is None:
        read = where.want_int(_details(u, "prompt_tokens_details", "cached_tokens"),
                              f"{at}.prompt_tokens_details.cached_tokens")
    write = where.want_int(u.get("cache_creation_input_tokens"), f"{at}.cache_creation_input_tokens")
    reasoning = where.want_int(_details(u, "completion_tokens_details", "reasoning_tokens"),
                               f"{at}.completion_tokens_details.reasoning_tokens")
    return split_litellm(prompt, completion, read, write, reasoning)


def from_token_usage(raw: Any, where: Where, at: str) -> RecordedUsage | None:
    """One `TokenUsage` record (V0 `llm_metrics.token_usages[]`, V1 `Metrics.token_usages[]`)."""
    u = where.want_dict(raw, at, "a token usage object")
    fields = [where.want_int(u.get(k), f"{at}.{k}") for k in
              ("prompt_tokens", "completion_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens")]
    recorded = split_litellm(*fields)
    if recorded is not None and isinstance(u.get("model"), str) and u["model"]:
        recorded.model = u["model"]
    return recorded


def difference(now: dict[str, Any], before: dict[str, Any] | None) -> dict[str, Any]:
    """One call's counts as the difference of two accumulated snapshots (never a total as one call)."""
    keys = ("prompt_tokens", "completion_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens")
    out: dict[str, Any] = {}
    for k in keys:
        value = now.get(k)
        prior = (before or {}).get(k, 0)
        out[k] = value - prior if isinstance(value, int) and isinstance(prior, int) and value >= prior else None
    return out


def context_window(raw: Any) -> int | None:
    """The `context_window` a TokenUsage recorded (0 means not recorded)."""
    if isinstance(raw, dict):
        value = raw.get("context_window")
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None
