"""Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl`), old and new.

Shapes (openai/codex, `codex-rs/protocol/src/protocol.rs`, `codex-rs/core/src/rollout/`):
- since mid 2025 every line is `{timestamp, type, payload}` (`RolloutLine`), type one of
  `session_meta`, `response_item` (a Responses item), `event_msg`, `turn_context`, `compacted`;
- before that the first line was the bare session `{id, timestamp, instructions?, git?}`, then bare
  Responses items, and `{"record_type": "state", ...}` snapshots (`codex-rs/core/src/rollout.rs`).

One model call is one AIMessage: the reasoning, assistant text and tool calls it produced, merged.
Codex writes a `turn_context` before every sampling request (`try_run_turn`) and a `token_count`
event when the response completes (`update_token_usage_info` on `ResponseEvent::Completed`); so
both close a call. Where that event sits moved between versions: 0.39 recorded a call's items only
after running its tools, so its `token_count` comes *before* the items (and tool outputs interleave
with the calls); later versions record items as they stream, so it comes *after* them. Which one a
file uses is read from its first `token_count` (see `_Scan.token_count`). Very old files have
neither event and ran one tool call per request (`parallel_tool_calls: false`), so a tool output
closes the call there. `event_msg` `user_message` / `agent_message` repeat response items and are
skipped; so is every other event, except the ones below.

Recorded: usage per call from `token_count.info.last_token_usage` (its `input_tokens` includes
`cached_input_tokens`; split per engine.thread.model.RecordedUsage), `model_context_window` as the window,
`compacted` lines as RecordedCompaction (codex_compaction.py), `thread_rolled_back` as a rollback
(the last N user turns dropped, as `replay.rs` does), base instructions as the system prompt.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from engine.base.errors import ThreadNotFoundError
from engine.formats import codex_compaction as compaction
from engine.formats.codex_items import (
    CALL_ITEMS,
    FORMAT,
    NOT_SENT,
    OUTPUT_RESULTS,
    fallback_id,
    input_message,
    is_output,
    item_key,
    loc,
    message_text,
    opaque_message,
    prompt_text,
    tool_result,
)
from engine.formats.codex_turn import Call, build_ai, call_id_of, call_name
from engine.formats.jsonl_lines import head_lines, read_lines
from engine.formats.jsonshape import Where, json_type, unique_ids
from engine.formats.source import Source, ThreadRef
from engine.thread.model import RecordedCompaction, RecordedUsage, Thread, title_line

ROLLOUT_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
LEGACY_META_KEYS = frozenset({"id", "timestamp", "instructions", "git"})
INPUT_ITEMS = OUTPUT_RESULTS | {"message", "agent_message", "compaction", "compaction_summary"}
SNIFF_LINES = 20
# compact.rs: "Trimmed {n} older conversation item(s) before compacting so the prompt fits ..."
TRIMMED = re.compile(r"Trimmed (\d+) older conversation item")


@dataclass
class _Scan:
    """One pass over a rollout's lines."""

    where: Where
    messages: list[BaseMessage] = field(default_factory=list)
    # Keyed by message only once ids are final (unique_ids may rename a repeated item id).
    usage: list[tuple[BaseMessage, RecordedUsage]] = field(default_factory=list)
    compactions: list[RecordedCompaction] = field(default_factory=list)
    call: Call | None = None
    call_names: dict[str, str] = field(default_factory=dict)
    # The history Codex would send next, as (item key, message, items in it): what a compaction keeps.
    live: compaction.Live = field(default_factory=list)
    # Where a token_count sits relative to its call's items ("before" in 0.39, "after" later).
    usage_order: str | None = None
    pending_usage: RecordedUsage | None = None
    last_total: Any = None
    last_usage: RecordedUsage | None = None
    unpaired_usage: int = 0
    model: str | None = None
    first_model: str | None = None
    window: int | None = None
    base_instructions: str | None = None
    session: dict[str, Any] = field(default_factory=dict)
    session_records: int = 0
    legacy: bool = False
    todos: list[dict[str, Any]] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    rolled_back: list[dict[str, Any]] = field(default_factory=list)
    encrypted_reasoning: int = 0

    def add(self, key: tuple[str, str], message: BaseMessage, items: int = 1) -> None:
        self.messages.append(message)
        self.live.append((key, message, items))

    # -- model calls ------------------------------------------------------------------------
    def close(self) -> None:
        call, self.call = self.call, None
        if call is None:
            return
        message, encrypted = build_ai(call, self.where)
        self.encrypted_reasoning += encrypted
        self.add(call.key(), message, len(call.items))
        if call.usage is not None:
            self.usage.append((message, call.usage))
        for tc in message.tool_calls:
            if tc["name"] == "update_plan" and isinstance(tc["args"].get("plan"), list):
                self.todos = [{"content": str(p.get("step", "")), "status": str(p.get("status", ""))}
                              for p in tc["args"]["plan"] if isinstance(p, dict)]
        for key, result in call.results:
            self.add(key, result)

    def output_item(self, item: dict[str, Any], line: int, location: str) -> None:
        if self.call is None:
            self.call = Call(model=self.model)
            if self.usage_order == "before" and self.pending_usage is not None:
                self.call.usage, self.pending_usage = self.pending_usage, None
        self.call.items.append((item, line, location))
        if item.get("type") in CALL_ITEMS:
            call_id = call_id_of(item, self.where, location)
            if call_id is not None:
                self.call_names[call_id] = call_name(item, self.where, location)

    def token_count(self, payload: dict[str, Any], line: int, timestamp: str | None) -> None:
        info = payload.get("info")
        if info is None:
            return  # a rate-limit update before any usage is known
        info = self.where.want_dict(info, loc(line, "$.payload.info"))
        window = self.where.want_int(info.get("model_context_window"), loc(line, "$.payload.info.model_context_window"))
        if window:
            self.window = window
        last = info.get("last_token_usage")
        if last is None:
            return
        last = self.where.want_dict(last, loc(line, "$.payload.info.last_token_usage"))
        total = info.get("total_token_usage")
        if total is not None and total == self.last_total:
            self.skipped["event_msg:token_count (repeated)"] += 1
            return  # re-sent with new rate limits, no new call
        self.last_total = total
        recorded = _usage(last, self.where, loc(line, "$.payload.info.last_token_usage"), timestamp, self.model)
        self.last_usage = recorded
        if self.usage_order is None:
            self.usage_order = "after" if self.call is not None else "before"
        if self.usage_order == "after":
            if self.call is not None and self.call.usage is None:
                self.call.usage = recorded
                self.close()
            else:
                self.unpaired_usage += 1  # a call that left no items (a compaction's summary call)
        else:
            self.close()
            if self.pending_usage is not None:
                self.unpaired_usage += 1
            self.pending_usage = recorded

    # -- everything else --------------------------------------------------------------------
    def input_item(self, item: dict[str, Any], line: int, location: str) -> None:
        itype = item.get("type")
        msg_id = item["id"] if isinstance(item.get("id"), str) and item["id"] else fallback_id(line, item)
        message: BaseMessage
        if itype in OUTPUT_RESULTS:
            # 0.39 wrote each tool output right after its call, inside the call (module docstring).
            if self.usage_order != "before":
                self.close()
            call_id = item.get("call_id")
            name = self.call_names.get(call_id) if isinstance(call_id, str) else None
            message = tool_result(item, msg_id, name, self.where, location)
            if self.call is not None:
                self.call.results.append((item_key(item), message))
                return
        else:
            self.close()
            if itype in ("message", "agent_message"):
                message = input_message(item, msg_id, self.where, location)
            else:
                message = opaque_message(item, msg_id)
        self.add(item_key(item), message)

    def response_item(self, item: dict[str, Any], line: int, location: str) -> None:
        itype = item.get("type")
        if itype is None and isinstance(item.get("role"), str):
            item = {**item, "type": "message"}  # some early items carried only a role
            itype = "message"
        if not isinstance(itype, str):
            self.where.fail(f"{location}.type", f"expected an item type string, got {json_type(itype)}")
        if itype in NOT_SENT:
            self.skipped[f"response_item:{itype}"] += 1
        elif is_output(item):
            self.output_item(item, line, location)
        elif itype in INPUT_ITEMS:
            self.input_item(item, line, location)
        else:
            self.skipped[f"response_item:{itype}"] += 1

    def event(self, payload: dict[str, Any], line: int, timestamp: str | None) -> None:
        etype = payload.get("type")
        if etype == "token_count":
            self.token_count(payload, line, timestamp)
            return
        if etype == "task_started":
            window = payload.get("model_context_window")
            if isinstance(window, int) and not isinstance(window, bool) and window > 0:
                self.window = window
        elif etype == "thread_rolled_back":
            self.close()
            self.rollback(self.where.want_int(payload.get("num_turns"), loc(line, "$.payload.num_turns")) or 0, line)
            return
        elif etype in ("background_event", "warning") and isinstance(payload.get("message"), str):
            found = TRIMMED.search(payload["message"])
            if found:
                self.close()
                self.compactions.append(compaction.trimmed(self, int(found.group(1))))
                return
        self.skipped[f"event_msg:{etype}" if isinstance(etype, str) else "event_msg"] += 1

    def rollback(self, turns: int, line: int) -> None:
        """Drop the last `turns` user turns, as Codex's replay does (`drop_last_n_user_turns`)."""
        floor = max((c.index for c in self.compactions), default=0)
        starts = [i for i, m in enumerate(self.messages) if i >= floor and compaction.is_user_turn(m)]
        if turns <= 0 or not starts:
            return
        cut = starts[0] if turns >= len(starts) else starts[-turns]
        dropped = self.messages[cut:]
        del self.messages[cut:]
        gone = {id(m) for m in dropped}
        self.live = [entry for entry in self.live if id(entry[1]) not in gone]
        self.usage = [(m, u) for m, u in self.usage if id(m) not in gone]
        self.rolled_back.append({"index": cut, "messages": len(dropped), "turns": turns, "line": line})

    def turn_context(self, payload: dict[str, Any]) -> None:
        self.close()
        if isinstance(payload.get("model"), str) and payload["model"]:
            self.model = payload["model"]
            self.first_model = self.first_model or self.model
        base = payload.get("base_instructions")
        if isinstance(base, str) and base and self.base_instructions is None:
            self.base_instructions = base

    def session_meta(self, payload: dict[str, Any]) -> None:
        self.session_records += 1
        if self.session_records > 1:
            return  # forks and sub-agents copy their parent's meta after their own
        self.session = payload
        base = payload.get("base_instructions")
        text = base.get("text") if isinstance(base, dict) else base
        if isinstance(text, str) and text:
            self.base_instructions = text


