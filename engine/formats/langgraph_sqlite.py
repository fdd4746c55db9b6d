"""A LangGraph SQLite checkpoint database (`langgraph-checkpoint-sqlite`), opened strictly read-only.

Threads are the distinct `thread_id`s of root checkpoints (`checkpoint_ns = ''`; subgraphs write under
their own namespace and their messages reach the parent's state). A thread's messages are its latest
root checkpoint's `channel_values["messages"]`, or the one channel holding a list of messages (a state
with `chat_history`), plus a prompt still waiting under `__start__`. Items may be LangChain messages or
dicts (OpenAI style, `{type, data}`, `model_dump`); dicts without an id get a stable one.

Read with plain SQL, not `SqliteSaver`, so every schema generation works: 0.2+ (`checkpoint_id`,
`checkpoint_ns`, a serializer `type` per row: msgpack, or json before ~langgraph-checkpoint 1.0.10),
0.1.x (`thread_ts`, untyped JSON with `lc: 1` messages) and 0.0.x (`thread_ts`, pickles, no `writes`).
Values are decoded by a strict JsonPlusSerializer (only messages and plain types are rebuilt);
pickles and encrypted rows are refused with a ThreadLoadError saying so. A `DeltaChannel` (1.x beta)
value is rebuilt from its last snapshot plus later writes. Recorded summarizations (`writes` rows
whose `task_path` ends in `SummarizationMiddleware.before_model`) are listed in
`thread.extra["summarizations"]`; the summary message itself is already in the messages.

The file must stay byte-identical and no `-wal`/`-shm` file may appear next to it. A
plain `mode=ro` connection to a WAL database still creates `-shm`/`-wal` files it cannot remove,
so a database without live side files is opened `immutable=1`, and one with them (a writer is
active or crashed) is copied with its WAL to a temporary folder first. Uploads (bytes, no path)
are written to a temporary file.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    convert_to_messages,
    messages_from_dict,
)
from langgraph.checkpoint.serde.types import _DeltaSnapshot as _DeltaSnapshotType
from langgraph.graph.message import add_messages

from engine.errors import ThreadLoadError, ThreadNotFoundError
from engine.formats.source import Source, ThreadRef
from engine.kinds import message_kind
from engine.thread import RecordedUsage, Thread, stable_id
from engine.tokens import message_text

FORMAT = "langgraph_sqlite"
SUMMARIZATION_TASK = "SummarizationMiddleware.before_model"
REMOVE_ALL = "__remove_all__"
TITLE_CHARS = 80
ROOT_NS = ""
START = "__start__"
# What JsonPlusSerializer reads; "pickle" and encrypted ("msgpack+aes") rows are refused by name.
SERDE_TYPES = frozenset({"json", "msgpack", "null", "bytes", "bytearray"})


def _uri(path: Path, *, immutable: bool) -> str:
    # as_uri() percent-encodes '?', '#' and spaces, so any file name is a valid URI path.
    return path.resolve().as_uri() + ("?mode=ro&immutable=1" if immutable else "?mode=ro")


def _side_files(path: Path) -> list[Path]:
    return [p for p in (Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal")) if p.exists()]


@contextmanager
def open_readonly(source: Source) -> Iterator[sqlite3.Connection]:
    """A read-only connection that leaves the database file and its folder exactly as they were."""
    with tempfile.TemporaryDirectory(prefix="ctxi-sqlite-") as tmp:
        path = source.path
        immutable = True
        if path is None:
            path = Path(tmp) / "upload.sqlite"
            path.write_bytes(source.data)
        elif _side_files(path):
            # A live or crashed writer: recover a private copy (with its WAL or journal) instead.
            copy = Path(tmp) / "copy.sqlite"
            shutil.copyfile(path, copy)
            for side in _side_files(path):
                if not side.name.endswith("-shm"):
                    shutil.copyfile(side, Path(f"{copy}{side.name[len(path.name):]}"))
            path, immutable = copy, False
        try:
            target = _uri(path, immutable=True) if immutable else str(path)
            conn = sqlite3.connect(target, uri=immutable, check_same_thread=False)
        except sqlite3.Error as exc:
            raise ThreadLoadError(f"cannot open SQLite database ({exc})", path=source.label, format=FORMAT) from None
        with closing(conn):
            yield conn


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


@dataclass(frozen=True)
class Schema:
    """Which generation of `langgraph-checkpoint-sqlite` wrote the tables.

    0.2 and later: `checkpoint_id`, `checkpoint_ns` (subgraphs) and a serializer `type` per row;
    0.1.x (inside langgraph): `thread_ts` and untyped JSON; 0.0.x: `thread_ts`, pickles, no `writes`.
    """

    key: str  # the column that orders a thread's checkpoints: checkpoint_id or thread_ts
    namespaced: bool
    typed: bool
    metadata: bool
    writes: bool
    task_path: bool


def _schema(conn: sqlite3.Connection) -> Schema | None:
    tables = _tables(conn)
    if "checkpoints" not in tables:
        return None
    cols = _columns(conn, "checkpoints")
    key = "checkpoint_id" if "checkpoint_id" in cols else "thread_ts" if "thread_ts" in cols else None
    if key is None or not {"thread_id", "checkpoint"} <= cols:
        return None
    writes = _columns(conn, "writes") if "writes" in tables else set()
    return Schema(key=key, namespaced="checkpoint_ns" in cols, typed="type" in cols, metadata="metadata" in cols,
                  writes={"thread_id", key, "channel", "value"} <= writes, task_path="task_path" in writes)


@cache
def _serde() -> Any:
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    # Strict: only LangChain messages and plain value types are rebuilt. The saver's default would
    # import and call whatever module and class a (possibly foreign) file names.
    return JsonPlusSerializer(allowed_msgpack_modules=None)


def _decode(type_: str | None, blob: Any, label: str, where: str) -> Any:
    """One stored value, refusing what cannot be read safely (pickles) or at all (encrypted)."""
    data = blob.encode() if isinstance(blob, str) else bytes(blob or b"")
    if type_ is None:  # before 0.2 there was no type column: JSON, or a pickle in 0.0.x
        type_ = "pickle" if data[:1] == b"\x80" else "json"
    if type_ == "pickle":
        raise ThreadLoadError("checkpoint is a Python pickle (langgraph 0.0.x, or a serializer with "
                              "pickle_fallback=True); unpickling a file can run code, so it is not read",
                              path=label, format=FORMAT, location=where)
    if "+" in type_:
        raise ThreadLoadError(f"checkpoint is encrypted ({type_!r}, EncryptedSerializer); ctxi has no key to "
                              "decrypt it", path=label, format=FORMAT, location=where)
    if type_ not in SERDE_TYPES:
        raise ThreadLoadError(f"unsupported serializer type {type_!r}", path=label, format=FORMAT, location=where)
    try:
        return _serde().loads_typed((type_, data))
    except Exception as exc:  # the serializer meets whatever the database holds
        raise ThreadLoadError(f"cannot decode {type_} data ({type(exc).__name__}: {str(exc)[:200]})",
                              path=label, format=FORMAT, location=where) from None


def _metadata(raw: Any) -> dict[str, Any]:
    try:
        meta = json.loads(raw) if raw is not None else {}
    except (ValueError, TypeError):
        return {}
    return meta if isinstance(meta, dict) else {}


@dataclass
class Checkpoint:
    thread_id: str
    checkpoint_id: str
    parent_id: str | None
    values: dict[str, Any]
    metadata: dict[str, Any]


class Store:
    """The checkpoints of one database, read with plain SQL for every schema generation."""

    def __init__(self, conn: sqlite3.Connection, schema: Schema, label: str) -> None:
        self.conn, self.schema, self.label = conn, schema, label

    def _root(self) -> str:
        return " AND checkpoint_ns = ''" if self.schema.namespaced else ""

    def thread_ids(self) -> list[str]:
        rows = self.conn.execute(f"SELECT DISTINCT thread_id FROM checkpoints WHERE 1{self._root()} ORDER BY thread_id")
        return [str(r[0]) for r in rows]

    def checkpoint(self, thread_id: str, checkpoint_id: str | None = None) -> Checkpoint | None:
        """The thread's latest root checkpoint, or the one with `checkpoint_id`."""
        s = self.schema
        parent = "parent_checkpoint_id" if s.key == "checkpoint_id" else "parent_ts"
        cols = f"{s.key}, {parent}, {'type' if s.typed else 'NULL'}, checkpoint, {'metadata' if s.metadata else 'NULL'}"
        sql = f"SELECT {cols} FROM checkpoints WHERE thread_id = ?{self._root()}"
        if checkpoint_id is None:
            row = self.conn.execute(f"{sql} ORDER BY {s.key} DESC LIMIT 1", (thread_id,)).fetchone()
        else:
            row = self.conn.execute(f"{sql} AND {s.key} = ?", (thread_id, checkpoint_id)).fetchone()
        if row is None:
            return None
        cid, parent_id, type_, blob, meta = row
        where = f"thread {thread_id!r}, checkpoint {cid}"
        body = _decode(type_, blob, self.label, where)
        values = body.get("channel_values") if isinstance(body, dict) else None
        if not isinstance(values, dict):
            raise ThreadLoadError("checkpoint has no channel_values", path=self.label, format=FORMAT, location=where)
        # 0.1.x wrote metadata with the serializer, 0.2+ as plain JSON: both read as JSON.
        return Checkpoint(thread_id, str(cid), parent_id, values, _metadata(meta))

    def writes(self, thread_id: str, checkpoint_id: str, channel: str) -> list[Any]:
        """Values written to `channel` by the tasks run from `checkpoint_id`, in the order they were applied."""
        s = self.schema
        if not s.writes:
            return []
        order = ("task_path, " if s.task_path else "") + "task_id, idx"
        rows = self.conn.execute(
            f"SELECT {'type' if s.typed else 'NULL'}, value FROM writes WHERE thread_id = ? AND {s.key} = ? "
            f"AND channel = ?{self._root()} ORDER BY {order}", (thread_id, checkpoint_id, channel))
        return [_decode(t, v, self.label, f"thread {thread_id!r}, writes of {checkpoint_id}") for t, v in rows]


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
        message.id = stable_id(FORMAT, position, item)
    return message


