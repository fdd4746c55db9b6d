"""LangGraph PostgreSQL checkpoints: databases written by the real PostgresSaver on a private server, read read-only."""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import ormsgpack
import psycopg
import pytest
from langchain_core.messages import AIMessage, HumanMessage, messages_to_dict
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver

from engine.base.errors import ThreadLoadError, ThreadNotFoundError
from engine.cli.ctxi import main
from engine.formats import detect_format, list_threads, load_thread, open_source
from engine.formats.langgraph_postgres import Store, _schema, open_readonly
from engine.thread.kinds import message_kind
from engine.thread.model import Thread, stable_id
from tests.formats.langgraph_agents import DICT_REPLY, MODEL, THREADS, write_threads
from tests.pg_cluster import Cluster


@pytest.fixture(scope="module")
def pg(postgres_cluster: Cluster) -> str:
    """A database holding the five threads of `write_threads`, written by today's PostgresSaver."""
    url = postgres_cluster.create_database("lg_threads")
    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
        write_threads(saver)
    return url


@pytest.fixture(scope="module")
def sqlite_twin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same graphs written by SqliteSaver."""
    path = tmp_path_factory.mktemp("twin") / "checkpoints.sqlite"
    with closing(sqlite3.connect(path, check_same_thread=False)) as conn:
        write_threads(SqliteSaver(conn))
    return path


def admin(cluster: Cluster, url: str) -> psycopg.Connection:
    return psycopg.connect(cluster.admin_dsn(url.rsplit("/", 1)[1]), autocommit=True)


# -- listing and loading ------------------------------------------------------------------------


def test_list_threads(pg: str) -> None:
    assert detect_format(open_source(pg)) == "langgraph_postgres"
    assert [(r.thread_id, r.title, r.messages) for r in list_threads(pg)] == [
        ("alpha", "read a.py", 4), ("beta", None, 4), ("chat", "custom key", 2), ("counter", None, None),
        ("dicts", "dict question", 3)]


def test_load_a_thread(pg: str) -> None:
    thread = load_thread(pg, thread_id="alpha")
    assert (thread.thread_id, thread.source_format, thread.model) == ("alpha", "langgraph_postgres", MODEL)
    assert [(type(m).__name__, m.id) for m in thread.messages] == [
        ("HumanMessage", "h-alpha"), ("AIMessage", "ai-a1"), ("ToolMessage", "result-call_1"), ("AIMessage", "ai-a2")]
    assert thread.messages[1].tool_calls[0]["id"] == "call_1" and thread.messages[2].tool_call_id == "call_1"
    assert {k: (u.input_tokens, u.output_tokens) for k, u in thread.usage.items()} == {
        "ai-a1": (120, 7), "ai-a2": (260, 7)}
    assert (thread.extra["step"], thread.extra["threads"], thread.extra["channel"]) == (3, 5, "messages")
    assert (thread.extra["schema_migration"], thread.extra["saver"]) == (9, "PostgresSaver")
    assert thread.max_input_tokens == 128_000  # from the model table: the database records no window
    assert load_thread(pg).thread_id == "alpha"  # the first thread by default


def test_recorded_summarization_is_noted(pg: str) -> None:
    thread = load_thread(pg, thread_id="beta")
    summary, *rest = thread.messages
    assert summary.content == "Here is a summary of the conversation to date:\n\nSUMMARY: the user wants files read"
    assert [m.id for m in rest] == ["ai-b2", "result-call_3", "ai-b3"]
    [event] = thread.extra["summarizations"]
    assert (event["summary_message_id"], event["kept_messages"], event["messages_before"]) == (summary.id, 2, 5)


def test_primitives_inline_and_messages_in_blobs(pg: str, postgres_cluster: Cluster) -> None:
    """Since 2.0.25 `put` keeps str/int values in the checkpoint JSONB and the rest in checkpoint_blobs."""
    with admin(postgres_cluster, pg) as conn:
        inline = conn.execute("SELECT checkpoint -> 'channel_values' FROM checkpoints WHERE thread_id = 'chat' "
                              "ORDER BY checkpoint_id DESC LIMIT 1").fetchone()[0]
        blobs = {r[0] for r in conn.execute("SELECT channel FROM checkpoint_blobs WHERE thread_id = 'chat'")}
    assert inline == {"topic": "files", "turns": 2}
    assert "chat_history" in blobs
    with open_readonly(open_source(pg)) as conn:
        latest = Store(conn, _schema(conn), pg).checkpoint("chat")
    assert latest is not None
    assert (latest.values["topic"], latest.values["turns"]) == ("files", 2)
    assert [m.id for m in latest.values["chat_history"]] == ["h1", "a1"]
    thread = load_thread(pg, thread_id="chat")
    assert (thread.extra["channel"], [m.id for m in thread.messages]) == ("chat_history", ["h1", "a1"])


def test_a_thread_without_messages_names_its_inline_channels(pg: str) -> None:
    with pytest.raises(ThreadLoadError) as err:
        load_thread(pg, thread_id="counter")
    assert err.value.message == "latest checkpoint has no messages (not a chat agent's graph; channels: count)"
    assert (err.value.location, err.value.format) == ("thread 'counter'", "langgraph_postgres")


def test_dict_messages_get_the_ids_sqlite_gives_them(pg: str) -> None:
    thread = load_thread(pg, thread_id="dicts")
    assert [type(m).__name__ for m in thread.messages] == ["HumanMessage", "AIMessage", "ToolMessage"]
    raw = [{"role": "user", "content": "dict question"}, *DICT_REPLY]
    assert [m.id for m in thread.messages] == [stable_id("langgraph_sqlite", i, r) for i, r in enumerate(raw)]


# -- the same graphs in SQLite --------------------------------------------------------------------

VARYING = {"checkpoint_id", "schema_migration", "saver"}  # the checkpoint ids are uuid6, new per run


def comparable(thread: Thread, summary_id: str | None = None) -> dict[str, Any]:
    dumped = messages_to_dict(thread.messages)
    for m in dumped:
        if summary_id is not None and m["data"]["id"] == summary_id:
            m["data"]["id"] = "<summary>"  # SummarizationMiddleware gives its summary a uuid4
    extra = {k: v for k, v in thread.extra.items() if k not in VARYING}
    for event in extra.get("summarizations", []):
        event.update(checkpoint_id=None, task_id=None, summary_message_id=None)
    return {"thread_id": thread.thread_id, "messages": dumped, "model": thread.model, "title": thread.title,
            "todos": thread.todos, "window": thread.max_input_tokens, "system": thread.system_prompt,
            "usage": {k: vars(u) for k, u in thread.usage.items()}, "extra": extra}


def test_same_threads_as_the_sqlite_importer(pg: str, sqlite_twin: Path) -> None:
    assert list_threads(pg) == list_threads(sqlite_twin)
    for tid in ("alpha", "beta", "chat", "dicts"):
        from_pg, from_sqlite = load_thread(pg, thread_id=tid), load_thread(sqlite_twin, thread_id=tid)
        assert from_sqlite.source_format == "langgraph_sqlite"
        summary_ids = {e["summary_message_id"] for t in (from_pg, from_sqlite) for e in t.extra.get("summarizations", [])}
        if tid == "beta":
            assert len(summary_ids) == 2  # two runs, two uuid4s; every other id is the same
        pg_view = comparable(from_pg, next(iter(from_pg.extra["summarizations"]))["summary_message_id"]
                             if tid == "beta" else None)
        sqlite_view = comparable(from_sqlite, from_sqlite.extra["summarizations"][0]["summary_message_id"]
                                 if tid == "beta" else None)
        assert pg_view == sqlite_view, tid
    assert [m.id for m in load_thread(pg, thread_id="alpha").messages] == ["h-alpha", "ai-a1", "result-call_1", "ai-a2"]


# -- strictly read-only ---------------------------------------------------------------------------


def database_state(conn: psycopg.Connection) -> dict[str, Any]:
    """A checksum of every table's rows, and the next transaction id (any write would take one)."""
    tables = [r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")]
    rows = {t: conn.execute(f'SELECT count(*), md5(coalesce(string_agg(x::text, E\'\\n\' ORDER BY x::text), \'\')) '
                            f'FROM "{t}" x').fetchone() for t in tables}
    next_xid = conn.execute("SELECT pg_snapshot_xmax(pg_current_snapshot())::text").fetchone()[0]
    return {"tables": rows, "next_xid": next_xid}


def table_counters(conn: psycopg.Connection) -> tuple[dict[str, tuple[int, ...]], int]:
    """Rows inserted, updated, deleted per table (pg_stat_user_tables, pg_stat_database), and scans done."""
    conn.execute("SELECT pg_stat_clear_snapshot()")
    rows = conn.execute("SELECT relname, n_tup_ins, n_tup_upd, n_tup_del, n_tup_hot_upd, coalesce(seq_scan, 0) "
                        "+ coalesce(idx_scan, 0) FROM pg_stat_user_tables ORDER BY relname").fetchall()
    db = conn.execute("SELECT tup_inserted, tup_updated, tup_deleted FROM pg_stat_database "
                      "WHERE datname = current_database()").fetchone()
    return {r[0]: tuple(r[1:5]) for r in rows} | {"<database>": tuple(db)}, sum(r[5] for r in rows)


def read_everything(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    list_threads(url)
    for tid in THREADS:
        try:
            load_thread(url, thread_id=tid)
        except ThreadLoadError:
            assert tid == "counter"
    assert main(["inspect", "--list", url]) == 0
    assert main(["replay", url, "--thread", "beta", "--json"]) == 0
    capsys.readouterr()


def wait_for_scans(conn: psycopg.Connection, before: int) -> tuple[dict[str, tuple[int, ...]], int]:
    """Statistics reach pg_stat_* when a backend exits: wait until the readers' scans show, then compare."""
    deadline = time.monotonic() + 15
    while True:
        counters, scans = table_counters(conn)
        if scans > before or time.monotonic() > deadline:
            return counters, scans
        time.sleep(0.2)


def test_reading_writes_nothing(pg: str, postgres_cluster: Cluster, capsys: pytest.CaptureFixture[str]) -> None:
    with admin(postgres_cluster, pg) as conn:
        before, (counters_before, scans_before) = database_state(conn), table_counters(conn)
        read_everything(pg, capsys)
        counters_after, scans_after = wait_for_scans(conn, scans_before)
        assert scans_after > scans_before  # the readers' statistics arrived: the comparison below means something
        assert database_state(conn) == before
        assert counters_after == counters_before


def test_the_checks_see_a_write(pg: str, postgres_cluster: Cluster) -> None:
    """The same checks catch a single written row, so passing above is not vacuous."""
    with admin(postgres_cluster, pg) as conn:
        before, (counters_before, scans_before) = database_state(conn), table_counters(conn)
        with psycopg.connect(pg) as writer:
            writer.execute("UPDATE checkpoint_migrations SET v = v WHERE v = 9")
            writer.execute("SELECT count(*) FROM checkpoints")
        counters_after, _ = wait_for_scans(conn, scans_before)
        assert database_state(conn)["next_xid"] != before["next_xid"]
        assert counters_after["checkpoint_migrations"] != counters_before["checkpoint_migrations"]


def test_the_transaction_refuses_writes(pg: str) -> None:
    """Even with a URL that asks for writable transactions by default."""
    for url in (pg, pg + "?options=-c%20default_transaction_read_only%3Doff"):
        with pytest.raises(ThreadLoadError) as err:
            with open_readonly(open_source(url)) as conn:
                conn.execute("CREATE TABLE intruder (x int)")
        assert err.value.message == "PostgreSQL error (cannot execute CREATE TABLE in a read-only transaction)"


# -- passwords are never shown ---------------------------------------------------------------------


def test_errors_and_output_never_show_the_password(pg: str, postgres_cluster: Cluster,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    secret = postgres_cluster.password
    shown = pg.replace(secret, "***")
    assert open_source(pg).label == shown and secret not in repr(open_source(pg))
    assert main(["inspect", pg, "--thread", "alpha"]) == 0
    out = capsys.readouterr().out
    assert f"file:        {shown}" in out and secret not in out
    for argv in (["inspect", pg, "--thread", "beta", "--json"], ["inspect", "--list", "--json", pg],
                 ["replay", pg, "--thread", "alpha", "--json"]):
        assert main(argv) == 0
        out, err = capsys.readouterr()
        assert secret not in out + err and out.strip()
    port = postgres_cluster.port
    wrong = postgres_cluster.url("lg_threads", password="Wr0ng%3Ap%40ss%2Fword")  # percent-encoded, as libpq wants
    assert main(["inspect", "--list", wrong]) == 2
    assert capsys.readouterr().err == (
        f"ctxi inspect: error: postgresql://postgres:***@127.0.0.1:{port}/lg_threads, format langgraph_postgres: "
        f"cannot connect to PostgreSQL (connection failed: connection to server at \"127.0.0.1\", port {port} "
        "failed: FATAL: password authentication failed for user \"postgres\")\n")
    # unencoded, libpq would take "ss/word@127.0.0.1..." for host and database and echo them: refused unsent
    unencoded = postgres_cluster.url("lg_threads", password="Wr0ng:p@ss/word")
    assert main(["inspect", "--list", unencoded]) == 2
    assert capsys.readouterr().err == (
        f"ctxi inspect: error: postgresql://***@127.0.0.1:{port}/lg_threads, format langgraph_postgres: the URL has "
        "an '@' outside its user:password part; percent-encode '@' as %40, '/' as %2F and ':' as %3A in the "
        "password (or leave it out and set PGPASSWORD or ~/.pgpass)\n")
    query_form = f"postgresql://127.0.0.1:{postgres_cluster.port}/nowhere?user=postgres&password={secret}"
    with pytest.raises(ThreadLoadError) as info:
        load_thread(query_form)
    assert secret not in str(info.value)
    assert str(info.value).startswith(f"postgresql://127.0.0.1:{postgres_cluster.port}/nowhere?user=postgres&password=***, ")
    assert 'database "nowhere" does not exist' in str(info.value)


# -- every error path: one line naming the database -----------------------------------------------


def test_unknown_thread_lists_the_threads(pg: str) -> None:
    with pytest.raises(ThreadNotFoundError) as err:
        load_thread(pg, thread_id="gamma")
    assert err.value.message == "thread 'gamma' not found; threads: 'alpha', 'beta', 'chat', 'counter', 'dicts'"
    assert err.value.format == "langgraph_postgres"


def test_nothing_listens_on_the_port(postgres_cluster: Cluster) -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"postgresql://postgres:hunter2hunter2@127.0.0.1:{port}/db"
    with pytest.raises(ThreadLoadError) as err:
        list_threads(url)
    assert str(err.value) == (f"postgresql://postgres:***@127.0.0.1:{port}/db, format langgraph_postgres: cannot "
                              f"connect to PostgreSQL (connection failed: connection to server at \"127.0.0.1\", port "
                              f"{port} failed: Connection refused Is the server running on that host and accepting "
                              "TCP/IP connections?)")


def test_a_database_without_checkpoint_tables(postgres_cluster: Cluster) -> None:
    url = postgres_cluster.create_database("lg_other")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE checkpoints (thread_id text, note text)")  # the name, not the saver's tables
    for call in (lambda: list_threads(url), lambda: load_thread(url)):
        with pytest.raises(ThreadLoadError) as err:
            call()
        assert err.value.message.startswith("not a LangGraph checkpoint database (no 'checkpoints' and "
                                            "'checkpoint_blobs' tables as langgraph-checkpoint-postgres creates them")
        assert err.value.path == url.replace(postgres_cluster.password, "***")


def test_empty_checkpoint_tables(postgres_cluster: Cluster) -> None:
    url = postgres_cluster.create_database("lg_empty")
    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
    assert list_threads(url) == []
    with pytest.raises(ThreadLoadError, match="database holds no checkpoints"):
        load_thread(url)


def test_a_role_that_may_not_read(pg: str, postgres_cluster: Cluster) -> None:
    with admin(postgres_cluster, pg) as conn:
        conn.execute("DROP ROLE IF EXISTS outsider")
        conn.execute("CREATE ROLE outsider LOGIN PASSWORD 'outsider-pw'")
    url = postgres_cluster.url("lg_threads", user="outsider", password="outsider-pw")
    with pytest.raises(ThreadLoadError) as err:
        list_threads(url)
    assert err.value.message == "PostgreSQL error (permission denied for table checkpoints)"


def test_without_psycopg_the_rest_works_and_the_url_says_what_to_install(pg: str, monkeypatch: pytest.MonkeyPatch,
                                                                          tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # `import psycopg` now raises ImportError
    with pytest.raises(ThreadLoadError) as err:
        list_threads(pg)
    assert err.value.message == ("reading a PostgreSQL database needs the psycopg driver "
                                 "(pip install 'context-inspector[postgres]')")
    path = tmp_path / "t.json"
    path.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    assert [m.content for m in load_thread(path).messages] == ["hi"]


def test_a_url_cannot_be_forced_into_a_file_format_and_bytes_are_not_a_url(pg: str) -> None:
    with pytest.raises(ThreadLoadError) as err:
        load_thread(pg, format="native")
    assert err.value.message == "a database URL cannot be read as format 'native'; it is read as langgraph_postgres"
    with pytest.raises(ThreadLoadError) as err:
        load_thread(data=b"[]", name="x.json", format="langgraph_postgres")
    assert str(err.value) == ("x.json, format langgraph_postgres: not a PostgreSQL URL "
                              "(give postgresql://user@host:port/database)")


# -- values the strict serializer refuses or keeps raw ---------------------------------------------

CALLED: list[object] = []


def record_call(*args: object) -> None:
    CALLED.append(args)


VERSION = "00000000000000000000000000000001.0"


def checkpoint_row(conn: psycopg.Connection, thread_id: str, blobs: dict[str, tuple[str, bytes]]) -> None:
    """A root checkpoint whose channel values are blobs `{channel: (serializer type, bytes)}`."""
    body = {"v": 4, "id": "1f0-1", "ts": "2025-01-01T00:00:00+00:00", "channel_values": {},
            "channel_versions": {channel: VERSION for channel in blobs}, "versions_seen": {}}
    conn.execute("INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, checkpoint, metadata) "
                 "VALUES (%s, '', '1f0-1', %s, '{\"step\": 1}')", (thread_id, json.dumps(body)))
    for channel, (blob_type, blob) in blobs.items():
        conn.execute("INSERT INTO checkpoint_blobs VALUES (%s, '', %s, %s, %s, %s)",
                     (thread_id, channel, VERSION, blob_type, blob))


@pytest.fixture(scope="module")
def hostile(postgres_cluster: Cluster) -> str:
    url = postgres_cluster.create_database("lg_hostile")
    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
    call_me = ormsgpack.Ext(1, ormsgpack.packb([__name__, "record_call", ["boom"]]))
    with psycopg.connect(url, autocommit=True) as conn:
        checkpoint_row(conn, "pickled", {"messages": ("pickle", b"\x80\x04K\x01.")})
        checkpoint_row(conn, "encrypted", {"messages": ("msgpack+aes", b"\x00" * 48)})
        checkpoint_row(conn, "ext", {"messages": ("msgpack", ormsgpack.packb([{"role": "user", "content": "hi"}])),
                                     "x": ("msgpack", ormsgpack.packb(call_me))})
        checkpoint_row(conn, "garbled", {"messages": ("msgpack", b"\xc1\xc1")})
    return url


def test_pickles_and_encrypted_values_are_refused(hostile: str) -> None:
    assert [(r.thread_id, r.messages) for r in list_threads(hostile)] == [
        ("encrypted", None), ("ext", 1), ("garbled", None), ("pickled", None)]
    with pytest.raises(ThreadLoadError) as err:
        load_thread(hostile, thread_id="pickled")
    assert err.value.message == ("checkpoint is a Python pickle (langgraph 0.0.x, or a serializer with "
                                 "pickle_fallback=True); unpickling a file can run code, so it is not read")
    assert err.value.location == "thread 'pickled', checkpoint 1f0-1, checkpoint_blobs row of channel 'messages'"
    with pytest.raises(ThreadLoadError) as err:
        load_thread(hostile, thread_id="encrypted")
    assert err.value.message == "checkpoint is encrypted ('msgpack+aes', EncryptedSerializer); ctxi has no key to decrypt it"
    with pytest.raises(ThreadLoadError) as err:
        load_thread(hostile, thread_id="garbled")
    assert err.value.message.startswith("cannot decode msgpack data (")


def test_unknown_classes_are_not_called(hostile: str) -> None:
    """The saver's default serializer imports and calls any class a blob names; ours keeps the raw data."""
    assert [m.content for m in load_thread(hostile, thread_id="ext").messages] == ["hi"]
    assert CALLED == []


# -- other savers and channel kinds -----------------------------------------------------------------


def test_shallow_saver(postgres_cluster: Cluster) -> None:
    """ShallowPostgresSaver (deprecated since 2.0.20, still shipped) keeps only each thread's latest checkpoint."""
    from langgraph.checkpoint.postgres import ShallowPostgresSaver

    url = postgres_cluster.create_database("lg_shallow")
    with psycopg.connect(url, autocommit=True, prepare_threshold=0) as conn, pytest.warns(DeprecationWarning):
        saver = ShallowPostgresSaver(conn)
        saver.setup()
        write_threads(saver)
    thread = load_thread(url, thread_id="alpha")
    assert [m.id for m in thread.messages] == ["h-alpha", "ai-a1", "result-call_1", "ai-a2"]
    assert (thread.extra["saver"], thread.extra["step"]) == ("ShallowPostgresSaver", 3)
    beta = load_thread(url, thread_id="beta")
    # its put() deletes the writes of older checkpoints, the summarization's among them: only the summary is left
    assert (message_kind(beta.messages[0]), len(beta.messages), "summarizations" in beta.extra) == ("summary", 4, False)
    assert [(r.thread_id, r.messages) for r in list_threads(url)] == [
        ("alpha", 4), ("beta", 4), ("chat", 2), ("counter", None), ("dicts", 3)]


try:  # langgraph 1.x (beta): a channel that checkpoints only every Nth value
    from langgraph.channels import DeltaChannel
except ImportError:  # pragma: no cover - older langgraph
    DeltaChannel = None


@pytest.mark.skipif(DeltaChannel is None, reason="this langgraph has no DeltaChannel")
def test_delta_channel_is_rebuilt_from_snapshot_and_writes(postgres_cluster: Cluster) -> None:
    from tests.formats.test_langgraph_sqlite import DeltaState, one_node_graph

    url = postgres_cluster.create_database("lg_delta")
    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
        graph = one_node_graph(DeltaState, lambda s: {"messages": [AIMessage(f"reply {len(s['messages'])}")]}, saver)
        for i in range(4):
            graph.invoke({"messages": [HumanMessage(f"q{i}")]}, {"configurable": {"thread_id": "d"}})
    with psycopg.connect(url) as conn:
        inline = conn.execute("SELECT checkpoint -> 'channel_values' FROM checkpoints ORDER BY checkpoint_id DESC "
                              "LIMIT 1").fetchone()[0]
    assert "messages" not in inline  # the latest checkpoint holds no value: it comes from a snapshot runs back
    thread = load_thread(url)
    assert [m.content for m in thread.messages] == ["q0", "reply 1", "q1", "reply 3", "q2", "reply 5", "q3", "reply 7"]



# -- databases of older langgraph-checkpoint-postgres versions --------------------------------------
# Written through the real PostgresSaver of each version in a scratch venv by data/make_postgres_dumps.py
# (langgraph 0.2.28 with 1.0.9, 0.3.34 with 2.0.21) and saved with `pg_dump --inserts`: every value is
# a blob there (inline primitives came in 2.0.25), 1.0.9 has no task_path column (migration 9, 2.0.15).
DATA = Path(__file__).parent / "data"
OLD_VERSIONS = {"1.0.9": 4, "2.0.21": 9}


@pytest.mark.parametrize("version", sorted(OLD_VERSIONS))
def test_databases_of_older_versions(postgres_cluster: Cluster, version: str) -> None:
    name = "lg_v" + version.replace(".", "_")
    url = postgres_cluster.create_database(name)
    with admin(postgres_cluster, url) as conn:
        conn.execute((DATA / f"langgraph-checkpoint-postgres-{version}.sql").read_text())
        assert conn.execute("SELECT count(*) FROM public.checkpoints WHERE checkpoint ? 'channel_values'").fetchone()[0] == 0
        has_task_path = conn.execute("SELECT count(*) FROM information_schema.columns WHERE table_name = "
                                     "'checkpoint_writes' AND column_name = 'task_path'").fetchone()[0]
    assert has_task_path == (version != "1.0.9")
    assert [(r.thread_id, r.title, r.messages) for r in list_threads(url)] == [
        ("agent", "what is in a.py?", 4), ("notes", "take a note", 2)]
    agent = load_thread(url, thread_id="agent")
    assert [(type(m).__name__, m.id) for m in agent.messages] == [
        ("HumanMessage", "h-1"), ("AIMessage", "ai-1"), ("ToolMessage", "result-call_1"), ("AIMessage", "ai-2")]
    assert agent.messages[2].tool_call_id == "call_1" and agent.model == "gpt-4o-mini"
    assert {k: (u.input_tokens, u.output_tokens) for k, u in agent.usage.items()} == {"ai-1": (90, 5), "ai-2": (130, 6)}
    assert (agent.extra["schema_migration"], agent.extra["step"]) == (OLD_VERSIONS[version], 3)
    notes = load_thread(url, thread_id="notes")
    assert [(m.type, m.content) for m in notes.messages] == [("human", "take a note"), ("ai", "noted 1")]


def test_ctxi_ui_points_a_url_to_the_threads_page(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ui", "postgresql://agent:hunter2@db:5432/lg", "--headless"]) == 2
    assert capsys.readouterr().err == ("ctxi ui: error: postgresql://agent:***@db:5432/lg: open a PostgreSQL database "
                                       "from the Threads page (LangGraph on PostgreSQL), or read it with ctxi inspect "
                                       "/ replay\n")
