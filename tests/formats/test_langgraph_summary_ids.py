"""A summary that a saver stored before `add_messages` gave it its id still gets the state's id.

LangGraph's loop hands a task's writes to the saver's `put_writes` on a background thread
(langgraph/pregel/_loop.py, `put_writes` -> `self.submit`) and goes on applying them, and
`add_messages` assigns the summary's uuid4 in place (langgraph/graph/message.py). On a loaded
machine the saver can serialize the write first: the stored summary then has no id, and the
PostgreSQL tests failed now and then (`summary_message_id` None). Here the saver runs inline, so the
write is always serialized before the id exists, with SQLite, no PostgreSQL needed.
"""

from __future__ import annotations

import concurrent.futures
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.pregel import _executor

from engine.formats import load_thread, open_source
from engine.formats.langgraph_sqlite import Store, _schema, open_readonly
from tests.formats.langgraph_agents import write_threads


def run_inline(self: Any, fn: Any, *args: Any, __name__: str | None = None, __cancel_on_exit__: bool = False,
               __reraise_on_exit__: bool = True, __next_tick__: bool = False, **kwargs: Any) -> concurrent.futures.Future:
    """BackgroundExecutor.submit, but the saver's work is done before the loop goes on."""
    done: concurrent.futures.Future = concurrent.futures.Future()
    done.set_result(fn(*args, **kwargs))
    return done


@pytest.fixture(scope="module")
def early_writes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("early") / "checkpoints.sqlite"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_executor.BackgroundExecutor, "submit", run_inline)
        with closing(sqlite3.connect(path, check_same_thread=False)) as conn:
            write_threads(SqliteSaver(conn))
    return path


def test_the_stored_summary_write_has_no_id(early_writes: Path) -> None:
    """The situation the fix is for really happens here (if langgraph stops racing, this says so)."""
    with open_readonly(open_source(early_writes)) as conn:
        schema = _schema(conn)
        assert schema is not None
        [(_, _, update)] = Store(conn, schema, str(early_writes)).summarization_writes("beta")
    assert [m.id for m in update] == ["__remove_all__", None, "ai-b2", "result-call_3"]


def test_the_summary_gets_the_id_the_state_gave_it(early_writes: Path) -> None:
    thread = load_thread(early_writes, thread_id="beta")
    summary, *rest = thread.messages
    assert summary.content == "Here is a summary of the conversation to date:\n\nSUMMARY: the user wants files read"
    assert summary.id and [m.id for m in rest] == ["ai-b2", "result-call_3", "ai-b3"]
    [event] = thread.extra["summarizations"]
    assert (event["summary_message_id"], event["kept_messages"], event["messages_before"]) == (summary.id, 2, 5)