def _as_list(value: Any) -> list[Any]:
    if isinstance(value, _DeltaSnapshotType):
        value = value.value
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) and not _is_pair(value) else [value]


def _is_pair(value: Any) -> bool:
    return isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, str) for v in value)


def _replay_delta(store: Store, latest: Checkpoint, channel: str) -> list[Any]:
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
    if all(isinstance(m, BaseMessage) for m in left + right):
        return list(add_messages(left, right))
    return left + right


def _latest_messages(store: Store, thread_id: str) -> tuple[list[BaseMessage], Checkpoint, dict[str, Any]]:
    """The latest root checkpoint's messages, with what was read on the way (channel, pending input)."""
    where = f"thread {thread_id!r}"
    latest = store.checkpoint(thread_id)
    if latest is None:
        raise ThreadNotFoundError(f"thread {thread_id!r} has no checkpoint", path=store.label, format=FORMAT)
    delta = set(latest.metadata.get("counters_since_delta_snapshot") or {})
    channel = _message_channel(latest.values, delta)
    if channel is None:
        shown = ", ".join(sorted(k for k in latest.values if not k.startswith(("__", "branch:")))) or "none"
        raise ThreadLoadError(f"latest checkpoint has no messages (not a chat agent's graph; channels: {shown})",
                              path=store.label, format=FORMAT, location=where)
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
            raise ThreadLoadError(f"{channel!r} item {position} is not a message ({type(exc).__name__}: "
                                  f"{str(exc).splitlines()[0][:160]})", path=store.label, format=FORMAT,
                                  location=where) from None
    return messages, latest, info


