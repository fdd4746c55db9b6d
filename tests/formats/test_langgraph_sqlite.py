"""LangGraph SQLite checkpoints: a real database written by `create_agent`, read strictly read-only."""

from __future__ import annotations

import hashlib
import json
import operator
import pickle
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Annotated, Any, TypedDict

import ormsgpack
import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from engine.base.errors import ThreadLoadError, ThreadNotFoundError
from engine.formats import detect_format, list_threads, load_thread, open_source
from engine.thread.kinds import message_kind
from engine.thread.model import stable_id


class ToolCallingFake(GenericFakeChatModel):
    """GenericFakeChatModel replays fixed replies; create_agent needs bind_tools to exist."""

    def bind_tools(self, tools, **kwargs):  # type: ignore[no-untyped-def]
        return self


@tool
def read_file(path: str) -> str:
    """Read a file."""
    return f"contents of {path}\n" + "line\n" * 20


def call(call_id: str, path: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": "read_file", "args": {"path": path}, "id": call_id}])


def build_database(path: Path) -> None:
    """Two threads: `alpha` (one tool call) and `beta` (summarized once by SummarizationMiddleware)."""
    with sqlite3.connect(path, check_same_thread=False) as conn:
        saver = SqliteSaver(conn)
        alpha = create_agent(ToolCallingFake(messages=iter([call("call_1", "a.py"), AIMessage(content="read a.py")])),
                             tools=[read_file], checkpointer=saver)
        alpha.invoke({"messages": [HumanMessage("read a.py")]}, {"configurable": {"thread_id": "alpha"}})
        summarizer = ToolCallingFake(messages=iter([AIMessage(content="SUMMARY: the user wants files read")]))
        beta = create_agent(
            ToolCallingFake(messages=iter([call("call_2", "b.py"), call("call_3", "c.py"), AIMessage(content="all read")])),
            tools=[read_file], checkpointer=saver,
            middleware=[SummarizationMiddleware(model=summarizer, trigger=("messages", 4), keep=("messages", 2))],
        )
        beta.invoke({"messages": [HumanMessage("read b.py and c.py")]}, {"configurable": {"thread_id": "beta"}})
    conn.close()


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("lg") / "checkpoints.sqlite"
    build_database(path)
    return path


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def folder_state(path: Path) -> dict[str, str]:
    return {p.name: sha256(p) for p in sorted(path.parent.iterdir())}


def test_list_and_load_leave_the_file_untouched(database: Path) -> None:
    before = folder_state(database)
    assert set(before) == {"checkpoints.sqlite"}  # the writer closed cleanly: no -wal/-shm
    assert detect_format(open_source(database)) == "langgraph_sqlite"
    refs = list_threads(database)
    assert [(r.thread_id, r.title, r.messages) for r in refs] == [("alpha", "read a.py", 4), ("beta", None, 4)]
    load_thread(database, thread_id="alpha")
    load_thread(database, thread_id="beta")
    assert folder_state(database) == before


def test_latest_messages_of_a_thread(database: Path) -> None:
    thread = load_thread(database)  # the first thread by default
    assert (thread.thread_id, thread.source_format) == ("alpha", "langgraph_sqlite")
    assert [type(m).__name__ for m in thread.messages] == ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage"]
    assert thread.messages[1].tool_calls[0]["id"] == "call_1"
    result = thread.messages[2]
    assert isinstance(result, ToolMessage) and result.tool_call_id == "call_1" and result.name == "read_file"
    assert thread.extra["step"] == 3 and thread.extra["threads"] == 2
    assert "summarizations" not in thread.extra


def test_recorded_summarization_is_noted(database: Path) -> None:
    thread = load_thread(database, thread_id="beta")
    summary, *rest = thread.messages
    assert message_kind(summary) == "summary"
    assert [m.type for m in rest] == ["ai", "tool", "ai"]
    [event] = thread.extra["summarizations"]
    assert event["summary"] == "Here is a summary of the conversation to date:\n\nSUMMARY: the user wants files read"
    assert event["summary_message_id"] == summary.id
    assert (event["kept_messages"], event["messages_before"]) == (2, 5)


def test_upload_is_read_from_a_temporary_copy(database: Path) -> None:
    thread = load_thread(data=database.read_bytes(), name="upload.sqlite", thread_id="alpha")
    assert [m.type for m in thread.messages] == ["human", "ai", "tool", "ai"]


def test_unknown_thread_lists_the_threads(database: Path) -> None:
    with pytest.raises(ThreadNotFoundError) as err:
        load_thread(database, thread_id="gamma")
    assert err.value.message == "thread 'gamma' not found; threads: 'alpha', 'beta'"


@pytest.fixture()
def live_writer(tmp_path: Path) -> Iterator[tuple[Path, sqlite3.Connection]]:
    path = tmp_path / "live.sqlite"
    build_database(path)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE extra_rows (x)")  # leaves a non-empty WAL while the writer stays open
    conn.commit()
    yield path, conn
    conn.close()


def test_database_with_an_active_writer_is_read_from_a_copy(live_writer: tuple[Path, sqlite3.Connection]) -> None:
    path, _ = live_writer
    before = folder_state(path)
    assert {"live.sqlite", "live.sqlite-wal", "live.sqlite-shm"} == set(before)
    assert [r.thread_id for r in list_threads(path)] == ["alpha", "beta"]
    assert len(load_thread(path, thread_id="beta").messages) == 4
    assert folder_state(path) == before


def test_sqlite_without_checkpoints_is_not_this_format(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes (x)")
    conn.close()
    with pytest.raises(ThreadLoadError, match="unrecognised thread format"):
        load_thread(path)
    with pytest.raises(ThreadLoadError, match="not a LangGraph checkpoint database") as err:
        load_thread(path, format="langgraph_sqlite")
    assert err.value.format == "langgraph_sqlite"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.sqlite"]


# --- Databases of other versions and graph shapes -------------------------------------------------
# Derived from databases written by langgraph 0.0.30, 0.1.19, 0.2.14 (langgraph-checkpoint 1.0.6,
# langgraph-checkpoint-sqlite 1.0.0), 0.2.28/0.2.76 and 1.2 in scratch venvs: the DDL below is what
# each version's `setup()` ran, and the rows repeat the shape of what each wrote (texts made up here),
# so no old package and no network are needed at test time.

LEGACY_01_DDL = """
CREATE TABLE checkpoints (thread_id TEXT NOT NULL, thread_ts TEXT NOT NULL, parent_ts TEXT,
    checkpoint BLOB, metadata BLOB, PRIMARY KEY (thread_id, thread_ts));
CREATE TABLE writes (thread_id TEXT NOT NULL, thread_ts TEXT NOT NULL, task_id TEXT NOT NULL,
    idx INTEGER NOT NULL, channel TEXT NOT NULL, value BLOB, PRIMARY KEY (thread_id, thread_ts, task_id, idx));
"""
LEGACY_00_DDL = """
CREATE TABLE checkpoints (thread_id TEXT NOT NULL, thread_ts TEXT NOT NULL, parent_ts TEXT,
    checkpoint BLOB, PRIMARY KEY (thread_id, thread_ts));
"""


def lc1(kind: str, **kwargs: object) -> dict[str, object]:
    """A message as langchain's `dumpd` wrote it into 0.1.x / early 0.2.x JSON checkpoints."""
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", kind], "kwargs": kwargs}


def json_checkpoint(ts: str, values: dict[str, object]) -> bytes:
    return json.dumps({"v": 1, "ts": "2024-07-01T10:00:00+00:00", "id": ts, "channel_values": values,
                       "channel_versions": {}, "versions_seen": {}, "pending_sends": []}).encode()


LEGACY_MESSAGES = [
    lc1("HumanMessage", content="list files", type="human", id="h1"),
    lc1("AIMessage", content="", type="ai", id="ai-0", response_metadata={"model_name": "gpt-4o-mini"},
        tool_calls=[{"name": "ls", "args": {"path": "."}, "id": "call_ls", "type": "tool_call"}],
        usage_metadata={"input_tokens": 50, "output_tokens": 7, "total_tokens": 57}, invalid_tool_calls=[]),
    lc1("ToolMessage", content="a.py", type="tool", name="ls", id="t1", tool_call_id="call_ls", status="success"),
]


def sql_database(path: Path, ddl: str, rows: list[tuple[str, tuple[object, ...]]]) -> Path:
    with closing(sqlite3.connect(path)) as conn:
        conn.executescript(ddl)
        for sql, params in rows:
            conn.execute(sql, params)
        conn.commit()
    return path


def modern_database(path: Path, checkpoints: list[tuple[str, str, str | None, str, bytes, dict[str, object]]]) -> Path:
    """Tables made by today's SqliteSaver.setup(); rows (thread, id, parent, type, blob, metadata) by hand."""
    with closing(sqlite3.connect(path)) as conn:
        SqliteSaver(conn).setup()
        conn.execute("PRAGMA journal_mode=DELETE")  # no -wal left next to the fixture
        for thread_id, cid, parent, type_, blob, meta in checkpoints:
            conn.execute("INSERT INTO checkpoints VALUES (?, '', ?, ?, ?, ?, ?)",
                         (thread_id, cid, parent, type_, blob, json.dumps(meta)))
        conn.commit()
    return path


def test_langgraph_0_1_json_database(tmp_path: Path) -> None:
    path = sql_database(tmp_path / "v01.sqlite", LEGACY_01_DDL, [
        ("INSERT INTO checkpoints VALUES (?, ?, ?, ?, ?)",
         ("t", "1ef-0", None, json_checkpoint("1ef-0", {"__start__": {"messages": LEGACY_MESSAGES[:1]}}),
          b'{"source": "input", "step": -1}')),
        ("INSERT INTO checkpoints VALUES (?, ?, ?, ?, ?)",
         ("t", "1ef-2", "1ef-0", json_checkpoint("1ef-2", {"messages": LEGACY_MESSAGES}), b'{"source": "loop", "step": 2}')),
    ])
    before = folder_state(path)
    assert detect_format(open_source(path)) == "langgraph_sqlite"
    assert [(r.thread_id, r.title, r.messages) for r in list_threads(path)] == [("t", "list files", 3)]
    thread = load_thread(path)
    assert [(type(m).__name__, m.id) for m in thread.messages] == [
        ("HumanMessage", "h1"), ("AIMessage", "ai-0"), ("ToolMessage", "t1")]
    assert thread.messages[1].tool_calls[0]["id"] == "call_ls" and thread.model == "gpt-4o-mini"
    assert (thread.usage["ai-0"].input_tokens, thread.usage["ai-0"].output_tokens) == (50, 7)
    assert (thread.extra["checkpoint_id"], thread.extra["step"]) == ("1ef-2", 2)
    assert folder_state(path) == before


def test_json_serializer_rows_of_early_0_2(tmp_path: Path) -> None:
    """langgraph-checkpoint 1.0.6 wrote type 'json' rows into today's table layout."""
    blob = json_checkpoint("1ef-1", {"messages": LEGACY_MESSAGES[:2]})
    path = modern_database(tmp_path / "json.sqlite", [("t", "1ef-1", None, "json", blob, {"step": 1})])
    assert [m.type for m in load_thread(path).messages] == ["human", "ai"]


def test_pickled_langgraph_0_0_database_is_refused(tmp_path: Path) -> None:
    """0.0.x pickled whole checkpoints; unpickling a file can run code, so it is named and refused."""
    blob = pickle.dumps({"v": 1, "channel_values": {"messages": []}})
    path = sql_database(tmp_path / "v00.sqlite", LEGACY_00_DDL,
                        [("INSERT INTO checkpoints VALUES (?, ?, ?, ?)", ("old", "2024-03-01T10:00:00", None, blob))])
    assert detect_format(open_source(path)) == "langgraph_sqlite"
    assert [(r.thread_id, r.messages) for r in list_threads(path)] == [("old", None)]
    with pytest.raises(ThreadLoadError) as err:
        load_thread(path)
    assert err.value.location == "thread 'old', checkpoint 2024-03-01T10:00:00"
    assert err.value.message == ("checkpoint is a Python pickle (langgraph 0.0.x, or a serializer with "
                                 "pickle_fallback=True); unpickling a file can run code, so it is not read")


def test_encrypted_checkpoint_is_refused(tmp_path: Path) -> None:
    path = modern_database(tmp_path / "aes.sqlite", [("t", "1ef-1", None, "msgpack+aes", b"\x00" * 48, {"step": 1})])
    with pytest.raises(ThreadLoadError) as err:
        load_thread(path)
    assert err.value.message == "checkpoint is encrypted ('msgpack+aes', EncryptedSerializer); ctxi has no key to decrypt it"
    assert err.value.format == "langgraph_sqlite"


CALLED: list[object] = []


def record_call(*args: object) -> None:
    CALLED.append(args)


def test_unknown_classes_in_a_checkpoint_are_not_called(tmp_path: Path) -> None:
    """The saver's default serializer imports and calls any class a row names; ours keeps the raw data."""
    call_me = ormsgpack.Ext(1, ormsgpack.packb([__name__, "record_call", ["boom"]]))
    blob = ormsgpack.packb({"v": 4, "channel_values": {"messages": [{"role": "user", "content": "hi"}], "x": call_me}})
    path = modern_database(tmp_path / "ext.sqlite", [("t", "1ef-1", None, "msgpack", blob, {"step": 1})])
    assert [m.content for m in load_thread(path).messages] == ["hi"]
    assert CALLED == []


class ChatState(TypedDict):
    chat_history: Annotated[list, add_messages]


class DictState(TypedDict):
    messages: Annotated[list, operator.add]


class CountState(TypedDict):
    count: int


def one_node_graph(state: type, node: Callable[[Any], Any], saver: SqliteSaver) -> Any:
    graph = StateGraph(state)
    graph.add_node("node", node)
    graph.add_edge(START, "node")
    graph.add_edge("node", END)
    return graph.compile(checkpointer=saver)


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Graphs whose state is not `messages: list[BaseMessage]`, in one database as a user's may be."""
    path = tmp_path_factory.mktemp("shapes") / "shapes.sqlite"
    with closing(sqlite3.connect(path, check_same_thread=False)) as conn:
        saver = SqliteSaver(conn)
        one_node_graph(ChatState, lambda s: {"chat_history": [AIMessage("answer", id="a1")]}, saver).invoke(
            {"chat_history": [HumanMessage("custom key", id="h1")]}, {"configurable": {"thread_id": "chat"}})
        reply = [{"role": "assistant", "content": "", "tool_calls": [
                     {"id": "c9", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
                 {"role": "tool", "tool_call_id": "c9", "content": "42"}]
        one_node_graph(DictState, lambda s: {"messages": reply}, saver).invoke(
            {"messages": [{"role": "user", "content": "dict question"}]}, {"configurable": {"thread_id": "dicts"}})
        one_node_graph(CountState, lambda s: {"count": s["count"] + 1}, saver).invoke(
            {"count": 1}, {"configurable": {"thread_id": "counter"}})
    return path


def test_a_thread_without_messages_does_not_hide_the_others(shapes: Path) -> None:
    assert [(r.thread_id, r.title, r.messages) for r in list_threads(shapes)] == [
        ("chat", "custom key", 2), ("counter", None, None), ("dicts", "dict question", 3)]
    with pytest.raises(ThreadLoadError) as err:
        load_thread(shapes, thread_id="counter")
    assert err.value.message == "latest checkpoint has no messages (not a chat agent's graph; channels: count)"
    assert err.value.location == "thread 'counter'"


def test_messages_under_another_key(shapes: Path) -> None:
    thread = load_thread(shapes, thread_id="chat")
    assert [(m.type, m.id) for m in thread.messages] == [("human", "h1"), ("ai", "a1")]
    assert thread.extra["channel"] == "chat_history"


def test_messages_stored_as_dicts_get_stable_ids(shapes: Path) -> None:
    thread = load_thread(shapes, thread_id="dicts")
    assert [type(m).__name__ for m in thread.messages] == ["HumanMessage", "AIMessage", "ToolMessage"]
    assert thread.messages[1].tool_calls == [{"name": "f", "args": {}, "id": "c9", "type": "tool_call"}]
    assert thread.messages[2].tool_call_id == "c9"
    ids = [m.id for m in thread.messages]
    assert ids == [stable_id("langgraph_sqlite", i, raw) for i, raw in enumerate(
        [{"role": "user", "content": "dict question"}, *thread_raw_reply()])]
    assert ids == [m.id for m in load_thread(shapes, thread_id="dicts").messages]


def thread_raw_reply() -> list[dict[str, Any]]:
    return [{"role": "assistant", "content": "", "tool_calls": [
        {"id": "c9", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c9", "content": "42"}]


def test_empty_database_lists_no_threads(tmp_path: Path) -> None:
    path = modern_database(tmp_path / "empty.sqlite", [])
    assert detect_format(open_source(path)) == "langgraph_sqlite"
    assert list_threads(path) == []
    with pytest.raises(ThreadLoadError, match="database holds no checkpoints"):
        load_thread(path)


def test_prompt_waiting_under_start_is_shown(tmp_path: Path) -> None:
    """A run killed right after its input checkpoint: the new prompt is only in `__start__`."""
    path = tmp_path / "killed.sqlite"
    with closing(sqlite3.connect(path, check_same_thread=False)) as conn:
        saver = SqliteSaver(conn)
        graph = one_node_graph(ChatState, lambda s: {"chat_history": [AIMessage("first answer", id="a1")]}, saver)
        graph.invoke({"chat_history": [HumanMessage("first", id="h1")]}, {"configurable": {"thread_id": "k"}})
        graph.invoke({"chat_history": [HumanMessage("second", id="h2")]}, {"configurable": {"thread_id": "k"}})
        # keep the second run's input checkpoint (step 2) and drop what the run wrote after it
        input_id = conn.execute("SELECT checkpoint_id FROM checkpoints WHERE json_extract(metadata, '$.step') = 2").fetchone()[0]
        conn.execute("DELETE FROM checkpoints WHERE checkpoint_id > ?", (input_id,))
        conn.execute("DELETE FROM writes WHERE checkpoint_id >= ?", (input_id,))
        conn.commit()
    thread = load_thread(path)
    assert [m.id for m in thread.messages] == ["h1", "a1", "h2"]
    assert (thread.extra["step"], thread.extra["pending_input"]) == (2, 1)


def merge_batches(state: list[Any], writes: list[Any]) -> list[Any]:
    for write in writes:
        state = add_messages(state, write)
    return state


try:  # langgraph 1.x (beta): a channel that checkpoints only every Nth value
    from langgraph.channels import DeltaChannel

    class DeltaState(TypedDict):
        messages: Annotated[list, DeltaChannel(merge_batches, snapshot_frequency=3)]
except ImportError:  # pragma: no cover - older langgraph
    DeltaChannel = None


@pytest.mark.skipif(DeltaChannel is None, reason="this langgraph has no DeltaChannel")
def test_delta_channel_is_rebuilt_from_snapshot_and_writes(tmp_path: Path) -> None:
    path = tmp_path / "delta.sqlite"
    with closing(sqlite3.connect(path, check_same_thread=False)) as conn:
        graph = one_node_graph(DeltaState, lambda s: {"messages": [AIMessage(f"reply {len(s['messages'])}")]},
                               SqliteSaver(conn))
        for i in range(4):
            graph.invoke({"messages": [HumanMessage(f"q{i}")]}, {"configurable": {"thread_id": "d"}})
    # the latest checkpoint holds no value for the channel: it comes from the snapshot two runs back
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        latest = conn.execute("SELECT type, checkpoint FROM checkpoints ORDER BY checkpoint_id DESC").fetchone()
    assert "messages" not in JsonPlusSerializer().loads_typed(latest)["channel_values"]
    thread = load_thread(path)
    assert [m.content for m in thread.messages] == ["q0", "reply 1", "q1", "reply 3", "q2", "reply 5", "q3", "reply 7"]
