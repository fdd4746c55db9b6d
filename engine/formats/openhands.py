"""OpenHands trajectories, V0 (the event array) and V1 (the software-agent-sdk event stream): one thread a file.

V0 (engine/formats/openhands_v0.py) is the JSON array OpenHands saves as a trajectory; V1
(openhands_v1.py) is a list of SDK events with a `kind` discriminator, given as a JSON array, as the
`{items: [...]}` page the agent server's event search returns, as `{events: [...]}`, or as JSON Lines.

Condensations follow each version's View, so what the model was sent after one is reproduced:
- V0 `condensation` actions (`CondensationAction {forgotten_event_ids | forgotten_events_start_id..
  forgotten_events_end_id, summary, summary_offset}`): `View.from_events` in
  openhands/memory/view.py forgets the union of all condensations' events (and the condensation and
  request actions), keeps the rest in order and inserts the newest summary, as an
  AgentCondensationObservation, at `summary_offset` of the kept events (appended without an offset);
- a stored V0 `condense` observation (AgentCondensationObservation) is a summary whose replaced
  history the file does not record: the summary alone;
- V1 `Condensation`: the SDK's View (openhands_v1.view_events).
The replacement keeps the kept messages' ids (they derive from event ids).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage

from engine.base.errors import ThreadLoadError
from engine.formats import openhands_state as state
from engine.formats import openhands_v1 as v1
from engine.formats.jsonshape import (
    SingleThreadImporter,
    Where,
    check_thread_id,
    default_thread_id,
    first_byte,
    guarded_sniff,
    jsonl_head,
    leading,
)
from engine.formats.openhands_v0 import FORMAT, V0Converter, check_events, is_v0_event
from engine.formats.source import Source, ThreadRef
from engine.thread.kinds import mark
from engine.thread.model import RecordedCompaction, Thread, title_line

SNIFF = 20


def _events_of(doc: Any) -> tuple[Any, str]:
    """The event list inside a document, and its JSON path."""
    if isinstance(doc, dict):
        for key in ("items", "events"):
            if isinstance(doc.get(key), list):
                return doc[key], f"$.{key}"
    return doc, "$"


def _claims(items: Any) -> str | None:
    if not isinstance(items, list) or not items:
        return None
    # The first event decides, so a bad event further on is named by the loader, not "unrecognised".
    head = leading(items, 1)
    if head and is_v0_event(head[0]):
        return "v0"
    if head and v1.is_v1_event(head[0]):
        return "v1"
    return None


def _state_only(doc: Any) -> bool:
    """An exported conversation's settings (`trajectory.json` with `baseState`) without events in it."""
    return isinstance(doc, dict) and any(isinstance(doc.get(k), dict) for k in state.STATE_KEYS) \
        and _claims(_events_of(doc)[0]) is None


def sniff(source: Source) -> bool:
    if first_byte(source) in (b"[", b"{"):
        doc = source.try_json()
        if doc is not None:
            return _claims(_events_of(doc)[0]) is not None or _state_only(doc)
    rows = jsonl_head(source, SNIFF)
    return bool(rows) and v1.is_v1_event(rows[0])


def _forgotten(args: dict[str, Any]) -> set[Any]:
    """CondensationAction.forgotten: the listed ids, or every id from start to end inclusive."""
    ids = args.get("forgotten_event_ids")
    if isinstance(ids, list):
        return set(ids)
    start, end = args.get("forgotten_events_start_id"), args.get("forgotten_events_end_id")
    if isinstance(start, int) and isinstance(end, int) and end >= start:
        return set(range(start, end + 1))
    return set()


def v0_view(events: list[tuple[dict[str, Any], str]], where: Where) -> list[tuple[dict[str, Any], str]]:
    """openhands/memory/view.py `View.from_events` over these events."""
    forgotten: set[Any] = set()
    summary: tuple[str, Any, dict[str, Any]] | None = None
    for event, at in events:
        if event.get("action") == "condensation":
            args = where.want_dict(event.get("args") or {}, f"{at}.args")
            for key in ("forgotten_event_ids",):
                if args.get(key) is not None:
                    where.want_list(args[key], f"{at}.args.{key}", "an array of event ids")
            forgotten |= _forgotten(args)
            if args.get("summary") is not None:
                text = where.want_text(args["summary"], f"{at}.args.summary")
                summary = (text, args.get("summary_offset"), event)
    kept = [(e, at) for e, at in events
            if e["id"] not in forgotten and e.get("action") not in ("condensation", "condensation_request")]
    if summary is not None:
        text, offset, event = summary
        pseudo = {"id": f"{event['id']}-summary", "source": "environment", "observation": "condense", "content": text}
        if isinstance(offset, int) and not isinstance(offset, bool):
            kept.insert(offset, (pseudo, "summary"))
        else:
            kept.append((pseudo, "summary"))
    return kept


