"""Tool-call ids unique within a thread, so every call stays paired with its own result.

Some transcripts reuse a call id across turns (tau-bench's gpt-4o runs, hand-edited SWE-agent
demonstrations). Results are matched by id, so a reused id would pair a later result with an
earlier call. A reuse becomes `<id>~2`, `<id>~3`… and the results that follow it are renamed too.
"""

from __future__ import annotations

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage


def _next_free(call_id: str, taken: set[str]) -> str:
    k = 2
    while f"{call_id}~{k}" in taken:
        k += 1
    return f"{call_id}~{k}"


def make_call_ids_unique(messages: list[BaseMessage]) -> int:
    """Rename reused tool-call ids in place (calls and their later results); returns how many were renamed."""
    taken: set[str] = set()
    current: dict[str, str] = {}
    renamed = 0
    for message in messages:
        if isinstance(message, AIMessage):
            for tc in message.tool_calls:
                original = tc.get("id")
                if not original:
                    continue
                new = original if original not in taken else _next_free(original, taken)
                renamed += new != original
                tc["id"] = current[original] = new
                taken.add(new)
        elif isinstance(message, ToolMessage):
            message.tool_call_id = current.get(message.tool_call_id, message.tool_call_id)
    return renamed
