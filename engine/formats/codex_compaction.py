"""Codex's recorded compactions: `compacted` lines (and trims) as RecordedCompaction.

`{"type": "compacted", "payload": {message, replacement_history?}}` (`CompactedItem`, protocol.rs):
- local compaction (`codex-rs/core/src/compact.rs`): `message` is the summary (it starts with
  SUMMARY_PREFIX); newer Codex also records `replacement_history`, the history it continued from
  (initial context, the newest user messages up to 20k tokens, the summary as a user message);
- remote compaction (`compact_remote.rs`, OpenAI providers): `message` is empty and
  `replacement_history` is what `/responses/compact` returned, an opaque `compaction` item among
  kept messages: kind "server";
- older local compactions record no `replacement_history`: Codex itself rebuilds it on resume
  (`rollout/replay.rs`: the items before the first user turn, the newest user messages within
  `COMPACT_USER_MESSAGE_MAX_TOKENS`, the summary), and so does `rebuild` here.
Replacement items that are the same item as one the agent had (same id, else same content) keep
that message's id. A "Trimmed N older conversation item(s)" note (compact.rs, when the compaction
call overflowed) is a kind "trim" record: the oldest N items were dropped from that request.
"""

from __future__ import annotations

from typing import Any, Protocol

from langchain_core.messages import BaseMessage, HumanMessage

from engine.formats.codex_items import (
    NOT_SENT,
    OUTPUT_RESULTS,
    SUMMARY_PREFIX,
    fallback_id,
    input_message,
    is_contextual,
    is_output,
    item_key,
    loc,
    message_text,
    opaque_message,
    tool_result,
)
from engine.formats.codex_turn import Call, build_ai
from engine.formats.jsonshape import Where, json_type
from engine.thread.model import RecordedCompaction, RecordedUsage

SOURCE = "codex:compacted"
# compact.rs: COMPACT_USER_MESSAGE_MAX_TOKENS; truncate.rs approximates a token as 4 bytes.
USER_MESSAGE_MAX_TOKENS = 20_000
BYTES_PER_TOKEN = 4
NO_SUMMARY = "(no summary available)"

Live = list[tuple[tuple[str, str], BaseMessage, int]]


class _Scan(Protocol):
    """What a compaction reads of the rollout scan (engine.formats.codex._Scan)."""

    where: Where
    messages: list[BaseMessage]
    live: Live
    call_names: dict[str, str]
    model: str | None
    last_usage: RecordedUsage | None


