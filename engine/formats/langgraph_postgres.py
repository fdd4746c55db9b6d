"""A LangGraph PostgreSQL checkpoint database (`langgraph-checkpoint-postgres`), read strictly read-only.

The source is a libpq URL (`postgresql://user@host:5432/db`); its password is never shown (see
`dburl`). Tables, as `PostgresSaver.setup()` creates them (`langgraph/checkpoint/postgres/base.py`,
MIGRATIONS; versions 1.0.0 to 3.2.0 read):
- `checkpoints(thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint JSONB,
  metadata JSONB)`: the checkpoint without most of its values. Since 2.0.25 `put` keeps primitive
  channel values (None, str, int, float, bool) inline in `checkpoint -> 'channel_values'`; before, and
  for everything else, values live in
- `checkpoint_blobs(thread_id, checkpoint_ns, channel, version, type, blob)`: one row per channel
  version, joined through `checkpoint -> 'channel_versions'` as the saver's SELECT_SQL does; type
  "empty" marks a channel with no value. A `DeltaChannel` snapshot is inline `true` plus a blob.
- `checkpoint_writes(thread_id, checkpoint_ns, checkpoint_id, task_id, [task_path since 2.0.15,
  migration 9], idx, channel, type, blob)`: pending writes.
- `checkpoint_migrations(v)` (since 1.0.x): the last migration run, reported as
  `extra["schema_migration"]`; columns, not the number, decide how to read.
`ShallowPostgresSaver` (2.0.15+, deprecated in 2.0.20) keeps one checkpoint per thread in tables of
the same names without `checkpoint_id`/`version`: it is read too.

Read-only, whatever the server or the URL's options say: the connection is not in autocommit, its
transactions are `BEGIN ... READ ONLY` (psycopg `Connection.read_only`) at REPEATABLE READ (one
snapshot for every query of a load, while an agent may be writing), `transaction_read_only` is
checked before anything is read, every statement has a time limit, and the transaction is rolled
back, never committed. psycopg (v3) is imported only here and only when a URL is read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from engine.base.errors import ThreadLoadError
from engine.formats.dburl import ambiguity, scrub
from engine.formats.langgraph_serde import decode_value, shown
from engine.formats.langgraph_state import ROOT_NS, SUMMARIZATION_TASK, Checkpoint, state_thread, thread_refs
from engine.formats.source import Source, ThreadRef
from engine.thread.model import Thread

FORMAT = "langgraph_postgres"
CONNECT_TIMEOUT_S = 10
STATEMENT_TIMEOUT_MS = 120_000
APPLICATION_NAME = "ctxi (read-only)"
EMPTY = "empty"  # BasePostgresSaver._dump_blobs: a channel version without a value
INSTALL_HINT = "pip install 'context-inspector[postgres]'"
TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations")


def _driver(label: str) -> Any:
    try:
        import psycopg
    except ImportError:
        raise ThreadLoadError(f"reading a PostgreSQL database needs the psycopg driver ({INSTALL_HINT})",
                              path=label, format=FORMAT) from None
    return psycopg


def _one_line(exc: BaseException, url: str) -> str:
    """A driver error as one line, without the URL's password."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return scrub(text, url)[:300]


@contextmanager
def open_readonly(source: Source) -> Iterator[Any]:
    """A psycopg connection whose only transaction is READ ONLY, rolled back at the end."""
    assert source.url is not None
    unclear = ambiguity(source.url)
    if unclear is not None:  # libpq would read part of the password as host or database, and errors echo those
        raise ThreadLoadError(unclear, path=source.label, format=FORMAT)
    psycopg = _driver(source.label)
    try:
        conn = psycopg.connect(source.url, autocommit=False, connect_timeout=CONNECT_TIMEOUT_S,
                               application_name=APPLICATION_NAME)
    except psycopg.Error as exc:
        raise ThreadLoadError(f"cannot connect to PostgreSQL ({_one_line(exc, source.url)})",
                              path=source.label, format=FORMAT) from None
    try:
        conn.read_only = True
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        # the first statement opens the transaction: BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY
        conn.execute(f"SET LOCAL statement_timeout = {STATEMENT_TIMEOUT_MS}")
        row = conn.execute("SELECT current_setting('transaction_read_only')").fetchone()
        if row is None or row[0] != "on":  # e.g. a pooler that swallowed the BEGIN options
            raise ThreadLoadError("the server did not open a read-only transaction; nothing was read",
                                  path=source.label, format=FORMAT)
        yield conn
    except psycopg.Error as exc:
        raise ThreadLoadError(f"PostgreSQL error ({_one_line(exc, source.url)})", path=source.label,
                              format=FORMAT) from None
    finally:
        try:
            conn.rollback()  # nothing to keep; never a COMMIT
        except psycopg.Error:
            pass  # the connection broke: the server ends the transaction itself
        finally:
            conn.close()