def _summarizations(store: Store, thread_id: str) -> list[dict[str, Any]]:
    """Each recorded summarization: where, the summary text, how many messages it kept and replaced."""
    if not store.schema.task_path:
        return []
    rows = store.conn.execute(
        "SELECT checkpoint_id, task_id, type, value FROM writes WHERE thread_id = ? AND checkpoint_ns = ? "
        "AND channel = 'messages' AND task_path LIKE ? ORDER BY checkpoint_id, task_id, idx",
        (thread_id, ROOT_NS, f"%{SUMMARIZATION_TASK}"),
    ).fetchall()
    found: list[dict[str, Any]] = []
    for checkpoint_id, task_id, value_type, value in rows:
        update = _decode(value_type, value, store.label, f"thread {thread_id!r}, writes of {checkpoint_id}")
        if not isinstance(update, list) or not update or getattr(update[0], "id", None) != REMOVE_ALL:
            continue
        kept = [m for m in update[1:] if isinstance(m, BaseMessage)]
        summary = next((m for m in kept if message_kind(m) == "summary"), kept[0] if kept else None)
        before = store.checkpoint(thread_id, checkpoint_id)
        before_messages = before.values.get("messages") if before else None
        found.append({
            "checkpoint_id": checkpoint_id,
            "task_id": task_id,
            "summary_message_id": summary.id if summary else None,
            "summary": message_text(summary) if summary else "",
            "kept_messages": len(kept) - (1 if summary else 0),
            "messages_before": len(before_messages) if isinstance(before_messages, list) else None,
        })
    return found