def approx_tokens(text: str) -> int:
    return -(-len(text.encode("utf-8")) // BYTES_PER_TOKEN)


def truncate_tokens(text: str, tokens: int) -> str:
    """Keep the head and tail of `text` within `tokens` (4 bytes each), marking what was cut.

    Mirrors the shape of Codex's `truncate_text(.., TruncationPolicy::Tokens(n))`: head, the marker
    `…N tokens truncated…`, tail. Byte-exact cuts differ between Codex versions.
    """
    data = text.encode("utf-8")
    keep = tokens * BYTES_PER_TOKEN
    if len(data) <= keep:
        return text
    head = data[: keep // 2].decode("utf-8", "ignore")
    tail = data[len(data) - (keep - keep // 2):].decode("utf-8", "ignore")
    removed = approx_tokens(text) - approx_tokens(head) - approx_tokens(tail)
    return f"{head}…{removed} tokens truncated…{tail}"


def is_user_turn(message: BaseMessage) -> bool:
    """A prompt the user typed (`is_user_turn_boundary`): a user message that is not injected context."""
    return (isinstance(message, HumanMessage) and not message.additional_kwargs
            and not is_contextual(message.content))


def rebuild(s: _Scan, summary: str, line: int) -> Live:
    """The history Codex continues from after a compaction that recorded none (replay.rs)."""
    history = s.live
    first_user = next((i for i, (_, m, _) in enumerate(history) if is_user_turn(m)), len(history))
    out: Live = list(history[:first_user])
    users = [(k, m) for k, m, _ in history if is_user_turn(m)
             and not message_text(m.content).startswith(SUMMARY_PREFIX)]
    selected: list[tuple[tuple[str, str], BaseMessage]] = []
    remaining = USER_MESSAGE_MAX_TOKENS
    for key, message in reversed(users):
        if remaining <= 0:
            break
        text = message_text(message.content)
        tokens = approx_tokens(text)
        if tokens <= remaining and message.content == text:
            selected.append((key, message))  # the same item: Codex rebuilds it from its text alone
            remaining -= tokens
            continue
        kept = text if tokens <= remaining else truncate_tokens(text, remaining)
        remaining = remaining - tokens if tokens <= remaining else 0
        selected.append((("json", kept), HumanMessage(content=kept, id=fallback_id(line, kept, ":user"))))
    out.extend((k, m, 1) for k, m in reversed(selected))
    text = summary or NO_SUMMARY
    out.append((("json", text), HumanMessage(content=text, id=fallback_id(line, text, ":summary")), 1))
    return out


def replacement_live(s: _Scan, items: list[Any], line: int, base: str) -> Live:
    """The recorded replacement history as messages; kept items reuse the messages they were."""
    pool: dict[tuple[str, str], list[BaseMessage]] = {}
    for key, message, _ in s.live:
        pool.setdefault(key, []).append(message)
    out: Live = []
    call: Call | None = None

    def take(key: tuple[str, str]) -> BaseMessage | None:
        found = pool.get(key)
        return found.pop(0) if found else None

    def flush() -> None:
        nonlocal call
        if call is None:
            return
        kept = take(call.key())
        message = kept if kept is not None else build_ai(call, s.where)[0]
        if kept is None:
            message.id = fallback_id(line, message.id, f":a{len(out)}")
        out.append((call.key(), message, len(call.items)))
        call = None

    for k, raw in enumerate(items):
        location = loc(line, f"{base}[{k}]")
        item = s.where.want_dict(raw, location, "a Responses item object")
        itype = item.get("type")
        if not isinstance(itype, str):
            s.where.fail(f"{location}.type", f"expected an item type string, got {json_type(itype)}")
        if itype in NOT_SENT:
            continue
        if is_output(item):
            call = call or Call(model=s.model)
            call.items.append((item, line, location))
            continue
        flush()
        key = item_key(item)
        kept = take(key)
        if kept is None:
            msg_id = fallback_id(line, item, f":r{k}")
            if itype in OUTPUT_RESULTS:
                call_id = item.get("call_id")
                name = s.call_names.get(call_id) if isinstance(call_id, str) else None
                kept = tool_result(item, msg_id, name, s.where, location)
            elif itype in ("message", "agent_message"):
                kept = input_message(item, msg_id, s.where, location)
            else:
                kept = opaque_message(item, msg_id)
        out.append((key, kept, 1))
    flush()
    return out


def _summary_message(replacement: list[BaseMessage], message: str) -> tuple[str, str | None]:
    """The summary text and the id of the message that carries it in the replacement."""
    for m in reversed(replacement):
        if not isinstance(m, HumanMessage):
            continue
        text = message_text(m.content)
        if (message and text == message) or (not message and text.startswith(SUMMARY_PREFIX)):
            return text, m.id
    return message, None


def compacted(s: _Scan, payload: dict[str, Any], line: int) -> RecordedCompaction:
    where = s.where
    message = payload.get("message")
    message = "" if message is None else where.want_text(message, loc(line, "$.payload.message"))
    raw = payload.get("replacement_history")
    if raw is None:
        live, kind = rebuild(s, message, line), "summary"
    else:
        items = where.want_list(raw, loc(line, "$.payload.replacement_history"))
        live = replacement_live(s, items, line, "$.payload.replacement_history")
        kind = "summary" if message else "server"
    replacement = [m for _, m, _ in live]
    summary, message_id = _summary_message(replacement, message)
    record = RecordedCompaction(
        index=len(s.messages),
        pre_tokens=s.last_usage.context_tokens if s.last_usage is not None else None,
        summary=summary,
        message_id=message_id,
        replacement=replacement,
        kind=kind,
        source=SOURCE,
    )
    s.live = live
    return record


def trimmed(s: _Scan, count: int) -> RecordedCompaction:
    """The compaction request overflowed and Codex dropped its `count` oldest items (compact.rs)."""
    dropped = 0
    start = 0
    while start < len(s.live) and dropped < count:
        dropped += s.live[start][2]
        start += 1
    return RecordedCompaction(index=len(s.messages), summary="", kind="trim", source="codex:trimmed",
                              replacement=[m for _, m, _ in s.live[start:]])

