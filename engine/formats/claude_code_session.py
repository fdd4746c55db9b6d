"""Claude Code session records turned into a Thread (the importer is `claude_code`, sub-agents `claude_code_subagents`).

One record per line. Only `user` and `assistant` records carry a `message` (Anthropic Messages
shape); a response is streamed as several `assistant` records sharing one `message.id`, one content
block each, every one repeating `message.usage`. We merge them into one AIMessage placed where the
first of them was: parallel tool calls interleave with their results
(`AI(x, call A)`, `result A`, `AI(x, call B)`, `result B`), and the model saw `AI(x, A+B)` first.

Order is **file order**, not a walk of the `parentUuid` DAG: parallel tool calls make every
assistant record a fork (the next call and the previous call's result share a parent), so following
one chain back from the last record would drop tool results the model did see.

Message representation (what the token counter then sees):
- assistant: text-only replies are a string; with thinking, a block list of `thinking` and `text`
  blocks (thinking stays in context: Claude Opus 4.5+ keeps earlier thinking). `tool_use` blocks
  become `tool_calls` only, so their arguments are counted once.
- tool results: one ToolMessage per `tool_result` block; text blocks are joined into one string, a
  block list is kept only when it holds images. `is_error` gives status "error".
- a `system` `compact_boundary` plus the `isCompactSummary` user record is a RecordedCompaction,
  not a message. A `microcompact_boundary` (old tool results cleared, history kept) is a
  RecordedEdit in `Thread.edits`. `progress`, snapshots, queue operations and other system records
  are skipped (counted in `extra["skipped_records"]`).
- `attachment` records (Claude Code 2.1.x) that reach the model become human messages: a
  `queued_command` is the user's own mid-turn prompt, text-bearing context (hook output, nested
  CLAUDE.md, mentioned files) a `claude_code_meta` message. Others are counted as skipped.
- `isApiErrorMessage` replies are Claude Code's own error notes, not model output: listed in
  `extra["api_errors"]`, not messages.
- a rewind (a prompt whose parent is an earlier record, not the latest) abandons the branch after
  that record: the model never saw it again, so it is dropped and listed in `extra["rewound"]`.
- old (1.0.x) `summary` records carry only `summary` and `leafUuid`: they give the title.
- hook output Claude Code sent to the model but kept only in the compaction call's file
  (`isMeta` `<system-reminder>` messages) is put back after the tool results it followed.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from engine.formats.claude_code_records import (
    FORMAT,
    Record,
)
from engine.thread.model import RecordedCompaction, RecordedEdit, RecordedUsage, Thread, title_line
from engine.tokens.windows import model_window

SYNTHETIC_MODEL = "<synthetic>"


# -- content -----------------------------------------------------------------------------------
def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def _tool_result_content(content: Any) -> str | list[Any]:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        blocks = [b for b in content if isinstance(b, dict)]
        if all(b.get("type") == "text" for b in blocks):
            return "\n".join(str(b.get("text", "")) for b in blocks)
        return blocks
    return json.dumps(content, ensure_ascii=False)


def _human_content(content: Any) -> str | list[Any]:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        blocks = [b for b in content if isinstance(b, dict)]
        if len(blocks) == 1 and blocks[0].get("type") == "text":
            return str(blocks[0].get("text", ""))
        return blocks
    return "" if content is None else str(content)


def prompt_title(text: str) -> str | None:
    """A picker title from a human turn: the prompt's first line, or `/command args`; None for noise."""
    text = text.strip()
    if text.startswith("<command-name>") or text.startswith("<command-message>"):
        name = _between(text, "<command-name>", "</command-name>")
        args = _between(text, "<command-args>", "</command-args>")
        return title_line(f"{name} {args}") or None
    if not text or text.startswith(("<", "[Request interrupted")):
        return None
    return title_line(text)


def _between(text: str, start: str, end: str) -> str:
    i = text.find(start)
    j = text.find(end, i + len(start))
    return text[i + len(start):j].strip() if i >= 0 and j >= 0 else ""


