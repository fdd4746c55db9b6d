"""The session library: content-addressed entries in the workspace, loaded back by the importers."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from engine.base.errors import ThreadLoadError
from engine.formats.native import dumps
from engine.workspace.library import LIBRARY_DIR, Library, entry_id, safe_file_name
from engine.workspace.workspace import WorkspaceError
from tests.conftest import trace_path
from tests.ui.builders import build_thread


def _native(n: int = 6, thread_id: str = "t1") -> bytes:
    thread = build_thread(n, thread_id=thread_id)
    thread.title = f"Thread {thread_id}"
    return dumps(thread).encode()


def test_an_upload_is_saved_listed_loaded_and_deleted(tmp_path: Path) -> None:
    lib = Library(tmp_path)
    data = _native()
    entry = lib.add("mine.json", data)
    assert entry.id == entry_id([("mine.json", data)], None) and len(entry.id) == 24
    assert (entry.title, entry.source_format, entry.steps, entry.files) == ("Thread t1", "native", 6, ("mine.json",))
    assert entry.peak_source == "counted" and entry.peak_tokens and entry.peak_tokens > 0
    assert entry.saved_at.endswith("+00:00")
    assert (tmp_path / LIBRARY_DIR / entry.id / "files" / "mine.json").read_bytes() == data
    assert lib.add("mine.json", data) == entry  # the same upload is the same entry
    assert [e.id for e in lib.entries()] == [entry.id]
    thread = Library(tmp_path).load(entry.id)  # a new Library (a restarted server) reads the same files
    assert thread.thread_id == "t1" and len(thread.ai_indices()) == 6
    assert lib.delete(entry.id) and lib.entries() == [] and not lib.delete(entry.id)
    assert list((tmp_path / LIBRARY_DIR).iterdir()) == []


def test_the_address_covers_names_bytes_companions_and_thread_id() -> None:
    base = entry_id([("a.json", b"x")], None)
    assert len({base, entry_id([("b.json", b"x")], None), entry_id([("a.json", b"y")], None),
                entry_id([("a.json", b"x")], "t"), entry_id([("a.json", b"x"), ("agent-1.jsonl", b"")], None)}) == 5


def test_a_file_that_does_not_load_leaves_nothing_behind(tmp_path: Path) -> None:
    lib = Library(tmp_path)
    with pytest.raises(ThreadLoadError, match="notes.json"):
        lib.add("notes.json", b'{"hello": "world"}')
    assert lib.entries() == [] and list((tmp_path / LIBRARY_DIR).iterdir()) == []


def test_newest_first_and_a_broken_entry_is_skipped(tmp_path: Path) -> None:
    lib = Library(tmp_path)
    first = lib.add("one.json", _native(thread_id="one"))
    second = lib.add("two.json", _native(thread_id="two"))
    for e, when in ((first, "2026-01-01T00:00:00+00:00"), (second, "2026-02-01T00:00:00+00:00")):
        path = tmp_path / LIBRARY_DIR / e.id / "entry.json"
        path.write_text(json.dumps({**json.loads(path.read_text()), "saved_at": when}))
    assert [e.id for e in lib.entries()] == [second.id, first.id]
    (tmp_path / LIBRARY_DIR / first.id / "entry.json").write_text("{not json")
    assert [e.id for e in lib.entries()] == [second.id]


@pytest.mark.parametrize("bad", ["../x", "/etc", "", "A" * 24, "0" * 23, "0" * 25, "0" * 22 + "/.", "..", "0" * 24 + "\0"])
def test_an_entry_id_is_24_hex_digits_and_nothing_else(tmp_path: Path, bad: str) -> None:
    lib = Library(tmp_path)
    (tmp_path / LIBRARY_DIR).mkdir()
    assert lib.entry_dir(bad) is None and lib.entry(bad) is None
    with pytest.raises(WorkspaceError):
        lib.load(bad)


def test_a_symlinked_entry_or_a_tampered_file_name_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "files").mkdir(parents=True)
    (outside / "files" / "x.json").write_bytes(_native())
    (outside / "entry.json").write_text(json.dumps({"files": ["x.json"], "title": "outside"}))
    lib = Library(tmp_path / "ws")
    (lib.dir).mkdir(parents=True)
    os.symlink(outside, lib.dir / ("a" * 24))
    assert lib.entry_dir("a" * 24) is None and lib.entries() == []
    good = lib.add("mine.json", _native())
    entry_file = lib.dir / good.id / "entry.json"
    entry_file.write_text(json.dumps({**json.loads(entry_file.read_text()), "files": ["../../outside/files/x.json"]}))
    with pytest.raises(WorkspaceError, match="not a library entry"):
        lib.load(good.id)


def test_uploaded_names_lose_their_folders_and_odd_characters() -> None:
    assert safe_file_name("agent-a2898e3.jsonl") == "agent-a2898e3.jsonl"
    assert safe_file_name("../../etc/passwd") == "passwd"
    assert safe_file_name("C:\\Users\\x\\session.jsonl") == "session.jsonl"
    assert safe_file_name("..hidden") == "hidden"
    assert safe_file_name("a\nb$.json") == "a_b_.json"


def test_a_claude_code_session_keeps_its_sub_agent_files(tmp_path: Path) -> None:
    session = trace_path("claude-code", "4d5611e5-241a-462a-8d15-5122611a9569.jsonl")
    agents = sorted((session.parent / session.stem / "subagents").glob("agent-*.jsonl"))
    lib = Library(tmp_path)
    entry = lib.add(session.name, session.read_bytes(), None, [(p.name, p.read_bytes()) for p in agents])
    assert entry.files == (session.name, "agent-a2898e3.jsonl", "agent-acompact-e1f845.jsonl")
    assert (entry.source_format, entry.steps, entry.subagents) == ("claude_code", 139, 1)
    assert entry.peak_source == "recorded" and entry.peak_tokens == 164_831
    thread = Library(tmp_path).load(entry.id)
    assert list(thread.subagents) == ["toolu_017pLRuPHYTX5t99EnLyV53m"]
    assert len(thread.subagents["toolu_017pLRuPHYTX5t99EnLyV53m"].ai_indices()) == 12
