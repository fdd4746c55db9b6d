"""What a sample's `events` add to its messages: usage per model call, recorded compactions, sub-agents.

Every model call is a `ModelEvent {model, input, input_refs?, tools, output {model, choices[{message}],
usage}}` (`inspect_ai/event/_model.py`). Its usage belongs to the assistant message the call produced:
matched by the output message's id, else (older logs have no ids) by role, text and tool-call ids.
Logs written with message deduplication keep `input: []` and `input_refs: [[start, end), ...]` into
the sample's `message_pool` (`inspect_ai/event/_pool.py`, `_expand_refs`).

`ModelUsage` (`model/_model_output.py`) has `input_tokens`, `output_tokens`, `total_tokens`,
`input_tokens_cache_read`, `input_tokens_cache_write`, `reasoning_tokens`. Since inspect_ai PR #3341
(2026-02) `input_tokens` excludes cached tokens for every provider; before it the OpenAI providers
reported `prompt_tokens` there, cache included (`model/_openai.py`, `model_output_from_openai`). The
two are told apart by `total_tokens`: Anthropic's provider sums input + cache write + cache read +
output, OpenAI's is `prompt + completion`, so `total == input + output` with a non-zero cache means
the cache is inside `input_tokens` and is split out.

Compaction (`model/_compaction/_compaction.py`): before a call the compactor may rewrite the input and
log `CompactionEvent {type: summary|edit|trim, tokens_before, tokens_after, source}`; the full history
(`sample.messages`) keeps every message, plus the summary user message for `summary`. The input of the
next `ModelEvent` is what the model was then sent, so it gives the compaction's replacement:
- summary: the system and task-input messages plus "[CONTEXT COMPACTION SUMMARY]..." (summary.py);
- trim: the kept messages (trim.py, `trim_messages(preserve=0.8)`);
- edit: tool results replaced by "(Tool result removed)" and old thinking dropped (edit.py) — a
  RecordedEdit, since the history is otherwise kept.

Sub-agents: a tool call that ran an agent (`as_tool`, `handoff`) records `agent_span_id` on its
`ToolEvent` (older logs nest the agent's events in `ToolEvent.events`); the model calls inside that
span are the sub-agent's, and become a Thread keyed by the tool call id.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from engine.formats.inspect_ai_log import FORMAT
from engine.formats.inspect_ai_messages import Attachments, fingerprint, is_summary, to_message
from engine.formats.jsonshape import Where, json_type
from engine.thread.kinds import mark
from engine.thread.model import RecordedCompaction, RecordedEdit, RecordedUsage, Thread
from engine.tokens.content import message_text

TOOL_RESULT_REMOVED = "(Tool result removed)"  # model/_compaction/edit.py
EVENT_SOURCE = "inspect_ai:CompactionEvent"


@dataclass
class ModelCall:
    event: dict[str, Any]
    at: str
    owner: str | None  # the tool call id of the sub-agent this call belongs to, None for the main thread


@dataclass
class Events:
    """A sample's events, sorted out: model calls (with their owner) and compactions between them."""

    calls: list[ModelCall] = field(default_factory=list)
    # Compaction events in order, each with the number of main-thread model calls before it.
    compactions: list[tuple[dict[str, Any], str, int]] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)


def _int(value: Any, where: Where, at: str) -> int | None:
    return where.want_int(value, at)


def read_events(sample: dict[str, Any], where: Where, base: str) -> Events:
    raw = sample.get("events")
    events = [] if raw is None else where.want_list(raw, f"{base}.events", "an array of events")
    flat: list[tuple[dict[str, Any], str, str | None]] = []
    _flatten(events, where, f"{base}.events", None, flat)
    # Span tree (span_begin {id, parent_id}) and the agent spans tool calls started.
    parents: dict[str, str | None] = {}
    agent_spans: dict[str, str] = {}
    for event, _, _ in flat:
        kind = event.get("event")
        if kind == "span_begin" and isinstance(event.get("id"), str):
            parent = event.get("parent_id")
            parents[event["id"]] = parent if isinstance(parent, str) else None
        elif kind == "tool" and isinstance(event.get("agent_span_id"), str) and isinstance(event.get("id"), str):
            agent_spans[event["agent_span_id"]] = event["id"]
    out = Events()
    for event, at, owner in flat:
        kind = event.get("event")
        if kind == "model":
            out.calls.append(ModelCall(event, at, owner or _owner(event.get("span_id"), parents, agent_spans)))
        elif kind == "compaction":
            out.compactions.append((event, at, sum(1 for c in out.calls if c.owner is None)))
        elif isinstance(kind, str):
            out.skipped[kind] = out.skipped.get(kind, 0) + 1
    return out