def _tool_call(block: Record) -> dict[str, Any]:
    args = block.get("input")
    return {
        "name": str(block.get("name", "")),
        "args": args if isinstance(args, dict) else {"input": args},
        "id": str(block.get("id", "")),
        "type": "tool_call",
    }


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _usage(raw: Any) -> RecordedUsage | None:
    if not isinstance(raw, dict):
        return None
    split = raw.get("cache_creation")
    split = split if isinstance(split, dict) else {}
    return RecordedUsage(
        input_tokens=_int_or_none(raw.get("input_tokens")),
        output_tokens=_int_or_none(raw.get("output_tokens")),
        cache_creation_input_tokens=_int_or_none(raw.get("cache_creation_input_tokens")),
        cache_read_input_tokens=_int_or_none(raw.get("cache_read_input_tokens")),
        # the cache writes by TTL (Anthropic's usage.cache_creation)
        cache_creation_5m_tokens=_int_or_none(split.get("ephemeral_5m_input_tokens")),
        cache_creation_1h_tokens=_int_or_none(split.get("ephemeral_1h_input_tokens")),
    )


# -- one pass over the records -----------------------------------------------------------------
@dataclass
class _Reply:
    """An assistant response being merged from its streamed records."""

    message_id: str
    model: str | None
    index: int = 0  # its place in Session.items (rewinds only cut the tail, so it stays right)
    blocks: list[Record] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    usage: RecordedUsage | None = None
    diagnostics: tuple[str, int | None] | None = None  # Anthropic's cache diagnosis of this call, when recorded


@dataclass
class Session:
    """Everything one pass over a session's records collects."""

    items: list[BaseMessage | _Reply] = field(default_factory=list)
    replies: dict[str, _Reply] = field(default_factory=dict)
    compactions: list[RecordedCompaction] = field(default_factory=list)
    pending_boundary: Record | None = None
    tool_names: dict[str, str] = field(default_factory=dict)
    agent_by_call: dict[str, str] = field(default_factory=dict)
    progress_records: dict[str, list[Record]] = field(default_factory=dict)
    sidechain: list[Record] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    session_id: str | None = None
    title: str | None = None  # the first prompt's
    # Claude Code's own title records (reverse-engineered, docs/sessions.md): `/rename` (the last one
    # wins), the generated title (the last one wins), and old `summary` records (the first one).
    custom_title: str | None = None
    ai_title: str | None = None
    summary_title: str | None = None
    todos: list[dict[str, Any]] = field(default_factory=list)
    seen_uuids: set[str] = field(default_factory=set)
    # Messages the model saw that only the compaction call recorded, keyed by their parent record.
    recovered: dict[str, list[Record]] = field(default_factory=dict)
    recovered_count: int = 0
    # Recovered hook messages and attachments, held back until the open tool batch is complete.
    pending: list[HumanMessage] = field(default_factory=list)
    # Where each main-chain record left the message list (len(items) + len(pending)): rewinds cut there.
    positions: dict[str, int] = field(default_factory=dict)
    microcompactions: list[RecordedEdit] = field(default_factory=list)
    api_errors: list[dict[str, Any]] = field(default_factory=list)
    rewound: list[dict[str, Any]] = field(default_factory=list)
    # message id -> the ISO time of the record that brought it (the first streamed record of a reply)
    timestamps: dict[str, str] = field(default_factory=dict)
    # For a followed session (engine.sessions.follow): what changed since the last Thread was built:
    # replies that took more streamed records, and the shortest the item list was cut to (a rewind).
    touched: set[str] = field(default_factory=set)
    cut_to: int | None = None
    inline_sidechains: bool = True


def _flush_recovered(s: Session) -> None:
    """Place held-back messages after the tool results they followed, never inside a tool batch."""
    s.items.extend(s.pending)
    s.pending = []


def _recovered_message(record: Record) -> HumanMessage:
    return HumanMessage(
        content=_human_content(record["message"].get("content")),
        id=str(record["uuid"]),
        additional_kwargs={"claude_code_meta": True, "claude_code_recovered_from": "compaction_call"},
    )


def _compaction(s: Session, boundary: Record, summary: str, message_id: str | None) -> RecordedCompaction:
    meta = boundary.get("compactMetadata")
    meta = meta if isinstance(meta, dict) else {}
    trigger = meta.get("trigger")
    return RecordedCompaction(
        index=len(s.items),
        trigger=trigger if isinstance(trigger, str) else None,
        pre_tokens=_int_or_none(meta.get("preTokens")),
        summary=summary,
        message_id=message_id,
        source="claude_code:compact_boundary",
    )