def _v0_thread(events: list[tuple[dict[str, Any], str]], where: Where, tid: str) -> Thread:
    converter = V0Converter(where)
    done = converter.convert(events)
    compactions: list[RecordedCompaction] = []
    requested = False
    for p, (event, _at) in enumerate(events):
        action = event.get("action")
        if action == "condensation_request":
            requested = True
        elif action == "condensation":
            replacement = converter.convert(v0_view(events[: p + 1], where), in_view=True).messages
            raw_args = event.get("args")
            args: dict[str, Any] = raw_args if isinstance(raw_args, dict) else {}
            raw_summary = args.get("summary")
            summary = raw_summary if isinstance(raw_summary, str) else ""
            compactions.append(RecordedCompaction(
                index=done.before[p], trigger="request" if requested else None, summary=summary,
                message_id=f"openhands-{event['id']}-summary" if summary else None, replacement=replacement,
                kind="summary" if summary else "trim", source="openhands:CondensationAction"))
            requested = False
        elif event.get("observation") == "condense":
            raw_text = event.get("content")
            text = raw_text if isinstance(raw_text, str) else ""
            summary_message = mark(HumanMessage(content=text, id=f"openhands-{event['id']}"), "summary")
            compactions.append(RecordedCompaction(index=done.before[p], summary=text, message_id=summary_message.id,
                                                  replacement=None, source="openhands:AgentCondensationObservation"))
    extra: dict[str, Any] = {"version": "v0", "skipped_records": dict(sorted(done.skipped.items()))}
    return Thread(thread_id=tid, messages=done.messages, source_format=FORMAT, model=done.model,
                  max_input_tokens=done.window, system_prompt=done.system_prompt, tools=done.tools, usage=done.usage,
                  compactions=compactions, title=_title(done.messages), extra=extra)


def _v1_thread(events: list[tuple[dict[str, Any], str]], wrapper: Any, where: Where, tid: str,
               path: Path | None = None) -> Thread:
    done = v1.convert(events, where)
    records, window = v1.usage_records(events, wrapper, where)
    usage = v1.attach_usage(records, done, where)
    model = next((u.model for u in usage.values() if u.model), None)
    extra: dict[str, Any] = {"version": "v1", "skipped_records": dict(sorted(done.skipped.items()))}
    # the agent's LLM and condenser as the conversation recorded them: its wrapper's state, a full_state
    # snapshot in the stream, or the state file beside it (an export's trajectory.json, base_state.json)
    recorded, origin = state.state_of(wrapper), "the file's baseState"
    if recorded is None:
        recorded, origin = state.full_state_of(events), "a full_state event"
    if recorded is None:
        recorded, beside = state.sibling_state(path)
        origin = beside or origin
    settings = state.agent_settings(recorded)
    if settings:
        extra["openhands_state_from"] = origin
        model = model or settings.get("model")
        window = window or settings.get("window")
        if "condenser" in settings:
            extra["openhands_condenser"] = settings["condenser"]
    requests = state.request_steps(events, done.before, done.messages)
    if requests:
        extra["condensation_requests"] = requests
    return Thread(thread_id=tid, messages=done.messages, source_format=FORMAT, model=model, max_input_tokens=window,
                  system_prompt=done.system_prompt, tools=done.tools, usage=usage,
                  compactions=v1.compactions(events, done.before, where), title=_title(done.messages), extra=extra)


def _title(messages: list[Any]) -> str | None:
    from engine.tokens.content import message_text

    first = next((m for m in messages if isinstance(m, HumanMessage)), None)
    text = message_text(first).strip() if first is not None else ""
    return title_line(text) if text else None


class OpenHandsImporter(SingleThreadImporter):
    name = FORMAT

    def sniff(self, source: Source) -> bool:
        return guarded_sniff(sniff, source)

    def load(self, source: Source, thread_id: str | None) -> Thread:
        where = Where(source.label, FORMAT)
        tid = default_thread_id(source)
        try:
            doc: Any = source.json()
        except ThreadLoadError as exc:
            if first_byte(source) != b"{":
                raise where.unparseable(exc) from None
            try:  # V1 events one a line
                doc = [r for _, r in source.jsonl()]
            except ThreadLoadError as line_error:
                raise where.unparseable(line_error) from None
        if _state_only(doc):
            events_file = state.sibling_events(source.path)
            if events_file is None:
                where.fail("$", "this is an OpenHands V1 conversation's settings (baseState), not its events: open "
                                "its events.json (with this file beside it, or both uploaded together)")
            return self.load(Source.open(events_file), thread_id)
        items, base = _events_of(doc)
        version = _claims(items)
        if version is None:
            where.fail(base, "expected OpenHands events: V0 `{id, source, action|observation}` or V1 `{kind, id, source}` objects")
        if version == "v0":
            thread = _v0_thread(check_events(items, where, base), where, tid)
        else:
            thread = _v1_thread(v1.check_events(items, where, base), doc, where, tid, source.path)
        return check_thread_id(thread, thread_id, where)

    def list_threads(self, source: Source) -> list[ThreadRef]:
        thread = self.load(source, None)
        return [ThreadRef(thread.thread_id, thread.title, len(thread.messages))]


IMPORTER = OpenHandsImporter()
