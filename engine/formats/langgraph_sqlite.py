"""A LangGraph SQLite checkpoint database (`langgraph-checkpoint-sqlite`), opened strictly read-only.

Threads are `SELECT DISTINCT thread_id FROM checkpoints`; a thread's messages are the latest root
checkpoint's `channel_values["messages"]`, read through `SqliteSaver.get_tuple`. Recorded
summarizations (`writes` rows whose `task_path` ends in `SummarizationMiddleware.before_model`) are
listed in `thread.extra["summarizations"]`; the summary message itself is already in the messages.

The file must stay byte-identical and no `-wal`/`-shm` file may appear next to it. `setup()` would
run `PRAGMA journal_mode=WAL` and `CREATE TABLE`, so the saver is marked `is_setup = True`; and a
plain `mode=ro` connection to a WAL database still creates `-shm`/`-wal` files it cannot remove,
so a database without live side files is opened `immutable=1`, and one with them (a writer is
active or crashed) is copied with its WAL to a temporary folder first. Uploads (bytes, no path)
are written to a temporary file.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from engine.errors import ThreadLoadError, ThreadNotFoundError
from engine.formats.source import Source, ThreadRef
from engine.kinds import message_kind
from engine.thread import RecordedUsage, Thread
from engine.tokens import message_text

FORMAT = "langgraph_sqlite"
SUMMARIZATION_TASK = "SummarizationMiddleware.before_model"
REMOVE_ALL = "__remove_all__"
TITLE_CHARS = 80
ROOT_NS = ""


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


def _saver(conn: sqlite3.Connection) -> Any:
    from langgraph.checkpoint.sqlite import SqliteSaver

    saver = SqliteSaver(conn)
    saver.is_setup = True  # setup() writes (journal mode, CREATE TABLE): never on a read-only file
    saver._has_task_path = "task_path" in _columns(conn, "writes")
    return saver


def _thread_ids(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute("SELECT DISTINCT thread_id FROM checkpoints WHERE checkpoint_ns = ? ORDER BY thread_id", (ROOT_NS,))
    return [str(r[0]) for r in rows]


def _latest_messages(saver: Any, thread_id: str, label: str) -> tuple[list[BaseMessage], dict[str, Any]]:
    """The latest root checkpoint's messages and channel values."""
    try:
        snapshot = saver.get_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ROOT_NS}})
    except sqlite3.Error:
        raise
    except Exception as exc:  # the serializer meets whatever the database holds
        raise ThreadLoadError(f"cannot read the latest checkpoint ({type(exc).__name__}: {str(exc)[:200]})",
                              path=label, format=FORMAT, location=f"thread {thread_id!r}") from None
    if snapshot is None:
        raise ThreadNotFoundError(f"thread {thread_id!r} has no checkpoint", path=label, format=FORMAT)
    values = snapshot.checkpoint.get("channel_values") or {}
    messages = values.get("messages")
    if messages is None:
        raise ThreadLoadError("latest checkpoint has no 'messages' channel (not a chat agent's graph)",
                              path=label, format=FORMAT, location=f"thread {thread_id!r}")
    if not isinstance(messages, list) or not all(isinstance(m, BaseMessage) for m in messages):
        raise ThreadLoadError("'messages' channel does not hold LangChain messages", path=label, format=FORMAT,
                              location=f"thread {thread_id!r}")
    meta = {"checkpoint_id": snapshot.config["configurable"].get("checkpoint_id"),
            "step": (snapshot.metadata or {}).get("step"), "values": values}
    return list(messages), meta


def _summarizations(conn: sqlite3.Connection, saver: Any, thread_id: str) -> list[dict[str, Any]]:
    """Each recorded summarization: where, the summary text, how many messages it kept and replaced."""
    if not saver._has_task_path:
        return []
    rows = conn.execute(
        "SELECT checkpoint_id, task_id, type, value FROM writes WHERE thread_id = ? AND checkpoint_ns = ? "
        "AND channel = 'messages' AND task_path LIKE ? ORDER BY checkpoint_id, task_id, idx",
        (thread_id, ROOT_NS, f"%{SUMMARIZATION_TASK}"),
    ).fetchall()
    found: list[dict[str, Any]] = []
    for checkpoint_id, task_id, value_type, value in rows:
        update = saver.serde.loads_typed((value_type, value))
        if not isinstance(update, list) or not update or getattr(update[0], "id", None) != REMOVE_ALL:
            continue
        kept = [m for m in update[1:] if isinstance(m, BaseMessage)]
        summary = next((m for m in kept if message_kind(m) == "summary"), kept[0] if kept else None)
        before = saver.get_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ROOT_NS,
                                                   "checkpoint_id": checkpoint_id}})
        before_messages = (before.checkpoint.get("channel_values") or {}).get("messages") if before else None
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
                return "checkpoints" in _tables(conn)
        except (sqlite3.Error, ThreadLoadError):
            return False

    @contextmanager
    def _database(self, source: Source) -> Iterator[sqlite3.Connection]:
        if not source.is_sqlite():
            raise ThreadLoadError("not an SQLite database (bad header)", path=source.label, format=FORMAT)
        try:
            with open_readonly(source) as conn:
                tables = _tables(conn)
                if not {"checkpoints", "writes"} <= tables:
                    raise ThreadLoadError(
                        "not a LangGraph checkpoint database (no 'checkpoints' and 'writes' tables)",
                        path=source.label, format=FORMAT)
                yield conn
        except sqlite3.Error as exc:
            raise ThreadLoadError(f"SQLite error ({exc})", path=source.label, format=FORMAT) from None

    def list_threads(self, source: Source) -> list[ThreadRef]:
        with self._database(source) as conn:
            saver = _saver(conn)
            refs = []
            for tid in _thread_ids(conn):
                messages, _ = _latest_messages(saver, tid, source.label)
                refs.append(ThreadRef(tid, _title(messages), len(messages)))
            return refs

    def load(self, source: Source, thread_id: str | None) -> Thread:
        with self._database(source) as conn:
            ids = _thread_ids(conn)
            if not ids:
                raise ThreadLoadError("database holds no checkpoints", path=source.label, format=FORMAT)
            tid = ids[0] if thread_id is None else thread_id
            if tid not in ids:
                shown = ", ".join(repr(i) for i in ids[:5]) + (f" (+{len(ids) - 5} more)" if len(ids) > 5 else "")
                raise ThreadNotFoundError(f"thread {tid!r} not found; threads: {shown}", path=source.label, format=FORMAT)
            saver = _saver(conn)
            messages, meta = _latest_messages(saver, tid, source.label)
            usage = {m.id: u for m in messages if isinstance(m, AIMessage) and m.id and (u := _usage(m)) is not None}
            todos = meta["values"].get("todos")
            extra: dict[str, Any] = {"checkpoint_id": meta["checkpoint_id"], "step": meta["step"], "threads": len(ids)}
            summarizations = _summarizations(conn, saver, tid)
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