def _title(messages: list[BaseMessage]) -> str | None:
    for m in messages:
        if isinstance(m, HumanMessage) and message_kind(m) == "original":
            text = message_text(m).strip()
            if text:
                return text.splitlines()[0][:TITLE_CHARS]
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


class _LangGraphSqliteImporter:
    name = FORMAT

    def sniff(self, source: Source) -> bool:
        if not source.is_sqlite():
            return False
        try:
            with open_readonly(source) as conn:
                return _schema(conn) is not None
        except (sqlite3.Error, ThreadLoadError):
            return False

    @contextmanager
    def _store(self, source: Source) -> Iterator[Store]:
        if not source.is_sqlite():
            raise ThreadLoadError("not an SQLite database (bad header)", path=source.label, format=FORMAT)
        try:
            with open_readonly(source) as conn:
                schema = _schema(conn)
                if schema is None:
                    raise ThreadLoadError(
                        "not a LangGraph checkpoint database (no 'checkpoints' table with thread_id, "
                        "checkpoint_id or thread_ts, and checkpoint columns)", path=source.label, format=FORMAT)
                yield Store(conn, schema, source.label)
        except sqlite3.Error as exc:
            raise ThreadLoadError(f"SQLite error ({exc})", path=source.label, format=FORMAT) from None

    def list_threads(self, source: Source) -> list[ThreadRef]:
        with self._store(source) as store:
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

    def load(self, source: Source, thread_id: str | None) -> Thread:
        with self._store(source) as store:
            ids = store.thread_ids()
            if not ids:
                raise ThreadLoadError("database holds no checkpoints", path=source.label, format=FORMAT)
            tid = ids[0] if thread_id is None else thread_id
            if tid not in ids:
                shown = ", ".join(repr(i) for i in ids[:5]) + (f" (+{len(ids) - 5} more)" if len(ids) > 5 else "")
                raise ThreadNotFoundError(f"thread {tid!r} not found; threads: {shown}", path=source.label, format=FORMAT)
            messages, latest, info = _latest_messages(store, tid)
            usage = {m.id: u for m in messages if isinstance(m, AIMessage) and m.id and (u := _usage(m)) is not None}
            todos = latest.values.get("todos")
            extra: dict[str, Any] = {"checkpoint_id": latest.checkpoint_id, "step": latest.metadata.get("step"),
                                     "threads": len(ids), **info}
            summarizations = _summarizations(store, tid)
            if summarizations:
                extra["summarizations"] = summarizations
            system = messages[0] if messages and messages[0].type == "system" else None
            return Thread(
                thread_id=tid,
                messages=messages,
                source_format=FORMAT,
                model=_model(messages),
                system_prompt=message_text(system) if system is not None else None,
                todos=list(todos) if isinstance(todos, list) else [],
                usage=usage,
                title=_title(messages),
                extra=extra,
            )


IMPORTER = _LangGraphSqliteImporter()