def _flatten(events: list[Any], where: Where, base: str, owner: str | None,
             out: list[tuple[dict[str, Any], str, str | None]]) -> None:
    for i, event in enumerate(events):
        at = f"{base}[{i}]"
        event = where.want_dict(event, at, "an event object")
        if not isinstance(event.get("event"), str):
            where.fail(f"{at}.event", f"expected an event type string, got {json_type(event.get('event'))}")
        out.append((event, at, owner))
        nested = event.get("events")
        if event["event"] in ("tool", "subtask") and isinstance(nested, list) and nested:
            inner_owner = event.get("id") if event["event"] == "tool" and isinstance(event.get("id"), str) else owner
            _flatten(nested, where, f"{at}.events", inner_owner, out)


def _owner(span: Any, parents: dict[str, str | None], agent_spans: dict[str, str]) -> str | None:
    seen: set[str] = set()
    while isinstance(span, str) and span not in seen:
        if span in agent_spans:
            return agent_spans[span]
        seen.add(span)
        span = parents.get(span)
    return None


# -- usage -------------------------------------------------------------------------------------


def usage_of(event: dict[str, Any], where: Where, at: str) -> RecordedUsage | None:
    output = event.get("output")
    raw = output.get("usage") if isinstance(output, dict) else None
    if raw is None:
        return None
    u = where.want_dict(raw, f"{at}.output.usage", "a usage object")
    loc = f"{at}.output.usage"
    inp = _int(u.get("input_tokens"), where, f"{loc}.input_tokens")
    out = _int(u.get("output_tokens"), where, f"{loc}.output_tokens")
    total = _int(u.get("total_tokens"), where, f"{loc}.total_tokens")
    read = _int(u.get("input_tokens_cache_read"), where, f"{loc}.input_tokens_cache_read")
    write = _int(u.get("input_tokens_cache_write"), where, f"{loc}.input_tokens_cache_write")
    reasoning = _int(u.get("reasoning_tokens"), where, f"{loc}.reasoning_tokens")
    cached = (read or 0) + (write or 0)
    if inp is not None and cached and total == inp + (out or 0) and inp >= cached:
        inp -= cached  # pre-PR #3341 convention: the cache was inside input_tokens
    model = output.get("model") if isinstance(output, dict) else None
    model = model if isinstance(model, str) and model else event.get("model")
    timestamp = event.get("timestamp")
    return RecordedUsage(input_tokens=inp, output_tokens=out, cache_read_input_tokens=read,
                         cache_creation_input_tokens=write, reasoning_tokens=reasoning,
                         timestamp=timestamp if isinstance(timestamp, str) else None,
                         model=model if isinstance(model, str) else None)


def output_message(event: dict[str, Any], resolve: Attachments, where: Where, at: str) -> dict[str, Any] | None:
    output = event.get("output")
    if output is None:
        return None
    output = where.want_dict(output, f"{at}.output", "a model output object")
    choices = output.get("choices")
    if not choices:
        return None
    first = where.want_dict(where.want_list(choices, f"{at}.output.choices")[0], f"{at}.output.choices[0]")
    message = first.get("message")
    if message is None:
        return None
    return resolve(where.want_dict(message, f"{at}.output.choices[0].message", "a chat message object"))


