"""Where to cut: the first kept message for a keep threshold, never splitting an AI message from its results.

LangChain's rules (langchain 1.5.2, `libs/langchain_v1/langchain/agents/middleware/summarization.py`:
`_find_safe_cutoff_point`, `_find_token_based_cutoff`, `_find_message_based_cutoff`). Everything
before the cutoff is compacted, everything from it on is kept. Pure functions, shared by every layer
or policy that keeps a tail by messages or by tokens.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from engine.layers.thresholds import DEFAULT_KEEP, Threshold


def find_safe_cutoff_point(messages: Sequence[BaseMessage], cutoff: int) -> int:
    """Never split an AI message from its tool results: a cut on results moves back to their AI message."""
    if cutoff >= len(messages) or not isinstance(messages[cutoff], ToolMessage):
        return cutoff
    call_ids: set[str] = set()
    end = cutoff
    while end < len(messages) and isinstance(messages[end], ToolMessage):
        if messages[end].tool_call_id:  # type: ignore[attr-defined]
            call_ids.add(messages[end].tool_call_id)  # type: ignore[attr-defined]
        end += 1
    for i in range(cutoff - 1, -1, -1):
        m = messages[i]
        if isinstance(m, AIMessage) and m.tool_calls and call_ids & {tc.get("id") for tc in m.tool_calls if tc.get("id")}:
            return i
    return end  # orphan results: move forward past them


def message_cutoff(messages: Sequence[BaseMessage], keep_messages: int) -> int:
    if len(messages) <= keep_messages:
        return 0
    return find_safe_cutoff_point(messages, len(messages) - keep_messages)


def token_cutoff(messages: Sequence[BaseMessage], target_tokens: int, counter: Callable[..., int],
                 total: int | None = None) -> int:
    """The earliest index whose suffix fits `target_tokens` (LangChain's binary search), made safe.

    `total` is the whole list's count when the caller has it: LangChain checks the whole list with
    its usage-scaled counter and searches the suffixes with the unscaled one.
    """
    if not messages:
        return 0
    target = max(1, target_tokens)
    if (total if total is not None else counter(messages)) <= target:
        return 0
    left, right = 0, len(messages)
    candidate = len(messages)
    for _ in range(len(messages).bit_length() + 1):
        if left >= right:
            break
        mid = (left + right) // 2
        if counter(messages[mid:]) <= target:
            candidate = right = mid
        else:
            left = mid + 1
    if candidate == len(messages):
        candidate = left
    if candidate >= len(messages):
        if len(messages) == 1:
            return 0
        candidate = len(messages) - 1
    return find_safe_cutoff_point(messages, candidate)


def cutoff_for_keep(messages: Sequence[BaseMessage], keep: Threshold, counter: Callable[..., int],
                    window: int | None, total: int | None = None) -> int:
    """The first kept message for `keep` (LangChain's `_determine_cutoff_index`); `total` as in token_cutoff."""
    kind, value = keep
    if kind == "tokens":
        return token_cutoff(messages, int(value), counter, total)
    if kind == "fraction":
        if window is None:  # LangChain's safety net: fall back to 20 messages
            return message_cutoff(messages, DEFAULT_KEEP[1])  # type: ignore[arg-type]
        return token_cutoff(messages, int(window * value), counter, total)
    return message_cutoff(messages, int(value))


__all__ = ["cutoff_for_keep", "find_safe_cutoff_point", "message_cutoff", "token_cutoff"]
