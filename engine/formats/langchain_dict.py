"""LangChain `messages_to_dict` JSON: a list of `{type, data}`, or `{"messages": [...]}` holding one.

Loaded with `messages_from_dict` (lossless: ids, additional_kwargs, usage_metadata, ToolMessage status).
Messages without an id get `stable_id("langchain_dict", position, data)`. Usage comes from each AI
message's `usage_metadata` (whose `input_tokens` already include cache reads and writes).
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage, messages_from_dict

from engine.formats.jsonshape import (
    SingleThreadImporter,
    Where,
    assemble,
    default_thread_id,
    guarded_sniff,
    json_type,
    model_from_messages,
    parsed_if,
    usage_pairs,
)
from engine.formats.source import Source
from engine.thread import RecordedUsage, Thread, stable_id

FORMAT = "langchain_dict"

# The `type` values messages_from_dict understands, minus "remove" (a state edit, not a message).
MESSAGE_TYPES = frozenset(
    {
        "human",
        "ai",
        "system",
        "tool",
        "chat",
        "function",
        "HumanMessageChunk",
        "AIMessageChunk",
        "SystemMessageChunk",
        "ToolMessageChunk",
        "ChatMessageChunk",
        "FunctionMessageChunk",
    }
)


def _is_entry(item: Any) -> bool:
    return isinstance(item, dict) and isinstance(item.get("type"), str) and isinstance(item.get("data"), dict)


def message_list(doc: Any) -> tuple[list[Any], str] | None:
    """The `{type, data}` list of a document and its JSON path, when it has that shape."""
    if isinstance(doc, list) and doc and _is_entry(doc[0]):
        return doc, "$"
    if isinstance(doc, dict):
        inner = doc.get("messages")
        if isinstance(inner, list) and inner and _is_entry(inner[0]):
            return inner, "$.messages"
    return None


def message_from_entry(entry: Any, where: Where, location: str, position: int) -> BaseMessage:
    """One `{type, data}` entry as a LangChain message, with a stable id when it has none."""
    entry = where.want_dict(entry, location, "a {type, data} message object")
    mtype = entry.get("type")
    if not isinstance(mtype, str):
        where.fail(f"{location}.type", f"expected a message type string, got {json_type(mtype)}")
    if mtype not in MESSAGE_TYPES:
        where.fail(f"{location}.type", f"unknown message type {mtype!r}; expected one of {', '.join(sorted(MESSAGE_TYPES))}")
    data = where.want_dict(entry.get("data"), f"{location}.data")
    where.want_content(data.get("content"), f"{location}.data.content")
    for key in ("tool_calls", "invalid_tool_calls"):
        if key in data and data[key] is not None:
            calls = where.want_list(data[key], f"{location}.data.{key}")
            for k, call in enumerate(calls):
                where.want_dict(call, f"{location}.data.{key}[{k}]", "a tool call object")
    try:
        message = messages_from_dict([{"type": mtype, "data": data}])[0]
    except Exception as exc:  # pydantic validation of the fields
        where.fail(f"{location}.data", f"invalid {mtype} message ({type(exc).__name__}: {str(exc)[:200]})")
    if not message.id:
        message.id = stable_id(FORMAT, position, data)
    return message


def messages_and_usage(
    entries: list[Any], where: Where, base: str
) -> tuple[list[BaseMessage], list[tuple[BaseMessage, RecordedUsage]]]:
    messages = [message_from_entry(e, where, f"{base}[{i}]", i) for i, e in enumerate(entries)]
    return messages, usage_pairs(messages)


class LangChainDictImporter(SingleThreadImporter):
    name = FORMAT

    def sniff(self, source: Source) -> bool:
        return guarded_sniff(lambda s: message_list(parsed_if(s, b"[{")) is not None, source)

    def build(self, doc: Any, source: Source, where: Where) -> Thread:
        found = message_list(doc)
        if found is None:
            if isinstance(doc, dict) and "messages" in doc:
                entries = where.want_list(doc["messages"], "$.messages")
                base = "$.messages"
            else:
                entries = where.want_list(doc, "$", "an array of {type, data} messages")
                base = "$"
        else:
            entries, base = found
        messages, usage = messages_and_usage(entries, where, base)
        wrapper = doc if isinstance(doc, dict) else {}
        thread_id = wrapper.get("thread_id")
        return assemble(
            messages,
            usage,
            thread_id=thread_id if isinstance(thread_id, str) and thread_id else default_thread_id(source),
            model=model_from_messages(messages),
        )


IMPORTER = LangChainDictImporter()
