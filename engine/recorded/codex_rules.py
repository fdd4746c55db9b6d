"""Codex's own rules for what it records into the history it sends: byte-based token estimates and the
truncation of tool outputs (openai/codex `codex-utils-output-truncation`, `core/src/context_manager/history.rs`).

`record_items` -> `process_item` cuts every function and custom tool output with the model's
`truncation_policy` ({mode: tokens, limit: 10000} for the Codex models) times 1.2 when it records it into
the history that is sent; the rollout persists the raw item (`record_conversation_items`:
`record_into_history`, then `persist_rollout_response_items`). So a Codex rollout's as-recorded request
holds the cut output (engine.recorded.history), and the `codex` policy records what-if results the same way.
"""

from __future__ import annotations

TOOL_OUTPUT_TOKENS = 10_000  # truncation_policy {mode: tokens, limit: 10000}
SERIALIZATION_BUDGET = 1.2  # process_item: policy * 1.2
APPROX_BYTES_PER_TOKEN = 4


def approx_token_count(text: str) -> int:
    """`approx_token_count`: UTF-8 bytes / 4, rounded up."""
    return -(-len(text.encode("utf-8")) // APPROX_BYTES_PER_TOKEN)


def truncate_text(text: str, max_tokens: int) -> str:
    """`truncate_text(text, TruncationPolicy::Tokens(max_tokens))`, byte for byte (truncate.rs)."""
    if not text:
        return text
    data = text.encode("utf-8")
    max_bytes = max_tokens * APPROX_BYTES_PER_TOKEN
    if max_tokens > 0 and len(data) <= max_bytes:
        return text
    if max_bytes == 0:
        return f"…{-(-len(data) // APPROX_BYTES_PER_TOKEN)} tokens truncated…"
    left = max_bytes // 2
    right = max_bytes - left
    tail_start = len(data) - right
    prefix_end, suffix_start, started, offset = 0, len(data), False, 0
    for ch in text:
        size = len(ch.encode("utf-8"))
        if offset + size <= left:
            prefix_end = offset + size
        elif offset >= tail_start and not started:
            suffix_start, started = offset, True
        offset += size
    suffix_start = max(suffix_start, prefix_end)
    removed = -(-(len(data) - max_bytes) // APPROX_BYTES_PER_TOKEN)
    return (data[:prefix_end].decode("utf-8") + f"…{removed} tokens truncated…" + data[suffix_start:].decode("utf-8"))


def recorded_output_tokens(limit: int | None = None) -> int:
    """The token budget `process_item` cuts a tool output to: the policy's limit times 1.2."""
    return int((limit or TOOL_OUTPUT_TOKENS) * SERIALIZATION_BUDGET)