def input_messages(event: dict[str, Any], pool: list[Any], resolve: Attachments, where: Where,
                   at: str) -> list[tuple[dict[str, Any], str]] | None:
    """The messages a call was sent (with their JSON paths), expanding pooled references."""
    raw = event.get("input")
    refs = event.get("input_refs")
    if not raw and isinstance(refs, list):
        out: list[tuple[dict[str, Any], str]] = []
        for k, ref in enumerate(refs):
            if not (isinstance(ref, list) and len(ref) == 2 and all(isinstance(x, int) and not isinstance(x, bool)
                                                                    for x in ref)):
                where.fail(f"{at}.input_refs[{k}]", f"expected a [start, end] pair of integers, got {json_type(ref)}")
            start, end = ref
            for j in range(max(start, 0), min(end, len(pool))):
                out.append((resolve(where.want_dict(pool[j], f"message_pool[{j}]", "a chat message object")),
                            f"message_pool[{j}]"))
        return out
    if raw is None:
        return None
    items = where.want_list(raw, f"{at}.input", "an array of chat messages")
    return [(resolve(where.want_dict(m, f"{at}.input[{j}]", "a chat message object")), f"{at}.input[{j}]")
            for j, m in enumerate(items)]


# -- the main thread ---------------------------------------------------------------------------


@dataclass
class Matcher:
    """Pairs model calls with the AI messages they produced, in order."""

    messages: list[BaseMessage]
    raw: dict[str, dict[str, Any]]  # message id -> the raw Inspect message
    matched: set[int] = field(default_factory=set)
    last: int = -1

    def find(self, out: dict[str, Any]) -> int | None:
        mid = out.get("id")
        for i, m in enumerate(self.messages):
            if isinstance(m, AIMessage) and i not in self.matched and isinstance(mid, str) and m.id == mid:
                return self._take(i)
        key = fingerprint(out)
        for i in range(self.last + 1, len(self.messages)):
            m = self.messages[i]
            if isinstance(m, AIMessage) and i not in self.matched and m.id in self.raw and fingerprint(self.raw[m.id]) == key:
                return self._take(i)
        return None

    def _take(self, i: int) -> int:
        self.matched.add(i)
        self.last = max(self.last, i)
        return i


def replacement_of(inputs: list[tuple[dict[str, Any], str]], thread: list[BaseMessage],
                   raw_by_id: dict[str, dict[str, Any]], where: Where) -> list[BaseMessage]:
    """A call's input as messages: kept history keeps its own message objects (and ids)."""
    by_id = {m.id: m for m in thread if m.id}
    by_print = {fingerprint(raw): by_id[mid] for mid, raw in raw_by_id.items() if mid in by_id}
    out: list[BaseMessage] = []
    for position, (raw, at) in enumerate(inputs):
        mid = raw.get("id")
        if isinstance(mid, str) and mid in by_id and fingerprint(raw) == fingerprint(raw_by_id.get(mid, {})):
            out.append(by_id[mid])
        elif fingerprint(raw) in by_print and not is_summary(raw):
            out.append(by_print[fingerprint(raw)])
        else:
            message = to_message(raw, where, at, position, prefix=f"{FORMAT}-compacted")
            out.append(mark(message, "summary") if is_summary(raw) else message)
    return out


def edits_of(inputs: list[tuple[dict[str, Any], str]], thread: list[BaseMessage], index: int,
             cleared: set[str], event: dict[str, Any], where: Where, at: str) -> list[RecordedEdit]:
    """What an `edit` compaction cleared, read off the next call's input against the history."""
    sent_results = {r.get("tool_call_id"): r for r, _ in inputs if r.get("role") == "tool"}
    sent_calls = {c.get("id") for r, _ in inputs if r.get("role") == "assistant"
                  for c in (r.get("tool_calls") or []) if isinstance(c, dict)}
    removed: list[str] = []
    dropped: list[str] = []
    for m in thread[:index]:
        if not isinstance(m, ToolMessage) or m.tool_call_id in cleared:
            continue
        sent = sent_results.get(m.tool_call_id)
        if sent is not None and _plain(sent.get("content")) == TOOL_RESULT_REMOVED and message_text(m) != TOOL_RESULT_REMOVED:
            removed.append(m.tool_call_id)
        elif sent is None and m.tool_call_id not in sent_calls:
            dropped.append(m.tool_call_id)  # keep_tool_inputs=False: call and result both removed
    thinking = _cleared_thinking(inputs, thread[:index])
    before = _int(event.get("tokens_before"), where, f"{at}.tokens_before")
    after = _int(event.get("tokens_after"), where, f"{at}.tokens_after")
    saved = before - after if before is not None and after is not None else None
    edits: list[RecordedEdit] = []
    if removed:
        edits.append(RecordedEdit(index, "clear_tool_results", tool_call_ids=removed, placeholder=TOOL_RESULT_REMOVED))
    if dropped:
        edits.append(RecordedEdit(index, "clear_tool_results", tool_call_ids=dropped, clear_inputs=True,
                                  placeholder=TOOL_RESULT_REMOVED))
    if thinking:
        edits.append(RecordedEdit(index, "clear_thinking", message_ids=thinking))
    for edit in edits:
        edit.source = EVENT_SOURCE
    if edits:  # one event: its token counts are told once
        edits[0].pre_tokens, edits[0].tokens_saved = before, saved
    cleared.update(removed + dropped)
    return edits


