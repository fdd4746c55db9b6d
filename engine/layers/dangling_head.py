"""DeerFlow HEAD's request patch for tool calls, as pure functions (the `deerflow-head` dangling style).

DeerFlow `backend/packages/harness/deerflow/agents/middlewares/dangling_tool_call_middleware.py` at
f1f4af99b (2026-08-22), `DanglingToolCallMiddleware._build_patched_messages`, in order:

1. **Ids**: a tool call whose id is empty or missing gets `deerflow_synthetic_tool_call_{i}_{source}_{k}`
   (i = its AI message's index, source = call / invalid / raw, k = its position); a result with a
   malformed id is re-pointed at the open malformed call of its turn it must answer (one compatible
   call; several only while every open call of the turn has a result, then by position).
2. **Calls**: an AI message's calls are its `tool_calls` (name stripped, empty name -> `unknown_tool`),
   the raw `additional_kwargs["tool_calls"]` only when both structured views are empty, and its
   `invalid_tool_calls`.
3. **Request**: every ToolMessage is taken out; each AI message (names sanitized, invalid calls' and
   raw calls' arguments made JSON-object strings) is followed, call by call, by the first result
   for that id or a placeholder error result; results answering no call (orphans) are dropped.
   Nothing changed and nothing dropped: no patch.

Placeholder texts: interrupted, invalid arguments (`write_file` gets its own advice), empty name.
"""

from __future__ import annotations

import json
from collections import defaultdict, deque
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, ToolMessage

MAX_ERROR_DETAIL_CHARS = 500
UNKNOWN_TOOL_NAME = "unknown_tool"
SYNTHETIC_ID_PREFIX = "deerflow_synthetic_tool_call_"
INTERRUPTED = "[Tool call was interrupted and did not return a result.]"
EMPTY_NAME = ("[Tool call could not be executed because its name was missing or empty. "
              "Use one of the available tool names when retrying.]")
INVALID = "[Tool call could not be executed because its arguments were invalid: {error}]"
INVALID_NO_ERROR = "[Tool call could not be executed because its arguments were invalid.]"
WRITE_FILE_INVALID = (
    "[write_file failed before execution: the tool-call arguments were not valid JSON, "
    "so no file was written. This often happens when the model tries to write a very "
    "large Markdown file in a single tool call, especially when `content` contains "
    "unescaped quotes, inline JSON, backslashes, or code fences. Do not retry the same "
    "large `write_file` payload for this artifact; provide the report/content directly "
    "as normal assistant text in your next response. If a file write is still needed "
    "later, split the file into smaller sections instead of one large payload.{details}]"
)


def _valid_name(name: object) -> bool:
    return isinstance(name, str) and bool(name.strip())