@dataclass(frozen=True)
class Schema:
    """Which saver (and generation) made the tables."""

    history: bool  # PostgresSaver (checkpoint_id per row) or ShallowPostgresSaver (latest only)
    blob_versions: bool
    writes: bool
    task_path: bool
    migration: int | None


# The column types the saver creates (MIGRATIONS, above) that the queries below read; a table made by
# hand or by another tool with other types (an integer `type`, a text `blob`) is refused by name
# rather than met by casts and comparisons that fail on some row. json for JSONB and varchar for
# text read the same way, so they pass.
TEXT = frozenset({"text", "character varying"})
JSON = frozenset({"jsonb", "json"})
INTEGER = frozenset({"integer", "bigint", "smallint"})
COLUMN_TYPES: dict[str, dict[str, frozenset[str]]] = {
    "checkpoints": {"thread_id": TEXT, "checkpoint_ns": TEXT, "checkpoint_id": TEXT, "parent_checkpoint_id": TEXT,
                    "checkpoint": JSON, "metadata": JSON},
    "checkpoint_blobs": {"thread_id": TEXT, "checkpoint_ns": TEXT, "channel": TEXT, "version": TEXT, "type": TEXT,
                         "blob": frozenset({"bytea"})},
    "checkpoint_writes": {"thread_id": TEXT, "checkpoint_ns": TEXT, "checkpoint_id": TEXT, "task_id": TEXT,
                          "task_path": TEXT, "idx": INTEGER, "channel": TEXT, "type": TEXT, "blob": frozenset({"bytea"})},
    "checkpoint_migrations": {"v": INTEGER},
}


def _columns(conn: Any) -> dict[str, dict[str, str]]:
    """Each of TABLES found through search_path: its columns and their types."""
    # to_regclass resolves through search_path, as the saver's unqualified table names do
    rows = conn.execute(
        "SELECT c.relname, a.attname, format_type(a.atttypid, NULL) FROM pg_attribute a "
        "JOIN pg_class c ON c.oid = a.attrelid "
        "WHERE c.oid = ANY(ARRAY[" + ", ".join(f"to_regclass('{t}')" for t in TABLES) + "]::oid[]) "
        "AND a.attnum > 0 AND NOT a.attisdropped").fetchall()
    found: dict[str, dict[str, str]] = {}
    for table, column, type_name in rows:
        found.setdefault(str(table), {})[str(column)] = str(type_name)
    return found


def _check_types(cols: dict[str, dict[str, str]], label: str) -> None:
    for table, expected in COLUMN_TYPES.items():
        for column, allowed in expected.items():
            got = cols.get(table, {}).get(column)
            if got is not None and got not in allowed:
                want = " or ".join(sorted(allowed, key=lambda t: t not in ("text", "jsonb", "integer", "bytea")))
                raise ThreadLoadError(f"column {table}.{column} is {got}, not {want} as langgraph-checkpoint-postgres "
                                      "creates it; not read", path=label, format=FORMAT)


