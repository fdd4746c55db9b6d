"""Issue 11: hostile rows in a real PostgreSQL server's checkpoint tables, read through the SQL row layer.

tests/safety/test_wrong_types_all_formats.py fuzzes the shared state reader with an in-memory store;
this file fuzzes engine/formats/langgraph_postgres.py itself. The rows the real `PostgresSaver`
writes for two threads (one tool call; one recorded summarization, so there are pending writes with
a `task_path`) are copied into a fresh schema per example, with up to three changes: a column set to
a hostile value (NULL, text where an id goes, huge strings and blobs, truncated or garbage
checkpoint blobs, msgpack declaring billions of items, extension types, pickles, unknown or
encrypted serializer type names), a row dropped (a missing parent, a missing blob) or duplicated
(the tables here have no primary key, as a hand-made or damaged database may not), a field of the
checkpoint or metadata JSON given a wrong type, or the latest checkpoint turned into a
`DeltaChannel` one so its parents are walked. Then columns may be given other types than the
saver's (text for JSONB, text for BYTEA, text for the write index, integers for text), or the
tables reshaped to the `ShallowPostgresSaver` layout. Listing and loading must give a valid Thread
(which then inspects) or one ThreadLoadError line naming the database and the place; never a
traceback, never a hang (every statement has a time limit).

Examples: CTXI_FUZZ_EXAMPLES (default 12, so the whole suite stays fast; e.g. CTXI_FUZZ_EXAMPLES=500
for a longer hunt).
"""

from __future__ import annotations

import itertools
import json
import os
from typing import Any

import ormsgpack
import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.postgres import PostgresSaver

from engine.base.errors import ThreadLoadError, ThreadNotFoundError
from engine.formats import list_threads, load_thread
from engine.recorded.inspect import inspect_thread
from engine.tokens.counters import TiktokenCounter
from tests.formats.langgraph_agents import write_threads
from tests.formats.mutations import WRONG_VALUES, mutate, paths
from tests.pg_cluster import Cluster

EXAMPLES = int(os.environ.get("CTXI_FUZZ_EXAMPLES", "12"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])
THREADS = ("alpha", "beta")
TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations")
# The saver's tables (langgraph/checkpoint/postgres/base.py MIGRATIONS, 3.2.0), without the primary
# keys and NOT NULL constraints a hostile or damaged database need not have.
DDL = {
    "checkpoint_migrations": "v INTEGER",
    "checkpoints": "thread_id TEXT, checkpoint_ns TEXT, checkpoint_id TEXT, parent_checkpoint_id TEXT, type TEXT, "
                   "checkpoint JSONB, metadata JSONB",
    "checkpoint_blobs": "thread_id TEXT, checkpoint_ns TEXT, channel TEXT, version TEXT, type TEXT, blob BYTEA",
    "checkpoint_writes": "thread_id TEXT, checkpoint_ns TEXT, checkpoint_id TEXT, task_id TEXT, idx INTEGER, "
                         "channel TEXT, type TEXT, blob BYTEA, task_path TEXT",
}
COLUMNS = {table: [c.split()[0] for c in ddl.split(", ")] for table, ddl in DDL.items()}
KIND = {"checkpoint": "json", "metadata": "json", "blob": "bytes", "idx": "int", "v": "int", "type": "serde"}

# -- hostile values --------------------------------------------------------------------------------

SERDE_NAMES = st.sampled_from(["msgpack", "json", "null", "bytes", "bytearray", "empty", "pickle", "msgpack+aes",
                               "json+aes", "", "MSGPACK", "ext", "x" * 300, "../msgpack"]) | st.none()
safe_text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12)
TEXTS = st.none() | safe_text | st.sampled_from(
    ["", "alpha", "beta", "'; DROP TABLE checkpoints; --", "../../etc/passwd", "%s", "00000000000000000000000000000001.0",
     "a" * (1 << 20)])
json_leaves = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | safe_text
JSON_VALUES = st.recursive(json_leaves, lambda c: st.lists(c, max_size=4) | st.dictionaries(safe_text, c, max_size=4),
                           max_leaves=20)
