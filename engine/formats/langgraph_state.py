"""A LangGraph checkpoint's state as a Thread, whichever saver stored it (SQLite, PostgreSQL).

Threads are the distinct `thread_id`s of root checkpoints (`checkpoint_ns = ''`; subgraphs write under
their own namespace and their messages reach the parent's state). A thread's messages are its latest
root checkpoint's `channel_values["messages"]`, or the one channel holding a list of messages (a state
with `chat_history`), plus a prompt still waiting under `__start__`. Items may be LangChain messages or
dicts (OpenAI style, `{type, data}`, `model_dump`); dicts without an id get a stable one. A
`DeltaChannel` (langgraph 1.x beta) value is rebuilt from its last snapshot plus later writes.
Recorded summarizations (writes whose `task_path` ends in `SummarizationMiddleware.before_model`) are
listed in `thread.extra["summarizations"]`; the summary message itself is already in the messages.

Each importer reads its tables with plain SQL into a `CheckpointStore`; everything from decoded
checkpoints to the Thread lives here, so the same graph gives the same Thread in either database.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    convert_to_messages,
    messages_from_dict,
)
from langgraph.checkpoint.serde.types import _DeltaSnapshot as _DeltaSnapshotType

from engine.base.errors import ThreadLoadError, ThreadNotFoundError
from engine.formats.langgraph_serde import shown
from engine.formats.pydantic_text import error_detail
from engine.formats.source import ThreadRef
from engine.thread.kinds import message_kind
from engine.thread.model import RecordedUsage, Thread, stable_id, title_line
from engine.tokens.content import message_text

SUMMARIZATION_TASK = "SummarizationMiddleware.before_model"
REMOVE_ALL = "__remove_all__"
ROOT_NS = ""
START = "__start__"
# Ids of stored dict messages without one. The SQLite importer came first and its ids are kept; the
# namespace is shared so the same state gives the same ids whichever database holds it.
ID_NAMESPACE = "langgraph_sqlite"


@dataclass
class Checkpoint:
    thread_id: str
    checkpoint_id: str
    parent_id: str | None
    values: dict[str, Any]
    metadata: dict[str, Any]


class CheckpointStore(Protocol):
    """The root checkpoints of one database, decoded by the strict serializer."""

    label: str  # what errors name: the file, or the URL without its password
    format: str

    def thread_ids(self) -> list[str]: ...

    def checkpoint(self, thread_id: str, checkpoint_id: str | None = None) -> Checkpoint | None:
        """The thread's latest root checkpoint, or the one with `checkpoint_id`."""
        ...

    def writes(self, thread_id: str, checkpoint_id: str, channel: str) -> list[Any]:
        """Values written to `channel` by the tasks run from `checkpoint_id`, in the order they were applied."""
        ...

    def summarization_writes(self, thread_id: str) -> list[tuple[str, str, Any]]:
        """`(checkpoint_id, task_id, value)` of each `messages` write by SummarizationMiddleware.before_model."""
        ...


def _is_message_like(item: Any) -> bool:
    if isinstance(item, BaseMessage):
        return True
    if isinstance(item, dict):
        return ("role" in item or "type" in item) and ("content" in item or "data" in item)
    return False


def _message_channel(values: dict[str, Any], delta: set[str]) -> str | None:
    """`messages`, or else the one channel that holds a list of messages (e.g. `chat_history`)."""
    if "messages" in values or "messages" in delta:
        return "messages"
    for key, value in values.items():
        if isinstance(value, _DeltaSnapshotType):
            value = value.value
        if not key.startswith(("__", "branch:")) and isinstance(value, list) and value \
                and all(_is_message_like(v) for v in value):
            return key
    start = values.get(START)
    if isinstance(start, dict):
        for key, value in start.items():
            if isinstance(value, list) and value and all(_is_message_like(v) for v in value):
                return str(key)
    return next(iter(sorted(delta)), None)


def _to_message(item: Any, position: int) -> BaseMessage:
    """A LangChain message from what a state may hold: a message, a `{type, data}` dict, an OpenAI-style
    or `model_dump` dict, a `(role, content)` pair or a plain string (as `add_messages` coerces them)."""
    if isinstance(item, BaseMessage):
        return item
    if isinstance(item, dict) and isinstance(item.get("data"), dict) and isinstance(item.get("type"), str):
        message = messages_from_dict([item])[0]
    elif isinstance(item, dict) and "role" not in item and isinstance(item.get("type"), str):
        fields = {k: v for k, v in item.items() if k != "type"}
        message = messages_from_dict([{"type": item["type"], "data": fields}])[0]
    else:
        message = convert_to_messages([item])[0]
    if not message.id:
        message.id = stable_id(ID_NAMESPACE, position, item)
    return message