def _plain(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(c.get("text", "")) for c in content if isinstance(c, dict) and c.get("type") == "text")
    return ""


def _has_reasoning(content: Any) -> bool:
    return isinstance(content, list) and any(isinstance(c, dict) and c.get("type") in ("reasoning", "redacted_thinking")
                                             for c in content)


def _cleared_thinking(inputs: list[tuple[dict[str, Any], str]], history: list[BaseMessage]) -> list[str]:
    """AI messages whose reasoning the edit dropped (they are re-sent under new ids, so matched by calls or text)."""
    sent = [r for r, _ in inputs if r.get("role") == "assistant"]
    out: list[str] = []
    for m in history:
        if not isinstance(m, AIMessage) or not _has_reasoning(m.content) or not m.id:
            continue
        calls = [tc.get("id") for tc in m.tool_calls]
        twin = next((r for r in sent if r.get("id") == m.id or (calls and [c.get("id") for c in r.get("tool_calls") or []
                                                                           if isinstance(c, dict)] == calls)), None)
        if twin is not None and not _has_reasoning(twin.get("content")) and not isinstance(twin.get("reasoning"), str):
            out.append(m.id)
    return out


def compaction_of(event: dict[str, Any], at: str, index: int, replacement: list[BaseMessage] | None,
                  where: Where, summary_text: str = "") -> RecordedCompaction:
    ctype = event.get("type")
    before = _int(event.get("tokens_before"), where, f"{at}.tokens_before")
    after = _int(event.get("tokens_after"), where, f"{at}.tokens_after")
    marked = next((m for m in replacement or [] if isinstance(m, HumanMessage)
                   and m.additional_kwargs.get("ctxi_kind") == "summary"), None)
    summary = message_text(marked) if marked is not None else summary_text
    kind = "summary" if ctype == "summary" else "trim" if ctype == "trim" else "server"
    source = event.get("source")
    return RecordedCompaction(index=index, trigger=None, pre_tokens=before, post_tokens=after, summary=summary,
                              message_id=marked.id if marked is not None else None,
                              replacement=replacement, kind=kind,
                              source=f"{EVENT_SOURCE}:{source}" if isinstance(source, str) else EVENT_SOURCE)


def subagent_thread(calls: list[ModelCall], pool: list[Any], resolve: Attachments, where: Where,
                    thread_id: str) -> Thread | None:
    """A sub-agent's conversation: its last call's input plus that call's output, usage per call."""
    last = calls[-1]
    inputs = input_messages(last.event, pool, resolve, where, last.at) or []
    messages = [to_message(r, where, at, k, prefix=f"{FORMAT}-{thread_id}") for k, (r, at) in enumerate(inputs)]
    raw = {m.id: r for m, (r, _) in zip(messages, inputs, strict=True) if m.id}
    out = output_message(last.event, resolve, where, last.at)
    if out is not None:
        message = to_message(out, where, f"{last.at}.output.choices[0].message", len(messages), prefix=f"{FORMAT}-{thread_id}")
        if all(m.id != message.id for m in messages):
            messages.append(message)
            if message.id:
                raw[message.id] = out
    if not messages:
        return None
    matcher = Matcher(messages, raw)
    thread = Thread(thread_id=thread_id, messages=messages, source_format=FORMAT)
    for call in calls:
        produced = output_message(call.event, resolve, where, call.at)
        i = matcher.find(produced) if produced is not None else None
        usage = usage_of(call.event, where, call.at)
        if i is not None and usage is not None and messages[i].id:
            thread.usage[str(messages[i].id)] = usage
    model = last.event.get("model")
    thread.model = model if isinstance(model, str) else None
    return thread