HUGE_JSON = st.sampled_from([{"v": 4, "id": "x" * (1 << 21)}, ["[" * 5000 + "]" * 5000], "y" * (1 << 21)])
INTS = st.none() | st.sampled_from([-1, 0, 1, 2**31 - 1, -(2**31)])


def _blobs(good: bytes | None) -> st.SearchStrategy[bytes | None]:
    base = good or b"\x90"
    return st.none() | st.binary(max_size=64) | st.sampled_from([
        b"", b"\x80\x04K\x01.",  # a pickle
        b"\xc1\xc1",  # msgpack's never-used byte
        b"\xdd\xff\xff\xff\xff",  # array32 of 4,294,967,295 items, none present
        b"\xdb\xff\xff\xff\xff" + b"x" * 10,  # str32 of 4 GB, 10 bytes present
        b"\xdf\xff\xff\xff\xff",  # map32, likewise
        ormsgpack.packb("z" * (1 << 21)),  # a 2 MB string
        ormsgpack.packb([[[[[[[[[[[]]]]]]]]]]] * 1000),
        ormsgpack.packb(ormsgpack.Ext(1, ormsgpack.packb(["os", "system", ["echo hi"]]))),
        ormsgpack.packb(ormsgpack.Ext(5, b"\x00\x01")),
        ormsgpack.packb([{"lc": 1, "type": "constructor", "id": ["os", "system"], "kwargs": {}}]),
        json.dumps({"role": "user", "content": "hi"}).encode(),
        base + b"\x00garbage",
    ]) | st.integers(min_value=0, max_value=len(base)).map(lambda n: base[:n]) \
        | JSON_VALUES.map(lambda v: ormsgpack.packb(v)) \
        | st.tuples(st.integers(min_value=-128, max_value=127), st.binary(max_size=16)).map(
            lambda t: ormsgpack.packb(ormsgpack.Ext(t[0] & 0x7F, t[1])))


def hostile(data: st.DataObject, column: str, current: Any) -> Any:
    kind = KIND.get(column, "text")
    if kind == "json":
        return data.draw(JSON_VALUES | HUGE_JSON)
    if kind == "bytes":
        return data.draw(_blobs(bytes(current) if current is not None else None))
    if kind == "int":
        return data.draw(INTS)
    if kind == "serde":
        return data.draw(SERDE_NAMES)
    return data.draw(TEXTS)


# -- the tables -----------------------------------------------------------------------------------

Row = tuple[str, dict[str, Any]]


@pytest.fixture(scope="module")
def real_rows(postgres_cluster: Cluster) -> list[Row]:
    """The rows PostgresSaver writes for `THREADS` (tests/formats/langgraph_agents.py), in table order."""
    url = postgres_cluster.create_database("lg_fuzz_template")
    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
        write_threads(saver)
    rows: list[Row] = []
    with psycopg.connect(postgres_cluster.admin_dsn("lg_fuzz_template"), autocommit=True) as conn:
        for table in TABLES:
            cols = COLUMNS[table]
            where = "" if table == "checkpoint_migrations" else " WHERE thread_id = ANY(%s)"
            params = () if table == "checkpoint_migrations" else (list(THREADS),)
            order = ", ".join(cols)
            for values in conn.execute(f"SELECT {order} FROM {table}{where} ORDER BY {order}", params):
                rows.append((table, dict(zip(cols, values, strict=True))))
    assert {t for t, _ in rows} == set(TABLES)
    return rows


@pytest.fixture(scope="module")
def rows_db(postgres_cluster: Cluster) -> str:
    return postgres_cluster.create_database("lg_fuzz_rows")


def latest(rows: list[Row], thread_id: str) -> dict[str, Any] | None:
    mine = [r for t, r in rows if t == "checkpoints" and r["thread_id"] == thread_id and r["checkpoint_ns"] == ""]
    return max(mine, key=lambda r: str(r["checkpoint_id"])) if mine else None