def _schema(conn: Any, label: str = "") -> Schema | None:
    cols = _columns(conn)
    checkpoints, blobs = set(cols.get("checkpoints", {})), set(cols.get("checkpoint_blobs", {}))
    if not {"thread_id", "checkpoint_ns", "checkpoint"} <= checkpoints \
            or not {"thread_id", "checkpoint_ns", "channel", "type", "blob"} <= blobs:
        return None
    _check_types(cols, label)
    writes = set(cols.get("checkpoint_writes", {}))
    migration = None
    # a role granted only the data tables still reads: the migration number is a detail
    if "v" in cols.get("checkpoint_migrations", {}) and \
            conn.execute("SELECT has_table_privilege('checkpoint_migrations', 'SELECT')").fetchone()[0]:
        row = conn.execute("SELECT max(v) FROM checkpoint_migrations").fetchone()
        migration = row[0] if row else None
    return Schema(history="checkpoint_id" in checkpoints, blob_versions="version" in blobs,
                  writes={"thread_id", "checkpoint_id", "channel", "type", "blob", "idx"} <= writes,
                  task_path="task_path" in writes, migration=migration)


def _json(text: str | None, label: str, where: str) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ThreadLoadError(f"unreadable JSONB ({type(exc).__name__})", path=label, format=FORMAT,
                              location=where) from None


