"""Inspect AI eval logs (`.eval` zip or `.json`): one thread per sample and epoch, `<id>:epoch<n>`.

A sample's `messages` are its full history (engine/formats/inspect_ai_messages.py); its `events`
add usage per model call, recorded compactions and sub-agents (inspect_ai_events.py); the log's
`eval.model` names the model (its window comes from the model table). A summary message written by
Inspect's summary compaction is not a message here but the RecordedCompaction's summary. Without
`--thread` the first sample (in `summaries.json` order) is loaded.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from engine.base.errors import ThreadNotFoundError
from engine.formats.inspect_ai_events import (
    Matcher,
    compaction_of,
    edits_of,
    input_messages,
    output_message,
    read_events,
    replacement_of,
    subagent_thread,
    usage_of,
)
from engine.formats.inspect_ai_log import FORMAT, EvalLog, SampleKey, open_log, sniff
from engine.formats.inspect_ai_messages import Attachments, is_summary, to_message
from engine.formats.jsonshape import Where, guarded_sniff, unique_ids
from engine.formats.source import Source, ThreadRef
from engine.thread.kinds import mark
from engine.thread.model import RecordedCompaction, RecordedEdit, RecordedUsage, Thread, title_line
from engine.tokens.content import message_text

SHOWN_IDS = 5


def _input_text(value: Any) -> str:
    """A sample's `input`: a string, or chat messages whose first user text is the prompt."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        for m in value:
            if isinstance(m, dict) and m.get("role") == "user":
                content = m.get("content")
                if isinstance(content, str):
                    return content
                if isinstance(content, list):
                    return "\n".join(str(c.get("text", "")) for c in content if isinstance(c, dict) and c.get("type") == "text")
    return ""


def _title(value: Any, resolve: Attachments | None = None) -> str | None:
    text = _input_text(resolve(value) if resolve else value).strip()
    return title_line(text) if text else None


class _Sample:
    """One sample's history as messages, with the summary messages set apart."""

    def __init__(self, sample: dict[str, Any], where: Where, base: str) -> None:
        self.resolve = Attachments(sample.get("attachments"))
        raw = sample.get("messages")
        items = [] if raw is None else where.want_list(raw, f"{base}.messages", "an array of chat messages")
        self.messages: list[BaseMessage] = []
        raws: list[dict[str, Any]] = []
        self.summaries: list[tuple[int, dict[str, Any]]] = []  # (index in messages, raw summary message)
        for i, item in enumerate(items):
            at = f"{base}.messages[{i}]"
            item = self.resolve(where.want_dict(item, at, "a chat message object"))
            if is_summary(item):
                self.summaries.append((len(self.messages), item))
                continue
            self.messages.append(to_message(item, where, at, i))
            raws.append(item)
        unique_ids(self.messages)
        self.raw_by_id = {str(m.id): r for m, r in zip(self.messages, raws, strict=True)}


def count_messages(sample: dict[str, Any]) -> int:
    raw = sample.get("messages")
    return sum(1 for m in raw if not (isinstance(m, dict) and is_summary(m))) if isinstance(raw, list) else 0


def _summary_message(raw: dict[str, Any], where: Where, index: int) -> HumanMessage:
    message = to_message(raw, where, "summary", index, prefix=f"{FORMAT}-summary")
    return mark(message, "summary")  # type: ignore[return-value]


def _prefix_of(history: list[BaseMessage], raw_by_id: dict[str, dict[str, Any]]) -> list[BaseMessage]:
    """The system and task-input messages CompactionSummary keeps (`partition_messages`, model/_trim.py)."""
    return [m for m in history if isinstance(m, SystemMessage) or raw_by_id.get(str(m.id), {}).get("source") == "input"]


def build_thread(log: EvalLog, key: SampleKey) -> Thread:
    where = log.where
    sample, base = log.sample(key)
    s = _Sample(sample, where, base)
    events = read_events(sample, where, base)
    pool_raw = sample.get("message_pool")
    pool = pool_raw if isinstance(pool_raw, list) else []
    messages = s.messages
    matcher = Matcher(messages, s.raw_by_id)
    main = [c for c in events.calls if c.owner is None]
    positions: list[int | None] = []
    usage: dict[str, RecordedUsage] = {}
    for call in main:
        produced = output_message(call.event, s.resolve, where, call.at)
        i = matcher.find(produced) if produced is not None else None
        positions.append(i)
        recorded = usage_of(call.event, where, call.at)
        if i is not None and recorded is not None:
            usage[str(messages[i].id)] = recorded
    compactions, edits = _compactions(s, events.compactions, main, positions, pool, where)
    tid = key.thread_id
    thread = Thread(thread_id=tid, messages=messages, source_format=FORMAT, usage=usage, compactions=compactions,
                    edits=edits, title=_title(sample.get("input"), s.resolve))
    spec = log.header.get("eval") if isinstance(log.header.get("eval"), dict) else {}
    model = spec.get("model") if isinstance(spec, dict) else None
    thread.model = model if isinstance(model, str) and model else None
    thread.system_prompt = next((message_text(m) for m in messages if isinstance(m, SystemMessage)), None)
    if main and isinstance(main[0].event.get("tools"), list):
        thread.tools = [t for t in s.resolve(main[0].event["tools"]) if isinstance(t, dict)]
    by_owner: dict[str, list[Any]] = {}
    for call in events.calls:
        if call.owner is not None:
            by_owner.setdefault(call.owner, []).append(call)
    for owner, calls in by_owner.items():
        sub = subagent_thread(calls, pool, s.resolve, where, f"{tid}/{owner}")
        if sub is not None:
            thread.subagents[owner] = sub
    thread.extra = _extra(sample, key, spec, events.skipped, sum(1 for p in positions if p is None))
    return thread