def _usage(raw: dict[str, Any], where: Where, base: str, timestamp: str | None, model: str | None) -> RecordedUsage:
    """Codex's TokenUsage: `input_tokens` includes `cached_input_tokens` (protocol.rs `non_cached_input`)."""
    prompt = where.want_int(raw.get("input_tokens"), f"{base}.input_tokens")
    cached = where.want_int(raw.get("cached_input_tokens"), f"{base}.cached_input_tokens")
    written = where.want_int(raw.get("cache_write_input_tokens"), f"{base}.cache_write_input_tokens")
    usage = RecordedUsage(
        input_tokens=prompt,
        output_tokens=where.want_int(raw.get("output_tokens"), f"{base}.output_tokens"),
        reasoning_tokens=where.want_int(raw.get("reasoning_output_tokens"), f"{base}.reasoning_output_tokens"),
        timestamp=timestamp,
        model=model,
    )
    if prompt is not None and (cached or written) and (cached or 0) + (written or 0) <= prompt:
        usage.input_tokens = prompt - (cached or 0) - (written or 0)
        usage.cache_read_input_tokens = cached
        usage.cache_creation_input_tokens = written if written else None
    return usage


# -- reading lines -----------------------------------------------------------------------------
def is_rollout_line(value: Any) -> bool:
    return (isinstance(value, dict) and isinstance(value.get("type"), str) and value["type"] in ROLLOUT_TYPES
            and "payload" in value)


