"""Context Inspector's own thread JSON (schema `context-inspector/thread`, version 1); lossless.

```json
{"schema": "context-inspector/thread", "version": 1, "thread_id": "...", "source_format": "...",
 "title": null, "model": null, "max_input_tokens": null, "system_prompt": null,
 "tools": [{"name", "description", "parameters"}], "todos": [{"content", "status"}],
 "messages": [<langchain messages_to_dict>], "usage": {"<ai message id>": {"input_tokens", ...}},
 "compactions": [{"index", "trigger", "pre_tokens", "summary", "message_id", "post_tokens",
                  "replacement": [<messages_to_dict>] | null, "kind", "source"}],
 "timestamps": {"<message id>": "<ISO 8601>"},
 "edits": [{"index", "kind", "tool_call_ids", "message_ids", "placeholder", "clear_inputs",
            "trigger", "pre_tokens", "tokens_saved", "message_id", "source"}],
 "subagents": {"<task tool_call_id>": <thread object, same schema>}, "extra": {}}
```
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import BaseMessage, messages_to_dict

from engine.formats.jsonshape import Where, json_type
from engine.formats.langchain_dict import message_from_entry
from engine.formats.source import Source, ThreadRef
from engine.thread.model import RecordedCompaction, RecordedEdit, RecordedUsage, Thread

SCHEMA = "context-inspector/thread"
VERSION = 1


def thread_to_dict(thread: Thread) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "version": VERSION,
        "thread_id": thread.thread_id,
        "source_format": thread.source_format,
        "title": thread.title,
        "model": thread.model,
        "max_input_tokens": thread.max_input_tokens,
        "system_prompt": thread.system_prompt,
        "tools": thread.tools,
        "todos": thread.todos,
        "messages": messages_to_dict(thread.messages),
        "usage": {k: v.to_dict() for k, v in thread.usage.items()},
        "compactions": [c.to_dict() for c in thread.compactions],
        "edits": [e.to_dict() for e in thread.edits],
        "timestamps": thread.timestamps,
        "subagents": {k: thread_to_dict(v) for k, v in thread.subagents.items()},
        "extra": thread.extra,
    }


def dumps(thread: Thread, *, indent: int | None = 1) -> str:
    """Native JSON text; the same thread always gives the same bytes."""
    return json.dumps(thread_to_dict(thread), ensure_ascii=False, indent=indent, sort_keys=False)


# Scalar field types of the recorded dataclasses, as their annotations spell them (engine/thread/model.py).
_SCALARS: dict[str, tuple[tuple[type, ...], str]] = {
    "int": ((int,), "an integer"),
    "str": ((str,), "a string"),
    "bool": ((bool,), "true or false"),
}


def _check_fields(where: Where, d: dict[str, Any], cls: type, location: str) -> dict[str, Any]:
    """The fields of `d` that `cls` (a recorded dataclass) has, each checked against its annotation."""
    out: dict[str, Any] = {}
    for name, f in cls.__dataclass_fields__.items():  # type: ignore[attr-defined]
        if name not in d:
            continue
        value, at = d[name], f"{location}.{name}"
        kinds = [k.strip() for k in str(f.type).split("|")]
        if value is None and "None" in kinds:
            out[name] = None
            continue
        base = kinds[0]
        if base in _SCALARS:
            types, what = _SCALARS[base]
            if not isinstance(value, types) or (base == "int" and isinstance(value, bool)):
                where.fail(at, f"expected {what}{' or null' if 'None' in kinds else ''}, got {json_type(value)}")
        elif base == "list[str]":
            for k, item in enumerate(where.want_list(value, at)):
                where.want_str(item, f"{at}[{k}]")
        elif base == "list[BaseMessage]":
            value = _messages(where, value, at)
        out[name] = value
    return out


def _messages(where: Where, raw: Any, location: str) -> list[BaseMessage]:
    """messages_to_dict entries, each checked and loaded on its own (errors name `location[i]`)."""
    entries = where.want_list(raw, location)
    out = []
    for i, m in enumerate(entries):
        if not isinstance(m, dict) or "type" not in m or not isinstance(m.get("data"), dict):
            where.fail(f"{location}[{i}]", "each message must be {type, data}")
        if m.get("type") == "remove":
            where.fail(f"{location}[{i}].type", "a native thread holds messages, not 'remove' entries")
        out.append(message_from_entry(m, where, f"{location}[{i}]", i))
    return out


def _optional(where: Where, d: dict[str, Any], key: str, kind: type, what: str, location: str) -> Any:
    value = d.get(key)
    if value is not None and (not isinstance(value, kind) or isinstance(value, bool) and kind is int):
        where.fail(f"{location}.{key}", f"expected {what} or null, got {json_type(value)}")
    return value


def thread_from_dict(d: dict[str, Any], *, label: str = "<native>", path: str = "$") -> Thread:
    """A Thread from native JSON; every field is type-checked, so a wrong type is one ThreadLoadError
    naming the JSON path (never a traceback later, in a layer or a page)."""
    where = Where(label, "native")
    if not isinstance(d, dict):
        where.fail(path, "expected a JSON object")
    version = d.get("version")
    if version != VERSION:
        where.fail(f"{path}.version", f"unsupported native schema version {version!r} (this build reads version {VERSION})")
    if not isinstance(d.get("messages"), list):
        where.fail(f"{path}.messages", "'messages' must be a list")
    messages = _messages(where, d["messages"], f"{path}.messages")
    for key in ("thread_id", "source_format", "title", "model", "system_prompt"):
        _optional(where, d, key, str, "a string", path)
    window = _optional(where, d, "max_input_tokens", int, "an integer", path)
    if window is not None and window <= 0:
        where.fail(f"{path}.max_input_tokens", f"expected a positive integer, got {window}")
    lists: dict[str, list[dict[str, Any]]] = {}
    for key in ("tools", "todos", "compactions", "edits"):
        items = where.want_list(d.get(key) or [], f"{path}.{key}")
        lists[key] = [where.want_dict(item, f"{path}.{key}[{k}]") for k, item in enumerate(items)]
    maps: dict[str, dict[str, Any]] = {}
    for key in ("usage", "subagents", "timestamps", "extra"):
        maps[key] = where.want_dict(d.get(key) or {}, f"{path}.{key}")
    for key, value in maps["timestamps"].items():
        where.want_str(value, f"{path}.timestamps.{key}")
    compactions = []
    for k, c in enumerate(lists["compactions"]):
        fields = _check_fields(where, c, RecordedCompaction, f"{path}.compactions[{k}]")
        if "index" not in fields:
            where.fail(f"{path}.compactions[{k}].index", "missing required field")
        if fields.get("kind") is None:
            fields.pop("kind", None)
        compactions.append(RecordedCompaction(**fields))
    edits = []
    for k, e in enumerate(lists["edits"]):
        fields = _check_fields(where, e, RecordedEdit, f"{path}.edits[{k}]")
        if "index" not in fields:
            where.fail(f"{path}.edits[{k}].index", "missing required field")
        edits.append(RecordedEdit(**fields))
    usage = {}
    for key, u in maps["usage"].items():
        at = f"{path}.usage.{key}"
        usage[key] = RecordedUsage(**_check_fields(where, where.want_dict(u, at), RecordedUsage, at))
    return Thread(
        thread_id=d.get("thread_id") or "thread",
        messages=messages,
        source_format=d.get("source_format") or "native",
        model=d.get("model"),
        max_input_tokens=window,
        system_prompt=d.get("system_prompt"),
        tools=lists["tools"],
        todos=lists["todos"],
        subagents={k: thread_from_dict(v, label=label, path=f"{path}.subagents.{k}") for k, v in maps["subagents"].items()},
        usage=usage,
        compactions=compactions,
        edits=edits,
        timestamps=maps["timestamps"],
        title=d.get("title"),
        extra=maps["extra"],
    )


class _NativeImporter:
    name = "native"

    def sniff(self, source: Source) -> bool:
        if source.is_sqlite():
            return False
        head = source.data[:4096].lstrip()
        if not head.startswith(b"{") or SCHEMA.encode() not in source.data[:65536]:
            return False
        doc = source.try_json()
        return isinstance(doc, dict) and doc.get("schema") == SCHEMA

    def list_threads(self, source: Source) -> list[ThreadRef]:
        doc = source.json()
        return [ThreadRef(str(doc.get("thread_id") or "thread"), doc.get("title"), len(doc.get("messages") or []))]

    def load(self, source: Source, thread_id: str | None) -> Thread:
        doc = source.json()
        thread = thread_from_dict(doc, label=source.label)
        if thread_id is not None and thread_id != thread.thread_id:
            from engine.base.errors import ThreadNotFoundError

            raise ThreadNotFoundError(f"thread {thread_id!r} not found (this file holds {thread.thread_id!r})",
                                      path=source.label, format="native")
        return thread


IMPORTER = _NativeImporter()