def _compactions(s: _Sample, recorded: list[tuple[dict[str, Any], str, int]], main: list[Any],
                 positions: list[int | None], pool: list[Any],
                 where: Where) -> tuple[list[RecordedCompaction], list[RecordedEdit]]:
    messages = s.messages
    compactions: list[RecordedCompaction] = []
    edits: list[RecordedEdit] = []
    cleared: set[str] = set()
    summaries = list(s.summaries)
    for event, at, calls_before in recorded:
        nxt = main[calls_before] if calls_before < len(main) else None
        p = positions[calls_before] if nxt is not None else None
        inputs = input_messages(nxt.event, pool, s.resolve, where, nxt.at) if nxt is not None else None
        index = p if p is not None else len(messages)
        ctype = event.get("type")
        if ctype == "edit":
            edits += edits_of(inputs or [], messages, index, cleared, event, where, at)
            continue
        summary_raw: dict[str, Any] | None = None
        if ctype == "summary" and summaries:
            index, summary_raw = summaries.pop(0)
        replacement: list[BaseMessage] | None = None
        if inputs is not None:
            if ctype == "summary":
                cut = next((k for k, (r, _) in enumerate(inputs) if is_summary(r)), None)
                inputs = inputs[: cut + 1] if cut is not None else inputs
            replacement = replacement_of(inputs, messages, s.raw_by_id, where)
        elif summary_raw is not None:
            replacement = _prefix_of(messages[:index], s.raw_by_id) + [_summary_message(summary_raw, where, index)]
        text = message_text(_summary_message(summary_raw, where, index)) if summary_raw is not None else ""
        compactions.append(compaction_of(event, at, index, replacement, where, text))
    # A summary message without its CompactionEvent (a log cut short) still marks a compaction.
    for index, raw in summaries:
        summary = _summary_message(raw, where, index)
        compactions.append(RecordedCompaction(index=index, summary=message_text(summary), message_id=summary.id,
                                              replacement=_prefix_of(messages[:index], s.raw_by_id) + [summary],
                                              source="inspect_ai:summary_message"))
    return compactions, edits


def _extra(sample: dict[str, Any], key: SampleKey, spec: Any, skipped: dict[str, int], unmatched: int) -> dict[str, Any]:
    extra: dict[str, Any] = {"sample_id": key.sample_id, "epoch": key.epoch}
    if isinstance(spec, dict):
        extra.update({k: spec[k] for k in ("task", "eval_id", "run_id") if isinstance(spec.get(k), str)})
    target = sample.get("target")
    if isinstance(target, (str, list)):
        extra["target"] = target
    scores = sample.get("scores")
    if isinstance(scores, dict):
        extra["scores"] = {k: v.get("value") for k, v in scores.items() if isinstance(v, dict)}
    if sample.get("error") is not None:
        extra["error"] = sample["error"]
    extra["events"] = dict(sorted(skipped.items()))
    if unmatched:
        extra["unmatched_model_calls"] = unmatched  # e.g. model-graded scorers, whose calls are not the agent's
    return extra


class InspectAIImporter:
    name = FORMAT

    def sniff(self, source: Source) -> bool:
        return guarded_sniff(sniff, source)

    def list_threads(self, source: Source) -> list[ThreadRef]:
        where = Where(source.label, FORMAT)
        log = open_log(source, where)
        refs = []
        for key in log.keys:
            sample, _ = log.sample(key)
            summary = log.summaries.get(key, sample)
            title = _title(summary.get("input"), Attachments(sample.get("attachments")))
            refs.append(ThreadRef(key.thread_id, title, count_messages(sample)))
        return refs

    def load(self, source: Source, thread_id: str | None) -> Thread:
        where = Where(source.label, FORMAT)
        log = open_log(source, where)
        if not log.keys:
            where.fail("$", "the log holds no samples (was it written with log_samples=False?)")
        ids = [k.thread_id for k in log.keys]
        if thread_id is None:
            key = log.keys[0]
        elif thread_id in ids:
            key = log.keys[ids.index(thread_id)]
        else:
            shown = ", ".join(ids[:SHOWN_IDS]) + (f" … ({len(ids)} threads)" if len(ids) > SHOWN_IDS else "")
            raise ThreadNotFoundError(f"thread {thread_id!r} not found; threads: {shown}", path=source.label, format=FORMAT)
        return build_thread(log, key)


IMPORTER = InspectAIImporter()
