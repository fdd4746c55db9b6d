"""OpenHands V1 (software-agent-sdk) event streams: events with a `kind` discriminator.

Shapes from `openhands-sdk/openhands/sdk/event/` (Event: `id`, `timestamp`, `source`; serialized
with the class name as `kind`):
- `SystemPromptEvent {system_prompt: TextContent, tools, dynamic_context?}` → system message;
- `MessageEvent {llm_message {role, content[], reasoning_content, thinking_blocks}, llm_response_id,
  extended_content}` → human or AI message (`to_llm_message` appends `extended_content`);
- `ActionEvent {thought[], reasoning_content, thinking_blocks, tool_name, tool_call_id, tool_call
  {id, name, arguments}, llm_response_id}`: consecutive actions of one `llm_response_id` are one
  assistant message (`events_to_messages`, `_combine_action_events`);
- `ObservationEvent {tool_name, tool_call_id, observation {content}, extended_content}`,
  `UserRejectObservation` ("Action rejected: <reason>"), `AgentErrorEvent {error}` → tool messages;
- `Condensation {forgotten_event_ids, summary, summary_offset, llm_response_id}` → a recorded
  compaction whose replacement is the SDK's `View.from_events` over the events before it
  (openhands-sdk/openhands/sdk/context/view.py): every condensation's forgotten ids (and the
  condensation and request events themselves) dropped, a multi-action batch forgotten whole
  (`_enforce_batch_atomicity`), the newest forgotten batch with thinking blocks kept when no kept
  action has any (`_ensure_thinking_block_preservation`), the newest summary inserted at its
  `summary_offset` as a user message, then unmatched tool calls and results filtered out;
- `CondensationRequest` marks the next condensation's trigger as a request;
- `ConversationStateUpdateEvent {key: stats|full_state, value}` carries `ConversationStats
  {usage_to_metrics: {usage id: Metrics {token_usages[{response_id, ...}]}}}`: usage per call,
  matched to the message of that `llm_response_id`.
Other events (pause, token ids, errors of the conversation, state updates) are counted as skipped.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.tool import tool_call

from engine.formats.jsonshape import Where, json_type, parse_arguments
from engine.formats.openhands_usage import context_window, from_token_usage
from engine.thread.kinds import mark
from engine.thread.model import RecordedCompaction, RecordedUsage

FORMAT = "openhands"
OBSERVATIONS = frozenset({"ObservationEvent", "UserRejectObservation", "AgentErrorEvent"})
CONVERTIBLE = frozenset({"SystemPromptEvent", "MessageEvent", "ActionEvent", "CondensationSummaryEvent"}) | OBSERVATIONS
KINDS = CONVERTIBLE | {"Condensation", "CondensationRequest", "ConversationStateUpdateEvent", "PauseEvent",
                       "TokenEvent", "ConversationErrorEvent"}
SOURCE = "openhands:Condensation"


def is_v1_event(value: Any) -> bool:
    return (isinstance(value, dict) and value.get("kind") in KINDS and isinstance(value.get("id"), str)
            and isinstance(value.get("source"), str))


def check_events(items: list[Any], where: Where, base: str) -> list[tuple[dict[str, Any], str]]:
    out = []
    for i, raw in enumerate(items):
        at = f"{base}[{i}]"
        event = where.want_dict(raw, at, "an event object")
        if not isinstance(event.get("kind"), str):
            where.fail(f"{at}.kind", f"expected an event kind string, got {json_type(event.get('kind'))}")
        if not isinstance(event.get("id"), str):
            where.fail(f"{at}.id", f"expected a string event id, got {json_type(event.get('id'))}")
        out.append((event, at))
    return out


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("text"), str):
        return value["text"]
    return ""


def _content(items: Any, where: Where, at: str) -> list[dict[str, Any]]:
    """SDK content (TextContent {type: text}, ImageContent {type: image, image_urls}) as blocks."""
    if items is None:
        return []
    if isinstance(items, str):
        return [{"type": "text", "text": items}]
    blocks: list[dict[str, Any]] = []
    for j, item in enumerate(where.want_list(items, at, "a list of content objects")):
        item = where.want_dict(item, f"{at}[{j}]", "a content object")
        if item.get("type") == "image":
            urls = item.get("image_urls")
            blocks += [{"type": "image_url", "image_url": {"url": u}} for u in urls or [] if isinstance(u, str)]
        else:
            blocks.append({"type": "text", "text": where.want_text(item.get("text"), f"{at}[{j}].text")})
    return blocks


def _plain(blocks: list[dict[str, Any]]) -> str | list[Any]:
    if all(b["type"] == "text" for b in blocks):
        return "\n".join(b["text"] for b in blocks)
    return list(blocks)


def _thinking(event: dict[str, Any]) -> list[dict[str, Any]]:
    blocks = []
    for block in event.get("thinking_blocks") or []:
        if isinstance(block, dict) and block.get("type") in ("thinking", "redacted_thinking"):
            blocks.append(dict(block))
    reasoning = event.get("reasoning_content")
    if not blocks and isinstance(reasoning, str) and reasoning:
        blocks.append({"type": "reasoning", "reasoning": reasoning})
    return blocks


def _call(event: dict[str, Any], where: Where, at: str) -> Any:
    raw = where.want_dict(event.get("tool_call"), f"{at}.tool_call", "a tool call object")
    parsed, error = parse_arguments(raw.get("arguments"))
    if parsed is None:
        where.fail(f"{at}.tool_call.arguments", error or "arguments are not a JSON object")
    name = where.want_text(raw.get("name", event.get("tool_name")), f"{at}.tool_call.name")
    return tool_call(name=name, args=parsed, id=where.want_text(raw.get("id", event.get("tool_call_id")), f"{at}.tool_call.id"))


@dataclass
class Converted:
    messages: list[BaseMessage] = field(default_factory=list)
    before: list[int] = field(default_factory=list)
    response_message: dict[str, str] = field(default_factory=dict)  # llm_response_id -> message id
    skipped: Counter[str] = field(default_factory=Counter)
    system_prompt: str | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)


def convert(events: list[tuple[dict[str, Any], str]], where: Where) -> Converted:
    out = Converted()
    batch: tuple[str, AIMessage] | None = None  # the open multi-action assistant message
    for event, at in events:
        out.before.append(len(out.messages))
        kind = event["kind"]
        if kind != "ActionEvent":
            batch = None
        if kind not in CONVERTIBLE:
            if kind not in ("Condensation", "ConversationStateUpdateEvent"):
                out.skipped[kind] += 1
            continue
        eid = event["id"]
        if kind == "ActionEvent":
            rid = event.get("llm_response_id")
            if batch is not None and batch[0] == rid:
                batch[1].tool_calls.append(_call(event, where, at))
                continue
            thinking = _thinking(event)
            text = _content(event.get("thought"), where, f"{at}.thought")
            content: str | list[Any] = list(thinking + text) if thinking else _plain(text)
            message = AIMessage(content=content, tool_calls=[_call(event, where, at)], id=eid)
            batch = (rid, message) if isinstance(rid, str) else None
            if isinstance(rid, str):
                out.response_message.setdefault(rid, eid)
            out.messages.append(message)
        elif kind == "MessageEvent":
            out.messages.append(_message_event(event, where, at, out))
        elif kind in OBSERVATIONS:
            out.messages.append(_observation(event, where, at))
        elif kind == "SystemPromptEvent":
            blocks = _content([event.get("system_prompt")] + ([event["dynamic_context"]] if event.get("dynamic_context") else []),
                              where, f"{at}.system_prompt")
            prompt = "\n".join(str(b.get("text", "")) for b in blocks)
            out.system_prompt = out.system_prompt or prompt
            if isinstance(event.get("tools"), list) and not out.tools:
                out.tools = [t for t in event["tools"] if isinstance(t, dict)]
            out.messages.append(SystemMessage(content=_plain(blocks), id=eid))
        else:  # CondensationSummaryEvent, only in views
            summary = where.want_text(event.get("summary"), f"{at}.summary")
            out.messages.append(mark(HumanMessage(content=summary, id=eid), "summary"))
    return out


def _message_event(event: dict[str, Any], where: Where, at: str, out: Converted) -> BaseMessage:
    llm = where.want_dict(event.get("llm_message"), f"{at}.llm_message", "a message object")
    role = llm.get("role")
    blocks = _content(llm.get("content"), where, f"{at}.llm_message.content")
    blocks += _content(event.get("extended_content"), where, f"{at}.extended_content")
    eid = event["id"]
    if role == "user":
        return HumanMessage(content=_plain(blocks), id=eid)
    if role == "system":
        return SystemMessage(content=_plain(blocks), id=eid)
    if role != "assistant":
        where.fail(f"{at}.llm_message.role", f"unknown role {json.dumps(role)[:40]}; expected user, assistant or system")
    thinking = _thinking(llm)
    rid = event.get("llm_response_id")
    if isinstance(rid, str):
        out.response_message.setdefault(rid, eid)
    return AIMessage(content=thinking + blocks if thinking else _plain(blocks), id=eid)


def _observation(event: dict[str, Any], where: Where, at: str) -> ToolMessage:
    kind = event["kind"]
    call_id = where.want_text(event.get("tool_call_id"), f"{at}.tool_call_id")
    name = event.get("tool_name") if isinstance(event.get("tool_name"), str) else None
    if kind == "UserRejectObservation":
        reason = event.get("rejection_reason") if isinstance(event.get("rejection_reason"), str) else "User rejected the action"
        return ToolMessage(content=f"Action rejected: {reason}", tool_call_id=call_id, name=name, status="error", id=event["id"])
    if kind == "AgentErrorEvent":
        return ToolMessage(content=where.want_text(event.get("error"), f"{at}.error"), tool_call_id=call_id, name=name,
                           status="error", id=event["id"])
    observation = where.want_dict(event.get("observation"), f"{at}.observation", "an observation object")
    blocks = _content(observation.get("content"), where, f"{at}.observation.content")
    if not blocks and "content" not in observation:
        # An observation without the SDK's content list: its fields are what the model was shown.
        blocks = [{"type": "text", "text": json.dumps({k: v for k, v in observation.items() if k != "kind"},
                                                      ensure_ascii=False, default=str)}]
    blocks += _content(event.get("extended_content"), where, f"{at}.extended_content")
    failed = observation.get("is_error") is True
    return ToolMessage(content=_plain(blocks), tool_call_id=call_id, name=name, status="error" if failed else "success",
                       id=event["id"])


# -- the SDK's View --------------------------------------------------------------------------------


def view_events(events: list[tuple[dict[str, Any], str]]) -> list[tuple[dict[str, Any], str]]:
    """`View.from_events` over these events (openhands-sdk/openhands/sdk/context/view.py)."""
    forgotten: set[str] = set()
    for event, _ in events:
        if event["kind"] == "Condensation":
            forgotten.update(i for i in event.get("forgotten_event_ids") or [] if isinstance(i, str))
            forgotten.add(event["id"])
        elif event["kind"] == "CondensationRequest":
            forgotten.add(event["id"])
    batches: dict[Any, list[str]] = {}
    for event, _ in events:
        if event["kind"] == "ActionEvent":
            batches.setdefault(event.get("llm_response_id"), []).append(event["id"])
    for ids in batches.values():
        if any(i in forgotten for i in ids):
            forgotten.update(ids)
    forgotten = _keep_thinking(events, forgotten)
    kept = [(e, at) for e, at in events if e["id"] not in forgotten and e["kind"] in CONVERTIBLE]
    for event, at in reversed(events):
        if event["kind"] == "Condensation" and event.get("summary") is not None and event.get("summary_offset") is not None:
            offset = event["summary_offset"]
            if isinstance(offset, int) and not isinstance(offset, bool):
                summary = {"kind": "CondensationSummaryEvent", "id": f"{event['id']}:summary", "source": "environment",
                           "summary": event["summary"]}
                kept.insert(offset, (summary, at))
            break
    actions = {e.get("tool_call_id") for e, _ in kept if e["kind"] == "ActionEvent"}
    results = {e.get("tool_call_id") for e, _ in kept if e["kind"] in OBSERVATIONS}
    return [(e, at) for e, at in kept
            if not (e["kind"] in OBSERVATIONS and e.get("tool_call_id") not in actions)
            and not (e["kind"] == "ActionEvent" and e.get("tool_call_id") not in results)]


def _keep_thinking(events: list[tuple[dict[str, Any], str]], forgotten: set[str]) -> set[str]:
    actions = [e for e, _ in events if e["kind"] == "ActionEvent"]
    if not any(e["id"] not in forgotten for e in actions):
        return forgotten
    thinking = [e for e in actions if e.get("thinking_blocks")]
    if not thinking or any(e["id"] not in forgotten for e in thinking):
        return forgotten
    keep = thinking[-1]
    rid = keep.get("llm_response_id")
    batch = [e for e in actions if e.get("llm_response_id") == rid]
    call_ids = {e.get("tool_call_id") for e in batch}
    ids = {e["id"] for e in batch} | {e["id"] for e, _ in events if e["kind"] in OBSERVATIONS and e.get("tool_call_id") in call_ids}
    return forgotten - ids


class Views:
    """`view_events(events[:p + 1])` for growing p, in time linear in the events plus the views returned.

    view_events reads every event before p again: one call per Condensation made the importer quadratic
    (events x condensations; 40,000 messages condensed every 50 calls took 20 s). Here the facts it
    derives are kept as the events come: the forgotten ids (a Condensation's `forgotten_event_ids` and
    ids, a CondensationRequest's id), the batches of actions by `llm_response_id` (one forgotten member
    forgets its batch, members that come later included), the convertible events not forgotten, in order,
    the thinking actions for `_keep_thinking`, and the latest summarizing Condensation. `view(p)` then
    costs the view it returns. Same results as view_events (tests/formats/test_openhands.py compares them
    on random streams of unique event ids; the SDK's ids are UUIDs. Should a hostile file repeat an action
    id across batches, the batch rule is taken to its fixed point here, where view_events makes one pass
    in batch order: which events are kept may differ, nothing fails)."""

    def __init__(self, events: list[tuple[dict[str, Any], str]]) -> None:
        self.events = events
        self.done = 0  # events[:done] are read
        self.forgotten: set[str] = set()  # view_events' `forgotten` before the batch rule
        self.gone: set[str] = set()  # ... and after it
        self.batches: dict[Any, list[str]] = {}  # llm_response_id -> action ids
        self.batch_of: dict[str, list[Any]] = {}  # action id -> the batches it is in
        self.bad: set[Any] = set()  # batches with a forgotten member
        self.calls: dict[Any, set[Any]] = {}  # llm_response_id -> the batch's tool_call_ids
        self.positions: dict[str, list[int]] = {}  # id -> positions of convertible events with it
        self.kept: dict[int, tuple[dict[str, Any], str]] = {}  # convertible events not gone, in order
        self.action_count: dict[str, int] = {}  # action id -> how many actions have it
        self.live_actions = 0  # actions whose id is not gone
        self.thinking_count: dict[str, int] = {}
        self.live_thinking = 0
        self.last_thinking: dict[str, Any] | None = None
        self.observed: dict[Any, list[str]] = {}  # tool_call_id -> ids of observations of it
        self.summary: tuple[dict[str, Any], str] | None = None  # the latest Condensation with summary and offset

    def _gone(self, event_id: str) -> None:
        if event_id in self.gone:
            return
        self.gone.add(event_id)
        for q in self.positions.get(event_id, ()):
            self.kept.pop(q, None)
        self.live_actions -= self.action_count.get(event_id, 0)
        self.live_thinking -= self.thinking_count.get(event_id, 0)

    def _forget(self, event_id: str) -> None:
        self.forgotten.add(event_id)
        self._gone(event_id)
        for rid in self.batch_of.get(event_id, ()):
            self._bad(rid)

    def _bad(self, rid: Any) -> None:
        if rid not in self.bad:
            self.bad.add(rid)
            for member in self.batches[rid]:
                self._gone(member)

    def _read(self, q: int) -> None:
        event, at = self.events[q]
        kind, eid = event["kind"], event["id"]
        if kind == "Condensation":
            for i in event.get("forgotten_event_ids") or []:
                if isinstance(i, str):
                    self._forget(i)
            self._forget(eid)
            if event.get("summary") is not None and event.get("summary_offset") is not None:
                self.summary = (event, at)
        elif kind == "CondensationRequest":
            self._forget(eid)
        if kind in CONVERTIBLE:
            self.positions.setdefault(eid, []).append(q)
            if eid not in self.gone:
                self.kept[q] = (event, at)
        if kind == "ActionEvent":
            rid = event.get("llm_response_id")
            self.batches.setdefault(rid, []).append(eid)
            self.batch_of.setdefault(eid, []).append(rid)
            self.calls.setdefault(rid, set()).add(event.get("tool_call_id"))
            self.action_count[eid] = self.action_count.get(eid, 0) + 1
            thinking = bool(event.get("thinking_blocks"))
            if thinking:
                self.thinking_count[eid] = self.thinking_count.get(eid, 0) + 1
                self.last_thinking = event
            if eid not in self.gone:
                self.live_actions += 1
                self.live_thinking += thinking
            if rid in self.bad:
                self._gone(eid)
            elif eid in self.forgotten:
                self._bad(rid)
        elif kind in OBSERVATIONS:
            self.observed.setdefault(event.get("tool_call_id"), []).append(eid)

    def view(self, p: int) -> list[tuple[dict[str, Any], str]]:
        """view_events(events[:p + 1]); p never decreases from one call to the next."""
        while self.done <= p:
            self._read(self.done)
            self.done += 1
        kept = list(self.kept.values())
        if self.live_actions > 0 and self.last_thinking is not None and self.live_thinking == 0:
            # _keep_thinking: every thinking action is forgotten but not every action: the latest thinking
            # action's batch and the observations of its calls stay
            rid = self.last_thinking.get("llm_response_id")
            ids = set(self.batches.get(rid, ())) | {i for c in self.calls.get(rid, ()) for i in self.observed.get(c, ())}
            back = sorted(q for i in ids if i in self.gone for q in self.positions.get(i, ()))
            if back:
                kept = [self.events[q] for q in sorted([*self.kept, *back])]
        if self.summary is not None:
            event, at = self.summary
            offset = event["summary_offset"]
            if isinstance(offset, int) and not isinstance(offset, bool):
                summary = {"kind": "CondensationSummaryEvent", "id": f"{event['id']}:summary", "source": "environment",
                           "summary": event["summary"]}
                kept.insert(offset, (summary, at))
        actions = {e.get("tool_call_id") for e, _ in kept if e["kind"] == "ActionEvent"}
        results = {e.get("tool_call_id") for e, _ in kept if e["kind"] in OBSERVATIONS}
        return [(e, at) for e, at in kept
                if not (e["kind"] in OBSERVATIONS and e.get("tool_call_id") not in actions)
                and not (e["kind"] == "ActionEvent" and e.get("tool_call_id") not in results)]


def compactions(events: list[tuple[dict[str, Any], str]], before: list[int], where: Where) -> list[RecordedCompaction]:
    out: list[RecordedCompaction] = []
    requested = False
    views = Views(events)
    for p, (event, at) in enumerate(events):
        if event["kind"] == "CondensationRequest":
            requested = True
        if event["kind"] != "Condensation":
            continue
        ids = event.get("forgotten_event_ids")
        if ids is not None and not isinstance(ids, list):
            where.fail(f"{at}.forgotten_event_ids", f"expected an array of event ids, got {json_type(ids)}")
        summary = event.get("summary")
        if summary is not None and not isinstance(summary, str):
            where.fail(f"{at}.summary", f"expected a string, got {json_type(summary)}")
        offset = event.get("summary_offset")
        if offset is not None and (isinstance(offset, bool) or not isinstance(offset, int) or offset < 0):
            where.fail(f"{at}.summary_offset", f"expected a non-negative integer, got {json_type(offset)}")
        replacement = convert(views.view(p), where).messages
        out.append(RecordedCompaction(
            index=before[p], trigger="request" if requested else None, summary=summary or "",
            message_id=f"{event['id']}:summary" if summary is not None and offset is not None else None,
            replacement=replacement, kind="summary" if summary else "trim", source=SOURCE))
        requested = False
    return out


def usage_records(events: list[tuple[dict[str, Any], str]], wrapper: Any, where: Where) -> tuple[list[tuple[dict[str, Any], str]], int | None]:
    """The per-call TokenUsage records of the last stats the stream (or its wrapper) holds."""
    stats: tuple[Any, str] | None = None
    if isinstance(wrapper, dict) and isinstance(wrapper.get("stats"), dict):
        stats = (wrapper["stats"], "$.stats")
    for event, at in events:
        if event["kind"] == "ConversationStateUpdateEvent":
            value = event.get("value")
            if event.get("key") == "stats" and isinstance(value, dict):
                stats = (value, f"{at}.value")
            elif event.get("key") == "full_state" and isinstance(value, dict) and isinstance(value.get("stats"), dict):
                stats = (value["stats"], f"{at}.value.stats")
    if stats is None:
        return [], None
    raw, at = stats
    metrics = raw.get("usage_to_metrics")
    if not isinstance(metrics, dict):
        return [], None
    records: list[tuple[dict[str, Any], str]] = []
    window = None
    for usage_id, m in metrics.items():
        if not isinstance(m, dict):
            continue
        for k, u in enumerate(m.get("token_usages") or []):
            if isinstance(u, dict):
                records.append((u, f"{at}.usage_to_metrics.{usage_id}.token_usages[{k}]"))
                window = window or context_window(u)
    return records, window


def attach_usage(records: list[tuple[dict[str, Any], str]], converted: Converted, where: Where) -> dict[str, RecordedUsage]:
    usage: dict[str, RecordedUsage] = {}
    for raw, at in records:
        mid = converted.response_message.get(raw.get("response_id"))  # type: ignore[arg-type]
        recorded = from_token_usage(raw, where, at)
        if mid is not None and recorded is not None:
            usage[mid] = recorded
    return usage