def hot_rows(rows: list[Row]) -> list[int]:
    """Indexes of the rows a load reads: each thread's latest root checkpoint, its blobs, the summarization writes."""
    tops = [top for tid in THREADS if (top := latest(rows, tid)) is not None]
    wanted = set()
    for top in tops:
        versions = top["checkpoint"].get("channel_versions") if isinstance(top["checkpoint"], dict) else None
        if isinstance(versions, dict):
            wanted |= {(top["thread_id"], str(c), str(v)) for c, v in versions.items()}
    out = []
    for i, (table, row) in enumerate(rows):
        if table == "checkpoints" and any(row is top for top in tops) \
                or table == "checkpoint_blobs" and (row["thread_id"], row["channel"], row["version"]) in wanted \
                or table == "checkpoint_writes" and "SummarizationMiddleware" in str(row["task_path"]):
            out.append(i)
    return out


def draw_rows(data: st.DataObject, rows: list[Row]) -> list[Row]:
    rows = [(t, dict(r)) for t, r in rows]
    for _ in range(data.draw(st.integers(min_value=1, max_value=3))):
        change = data.draw(st.sampled_from(["blob", "blob", "type", "set", "set", "json", "drop", "dup", "delta"]))
        hot = hot_rows(rows)
        tables = {"blob": ("checkpoint_blobs", "checkpoint_writes"), "type": ("checkpoint_blobs", "checkpoint_writes"),
                  "json": ("checkpoints",)}.get(change, TABLES)
        # most rows are history no load reads: aim at those it does, most of the time
        pool = [i for i in (hot if hot and data.draw(st.integers(0, 3)) else range(len(rows))) if rows[i][0] in tables]
        if not pool:
            continue
        i = data.draw(st.sampled_from(pool))
        table, row = rows[i]
        if change in ("blob", "type", "set"):
            column = {"blob": "blob", "type": "type"}.get(change) or data.draw(st.sampled_from(sorted(row)))
            row[column] = hostile(data, column, row[column])
        elif change == "json":
            column = data.draw(st.sampled_from(["checkpoint", "metadata"]))
            doc = row[column]
            if doc is not None:
                path = data.draw(st.sampled_from(paths(doc)[1:4000] or [()]))
                row[column] = mutate(doc, path, data.draw(WRONG_VALUES), data.draw(st.booleans()))
        elif change == "drop":
            del rows[i]
        elif change == "dup":
            rows.insert(i, (table, dict(row)))
        else:
            # langgraph 1.x DeltaChannel: the latest checkpoint holds no value; its parents and writes rebuild it
            top = latest(rows, data.draw(st.sampled_from(THREADS)))
            if top is not None and isinstance(top["checkpoint"], dict) and isinstance(top["metadata"], dict):
                top["metadata"] = {**top["metadata"], "counters_since_delta_snapshot": {"messages": 1}}
                versions = top["checkpoint"].get("channel_versions")
                if isinstance(versions, dict):
                    top["checkpoint"] = {**top["checkpoint"], "channel_versions": {
                        k: v for k, v in versions.items() if k != "messages"}}
    return rows


# Other column types than the saver's, each with how existing values become them.
RETYPE = {
    ("checkpoints", "checkpoint"): ["json USING checkpoint::json", "text USING checkpoint::text",
                                    "bytea USING convert_to(checkpoint::text, 'UTF8')"],
    ("checkpoints", "metadata"): ["text USING metadata::text", "bytea USING convert_to(metadata::text, 'UTF8')"],
    ("checkpoints", "checkpoint_id"): ["integer USING length(checkpoint_id)", "bytea USING convert_to(checkpoint_id, 'UTF8')"],
    ("checkpoints", "thread_id"): ["bytea USING convert_to(thread_id, 'UTF8')"],
    ("checkpoint_blobs", "blob"): ["text USING encode(blob, 'escape')", "jsonb USING to_jsonb(encode(blob, 'hex'))"],
    ("checkpoint_blobs", "version"): ["integer USING length(version)", "jsonb USING to_jsonb(version)"],
    ("checkpoint_blobs", "type"): ["integer USING length(type)"],
    ("checkpoint_writes", "idx"): ["text USING idx::text", "bigint USING idx", "double precision USING idx / 3.0"],
    ("checkpoint_writes", "blob"): ["text USING encode(blob, 'escape')"],
    ("checkpoint_writes", "task_path"): ["integer USING length(task_path)"],
    ("checkpoint_migrations", "v"): ["text USING v::text || 'x'"],
}
RESHAPE = {  # ShallowPostgresSaver's layout, and older saver generations
    "shallow": ["ALTER TABLE checkpoints DROP COLUMN checkpoint_id, DROP COLUMN parent_checkpoint_id",
                "ALTER TABLE checkpoint_blobs DROP COLUMN version"],
    "no task_path": ["ALTER TABLE checkpoint_writes DROP COLUMN task_path"],
    "no writes": ["DROP TABLE checkpoint_writes"],
    "no migrations": ["DROP TABLE checkpoint_migrations"],
}


