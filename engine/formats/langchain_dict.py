"""LangChain `messages_to_dict` JSON: a list of `{type, data}`, or `{"messages": [...]}` holding one.

Also JSON Lines with one such entry per line (a Redis or SQL chat history exported row by row),
and the flat form, one `message.model_dump()` per item (`{type: "human", content, id, ...}` without
`data`), which LangGraph state exports and tracing tools (Langfuse's ChatML view) show.

Loaded with `messages_from_dict` (lossless: ids, additional_kwargs, usage_metadata, ToolMessage status).
Messages without an id get `stable_id("langchain_dict", position, data)`. Usage comes from each AI
message's `usage_metadata` (whose `input_tokens` already include cache reads and writes).
Streamed chunks (AIMessageChunk, ...) load as whole messages. Older files: a `function_call` in an AI message's additional_kwargs becomes its tool call and the
`function` message answering it a ToolMessage; a `remove` entry (RemoveMessage) drops the earlier
message with its id, as LangGraph's `add_messages` does, and the dropped ids go to `extra["removed"]`.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage, message_chunk_to_message, messages_from_dict

from engine.base.errors import ThreadLoadError
from engine.formats.jsonshape import (
    SingleThreadImporter,
    Where,
    apply_removals,
    assemble,
    check_thread_id,
    default_thread_id,
    first_byte,
    guarded_sniff,
    json_type,
    model_from_messages,
    parsed_if,
    upgrade_function_calls,
    usage_pairs,
)
from engine.formats.pydantic_text import error_detail
from engine.formats.source import Source
from engine.thread.model import Thread, stable_id

FORMAT = "langchain_dict"

# The `type` values messages_from_dict understands ("remove" is a state edit, applied on load).
MESSAGE_TYPES = frozenset(
    {
        "remove",
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


def _is_flat(item: Any) -> bool:
    """A `model_dump()` of a message: its type and content at the top level, no `data` wrapper."""
    return (
        isinstance(item, dict)
        and item.get("type") in MESSAGE_TYPES
        and "content" in item
        and "data" not in item
        and "role" not in item
    )


def _is_message_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and (_is_entry(value[0]) or _is_flat(value[0]))


def message_list(doc: Any) -> tuple[list[Any], str] | None:
    """The `{type, data}` list of a document and its JSON path, when it has that shape."""
    if _is_message_list(doc):
        return doc, "$"
    if isinstance(doc, dict) and _is_message_list(doc.get("messages")):
        return doc["messages"], "$.messages"
    return None


def message_from_entry(entry: Any, where: Where, location: str, position: int) -> BaseMessage:
    """One `{type, data}` entry as a LangChain message, with a stable id when it has none."""
    entry = where.want_dict(entry, location, "a {type, data} message object")
    mtype = entry.get("type")
    if not isinstance(mtype, str):
        where.fail(f"{location}.type", f"expected a message type string, got {json_type(mtype)}")
    if mtype not in MESSAGE_TYPES:
        where.fail(f"{location}.type", f"unknown message type {mtype!r}; expected one of {', '.join(sorted(MESSAGE_TYPES))}")
    if "data" in entry:
        data_at = f"{location}.data"
        data = where.want_dict(entry.get("data"), data_at)
    else:  # the flat model_dump() form
        data_at, data = location, {k: v for k, v in entry.items() if k != "type"}
    where.want_content(data.get("content"), f"{data_at}.content")
    where.want_metadata(data, data_at)
    for key in ("tool_calls", "invalid_tool_calls"):
        if key in data and data[key] is not None:
            calls = where.want_list(data[key], f"{data_at}.{key}")
            for k, call in enumerate(calls):
                at = f"{data_at}.{key}[{k}]"
                where.want_dict(call, at, "a tool call object")
                if key == "tool_calls":  # LangChain's ToolCall: name, args (an object) and id are required
                    where.want_str(call.get("name"), f"{at}.name")
                    where.want_dict(call.get("args"), f"{at}.args")
                    where.want_str(call.get("id"), f"{at}.id", optional=True)
    if mtype == "remove" and not isinstance(data.get("id"), str):
        where.fail(f"{data_at}.id", f"a remove entry needs the string id of the message it removes, got {json_type(data.get('id'))}")
    try:
        message = messages_from_dict([{"type": mtype, "data": data}])[0]
    except Exception as exc:  # pydantic validation of the fields: one line (engine.formats.pydantic_text)
        suffix, detail = error_detail(exc)
        where.fail(data_at + suffix, f"invalid {mtype} message: {detail}")
    if not message.id:
        message.id = stable_id(FORMAT, position, data)
    return message


def fix_up(messages: list[BaseMessage], extra: dict[str, Any]) -> list[BaseMessage]:
    """Apply removals, turn streamed chunks into whole messages and upgrade legacy function calls.

    A saved AIMessageChunk is the whole streamed reply; as a plain AIMessage it shows and counts as
    "ai" like any other. What was removed is noted in `extra`.
    """
    messages, removed = apply_removals(messages)
    if removed:
        extra["removed"] = removed
    return upgrade_function_calls([message_chunk_to_message(m) for m in messages])


def langchain_thread(messages: list[BaseMessage], thread_id: str) -> Thread:
    """The Thread of LangChain messages read from a file, after `fix_up` (its notes go to `extra`)."""
    extra: dict[str, Any] = {}
    messages = fix_up(messages, extra)
    return assemble(messages, usage_pairs(messages), thread_id=thread_id, model=model_from_messages(messages),
                    extra=extra)


def document_thread_id(doc: Any, source: Source) -> str:
    """A wrapper object's own `thread_id`, else the file's default id."""
    thread_id = doc.get("thread_id") if isinstance(doc, dict) else None
    return thread_id if isinstance(thread_id, str) and thread_id else default_thread_id(source)


def is_jsonl_history(source: Source) -> bool:
    """JSON Lines with one message entry per line (a Redis or SQL chat history exported row by row)."""
    if source.is_sqlite() or first_byte(source) != b"{" or source.try_json() is not None:
        return False
    rows = source.first_jsonl(5)
    return bool(rows) and all(_is_entry(r) or _is_flat(r) for r in rows)


class LangChainDictImporter(SingleThreadImporter):
    name = FORMAT

    def sniff(self, source: Source) -> bool:
        return guarded_sniff(lambda s: message_list(parsed_if(s, b"[{")) is not None or is_jsonl_history(s), source)

    def load(self, source: Source, thread_id: str | None) -> Thread:
        if not is_jsonl_history(source):
            return super().load(source, thread_id)
        where = Where(source.label, self.name)
        try:
            rows = source.jsonl()
        except ThreadLoadError as exc:
            raise where.unparseable(exc) from None
        messages = [message_from_entry(entry, where, f"line {n}: $", i) for i, (n, entry) in enumerate(rows)]
        thread = langchain_thread(messages, default_thread_id(source))
        thread.source_format = self.name
        return check_thread_id(thread, thread_id, where)

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
        messages = [message_from_entry(e, where, f"{base}[{i}]", i) for i, e in enumerate(entries)]
        return langchain_thread(messages, document_thread_id(doc, source))


IMPORTER = LangChainDictImporter()
