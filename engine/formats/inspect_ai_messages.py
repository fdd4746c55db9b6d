"""Inspect AI chat messages (`inspect_ai/model/_chat_message.py`) as LangChain messages.

`ChatMessageSystem|User|Assistant|Tool` carry `content` as a string or a list of content objects
(`inspect_ai/_util/content.py`): `text`, `reasoning` (with `redacted` for encrypted thinking),
`image`, `audio`, `video`, `document`, `data` and `tool_use` (server-side tools). An assistant's
`tool_calls` are `{id, function, arguments, parse_error?}`; a tool message has `tool_call_id`,
`function` and `error {type, message}`. Older logs kept reasoning in an assistant `reasoning` string
or a leading `<think>` block, which Inspect's own validator moves into a reasoning content item
(`ChatMessageAssistant.extract_reasoning`); we do the same.

Long strings are stored once per sample in `attachments` and referenced as `attachment://<hash>`
(`inspect_ai/log/_condense.py`); they are resolved here, everywhere in a message.
"""

from __future__ import annotations

import json
import re
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.tool import tool_call

from engine.formats.inspect_ai_log import FORMAT
from engine.formats.jsonshape import Where, json_type
from engine.thread.model import stable_id

ATTACHMENT = "attachment://"
ROLES = ("system", "user", "assistant", "tool")
# Inspect's summary compaction writes this user message (model/_compaction/summary.py).
SUMMARY_PREFIX = "[CONTEXT COMPACTION SUMMARY]"
# `<think>` at the start of an assistant string (model/_reasoning.py, parse_content_with_reasoning).
THINK = re.compile(r"^\s*<think(?:\s[^>]*)?>(?P<reasoning>.*?)</think>\s*(?P<rest>.*)$", re.DOTALL)


class Attachments:
    """Resolves `attachment://<hash>` references against a sample's `attachments` table."""

    def __init__(self, table: Any) -> None:
        self.table: dict[str, Any] = table if isinstance(table, dict) else {}

    def __call__(self, value: Any) -> Any:
        if isinstance(value, str):
            if value.startswith(ATTACHMENT):
                found = self.table.get(value[len(ATTACHMENT):])
                return found if isinstance(found, str) else value
            return value
        if isinstance(value, list):
            return [self(v) for v in value]
        if isinstance(value, dict):
            return {k: self(v) for k, v in value.items()}
        return value


def is_summary(raw: dict[str, Any]) -> bool:
    """The user message CompactionSummary appends: metadata `summary: true` (or, older, its text prefix)."""
    if raw.get("role") != "user":
        return False
    meta = raw.get("metadata")
    if isinstance(meta, dict) and meta.get("summary") is True:
        return True
    content = raw.get("content")
    text = content if isinstance(content, str) else _text_of(content)
    return text.startswith(SUMMARY_PREFIX)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(c.get("text", "")) for c in content if isinstance(c, dict) and c.get("type") == "text")
    return ""


