"""LangChain `dumpd` JSON: `{lc: 1, type: "constructor", id: [..., "AIMessage"], kwargs}` envelopes.

Accepted as a bare list of envelopes, or an object holding such a list (under `messages`, else under
the first key whose value is one; a LangSmith chat-model run's inputs hold it as one batch,
`{"messages": [[...]]}`), e.g. Deep Agents' `summarization_seed_messages.json` (a bare list
of six envelopes). Each envelope is checked before `langchain_core.load.load` runs on it, and `load`
only admits the message classes: any other constructor (a prompt, a model, a secret) is refused
with an error naming its class path, so loading a file never instantiates arbitrary objects.

Older and newer files: LangChain 0.1's FunctionMessage (with the AI message's
`additional_kwargs.function_call`) loads as a tool call and its ToolMessage, ChatMessage as itself,
and a RemoveMessage (a LangGraph state edit) drops the earlier message with its id; the dropped ids
go to `extra["removed"]` (see `langchain_dict.fix_up`). A value dumpd could not serialise
(a `not_implemented` node, e.g. a parsed pydantic object in additional_kwargs) loads as its repr.
"""

from __future__ import annotations

import warnings
from typing import Any

from langchain_core.load import load
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ChatMessage,
    ChatMessageChunk,
    FunctionMessage,
    FunctionMessageChunk,
    HumanMessage,
    HumanMessageChunk,
    RemoveMessage,
    SystemMessage,
    SystemMessageChunk,
    ToolMessage,
    ToolMessageChunk,
)

from engine.formats.jsonshape import (
    SingleThreadImporter,
    Where,
    guarded_sniff,
    json_type,
    parsed_if,
)
from engine.formats.langchain_dict import document_thread_id, langchain_thread
from engine.formats.pydantic_text import error_detail
from engine.formats.source import Source
from engine.thread.model import Thread, stable_id

FORMAT = "langchain_dumpd"

MESSAGE_CLASSES: tuple[type[BaseMessage], ...] = (
    AIMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    AIMessageChunk,
    HumanMessageChunk,
    SystemMessageChunk,
    ToolMessageChunk,
    ChatMessage,
    ChatMessageChunk,
    FunctionMessage,
    FunctionMessageChunk,
    RemoveMessage,
)
MESSAGE_CLASS_NAMES = frozenset(c.__name__ for c in MESSAGE_CLASSES)


def is_envelope(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and item.get("lc") == 1
        and item.get("type") == "constructor"
        and isinstance(item.get("id"), list)
    )


def _envelopes_at(value: Any, path: str) -> tuple[list[Any], str] | None:
    """`value` as a list of envelopes: itself, or the one batch of a LangSmith chat-model run's
    `messages: [[...]]` (a list holding a single list of envelopes)."""
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], list):
        value, path = value[0], f"{path}[0]"
    if isinstance(value, list) and value and is_envelope(value[0]):
        return value, path
    return None


def envelope_list(doc: Any) -> tuple[list[Any], str] | None:
    """The list of envelopes a document holds and its JSON path, when it has that shape."""
    if isinstance(doc, list):
        return _envelopes_at(doc, "$")
    if not isinstance(doc, dict) or is_envelope(doc):
        return None
    keys = ["messages"] + [k for k in doc if k != "messages"]
    for key in keys:
        found = _envelopes_at(doc.get(key), f"$.{key}")
        if found is not None:
            return found
    return None


def inline_unserializable(value: Any) -> Any:
    """`value` with each nested `not_implemented` node (an object dumpd could not serialise, such as
    a parsed pydantic reply in additional_kwargs) replaced by its repr, so the message still loads."""
    if isinstance(value, list):
        return [inline_unserializable(v) for v in value]
    if not isinstance(value, dict):
        return value
    if value.get("lc") == 1 and value.get("type") == "not_implemented":
        shown = value.get("repr")
        path = value.get("id")
        return shown if isinstance(shown, str) else ".".join(str(p) for p in path) if isinstance(path, list) else "?"
    return {k: inline_unserializable(v) for k, v in value.items()}


def message_from_envelope(item: Any, where: Where, location: str, position: int) -> BaseMessage:
    item = where.want_dict(item, location, "an {lc, type, id, kwargs} envelope")
    if item.get("lc") != 1:
        where.fail(f"{location}.lc", f"expected lc 1, got {item.get('lc')!r}")
    if item.get("type") != "constructor":
        where.fail(f"{location}.type", f"expected a 'constructor' envelope, got {item.get('type')!r}")
    class_path = item.get("id")
    if not isinstance(class_path, list) or not class_path or not all(isinstance(p, str) for p in class_path):
        where.fail(f"{location}.id", f"expected a class path (array of strings), got {json_type(class_path)}")
    if class_path[-1] not in MESSAGE_CLASS_NAMES:
        where.fail(
            f"{location}.id",
            f"refusing to load constructor {'.'.join(class_path)!r}: only message classes are allowed "
            f"({', '.join(sorted(MESSAGE_CLASS_NAMES))})",
        )
    kwargs = where.want_dict(item.get("kwargs", {}), f"{location}.kwargs")
    where.want_content(kwargs.get("content"), f"{location}.kwargs.content")
    where.want_metadata(kwargs, f"{location}.kwargs")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # `load` is marked beta
            message = load({**item, "kwargs": inline_unserializable(kwargs)}, allowed_objects=list(MESSAGE_CLASSES))
    except Exception as exc:  # the allowlist refusal, pydantic validation, a not_implemented field
        suffix, detail = error_detail(exc)  # pydantic's text in one line (engine.formats.pydantic_text)
        where.fail(f"{location}.kwargs{suffix}" if suffix else location, f"cannot load {class_path[-1]}: {detail}")
    if not isinstance(message, BaseMessage):
        where.fail(location, f"expected a message, got {type(message).__name__}")
    if not message.id:
        message.id = stable_id(FORMAT, position, kwargs)
    return message


class LangChainDumpdImporter(SingleThreadImporter):
    name = FORMAT

    def sniff(self, source: Source) -> bool:
        return guarded_sniff(lambda s: envelope_list(parsed_if(s, b"[{")) is not None, source)

    def build(self, doc: Any, source: Source, where: Where) -> Thread:
        found = envelope_list(doc)
        if found is None:
            if isinstance(doc, dict) and "messages" in doc:
                items, base = where.want_list(doc["messages"], "$.messages"), "$.messages"
            else:
                items, base = where.want_list(doc, "$", "an array of dumpd message envelopes"), "$"
        else:
            items, base = found
        messages = [message_from_envelope(x, where, f"{base}[{i}]", i) for i, x in enumerate(items)]
        return langchain_thread(messages, document_thread_id(doc, source))


IMPORTER = LangChainDumpdImporter()