def _as_list(value: Any) -> list[Any]:
    if isinstance(value, _DeltaSnapshotType):
        value = value.value
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) and not _is_pair(value) else [value]


def _is_pair(value: Any) -> bool:
    return isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, str) for v in value)


def _replay_delta(store: CheckpointStore, latest: Checkpoint, channel: str) -> list[Any]:
    """A `DeltaChannel` (langgraph 1.x, beta) keeps only occasional snapshots: rebuild the value from the
    nearest snapshot plus the channel's writes since, merged as `add_messages` does."""
    chain: list[Checkpoint] = []
    seed: list[Any] = []
    seen: set[str] = set()
    node: Checkpoint | None = latest
    while node is not None and node.checkpoint_id not in seen:
        seen.add(node.checkpoint_id)
        if node is not latest:
            chain.append(node)
        if channel in node.values:
            seed = _as_list(node.values[channel])
            break
        node = store.checkpoint(latest.thread_id, node.parent_id) if node.parent_id else None
    value: list[Any] = seed
    for step in reversed(chain):
        for write in store.writes(latest.thread_id, step.checkpoint_id, channel):
            value = _merge(value, _as_list(write))
    return value


def _merge(left: list[Any], right: list[Any]) -> list[Any]:
    # imported here: langgraph.graph costs a second, and format detection imports this module for every file
    from langgraph.graph.message import add_messages

    if all(isinstance(m, BaseMessage) for m in left + right):
        return list(add_messages(left, right))
    return left + right


def _latest_messages(store: CheckpointStore, thread_id: str) -> tuple[list[BaseMessage], Checkpoint, dict[str, Any]]:
    """The latest root checkpoint's messages, with what was read on the way (channel, pending input)."""
    where = f"thread {shown(thread_id)}"
    latest = store.checkpoint(thread_id)
    if latest is None:
        raise ThreadNotFoundError(f"thread {shown(thread_id)} has no checkpoint", path=store.label, format=store.format)
    delta = set(latest.metadata.get("counters_since_delta_snapshot") or {})
    channel = _message_channel(latest.values, delta)
    if channel is None:
        names = sorted(k for k in latest.values if not k.startswith(("__", "branch:")))
        listed = ", ".join(shown(k, quote=False) for k in names[:10]) + (f" (+{len(names) - 10} more)" if len(names) > 10 else "")
        raise ThreadLoadError(f"latest checkpoint has no messages (not a chat agent's graph; channels: {listed or 'none'})",
                              path=store.label, format=store.format, location=where)
    if channel in delta and channel not in latest.values:
        raw = _replay_delta(store, latest, channel)
    else:
        raw = _as_list(latest.values.get(channel))
    # An input checkpoint (step -1 of a run) holds the new input under `__start__`, not yet merged
    # into the state: a run that stopped there still shows its last prompt.
    start = latest.values.get(START)
    pending = _as_list(start.get(channel)) if isinstance(start, dict) else []
    info: dict[str, Any] = {"channel": channel}
    if pending:
        info["pending_input"] = len(pending)
    messages: list[BaseMessage] = []
    for position, item in enumerate(raw + pending):
        try:
            messages.append(_to_message(item, position))
        except (ValueError, TypeError, KeyError, NotImplementedError) as exc:
            # pydantic's several lines become one with the field's path (engine.formats.pydantic_text)
            suffix, detail = error_detail(exc)
            field = f" (at {suffix.lstrip('.')})" if suffix else ""
            raise ThreadLoadError(f"{shown(channel)} item {position} is not a message{field}: {detail}",
                                  path=store.label, format=store.format, location=where) from None
    return messages, latest, info


def _summarizations(store: CheckpointStore, thread_id: str, latest: Checkpoint, channel: str) -> list[dict[str, Any]]:
    """Each recorded summarization: where, the summary text, how many messages it kept and replaced."""
    found: list[dict[str, Any]] = []
    unnamed: dict[str, list[tuple[dict[str, Any], BaseMessage, int]]] = {}
    for checkpoint_id, task_id, update in store.summarization_writes(thread_id):
        if not isinstance(update, list) or not update or getattr(update[0], "id", None) != REMOVE_ALL:
            continue
        kept = [m for m in update[1:] if isinstance(m, BaseMessage)]
        summary = next((m for m in kept if message_kind(m) == "summary"), kept[0] if kept else None)
        before = store.checkpoint(thread_id, checkpoint_id)
        before_messages = before.values.get("messages") if before else None
        event = {
            "checkpoint_id": checkpoint_id,
            "task_id": task_id,
            "summary_message_id": summary.id if summary else None,
            "summary": message_text(summary) if summary else "",
            "kept_messages": len(kept) - (1 if summary else 0),
            "messages_before": len(before_messages) if isinstance(before_messages, list) else None,
        }
        found.append(event)
        if summary is not None and not summary.id:
            unnamed.setdefault(checkpoint_id, []).append((event, summary, kept.index(summary)))
    if unnamed:
        _name_summaries(store, thread_id, latest, channel, unnamed)
    return found


