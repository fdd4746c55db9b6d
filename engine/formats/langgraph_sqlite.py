"""A LangGraph SQLite checkpoint database (`langgraph-checkpoint-sqlite`), opened strictly read-only.

Read with plain SQL, not `SqliteSaver`, so every schema generation works: 0.2+ (`checkpoint_id`,
`checkpoint_ns`, a serializer `type` per row: msgpack, or json before ~langgraph-checkpoint 1.0.10),
0.1.x (`thread_ts`, untyped JSON with `lc: 1` messages) and 0.0.x (`thread_ts`, pickles, no `writes`).
Values are decoded by the strict serializer of `langgraph_serde` (pickles and encrypted rows are
refused); which state becomes the Thread is `langgraph_state`'s, shared with the PostgreSQL importer.

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
from pathlib import Path
from typing import Any

from engine.base.errors import ThreadLoadError
from engine.formats.langgraph_serde import decode_value
from engine.formats.langgraph_state import ROOT_NS, SUMMARIZATION_TASK, Checkpoint, state_thread, thread_refs
from engine.formats.source import Source, ThreadRef
from engine.thread.model import Thread

FORMAT = "langgraph_sqlite"


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


def _decode(type_: str | None, blob: Any, label: str, where: str) -> Any:
    return decode_value(type_, blob, label=label, format=FORMAT, where=where)


def _metadata(raw: Any) -> dict[str, Any]:
    try:
        meta = json.loads(raw) if raw is not None else {}
    except (ValueError, TypeError):
        return {}
    return meta if isinstance(meta, dict) else {}


class Store:
    """The checkpoints of one database, read with plain SQL for every schema generation."""

    format = FORMAT

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

    def summarization_writes(self, thread_id: str) -> list[tuple[str, str, Any]]:
        if not self.schema.task_path:
            return []
        rows = self.conn.execute(
            "SELECT checkpoint_id, task_id, type, value FROM writes WHERE thread_id = ? AND checkpoint_ns = ? "
            "AND channel = 'messages' AND task_path LIKE ? ORDER BY checkpoint_id, task_id, idx",
            (thread_id, ROOT_NS, f"%{SUMMARIZATION_TASK}"),
        ).fetchall()
        return [(str(cid), str(task_id), _decode(t, v, self.label, f"thread {thread_id!r}, writes of {cid}"))
                for cid, task_id, t, v in rows]


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
            return thread_refs(store)

    def load(self, source: Source, thread_id: str | None) -> Thread:
        with self._store(source) as store:
            return state_thread(store, thread_id)


IMPORTER = _LangGraphSqliteImporter()