def is_legacy_meta(value: Any) -> bool:
    return (isinstance(value, dict) and isinstance(value.get("id"), str) and isinstance(value.get("timestamp"), str)
            and set(value) <= LEGACY_META_KEYS)


def _is_bare_item(value: Any) -> bool:
    return isinstance(value, dict) and (value.get("record_type") == "state" or (
        isinstance(value.get("type"), str) and (value["type"] in OUTPUT_RESULTS or is_output(value)
                                                 or value["type"] == "message" and isinstance(value.get("role"), str))))


def _timestamp(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def scan(source: Source) -> tuple[_Scan, int | None]:
    lines = read_lines(source, FORMAT)
    return scan_rows(lines.rows, source), lines.unfinished


def scan_rows(rows: list[tuple[int, dict[str, Any]]], source: Source) -> _Scan:
    """One pass over parsed rollout lines (a followed session keeps its parsed lines and scans them again)."""
    where = Where(source.label, FORMAT)
    s = _Scan(where)
    for k, (line, record) in enumerate(rows):
        if k == 0 and is_legacy_meta(record):
            s.legacy = True
            s.session_meta(record)
            continue
        rtype = record.get("type")
        if isinstance(rtype, str) and rtype in ROLLOUT_TYPES and not s.legacy:
            if "payload" not in record:
                where.fail(loc(line, "$.payload"), f"a {rtype!r} line needs a payload object")
            payload = where.want_dict(record["payload"], loc(line, "$.payload"))
            base, timestamp = "$.payload", _timestamp(record.get("timestamp"))
        elif not s.legacy and isinstance(rtype, str) and "payload" in record:
            s.skipped[rtype] += 1  # a newer line kind (world_state, ...) that holds no message
            continue
        elif record.get("record_type") == "state":
            s.skipped["state"] += 1
            continue
        else:
            rtype, payload, base, timestamp = "response_item", record, "$", None
        if rtype == "response_item":
            s.response_item(payload, line, loc(line, base))
        elif rtype == "event_msg":
            s.event(payload, line, timestamp)
        elif rtype == "turn_context":
            s.turn_context(payload)
        elif rtype == "compacted":
            s.close()
            s.compactions.append(compaction.compacted(s, payload, line))
        else:
            s.session_meta(payload)
    s.close()
    return s


def _title(messages: list[BaseMessage]) -> str | None:
    for m in messages:
        if isinstance(m, HumanMessage) and not m.additional_kwargs:
            text = prompt_text(message_text(m.content))
            if text:
                return title_line(text)
    return None


def _tools(session: dict[str, Any]) -> list[dict[str, Any]]:
    """Tools the session meta lists (`dynamic_tools`); Codex's built-in tool schemas are not recorded."""
    raw = session.get("dynamic_tools")
    raw = raw.get("tools") if isinstance(raw, dict) else raw
    tools: list[dict[str, Any]] = []
    for tool in raw if isinstance(raw, list) else []:
        if isinstance(tool, dict) and isinstance(tool.get("name"), str):
            params = tool.get("parameters", tool.get("inputSchema"))
            tools.append({"name": tool["name"], "description": str(tool.get("description") or ""),
                          "parameters": params if isinstance(params, dict) else {}})
    return tools


def to_thread(s: _Scan, source: Source) -> Thread:
    messages = s.messages
    system_prompt = s.base_instructions
    instructions = s.session.get("instructions")
    if system_prompt is None and isinstance(instructions, str) and instructions.strip():
        # Sent as part of the `instructions` field unless Codex also put it in a user message.
        if not any(isinstance(m, HumanMessage) and instructions.strip() in message_text(m.content) for m in messages):
            system_prompt = instructions
    if system_prompt:
        messages.insert(0, SystemMessage(content=system_prompt, id=fallback_id(0, system_prompt, ":instructions"),
                                         additional_kwargs={"codex_instructions": True}))
        for c in s.compactions:
            c.index += 1
        for r in s.rolled_back:
            r["index"] += 1
    unique_ids(messages)
    leading = []
    for m in messages:
        if not isinstance(m, SystemMessage):
            break
        leading.append(message_text(m.content))
    tid = s.session.get("id")
    extra: dict[str, Any] = {"skipped_records": dict(sorted(s.skipped.items()))}
    for key in ("cli_version", "originator", "cwd", "model_provider"):
        if isinstance(s.session.get(key), str):
            extra[key] = s.session[key]
    if s.usage_order:
        extra["token_count_order"] = s.usage_order
    for key, value in (("unpaired_token_counts", s.unpaired_usage), ("session_meta_records", s.session_records),
                       ("encrypted_reasoning_items", s.encrypted_reasoning), ("rolled_back", s.rolled_back)):
        if value:
            extra[key] = value
    if s.legacy:
        extra["rollout_version"] = "legacy (bare items, no envelope)"
    return Thread(
        thread_id=tid if isinstance(tid, str) and tid else Path(source.label).stem,
        messages=messages,
        source_format=FORMAT,
        model=s.first_model,
        max_input_tokens=s.window,
        system_prompt="\n\n".join(leading) if leading else None,
        tools=_tools(s.session),
        todos=s.todos,
        usage={m.id: u for m, u in s.usage if m.id is not None},
        compactions=s.compactions,
        title=_title(messages),
        extra=extra,
    )


def thread_from_rows(rows: list[tuple[int, dict[str, Any]]], source: Source) -> Thread:
    """The thread of parsed rollout lines (engine.sessions.follow: a rollout followed as it grows)."""
    return to_thread(scan_rows(rows, source), source)


class _CodexImporter:
    name = FORMAT

    def sniff(self, source: Source) -> bool:
        if source.is_sqlite() or source.data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] != b"{":
            return False
        head = head_lines(source, SNIFF_LINES)
        if any(is_rollout_line(v) for v in head):
            return True
        # The old format: a bare session line, then bare Responses items or state lines.
        if head and is_legacy_meta(head[0]):
            return any(_is_bare_item(v) for v in head[1:]) or Path(source.label).name.startswith("rollout-")
        return False

    def load(self, source: Source, thread_id: str | None) -> Thread:
        s, unfinished = scan(source)
        thread = to_thread(s, source)
        if unfinished is not None:
            thread.extra["unfinished_last_line"] = unfinished
        if thread_id is not None and thread_id != thread.thread_id:
            raise ThreadNotFoundError(f"thread {thread_id!r} not found (this file holds {thread.thread_id!r})",
                                      path=source.label, format=FORMAT)
        return thread

    def list_threads(self, source: Source) -> list[ThreadRef]:
        thread = self.load(source, None)
        return [ThreadRef(thread.thread_id, thread.title, len(thread.messages))]


IMPORTER = _CodexImporter()