def _flush_boundary(s: Session) -> None:
    """A boundary with no summary record after it still marks where the history was cut."""
    _flush_recovered(s)
    if s.pending_boundary is not None:
        boundary, s.pending_boundary = s.pending_boundary, None
        s.compactions.append(_compaction(s, boundary, "", str(boundary.get("uuid") or "") or None))


def _add_assistant(s: Session, record: Record, line: int) -> None:
    msg = record["message"]
    if record.get("isApiErrorMessage"):
        status = record.get("apiErrorStatus")
        s.api_errors.append({"index": len(s.items), "id": str(record.get("uuid") or f"line-{line}"),
                             "text": text_of(msg.get("content")), "status": _int_or_none(status)})
        s.skipped["assistant:api_error"] += 1
        return
    message_id = str(msg.get("id") or record.get("uuid") or f"line-{line}")
    reply = s.replies.get(message_id)
    if reply is None:
        _flush_boundary(s)
        reply = _Reply(message_id=message_id, model=msg.get("model") if isinstance(msg.get("model"), str) else None,
                       index=len(s.items))
        s.replies[message_id] = reply
        s.items.append(reply)
        _stamp(s, message_id, record)
    else:
        s.touched.add(message_id)
    content = msg.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    for block in blocks if isinstance(blocks, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_use":
            call = _tool_call(block)
            reply.tool_calls.append(call)
            s.tool_names[call["id"]] = call["name"]
            if call["name"] == "TodoWrite" and isinstance(call["args"].get("todos"), list):
                s.todos = list(call["args"]["todos"])
        else:
            reply.blocks.append(block)
    reply.diagnostics = _better_diagnosis(reply.diagnostics, _diagnosis(msg))
    raw_usage = msg.get("usage")
    if isinstance(raw_usage, dict) and reply.model != SYNTHETIC_MODEL:
        if reply.usage is None:
            reply.usage = _usage(raw_usage)
        else:
            # Input fields repeat on every streamed record; only the last output_tokens is final.
            reply.usage.output_tokens = _int_or_none(raw_usage.get("output_tokens"))


# Anthropic's cache diagnostics (https://platform.claude.com/docs/en/build-with-claude/cache-diagnostics,
# *Response format*), which Claude Code 2.1.251+ writes on every assistant record beside `usage`:
# `diagnostics: null` = compared, no divergence (or a first call); `{"cache_miss_reason": null}` = the
# comparison was still pending; `{"cache_miss_reason": {"type": ..., "cache_missed_input_tokens": N}}`.
_DIAGNOSIS_RANK = {"none": 0, "pending": 1}


def _diagnosis(msg: Record) -> tuple[str, int | None] | None:
    if "diagnostics" not in msg:
        return None
    value = msg["diagnostics"]
    if value is None:
        return ("none", None)
    if not isinstance(value, dict) or "cache_miss_reason" not in value:
        return None
    reason = value["cache_miss_reason"]
    if reason is None:
        return ("pending", None)
    kind = reason.get("type") if isinstance(reason, dict) else None
    if not isinstance(kind, str) or not kind:
        return None
    return (kind, _int_or_none(reason.get("cache_missed_input_tokens")))


def _better_diagnosis(old: tuple[str, int | None] | None,
                      new: tuple[str, int | None] | None) -> tuple[str, int | None] | None:
    """The streamed records of one response repeat its diagnosis: a reason beats pending beats none."""
    if new is None:
        return old
    if old is None:
        return new
    return new if _DIAGNOSIS_RANK.get(new[0], 2) >= _DIAGNOSIS_RANK.get(old[0], 2) else old


def _stamp(s: Session, message_id: str, record: Record) -> None:
    when = record.get("timestamp")
    if isinstance(when, str) and when:
        s.timestamps.setdefault(message_id, when)


def _add_user(s: Session, record: Record, line: int) -> None:
    msg = record["message"]
    uuid = str(record.get("uuid") or f"line-{line}")
    content = msg.get("content")
    if record.get("isCompactSummary"):
        _flush_recovered(s)
        boundary, s.pending_boundary = s.pending_boundary or {}, None
        s.compactions.append(_compaction(s, boundary, text_of(content), uuid))
        return
    blocks = content if isinstance(content, list) else None
    results = [b for b in blocks or [] if isinstance(b, dict) and b.get("type") == "tool_result"]
    result = record.get("toolUseResult")
    for k, block in enumerate(results):
        call_id = str(block.get("tool_use_id", ""))
        result_id = uuid if len(results) == 1 else f"{uuid}:{k}"
        s.items.append(ToolMessage(
            content=_tool_result_content(block.get("content")),
            tool_call_id=call_id,
            name=s.tool_names.get(call_id),
            status="error" if block.get("is_error") else "success",
            id=result_id,
        ))
        _stamp(s, result_id, record)
        agent_id = result.get("agentId") if isinstance(result, dict) else None
        if agent_id is None and not record.get("isSidechain"):
            agent_id = record.get("agentId")  # some 2.0.x records carry it beside toolUseResult
        if isinstance(agent_id, str):
            s.agent_by_call.setdefault(call_id, agent_id)
    if blocks is not None:
        others = [b for b in blocks if not (isinstance(b, dict) and b.get("type") == "tool_result")]
        if not others:
            return
        content = others
    if not results and not record.get("isMeta"):
        _rewind(s, record)
    _flush_boundary(s)
    human_id = uuid if not results else f"{uuid}:text"
    s.items.append(HumanMessage(
        content=_human_content(content),
        id=human_id,
        additional_kwargs={"claude_code_meta": True} if record.get("isMeta") else {},
    ))
    _stamp(s, human_id, record)
    if s.title is None and not record.get("isMeta"):
        s.title = prompt_title(text_of(content))
    if isinstance(record.get("todos"), list) and record["todos"]:
        s.todos = list(record["todos"])


def _rewind(s: Session, prompt: Record) -> None:
    """A prompt whose parent is an earlier record, with messages after it: the user rewound there.

    Claude Code sends the prompt on top of that parent's history, so the branch in between is cut
    (and listed). An unknown parent (not in this file, or a skipped progress record) changes nothing.
    """
    parent = prompt.get("parentUuid")
    at = s.positions.get(parent) if isinstance(parent, str) else None
    _flush_recovered(s)
    last_cut = max((c.index for c in s.compactions), default=0)
    if at is None or at >= len(s.items) or at < last_cut or s.pending_boundary is not None:
        return
    dropped = s.items[at:]
    del s.items[at:]
    s.cut_to = at if s.cut_to is None else min(s.cut_to, at)
    for item in dropped:
        if isinstance(item, _Reply):
            s.replies.pop(item.message_id, None)
    s.rewound.append({"index": at, "messages": len(dropped), "prompt": str(prompt.get("uuid"))})


# Attachments whose text Claude Code sends to the model (as a system reminder on a user turn). Since
# 2.1.x the skill listing, the deferred (ToolSearch) tools, MCP servers' instructions and the sub-agent
# listing arrive this way too, instead of in the system prompt: their payload's text is counted where it
# was sent (a lower bound of the rendered reminder; the calibration measures the rest). Their category:
# engine.thread.kinds (memory files and skills: memory; the rest: reminders).
CONTEXT_ATTACHMENTS = frozenset({
    "hook_additional_context", "nested_memory", "file", "directory", "edited_text_file",
    "selected_lines_in_ide", "critical_system_reminder", "skill_listing", "invoked_skills",
    "deferred_tools_delta", "mcp_instructions_delta", "agent_listing_delta", "todo_reminder", "task_reminder",
})
# Payload keys of the listing attachments (names or text blocks added since the last listing).
_LISTING_KEYS = ("addedBlocks", "addedLines", "addedNames", "skills")


def _attachment_text(value: Any) -> str:
    """The text inside an attachment's payload: a string, a list of them, or a nested `content`/`file`."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(t for t in (_attachment_text(v) for v in value) if t)
    if isinstance(value, dict):
        for key in ("text", "content", "file", "snippet", "body", *_LISTING_KEYS):
            text = _attachment_text(value.get(key))
            if text:
                return text
    return ""


def _add_attachment(s: Session, record: Record, line: int) -> None:
    attachment = record.get("attachment")
    kind = attachment.get("type") if isinstance(attachment, dict) else None
    uuid = str(record.get("uuid") or f"line-{line}")
    meta = {"claude_code_attachment": kind}
    if kind == "queued_command" and attachment is not None and attachment.get("prompt"):
        # A prompt the user typed while the model worked: delivered with the next request.
        s.pending.append(HumanMessage(content=_human_content(attachment["prompt"]), id=uuid, additional_kwargs=meta))
        return
    text = _attachment_text(attachment) if kind in CONTEXT_ATTACHMENTS and attachment else ""
    if not text.strip():
        s.skipped[f"attachment:{kind}" if isinstance(kind, str) else "attachment"] += 1
        return
    s.pending.append(HumanMessage(content=text, id=uuid, additional_kwargs={"claude_code_meta": True, **meta}))


# What microcompact leaves in place of each cleared tool result's content (Claude Code's
# src/services/compact/microCompact.ts, as described by projects that study its source).
CLEARED_TOOL_RESULT = "[Old tool result content cleared]"


def _add_microcompaction(s: Session, record: Record) -> None:
    """Old tool results cleared in place (history kept): listed, since the messages stay the same."""
    meta = record.get("microcompactMetadata")
    meta = meta if isinstance(meta, dict) else record.get("compactMetadata")
    meta = meta if isinstance(meta, dict) else {}
    cleared = meta.get("compactedToolIds")
    s.microcompactions.append(RecordedEdit(
        index=len(s.items),
        kind="clear_tool_results",
        trigger=meta.get("trigger") if isinstance(meta.get("trigger"), str) else None,
        pre_tokens=_int_or_none(meta.get("preTokens")),
        tokens_saved=_int_or_none(meta.get("tokensSaved")),
        tool_call_ids=[str(c) for c in cleared] if isinstance(cleared, list) else [],
        placeholder=CLEARED_TOOL_RESULT,
        message_id=str(record["uuid"]) if isinstance(record.get("uuid"), str) else None,
        source="claude_code:microcompact_boundary",
    ))


def _add_progress(s: Session, record: Record) -> None:
    data = record.get("data")
    call_id = record.get("parentToolUseID")
    if not (isinstance(data, dict) and data.get("type") == "agent_progress" and isinstance(call_id, str)):
        return
    if isinstance(data.get("agentId"), str):
        s.agent_by_call.setdefault(call_id, data["agentId"])
    inner = data.get("message")
    if isinstance(inner, dict) and isinstance(inner.get("message"), dict):
        s.progress_records.setdefault(call_id, []).append(inner)


def new_session(*, inline_sidechains: bool = True, recovered: dict[str, list[Record]] | None = None,
                ignored_progress: int = 0) -> Session:
    """An empty scan state (see `scan`)."""
    s = Session(recovered=dict(recovered or {}), inline_sidechains=inline_sidechains)
    if ignored_progress:
        s.skipped["progress"] += ignored_progress
    return s


def feed(s: Session, rows: list[tuple[int, Record]]) -> None:
    """Go on with the scan over more records (a followed session's new lines)."""
    inline_sidechains = s.inline_sidechains
    for line, record in rows:
        rtype = record.get("type")
        if s.session_id is None and isinstance(record.get("sessionId"), str):
            s.session_id = record["sessionId"]
        uuid = record.get("uuid")
        if isinstance(uuid, str):
            if uuid in s.seen_uuids:
                s.skipped["duplicate"] += 1
                continue
            s.seen_uuids.add(uuid)
        has_message = isinstance(record.get("message"), dict)
        if rtype == "summary" and isinstance(record.get("summary"), str):
            s.summary_title = s.summary_title or title_line(record["summary"]) or None
        elif rtype == "custom-title" and isinstance(record.get("customTitle"), str):
            s.custom_title = title_line(record["customTitle"]) or s.custom_title
        elif rtype == "ai-title" and isinstance(record.get("aiTitle"), str):
            s.ai_title = title_line(record["aiTitle"]) or s.ai_title
        elif rtype == "progress":
            _add_progress(s, record)
            s.skipped[rtype] += 1
        elif rtype == "system" and record.get("subtype") == "compact_boundary":
            _flush_boundary(s)
            s.pending_boundary = record
        elif rtype == "system" and record.get("subtype") == "microcompact_boundary":
            _add_microcompaction(s, record)
        elif inline_sidechains and record.get("isSidechain") and (has_message or rtype == "attachment"):
            s.sidechain.append(record)
            continue
        elif rtype == "attachment":
            _add_attachment(s, record, line)
        elif rtype not in ("user", "assistant") or not has_message:
            subtype = record.get("subtype")
            s.skipped[f"{rtype}:{subtype}" if rtype == "system" and isinstance(subtype, str) else str(rtype)] += 1
        elif rtype == "assistant":
            _add_assistant(s, record, line)
        else:
            _add_user(s, record, line)
        if isinstance(uuid, str) and uuid in s.recovered:
            s.pending.extend(_recovered_message(r) for r in s.recovered.pop(uuid) if r.get("uuid") not in s.seen_uuids)
        if isinstance(uuid, str):
            s.positions[uuid] = len(s.items) + len(s.pending)


def finish(s: Session) -> Session:
    """The end of the file: a boundary with no summary still cuts, held-back messages take their place."""
    _flush_boundary(s)
    s.recovered_count = sum(1 for m in s.items if isinstance(m, HumanMessage)
                            and m.additional_kwargs.get("claude_code_recovered_from") == "compaction_call")
    return s


def scan(
    rows: list[tuple[int, Record]],
    *,
    inline_sidechains: bool = True,
    recovered: dict[str, list[Record]] | None = None,
    ignored_progress: int = 0,
) -> Session:
    """One pass over the records.

    `inline_sidechains` sets apart `isSidechain` records (older Claude Code wrote sub-agents inline);
    `recovered` maps a record uuid to messages that followed it but were kept elsewhere.
    """
    s = new_session(inline_sidechains=inline_sidechains, recovered=recovered, ignored_progress=ignored_progress)
    feed(s, rows)
    return finish(s)


def _ai_message(reply: _Reply) -> AIMessage:
    content: str | list[str | dict[Any, Any]]
    if all(b.get("type") == "text" for b in reply.blocks):
        content = "".join(str(b.get("text", "")) for b in reply.blocks)
    else:
        content = list(reply.blocks)
    metadata: dict[str, Any] = {"model": reply.model} if reply.model else {}
    return AIMessage(content=content, tool_calls=reply.tool_calls, id=reply.message_id, response_metadata=metadata)


def _window(model: str | None, usage: dict[str, RecordedUsage], extra: dict[str, Any]) -> int | None:
    """Claude Code records no window: the model table gives the one Claude Code runs the model in
    (200k for Opus/Sonnet 4.x unless "[1m]"). The transcript drops the "[1m]" marker, so a session
    whose recorded input went past that window ran the model's larger API window."""
    window = model_window(model, agent="claude_code")
    api = model_window(model)
    largest = max((u.context_tokens or 0 for u in usage.values()), default=0)
    if window is not None and api is not None and largest > window and api > window:
        extra["window_source"] = f"recorded input ({largest:,}) above Claude Code's default {window:,}"
        return api
    return window


def to_thread(s: Session, thread_id: str) -> Thread:
    messages: list[BaseMessage] = []
    usage: dict[str, RecordedUsage] = {}
    model: str | None = None
    for item in s.items:
        if isinstance(item, _Reply):
            messages.append(_ai_message(item))
            if item.usage is not None:
                usage[item.message_id] = item.usage
                item.usage.timestamp = s.timestamps.get(item.message_id)
                item.usage.model = item.model
                if item.diagnostics is not None:
                    item.usage.cache_miss_reason, item.usage.cache_missed_input_tokens = item.diagnostics
            if model is None and item.model and item.model != SYNTHETIC_MODEL:
                model = item.model
        else:
            messages.append(item)
    extra: dict[str, Any] = {"skipped_records": dict(sorted(s.skipped.items()))}
    if s.skipped.get("duplicate"):  # how many distinct records the copies repeat (engine.views.threads.load_notes)
        extra["unique_records"] = len(s.seen_uuids)
    if s.recovered_count:
        extra["recovered_hook_messages"] = s.recovered_count
    for key, value in (("api_errors", s.api_errors), ("rewound", s.rewound)):
        if value:
            extra[key] = value
    window = _window(model, usage, extra)
    return Thread(
        thread_id=thread_id,
        messages=messages,
        source_format=FORMAT,
        model=model,
        max_input_tokens=window,
        todos=s.todos,
        usage=usage,
        compactions=s.compactions,
        edits=s.microcompactions,
        timestamps={m.id: s.timestamps[m.id] for m in messages if m.id in s.timestamps},
        title=s.custom_title or s.ai_title or s.summary_title or s.title,
        extra=extra,
    )


def records_to_thread(records: list[Record], thread_id: str) -> Thread:
    """A sub-agent run (its own file, progress records or inline sidechain records) as a Thread."""
    return to_thread(scan(list(enumerate(records, start=1)), inline_sidechains=False), thread_id)