def build(conn: psycopg.Connection, schema: str, rows: list[Row], retype: list[tuple[str, str, str]],
          reshape: list[str]) -> None:
    conn.execute(f"CREATE SCHEMA {schema}")
    conn.execute(f"SET search_path = {schema}")
    for table, ddl in DDL.items():
        conn.execute(f"CREATE TABLE {table} ({ddl})")
    for table, row in rows:
        cols = list(row)
        values = [psycopg.types.json.Jsonb(v) if KIND.get(c) == "json" and v is not None else v
                  for c, v in row.items()]
        conn.execute(f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join(['%s'] * len(cols))})", values)
    for table, column, how in retype:
        conn.execute(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE {how}")
    for name in reshape:
        for sql in RESHAPE[name]:
            conn.execute(sql)


def check(call: Any, label: str) -> None:
    """A valid Thread that inspects, or one ThreadLoadError line naming the database and a place."""
    try:
        result = call()
    except (ThreadLoadError, ThreadNotFoundError) as exc:
        text = str(exc)
        assert "\n" not in text and "Traceback" not in text, text
        assert len(text) <= 1000, f"{len(text):,} characters: {text[:300]}"  # a huge id or name is cut, not echoed
        assert text.startswith(label + ", format langgraph_postgres"), text
        assert "validation error" not in text and "pydantic.dev" not in text, text
        # _guarded's catch-all names no row: every failure of the row layer is said where it happens
        assert "unexpected content" not in text, text
        return
    if isinstance(result, list):
        return
    inspect_thread(result, TiktokenCounter())


counter = itertools.count()


def test_hostile_rows_give_a_thread_or_one_line(postgres_cluster: Cluster, real_rows: list[Row], rows_db: str) -> None:
    admin = psycopg.connect(postgres_cluster.admin_dsn("lg_fuzz_rows"), autocommit=True)

    @FUZZ
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        schema = f"fuzz_{next(counter)}"
        rows = draw_rows(data, real_rows)
        retype = [(t, c, data.draw(st.sampled_from(hows))) for (t, c), hows in RETYPE.items()
                  if data.draw(st.integers(min_value=0, max_value=39)) == 0]
        reshape = [name for name in RESHAPE if data.draw(st.integers(min_value=0, max_value=7)) == 0]
        try:
            build(admin, schema, rows, retype, reshape)
        except psycopg.Error:  # a retype the values cannot take (e.g. NUL in escape text): not a database to read
            admin.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            return
        url = f"{rows_db}?options=-csearch_path%3D{schema}"
        label = url.replace(postgres_cluster.password, "***")
        try:
            check(lambda: list_threads(url), label)
            check(lambda: load_thread(url), label)
            for tid in THREADS:
                check(lambda tid=tid: load_thread(url, thread_id=tid), label)
        finally:
            admin.execute(f"DROP SCHEMA {schema} CASCADE")

    try:
        run()
    finally:
        admin.close()


def test_the_unchanged_rows_load(postgres_cluster: Cluster, real_rows: list[Row], rows_db: str) -> None:
    """The copy itself is a readable database: the fuzz starts from rows that load."""
    with psycopg.connect(postgres_cluster.admin_dsn("lg_fuzz_rows"), autocommit=True) as admin:
        build(admin, "unchanged", real_rows, [], [])
        try:
            url = f"{rows_db}?options=-csearch_path%3Dunchanged"
            assert [r.thread_id for r in list_threads(url)] == list(THREADS)
            assert [m.id for m in load_thread(url, thread_id="alpha").messages] == [
                "h-alpha", "ai-a1", "result-call_1", "ai-a2"]
            assert len(load_thread(url, thread_id="beta").extra["summarizations"]) == 1
        finally:
            admin.execute("DROP SCHEMA unchanged CASCADE")
