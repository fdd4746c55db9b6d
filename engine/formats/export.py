"""Exporters: a Thread as native JSON, LangChain `messages_to_dict` dicts, or OpenAI chat messages.

- `to_native` is lossless (see engine/formats/native.py); native -> load -> native is byte-identical.
- `to_langchain_dicts` is lossless for the messages (ids, additional_kwargs, usage_metadata) and
  loads back with the `langchain_dict` importer.
- `to_openai_messages` is LangChain's `convert_to_openai_messages` (lossy: it drops ids, metadata
  and ToolMessage status) plus what it misses: the thread's system prompt first when the messages
  lack one, invalid tool calls kept as tool calls with their raw `arguments` string, and content
  blocks OpenAI has no type for (thinking, reasoning) left out.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, messages_to_dict
from langchain_core.messages.utils import convert_to_openai_messages

from engine.base.errors import ConfigError
from engine.formats.native import dumps
from engine.thread.model import Thread

EXPORT_FORMATS: tuple[str, ...] = ("native", "langchain_dict", "openai_messages")

# Content part types the Chat Completions API accepts.
OPENAI_PART_TYPES = frozenset({"text", "image_url", "input_audio", "file", "refusal"})


def to_native(thread: Thread) -> str:
    """Native JSON text (schema context-inspector/thread v1)."""
    return dumps(thread)


def to_langchain_dicts(thread: Thread) -> list[dict[str, Any]]:
    """The messages as `messages_to_dict` output."""
    return messages_to_dict(thread.messages)


def _openai_content(content: Any) -> Any:
    """Drop parts OpenAI has no type for; text-only parts join into one string, as LangChain's does."""
    if not isinstance(content, list):
        return content
    kept = [p for p in content if not isinstance(p, dict) or p.get("type") in OPENAI_PART_TYPES]
    if all(isinstance(p, dict) and p.get("type") == "text" for p in kept):
        return "\n".join(p.get("text", "") for p in kept)
    return kept


def _message_to_openai(message: BaseMessage) -> dict[str, Any]:
    [converted] = convert_to_openai_messages([message])
    converted["content"] = _openai_content(converted.get("content", ""))
    if isinstance(message, AIMessage) and message.invalid_tool_calls:
        calls = list(converted.get("tool_calls") or [])
        for bad in message.invalid_tool_calls:
            args = bad.get("args")
            calls.append(
                {
                    "type": "function",
                    "id": bad.get("id"),
                    "function": {
                        "name": bad.get("name") or "",
                        "arguments": args if isinstance(args, str) else json.dumps(args or {}),
                    },
                }
            )
        converted["tool_calls"] = calls
    return converted


def to_openai_messages(thread: Thread) -> list[dict[str, Any]]:
    """The thread as Chat Completions messages, system prompt first when the messages lack one."""
    out = [_message_to_openai(m) for m in thread.messages]
    has_system = any(isinstance(m, SystemMessage) for m in thread.messages)
    if thread.system_prompt and not has_system:
        out.insert(0, {"role": "system", "content": thread.system_prompt})
    return out


def export(thread: Thread, format: str) -> str:
    """The thread as text in one of EXPORT_FORMATS (JSON, indented like the native file)."""
    if format == "native":
        return to_native(thread)
    if format == "langchain_dict":
        return json.dumps(to_langchain_dicts(thread), ensure_ascii=False, indent=1)
    if format == "openai_messages":
        return json.dumps(to_openai_messages(thread), ensure_ascii=False, indent=1)
    raise ConfigError(f"unknown export format {format!r}; choose one of {', '.join(EXPORT_FORMATS)}", key="format")