def _valid_id(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _name(name: object) -> str:
    return name.strip() if isinstance(name, str) and name.strip() else UNKNOWN_TOOL_NAME


def _declared_name(call: dict[str, Any]) -> object:
    name = call.get("name")
    if _valid_name(name):
        return name
    function = call.get("function")
    return function.get("name") if isinstance(function, dict) else name


def _json_object(value: object) -> dict[str, Any] | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = json.loads(value)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _json_arguments(arguments: object) -> str:
    """Arguments as a JSON-object string an OpenAI-compatible provider accepts ("{}" otherwise)."""
    if isinstance(arguments, dict):
        try:
            return json.dumps(arguments, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError):
            return "{}"
    return arguments if isinstance(arguments, str) and _json_object(arguments) is not None else "{}"


def message_calls(message: BaseMessage) -> list[dict[str, Any]]:
    """The calls DeerFlow pairs with results: structured, else raw, then invalid; names normalized."""
    out: list[dict[str, Any]] = []
    structured = getattr(message, "tool_calls", None) or []
    for call in structured:
        if not isinstance(call, dict):
            continue
        entry = {**call, "name": _name(call.get("name"))}
        if not _valid_name(call.get("name")):
            entry["invalid_tool_name"] = True
        out.append(entry)
    invalid = getattr(message, "invalid_tool_calls", None) or []
    if not structured and not invalid:
        for raw in (message.additional_kwargs or {}).get("tool_calls") or []:
            if not isinstance(raw, dict):
                continue
            function = raw.get("function")
            name = raw.get("name") or (function.get("name") if isinstance(function, dict) else None)
            args = raw.get("args", {})
            if not args and isinstance(function, dict):
                args = _json_object(function.get("arguments")) or {}
            entry = {"id": raw.get("id"), "name": _name(name), "args": args if isinstance(args, dict) else {}}
            if not _valid_name(name):
                entry["invalid_tool_name"] = True
            out.append(entry)
    for call in invalid:
        if not isinstance(call, dict):
            continue
        entry = {"id": call.get("id"), "name": _name(call.get("name")), "args": {}, "invalid": True,
                 "error": call.get("error")}
        if not _valid_name(call.get("name")):
            entry["invalid_tool_name"] = True
        out.append(entry)
    return out


def placeholder_content(call: dict[str, Any]) -> str:
    if call.get("invalid_tool_name"):
        return EMPTY_NAME
    if call.get("invalid"):
        error = call.get("error")
        detail = error[:MAX_ERROR_DETAIL_CHARS] if isinstance(error, str) and error else ""
        if call.get("name") == "write_file":
            return WRITE_FILE_INVALID.format(details=f" Parser error: {detail}" if detail else "")
        return INVALID.format(error=detail) if detail else INVALID_NO_ERROR
    return INTERRUPTED


def _sanitized(message: BaseMessage) -> BaseMessage:
    """An AI message whose calls are safe to serialize (names, invalid and raw arguments), else itself."""
    if message.type != "ai":
        return message
    update: dict[str, Any] = {}
    calls = getattr(message, "tool_calls", None)
    if calls:
        fixed = [({**c, "name": _name(c.get("name"))} if isinstance(c, dict) else c) for c in calls]
        if any(isinstance(c, dict) and c.get("name") != f.get("name") for c, f in zip(calls, fixed, strict=True)):
            update["tool_calls"] = fixed
    invalid = getattr(message, "invalid_tool_calls", None)
    if invalid:
        fixed_invalid = [({**c, "name": _name(c.get("name")), "args": _json_arguments(c.get("args"))}
                          if isinstance(c, dict) else c) for c in invalid]
        if fixed_invalid != list(invalid):
            update["invalid_tool_calls"] = fixed_invalid
    raw = (message.additional_kwargs or {}).get("tool_calls")
    if isinstance(raw, list):
        fixed_raw, changed = [], False
        for call in raw:
            if not isinstance(call, dict):
                fixed_raw.append(call)
                continue
            call = dict(call)
            function = call.get("function")
            if isinstance(function, dict):
                fixed_function = {**function, "name": _name(function.get("name")),
                                  "arguments": _json_arguments(function.get("arguments"))}
                if fixed_function != function:
                    changed = True
                    call["function"] = fixed_function
            elif call.get("name") != _name(call.get("name")):
                changed = True
                call["name"] = _name(call.get("name"))
            fixed_raw.append(call)
        if changed:
            update["additional_kwargs"] = {**message.additional_kwargs, "tool_calls": fixed_raw}
    return message.model_copy(update=update) if update else message


def _relabel(calls: list[Any], index: int, source: str) -> tuple[list[Any], list[dict[str, Any]], bool]:
    out, claims, changed = [], [], False
    for position, call in enumerate(calls):
        if not isinstance(call, dict) or _valid_id(call.get("id")):
            out.append(call)
            continue
        synthetic = f"{SYNTHETIC_ID_PREFIX}{index}_{source}_{position}"
        out.append({**call, "id": synthetic})
        changed = True
        claims.append({"original": call.get("id"), "synthetic": synthetic, "name": _declared_name(call)})
    return out, claims, changed


def _names_can_pair(call_name: object, result_name: object) -> bool:
    if not _valid_name(call_name) or not _valid_name(result_name):
        return True
    return str(call_name).strip() == str(result_name).strip()


def normalize_call_ids(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """Malformed call ids replaced by synthetic ones, and the results that answer them re-pointed."""
    rewritten: dict[int, BaseMessage] = {}
    open_calls: list[dict[str, Any]] = []
    positional = False
    for index, message in enumerate(messages):
        if message.type == "ai":
            update: dict[str, Any] = {}
            claims: list[dict[str, Any]] = []
            structured = getattr(message, "tool_calls", None) or []
            invalid = getattr(message, "invalid_tool_calls", None) or []
            kwargs = message.additional_kwargs or {}
            sources: list[tuple[str, list[Any], str]] = [("call", list(structured), "tool_calls"),
                                                         ("invalid", list(invalid), "invalid_tool_calls")]
            if not structured and not invalid and isinstance(kwargs.get("tool_calls"), list):
                sources.append(("raw", kwargs["tool_calls"], "additional_kwargs"))
            for source, calls, field in sources:
                relabeled, found, changed = _relabel(calls, index, source)
                claims.extend(found)
                if changed:
                    update[field] = {**kwargs, "tool_calls": relabeled} if field == "additional_kwargs" else relabeled
            open_calls = claims
            later = 0
            for m in messages[index + 1:]:
                if m.type == "ai":
                    break
                if isinstance(m, ToolMessage) and not _valid_id(m.tool_call_id):
                    later += 1
            positional = later == len(claims)
            if update:
                rewritten[index] = message.model_copy(update=update)
            continue
        if not isinstance(message, ToolMessage) or _valid_id(message.tool_call_id):
            continue
        candidates = [k for k, c in enumerate(open_calls)
                      if c["original"] == message.tool_call_id and _names_can_pair(c["name"], message.name)]
        if candidates and (len(candidates) == 1 or positional):
            synthetic = open_calls.pop(candidates[0])["synthetic"]
            rewritten[index] = message.model_copy(update={"tool_call_id": synthetic})
    if not rewritten:
        return list(messages)
    return [rewritten.get(i, m) for i, m in enumerate(messages)]


def head_patch(messages: Sequence[BaseMessage]) -> tuple[list[BaseMessage], list[ToolMessage], list[ToolMessage]] | None:
    """DeerFlow HEAD's patched request, the placeholders it added and the orphans it dropped; None if unchanged."""
    normalized = normalize_call_ids(messages)
    results: dict[str, deque[ToolMessage]] = defaultdict(deque)
    for m in normalized:
        if isinstance(m, ToolMessage):
            results[m.tool_call_id].append(m)
    call_ids = {c.get("id") for m in normalized if m.type == "ai" for c in message_calls(m) if c.get("id")}
    patched: list[BaseMessage] = []
    added: list[ToolMessage] = []
    dropped: list[ToolMessage] = []
    for m in normalized:
        if isinstance(m, ToolMessage):
            if m.tool_call_id not in call_ids:
                dropped.append(m)
            continue  # a paired result is put back after its AI message
        patched.append(_sanitized(m))
        if m.type != "ai":
            continue
        for call in message_calls(m):
            call_id = call.get("id")
            if not call_id:
                continue
            queue = results.get(call_id)
            existing = queue.popleft() if queue else None
            if existing is not None:
                if call.get("invalid_tool_name") and not _valid_name(existing.name):
                    existing = existing.model_copy(update={"name": call["name"]})
                patched.append(existing)
            else:
                placeholder = ToolMessage(content=placeholder_content(call), tool_call_id=call_id,
                                          name=call.get("name", "unknown"), status="error")
                patched.append(placeholder)
                added.append(placeholder)
    if patched == list(messages) and not dropped:
        return None
    return patched, added, dropped


__all__ = ["INTERRUPTED", "head_patch", "message_calls", "normalize_call_ids", "placeholder_content"]
