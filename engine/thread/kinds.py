"""Message kinds: what a message in a view *is* (original, or something a layer made)."""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

# Layers mark the messages they create or rewrite with this additional_kwargs key, so a view
# can be read back without guessing from text. LangChain's own summary marker is honoured too.
KIND_KEY = "ctxi_kind"
# A system message's parts: [{"part", "category", "text"}], set by the prompt layers (input context, memory).
PARTS_KEY = "ctxi_parts"

Kind = Literal["original", "stub", "summary", "reminder", "patch", "truncated", "memory"]
KINDS: tuple[str, ...] = ("original", "stub", "summary", "reminder", "patch", "truncated", "memory")

# Token categories, in display order. `tools` are the tool schemas sent with each request.
# `unrecorded_prompt` and `unrecorded` are tokens the provider recorded that the transcript does
# not contain (engine.recorded.calibration): the agent's own prompt and tools, and what each message
# brought beyond our count of it (hidden reminders, full-length thinking, the provider's tokenizer).
CATEGORIES: tuple[str, ...] = (
    "system",
    "tools",
    "unrecorded_prompt",
    "memory",
    "human",
    "ai",
    "tool_calls",
    "tool_results",
    "stubs",
    "summary",
    "reminders",
    "patches",
    "unrecorded",
)

_REMINDER_NAMES = frozenset({"todo_reminder", "todo_completion_reminder"})


def mark(message: BaseMessage, kind: Kind, **details: Any) -> BaseMessage:
    """Return `message` with its kind recorded in additional_kwargs (mutates and returns it)."""
    message.additional_kwargs[KIND_KEY] = kind
    for key, value in details.items():
        message.additional_kwargs[f"ctxi_{key}"] = value
    return message


def message_kind(message: BaseMessage) -> str:
    """The kind of a message, from its marker, LangChain's summary marker or a reminder name."""
    kwargs = message.additional_kwargs
    marked = kwargs.get(KIND_KEY)
    if isinstance(marked, str) and marked in KINDS:
        return marked
    if kwargs.get("lc_source") == "summarization" or kwargs.get("durable_context_data"):
        return "summary"
    # LangChain's ContextEditingMiddleware marks a cleared result in its response_metadata
    editing = message.response_metadata.get("context_editing")
    if isinstance(message, ToolMessage) and isinstance(editing, dict) and editing.get("cleared"):
        return "stub"
    if isinstance(message, HumanMessage) and message.name in _REMINDER_NAMES:
        return "reminder"
    return "original"


def text_category(message: BaseMessage) -> str:
    """The category a message's text (content) counts toward."""
    kind = message_kind(message)
    if kind == "summary":
        return "summary"
    if kind == "reminder":
        return "reminders"
    if kind == "memory":
        return "memory"
    if isinstance(message, ToolMessage):
        if kind == "stub":
            return "stubs"
        if kind == "patch":
            return "patches"
        return "tool_results"
    if isinstance(message, AIMessage):
        return "ai"
    if isinstance(message, SystemMessage):
        return "system"
    return "human"
