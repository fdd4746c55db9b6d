"""LangGraph SQLite checkpoints: a real database written by `create_agent`, read strictly read-only."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.sqlite import SqliteSaver

from engine.errors import ThreadLoadError, ThreadNotFoundError
from engine.formats import detect_format, list_threads, load_thread, open_source
from engine.kinds import message_kind


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