def fingerprint(raw: dict[str, Any]) -> str:
    """What identifies a message when ids differ (pool dedup drops them, old logs have none)."""
    calls = raw.get("tool_calls")
    call_ids = [c.get("id") for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []
    return json.dumps([raw.get("role"), _text_of(raw.get("content")), call_ids, raw.get("tool_call_id")],
                      sort_keys=True, default=str)


def _block(part: Any, where: Where, at: str) -> dict[str, Any]:
    part = where.want_dict(part, at, "a content object")
    ptype = part.get("type")
    if not isinstance(ptype, str):
        where.fail(f"{at}.type", f"content needs a string 'type', got {json_type(ptype)}")
    if ptype == "text":
        return {"type": "text", "text": where.want_text(part.get("text"), f"{at}.text")}
    if ptype == "reasoning":
        text = where.want_text(part.get("reasoning"), f"{at}.reasoning")
        if part.get("redacted") is True:
            # Encrypted thinking: sent back to the provider, but its size cannot be read.
            return {"type": "redacted_thinking", "data": text}
        return {"type": "reasoning", "reasoning": text}
    if ptype == "image":
        return {"type": "image_url", "image_url": {"url": where.want_text(part.get("image"), f"{at}.image")}}
    if ptype in ("audio", "video", "document"):
        return {"type": "file", "inspect_type": ptype, **{k: v for k, v in part.items() if k != "type"}}
    return dict(part)  # data, tool_use and newer types: counted as their JSON text


def content_of(raw: dict[str, Any], where: Where, at: str) -> str | list[Any]:
    content = raw.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = where.want_list(content, f"{at}.content", "a string or a list of content objects")
    blocks = [_block(p, where, f"{at}.content[{j}]") for j, p in enumerate(parts)]
    if all(b["type"] == "text" for b in blocks):
        return "\n".join(b["text"] for b in blocks)
    return blocks


def _assistant_content(raw: dict[str, Any], where: Where, at: str) -> str | list[Any]:
    content = content_of(raw, where, at)
    reasoning = raw.get("reasoning")
    if isinstance(content, str) and (match := THINK.match(content)):
        reasoning, content = match["reasoning"], match["rest"]
    if isinstance(reasoning, str):
        head: list[Any] = [{"type": "reasoning", "reasoning": reasoning}]
        return head + ([{"type": "text", "text": content}] if isinstance(content, str) and content else
                       [] if isinstance(content, str) else content)
    return content


def _tool_calls(raw: dict[str, Any], where: Where, at: str) -> list[Any]:
    calls = raw.get("tool_calls")
    if calls is None:
        return []
    out = []
    for k, call in enumerate(where.want_list(calls, f"{at}.tool_calls")):
        cat = f"{at}.tool_calls[{k}]"
        call = where.want_dict(call, cat, "a tool call object")
        name = where.want_text(call.get("function"), f"{cat}.function")
        call_id = where.want_text(call.get("id"), f"{cat}.id")
        args = call.get("arguments")
        if args is None:
            args = {}
        if not isinstance(args, dict):
            where.fail(f"{cat}.arguments", f"expected an object, got {json_type(args)}")
        out.append(tool_call(name=name, args=args, id=call_id))
    return out


def to_message(raw: Any, where: Where, at: str, position: int, prefix: str = FORMAT) -> BaseMessage:
    """One Inspect chat message as a LangChain message with a stable id."""
    raw = where.want_dict(raw, at, "a chat message object")
    role = raw.get("role")
    if not isinstance(role, str):
        where.fail(f"{at}.role", f"expected a role string, got {json_type(role)}")
    if role not in ROLES:
        where.fail(f"{at}.role", f"unknown role {role!r}; expected one of {', '.join(ROLES)}")
    msg_id = raw.get("id")
    if msg_id is not None and not isinstance(msg_id, str):
        where.fail(f"{at}.id", f"expected a string, got {json_type(msg_id)}")
    mid = msg_id or stable_id(prefix, position, fingerprint(raw))
    if role == "system":
        return SystemMessage(content=content_of(raw, where, at), id=mid)
    if role == "user":
        return HumanMessage(content=content_of(raw, where, at), id=mid)
    if role == "assistant":
        model = raw.get("model")
        meta = {"model": model} if isinstance(model, str) and model else {}
        return AIMessage(content=_assistant_content(raw, where, at), tool_calls=_tool_calls(raw, where, at),
                         id=mid, response_metadata=meta)
    call_id = where.want_text(raw.get("tool_call_id"), f"{at}.tool_call_id")
    name = raw.get("function")
    error = raw.get("error")
    legacy_error = raw.get("tool_error")  # pre-0.3.50 logs kept the error text here
    failed = isinstance(error, dict) or isinstance(legacy_error, str)
    content = content_of(raw, where, at)
    if failed and not content:
        # Inspect's providers send the error text in place of an empty result ("Error: ..."; model/_openai.py).
        message = error.get("message") if isinstance(error, dict) else legacy_error
        content = f"Error: {message}" if isinstance(message, str) else "Error"
    return ToolMessage(content=content, tool_call_id=call_id, name=name if isinstance(name, str) else None,
                       status="error" if failed else "success", id=mid)
