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

from langchain_core.messages import messages_from_dict, messages_to_dict

from engine.errors import ThreadLoadError
from engine.formats.source import Source, ThreadRef
from engine.thread import RecordedCompaction, RecordedEdit, RecordedUsage, Thread

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


def thread_from_dict(d: dict[str, Any], *, label: str = "<native>", path: str = "$") -> Thread:
    if not isinstance(d, dict):
        raise ThreadLoadError("expected a JSON object", path=label, format="native", location=path)
    version = d.get("version")
    if version != VERSION:
        raise ThreadLoadError(
            f"unsupported native schema version {version!r} (this build reads version {VERSION})",
            path=label, format="native", location=f"{path}.version",
        )
    raw_messages = d.get("messages")
    if not isinstance(raw_messages, list):
        raise ThreadLoadError("'messages' must be a list", path=label, format="native", location=f"{path}.messages")
    for i, m in enumerate(raw_messages):
        if not isinstance(m, dict) or "type" not in m or not isinstance(m.get("data"), dict):
            raise ThreadLoadError(
                "each message must be {type, data}", path=label, format="native", location=f"{path}.messages[{i}]"
            )
    try:
        messages = messages_from_dict(raw_messages)
    except Exception as exc:  # pydantic validation or an unknown type
        raise ThreadLoadError(f"invalid message ({exc.__class__.__name__}: {str(exc)[:200]})", path=label,
                              format="native", location=f"{path}.messages") from None
    subagents = d.get("subagents") or {}
    if not isinstance(subagents, dict):
        raise ThreadLoadError("'subagents' must be an object", path=label, format="native", location=f"{path}.subagents")
    return Thread(
        thread_id=str(d.get("thread_id") or "thread"),
        messages=messages,
        source_format=str(d.get("source_format") or "native"),
        model=d.get("model"),
        max_input_tokens=d.get("max_input_tokens"),
        system_prompt=d.get("system_prompt"),
        tools=list(d.get("tools") or []),
        todos=list(d.get("todos") or []),
        subagents={k: thread_from_dict(v, label=label, path=f"{path}.subagents.{k}") for k, v in subagents.items()},
        usage={k: RecordedUsage.from_dict(v) for k, v in (d.get("usage") or {}).items()},
        compactions=[RecordedCompaction.from_dict(c) for c in (d.get("compactions") or [])],
        edits=[RecordedEdit.from_dict(e) for e in (d.get("edits") or [])],
        timestamps={str(k): str(v) for k, v in (d.get("timestamps") or {}).items()}
        if isinstance(d.get("timestamps"), dict) else {},
        title=d.get("title"),
        extra=dict(d.get("extra") or {}),
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
            from engine.errors import ThreadNotFoundError

            raise ThreadNotFoundError(f"thread {thread_id!r} not found (this file holds {thread.thread_id!r})",
                                      path=source.label, format="native")
        return thread


IMPORTER = _NativeImporter()
