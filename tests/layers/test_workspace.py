"""The workspace on disk: memories that persist across threads, saved threads."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from engine.base.errors import ThreadLoadError, ThreadNotFoundError
from engine.formats.native import dumps
from engine.thread.model import Thread
from engine.workspace.vfs import VirtualFilesystem
from engine.workspace.workspace import Workspace, WorkspaceError, default_root, thread_file_name


def test_default_root_from_env_else_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CTXI_WORKSPACE", str(tmp_path / "ws"))
    assert default_root() == tmp_path / "ws"
    assert Workspace().root == tmp_path / "ws"
    monkeypatch.delenv("CTXI_WORKSPACE")
    assert default_root() == Path(os.path.expanduser("~/.context-inspector"))


def test_memories_round_trip_through_a_vfs(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    assert ws.memory_files() == {} and not (tmp_path / "memories").exists()
    vfs = VirtualFilesystem()
    vfs.write("/memories/AGENTS.md", "# prefs\nuse tabs\n")
    vfs.write("/memories/team/notes.md", "n")
    vfs.write("/large_tool_results/x", "not a memory")
    written = ws.save_memories(vfs)
    assert written == [tmp_path / "memories" / "AGENTS.md", tmp_path / "memories" / "team" / "notes.md"]
    assert (tmp_path / "memories" / "AGENTS.md").read_text(encoding="utf-8") == "# prefs\nuse tabs\n"
    assert ws.save_memories(vfs) == []  # unchanged files are not rewritten
    fresh = VirtualFilesystem()
    assert ws.load_memories(fresh) == ["/memories/AGENTS.md", "/memories/team/notes.md"]
    assert fresh.read("/memories/team/notes.md") == "n"
    # a run's own version wins unless overwrite
    fresh.write("/memories/AGENTS.md", "newer")
    assert ws.load_memories(fresh) == []
    assert fresh.read("/memories/AGENTS.md") == "newer"
    assert ws.load_memories(fresh, overwrite=True) == ["/memories/AGENTS.md", "/memories/team/notes.md"]
    assert fresh.read("/memories/AGENTS.md") == "# prefs\nuse tabs\n"


def test_memory_paths_cannot_leave_the_memories_folder(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    with pytest.raises(WorkspaceError, match="escapes"):
        ws.write_memory("/memories/../../evil", "x")
    with pytest.raises(WorkspaceError, match="live under /memories/"):
        ws.write_memory("/etc/passwd", "x")
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (tmp_path / "memories").mkdir()
    (tmp_path / "memories" / "link").symlink_to(outside, target_is_directory=True)
    with pytest.raises(WorkspaceError, match="resolves outside"):
        ws.write_memory("/memories/link/x.md", "x")
    assert list(outside.iterdir()) == []


def test_a_memory_file_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    (tmp_path / "memories").mkdir()
    (tmp_path / "memories" / "bad.md").write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(WorkspaceError, match=r"bad\.md: memory file is not UTF-8 text"):
        Workspace(tmp_path).memory_files()


def thread(thread_id: str = "t-1") -> Thread:
    return Thread(thread_id, [HumanMessage("hi", id="h"), AIMessage("hello", id="a")], title="Greeting", system_prompt="s")


def test_save_list_and_load_threads(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    assert ws.list_threads() == []
    path = ws.save_thread(thread())
    assert path == tmp_path / "threads" / "t-1.json"
    assert path.read_text(encoding="utf-8") == dumps(thread())
    ws.save_thread(thread("a/b:c"))
    refs = ws.list_threads()
    assert [(r.thread_id, r.title, r.messages) for r in refs] == [("a/b:c", "Greeting", 2), ("t-1", "Greeting", 2)]
    loaded = ws.load("a/b:c")
    assert loaded.thread_id == "a/b:c" and [m.id for m in loaded.messages] == ["h", "a"]
    with pytest.raises(ThreadNotFoundError, match="no saved thread 'nope'"):
        ws.load("nope")


def test_thread_file_names_are_safe_and_distinct() -> None:
    assert thread_file_name("t-1") == "t-1.json"
    assert thread_file_name("a/b") != thread_file_name("a_b")
    digest = hashlib.sha256(b"../../x").hexdigest()[:12]
    assert thread_file_name("../../x") == f"_.._x-{digest}.json"  # one component, no leading dot
    assert len(thread_file_name("x" * 500)) == 100 + 1 + 12 + 5


def test_a_corrupt_saved_thread_is_reported_with_its_place(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    ws.threads_dir.mkdir(parents=True)
    (ws.threads_dir / "bad.json").write_text('{"thread_id": ', encoding="utf-8")
    # listed: skipped and named (issue 11: one unreadable file must not hide every saved run)
    assert ws.list_threads() == []
    [problem] = ws.scan_threads().skipped
    assert re.search(r"bad\.json, format native, at line 1, column 15: invalid JSON", problem)
    with pytest.raises(ThreadLoadError, match=r"bad\.json, format native, at line 1, column 15: invalid JSON"):
        ws.load("bad")