class Store:
    """The root checkpoints of one database, read with plain SQL inside the read-only transaction."""

    format = FORMAT

    def __init__(self, conn: Any, schema: Schema, label: str) -> None:
        self.conn, self.schema, self.label = conn, schema, label

    def _decode(self, type_: str | None, blob: Any, where: str) -> Any:
        return decode_value(type_, blob, label=self.label, format=FORMAT, where=where)

    def thread_ids(self) -> list[str]:
        # byte order, as SQLite lists them, whatever the database's collation
        rows = self.conn.execute("SELECT DISTINCT thread_id COLLATE \"C\" AS t FROM checkpoints "
                                 "WHERE checkpoint_ns = %s ORDER BY t", (ROOT_NS,)).fetchall()
        return [str(r[0]) for r in rows]

    def checkpoint(self, thread_id: str, checkpoint_id: str | None = None) -> Checkpoint | None:
        if self.schema.history:
            sql = ("SELECT checkpoint_id, parent_checkpoint_id, checkpoint::text, metadata::text FROM checkpoints "
                   "WHERE thread_id = %s AND checkpoint_ns = %s")
            if checkpoint_id is None:  # the saver's get_tuple: ORDER BY checkpoint_id DESC LIMIT 1
                row = self.conn.execute(f"{sql} ORDER BY checkpoint_id DESC LIMIT 1", (thread_id, ROOT_NS)).fetchone()
            else:
                row = self.conn.execute(f"{sql} AND checkpoint_id = %s", (thread_id, ROOT_NS, checkpoint_id)).fetchone()
        else:
            row = self.conn.execute("SELECT checkpoint ->> 'id', NULL, checkpoint::text, metadata::text FROM checkpoints "
                                    "WHERE thread_id = %s AND checkpoint_ns = %s", (thread_id, ROOT_NS)).fetchone()
            if row is not None and checkpoint_id is not None and row[0] != checkpoint_id:
                row = None
        if row is None:
            return None
        cid, parent_id, body_text, meta_text = row
        where = f"thread {shown(thread_id)}, checkpoint {shown(cid, quote=False)}"
        body = _json(body_text, self.label, f"{where}, checkpoints.checkpoint")
        if not isinstance(body, dict):
            raise ThreadLoadError("checkpoint is not a JSON object", path=self.label, format=FORMAT,
                                  location=f"{where}, checkpoints.checkpoint")
        inline = body.get("channel_values")  # absent before 2.0.25: every value was a blob
        values: dict[str, Any] = dict(inline) if isinstance(inline, dict) else {}
        versions = body.get("channel_versions")
        if isinstance(versions, dict) and versions:
            # a blob wins over an inline value: a DeltaChannel snapshot is inline `true` plus its blob
            values.update(self._blobs(thread_id, versions, where))
        meta = _json(meta_text, self.label, f"{where}, checkpoints.metadata")
        return Checkpoint(thread_id, str(cid), parent_id, values, meta if isinstance(meta, dict) else {})

    def _blobs(self, thread_id: str, versions: dict[str, Any], where: str) -> dict[str, Any]:
        channels = [str(k) for k in versions]
        if self.schema.blob_versions:
            rows = self.conn.execute(
                "SELECT b.channel, b.type, b.blob FROM checkpoint_blobs b JOIN unnest(%s::text[], %s::text[]) "
                "AS v(channel, version) ON b.channel = v.channel AND b.version = v.version "
                "WHERE b.thread_id = %s AND b.checkpoint_ns = %s",
                (channels, [str(versions[c]) for c in versions], thread_id, ROOT_NS)).fetchall()
        else:  # ShallowPostgresSaver: one blob per channel
            rows = self.conn.execute(
                "SELECT channel, type, blob FROM checkpoint_blobs WHERE thread_id = %s AND checkpoint_ns = %s "
                "AND channel = ANY(%s)", (thread_id, ROOT_NS, channels)).fetchall()
        return {str(channel): self._decode(type_, blob, f"{where}, checkpoint_blobs row of channel {shown(channel)}")
                for channel, type_, blob in rows if type_ != EMPTY}

    def _write_rows(self, thread_id: str, where_sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        path = "task_path" if self.schema.task_path else "''"
        rows = self.conn.execute(
            f"SELECT checkpoint_id, {path}, task_id, idx, type, blob FROM checkpoint_writes "
            f"WHERE thread_id = %s AND checkpoint_ns = %s AND {where_sql}", (thread_id, ROOT_NS, *params)).fetchall()
        # langgraph.checkpoint.base.writes_sort_key: (task_path, task_id, idx), in Python's string order;
        # a NULL idx (the saver's column is NOT NULL; a damaged table's need not be) sorts first
        return sorted(rows, key=lambda r: (str(r[0]), str(r[1]), str(r[2]), -1 if r[3] is None else r[3]))

    def writes(self, thread_id: str, checkpoint_id: str, channel: str) -> list[Any]:
        if not self.schema.writes:
            return []
        rows = self._write_rows(thread_id, "checkpoint_id = %s AND channel = %s", (checkpoint_id, channel))
        return [self._decode(t, v, _write_row(thread_id, checkpoint_id, task, idx)) for _, _, task, idx, t, v in rows]

    def summarization_writes(self, thread_id: str) -> list[tuple[str, str, Any]]:
        if not self.schema.task_path:
            return []
        rows = self._write_rows(thread_id, "channel = 'messages' AND task_path LIKE %s", (f"%{SUMMARIZATION_TASK}",))
        return [(str(cid), str(task_id), self._decode(t, v, _write_row(thread_id, cid, task_id, idx)))
                for cid, _, task_id, idx, t, v in rows]


def _write_row(thread_id: str, checkpoint_id: Any, task_id: Any, idx: Any) -> str:
    return (f"thread {shown(thread_id)}, checkpoint_writes row of checkpoint {shown(checkpoint_id, quote=False)} "
            f"(task {shown(task_id, quote=False)}, idx {idx})")


class _LangGraphPostgresImporter:
    name = FORMAT

    def sniff(self, source: Source) -> bool:
        # a postgresql:// URL is unambiguous; connecting to look would cost a round trip per detection
        return source.url is not None

    @contextmanager
    def _store(self, source: Source) -> Iterator[Store]:
        if source.url is None:
            raise ThreadLoadError("not a PostgreSQL URL (give postgresql://user@host:port/database)",
                                  path=source.label, format=FORMAT)
        with open_readonly(source) as conn:
            schema = _schema(conn, source.label)
            if schema is None:
                raise ThreadLoadError(
                    "not a LangGraph checkpoint database (no 'checkpoints' and 'checkpoint_blobs' tables as "
                    "langgraph-checkpoint-postgres creates them; check the database name and search_path)",
                    path=source.label, format=FORMAT)
            yield Store(conn, schema, source.label)

    def list_threads(self, source: Source) -> list[ThreadRef]:
        with self._store(source) as store:
            return thread_refs(store)

    def load(self, source: Source, thread_id: str | None) -> Thread:
        with self._store(source) as store:
            s = store.schema
            return state_thread(store, thread_id, extra={
                "schema_migration": s.migration, "saver": "PostgresSaver" if s.history else "ShallowPostgresSaver"})


IMPORTER = _LangGraphPostgresImporter()
