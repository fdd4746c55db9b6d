"""Issue 11, wrong types in every importer of engine/formats/DETECTION_ORDER: one line, never a traceback.

tests/safety/test_wrong_types.py mutates native, Anthropic, OpenAI chat, LangChain dict/dumpd and
real Claude Code, Codex, Gemini CLI, OpenHands, mini-SWE-agent, OTel and Responses files. This file
covers the rest, each from a real file where one is small enough to mutate field by field, else a
hand-made document of the format: Cline (a task folder: API history, UI messages, context history),
Inspect AI (a real log), VCR cassettes, SWE-agent (a real trajectory), tau-bench (the first results
of a real file), LangGraph SQLite (a checkpoint database) and LangGraph PostgreSQL (the same
checkpoint through the shared state reader, engine.formats.langgraph_state, with an in-memory
store: the SQL row layer needs a server, tests/formats/test_langgraph_postgres.py). One field at a
time gets a wrong type (or is dropped); the file then loads and inspects, or raises one
ThreadLoadError line naming the file, with no pydantic text.

Examples per format: CTXI_FUZZ_EXAMPLES (default 12, so the whole suite stays fast; e.g.
CTXI_FUZZ_EXAMPLES=500 for a longer hunt).
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.base.errors import ThreadLoadError, ThreadNotFoundError
from engine.formats import DETECTION_ORDER, load_thread
from engine.formats.langgraph_serde import decode_value
from engine.formats.langgraph_state import Checkpoint, state_thread
from engine.recorded.inspect import inspect_thread
from engine.tokens.counters import TiktokenCounter
from tests.conftest import TRACES
from tests.formats.mutations import mutate, paths
from tests.safety.test_wrong_types import REAL, WRONG, hand_made

EXAMPLES = int(os.environ.get("CTXI_FUZZ_EXAMPLES", "12"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture])


def check(load: Callable[[], Any], names: str) -> None:
    """Load (and inspect what loads); a failure must be one ThreadLoadError line naming `names`."""
    try:
        thread = load()
    except (ThreadLoadError, ThreadNotFoundError) as exc:
        text = str(exc)
        assert "\n" not in text, text
        assert names in text, text
        assert "validation error" not in text and "pydantic.dev" not in text and "input_value=" not in text, text
        assert "Traceback" not in text, text
        return
    inspect_thread(thread, TiktokenCounter())


def real(rel: str) -> Path:
    path = TRACES / rel
    if not path.is_file():
        pytest.skip(f"shared trace {path} not present")
    return path


def draw_mutation(data: st.DataObject, doc: Any, *, keep_root: bool = True) -> Any:
    places = paths(doc)[:4000] if keep_root else paths(doc)[1:4000]
    path = data.draw(st.sampled_from(places))
    return mutate(doc, path, data.draw(WRONG), data.draw(st.booleans()))


# -- Cline: a task folder ----------------------------------------------------------------------------------------------

def test_cline(tmp_path: Path) -> None:
    from tests.formats.test_cline import CONTEXT, NATIVE_API, NATIVE_UI

    docs = {"api_conversation_history.json": NATIVE_API, "ui_messages.json": NATIVE_UI, "context_history.json": CONTEXT}
    counter = iter(range(10**6))

    @FUZZ
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        file = data.draw(st.sampled_from(sorted(docs)))
        folder = tmp_path / "tasks" / str(next(counter))
        folder.mkdir(parents=True)
        for name, doc in docs.items():
            (folder / name).write_text(json.dumps(draw_mutation(data, doc) if name == file else doc), encoding="utf-8")
        check(lambda: load_thread(folder), str(folder))
        check(lambda: load_thread(folder / "api_conversation_history.json", format="cline"), str(folder))

    run()


# -- one-file formats, real where small enough ---------------------------------------------------------------------------

def vcr_doc() -> Any:
    from tests.formats.test_vcr_cassette import BASE

    return BASE


def one_file_docs() -> dict[str, tuple[Callable[[], Any], str]]:
    """format -> (its document, the file name it is read under)."""
    def from_trace(rel: str, first: int | None = None) -> Callable[[], Any]:
        def doc() -> Any:
            value = json.loads(real(rel).read_text(encoding="utf-8"))
            return value[:first] if first is not None else value
        return doc

    return {
        "inspect_ai": (from_trace("inspect/log_read_sample.json"), "wrong-types.json"),
        "vcr_cassette": (vcr_doc, "wrong-types.json"),
        "swe_agent": (from_trace("swe-agent/pydicom__pydicom-1458.traj"), "wrong-types.traj"),
        "tau_bench": (from_trace("tau-bench/gpt-4o-airline.json", first=2), "wrong-types.json"),
    }


@pytest.mark.parametrize("fmt", sorted(one_file_docs()))
def test_one_file_formats(fmt: str) -> None:
    make, name = one_file_docs()[fmt]
    doc = make()
    raw = json.dumps(doc).encode()
    assert load_thread(data=raw, name=name).source_format == fmt  # the unmutated document is this format

    @FUZZ
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        changed = json.dumps(draw_mutation(data, doc)).encode()
        check(lambda: load_thread(data=changed, name=name, format=fmt), name)
        check(lambda: load_thread(data=changed, name=name), name)  # auto-detected: another importer may claim it

    run()


# -- LangGraph checkpoints -------------------------------------------------------------------------------------------

def checkpoint_doc() -> dict[str, Any]:
    """A root checkpoint (legacy "json" serializer type), its metadata and a summarization write."""
    messages = [
        {"type": "human", "data": {"content": "read a.py", "id": "h1"}},
        {"type": "ai", "data": {"content": [{"type": "text", "text": "reading"}], "id": "a1",
                                "tool_calls": [{"name": "read_file", "args": {"path": "a.py"}, "id": "call_1"}],
                                "usage_metadata": {"input_tokens": 10, "output_tokens": 3, "total_tokens": 13},
                                "response_metadata": {"model_name": "gpt-4o"}}},
        {"type": "tool", "data": {"content": "contents", "id": "t1", "tool_call_id": "call_1", "name": "read_file"}},
        {"role": "assistant", "content": "done"},
    ]
    return {
        "checkpoint": {"v": 1, "id": "c2", "ts": "2025-01-01T00:00:00+00:00",
                       "channel_values": {"messages": messages, "todos": [{"content": "read", "status": "done"}]},
                       "channel_versions": {"messages": 2}, "versions_seen": {}},
        "metadata": {"step": 3, "source": "loop"},
        "write": [{"type": "human", "data": {"content": "SUMMARY: files read", "id": "s1"}}],
    }


def write_database(path: Path, doc: dict[str, Any]) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    with closing(sqlite3.connect(path)) as conn:
        SqliteSaver(conn).setup()
        conn.execute("INSERT INTO checkpoints VALUES (?, '', 'c2', 'c1', 'json', ?, ?)",
                     ("alpha", json.dumps(doc.get("checkpoint")).encode(), json.dumps(doc.get("metadata")).encode()))
        conn.execute("INSERT INTO writes VALUES ('alpha', '', 'c1', 'task1', ?, 0, 'messages', 'json', ?)",
                     ("agent:SummarizationMiddleware.before_model", json.dumps(doc.get("write")).encode()))
        conn.commit()


def test_langgraph_sqlite(tmp_path: Path) -> None:
    doc = checkpoint_doc()
    good = tmp_path / "good.sqlite"
    write_database(good, doc)
    assert [m.type for m in load_thread(good).messages] == ["human", "ai", "tool", "ai"]
    counter = iter(range(10**6))

    @FUZZ
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        path = tmp_path / f"wrong-types-{next(counter)}.sqlite"
        write_database(path, draw_mutation(data, doc, keep_root=False))
        check(lambda: load_thread(path), str(path))
        check(lambda: load_thread(path, format="langgraph_sqlite", thread_id="alpha"), str(path))

    run()


class MemoryStore:
    """A CheckpointStore holding one decoded checkpoint, as the PostgreSQL importer hands it to the state reader."""

    format = "langgraph_postgres"
    label = "postgresql://ctxi@localhost/wrong-types"

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc

    def _decode(self, value: Any) -> Any:
        return decode_value("json", json.dumps(value).encode(), label=self.label, format=self.format, where="fuzz")

    def thread_ids(self) -> list[str]:
        return ["alpha"]

    def checkpoint(self, thread_id: str, checkpoint_id: str | None = None) -> Checkpoint | None:
        body = self._decode(self.doc.get("checkpoint"))
        values = body.get("channel_values") if isinstance(body, dict) else None
        if not isinstance(values, dict):  # as engine/formats/langgraph_postgres.py checks
            raise ThreadLoadError("checkpoint has no channel_values", path=self.label, format=self.format)
        meta = self.doc.get("metadata")
        return Checkpoint(thread_id, "c2", "c1", values, meta if isinstance(meta, dict) else {})

    def writes(self, thread_id: str, checkpoint_id: str, channel: str) -> list[Any]:
        return []

    def summarization_writes(self, thread_id: str) -> list[tuple[str, str, Any]]:
        return [("c1", "task1", self._decode(self.doc.get("write")))]


def test_langgraph_postgres_state() -> None:
    doc = checkpoint_doc()
    assert [m.type for m in state_thread(MemoryStore(doc), None).messages] == ["human", "ai", "tool", "ai"]

    @FUZZ
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        store = MemoryStore(draw_mutation(data, doc, keep_root=False))
        check(lambda: _guard(lambda: state_thread(store, None), store.label), store.label)

    run()


def _guard(fn: Callable[[], Any], label: str) -> Any:
    """What engine.formats.load_thread wraps every importer in (its `_guarded`), for the store called directly."""
    from engine.formats import _guarded
    from engine.formats.source import Source

    return _guarded(fn, Source.open(None, data=b"{}", name=label), "langgraph_postgres")


# -- every importer is fuzzed somewhere ------------------------------------------------------------------------------

def test_every_importer_in_detection_order_is_fuzzed() -> None:
    here = {"cline", "langgraph_sqlite", "langgraph_postgres", *one_file_docs()}
    elsewhere = set(hand_made()) | {f for f in REAL if not f.endswith("-real")}
    # line-per-request logs and streamed bodies: tests/formats/test_request_log.py mutates them field by field
    elsewhere |= {"request_log", "sse_response"}
    assert set(DETECTION_ORDER) <= here | elsewhere, sorted(set(DETECTION_ORDER) - here - elsewhere)