def _name_summaries(store: CheckpointStore, thread_id: str, latest: Checkpoint, channel: str,
                    unnamed: dict[str, list[tuple[dict[str, Any], BaseMessage, int]]]) -> None:
    """Give each summary written without an id the id the state gave it.

    SummarizationMiddleware returns its summary without an id; `add_messages` assigns a uuid4 in place
    when the write is applied (langgraph/graph/message.py, `m.id = str(uuid.uuid4())`), while the saver's
    `put_writes` runs on a background thread (langgraph/pregel/_loop.py `put_writes` -> `self.submit`,
    langgraph 1.2): whether the stored write already holds the id depends on which thread ran first.
    The state the write led to (the root checkpoint whose parent is the write's checkpoint) always
    holds it, at the summary's place after `RemoveMessage(REMOVE_ALL)`; walk back from the latest
    checkpoint to the earliest such child.
    """
    node: Checkpoint | None = latest
    seen: set[str] = set()
    while node is not None and unnamed and node.checkpoint_id not in seen:
        seen.add(node.checkpoint_id)
        parent = node.parent_id
        if parent in unnamed:
            state = [m for m in _as_list(node.values.get(channel)) if isinstance(m, BaseMessage)]
            for event, summary, place in unnamed.pop(parent):
                text = message_text(summary)
                same = [m for m in state if m.type == summary.type and message_text(m) == text]
                at = state[place] if place < len(state) and any(m is state[place] for m in same) else None
                named = at or (same[0] if len(same) == 1 else None)
                if named is not None and named.id:
                    event["summary_message_id"] = named.id
        node = store.checkpoint(thread_id, parent) if parent else None


def _title(messages: list[BaseMessage]) -> str | None:
    for m in messages:
        if isinstance(m, HumanMessage) and message_kind(m) == "original":
            text = message_text(m).strip()
            if text:
                return title_line(text)
    return None


def _usage(message: AIMessage) -> RecordedUsage | None:
    """LangChain usage_metadata: `input_tokens` already includes cache reads and writes."""
    meta = message.usage_metadata
    if not meta:
        return None
    return RecordedUsage(input_tokens=meta.get("input_tokens"), output_tokens=meta.get("output_tokens"))


def _model(messages: list[BaseMessage]) -> str | None:
    for m in reversed(messages):
        name = (m.response_metadata or {}).get("model_name") or (m.response_metadata or {}).get("model")
        if isinstance(m, AIMessage) and isinstance(name, str) and name:
            return name
    return None


def thread_refs(store: CheckpointStore) -> list[ThreadRef]:
    """Every root thread with its title and message count; one unreadable thread does not hide the others."""
    refs = []
    for tid in store.thread_ids():
        try:
            messages, _, _ = _latest_messages(store, tid)
        except ThreadLoadError:
            # One thread of another graph (no messages, pickled, ...) must not hide the others;
            # loading it says why it cannot be read.
            refs.append(ThreadRef(tid, None, None))
            continue
        refs.append(ThreadRef(tid, _title(messages), len(messages)))
    return refs


def state_thread(store: CheckpointStore, thread_id: str | None, extra: dict[str, Any] | None = None) -> Thread:
    """The thread's latest root checkpoint as a Thread (the first thread when `thread_id` is None)."""
    ids = store.thread_ids()
    if not ids:
        raise ThreadLoadError("database holds no checkpoints", path=store.label, format=store.format)
    tid = ids[0] if thread_id is None else thread_id
    if tid not in ids:
        listed = ", ".join(shown(i) for i in ids[:5]) + (f" (+{len(ids) - 5} more)" if len(ids) > 5 else "")
        raise ThreadNotFoundError(f"thread {shown(tid)} not found; threads: {listed}", path=store.label, format=store.format)
    messages, latest, info = _latest_messages(store, tid)
    usage = {m.id: u for m in messages if isinstance(m, AIMessage) and m.id and (u := _usage(m)) is not None}
    todos = latest.values.get("todos")
    details: dict[str, Any] = {"checkpoint_id": latest.checkpoint_id, "step": latest.metadata.get("step"),
                               "threads": len(ids), **info, **(extra or {})}
    summarizations = _summarizations(store, tid, latest, info["channel"])
    if summarizations:
        details["summarizations"] = summarizations
    system = messages[0] if messages and messages[0].type == "system" else None
    return Thread(
        thread_id=tid,
        messages=messages,
        source_format=store.format,
        model=_model(messages),
        system_prompt=message_text(system) if system is not None else None,
        todos=list(todos) if isinstance(todos, list) else [],
        usage=usage,
        title=_title(messages),
        extra=details,
    )
