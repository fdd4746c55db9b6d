"""engine.workspace.keys: what a thread key names, by the link rules, and the thread behind it."""

from __future__ import annotations

import shutil
from pathlib import Path

from engine.workspace import keys
from engine.workspace.library import Library

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_threads"


def _roots(tmp_path: Path, opened: Path | None = None) -> keys.ThreadRoots:
    return keys.ThreadRoots(samples=SAMPLES, opened=opened, library=Library(tmp_path / "workspace"))


def test_a_sample_key_names_a_file_directly_in_the_samples_folder(tmp_path: Path) -> None:
    source = keys.resolve_thread_key("sample:needle", _roots(tmp_path))
    assert source is not None and source.kind == "sample" and source.path == SAMPLES / "needle.json"
    assert source.version().startswith("sample:needle@")
    thread = keys.load_thread_key("sample:needle", _roots(tmp_path))
    assert thread is not None and thread.thread_id
    for hostile in ("sample:../README", "sample:/etc/passwd", "sample:sub/needle", "sample:missing", "sample:"):
        assert keys.resolve_thread_key(hostile, _roots(tmp_path)) is None, hostile


def test_a_file_key_names_only_the_file_ctxi_ui_opened(tmp_path: Path) -> None:
    opened = tmp_path / "mine.json"
    shutil.copy(SAMPLES / "needle.json", opened)
    other = tmp_path / "other.json"
    shutil.copy(SAMPLES / "needle.json", other)
    assert keys.resolve_thread_key(f"file:{opened.resolve()}", _roots(tmp_path, opened)) is not None
    assert keys.resolve_thread_key(f"file:{other.resolve()}", _roots(tmp_path, opened)) is None
    assert keys.resolve_thread_key(f"file:{opened.resolve()}", _roots(tmp_path)) is None  # no file was opened


def test_a_library_key_is_a_content_address_in_the_library(tmp_path: Path) -> None:
    roots = _roots(tmp_path)
    assert roots.library is not None
    entry = roots.library.add("needle.json", (SAMPLES / "needle.json").read_bytes(), None)
    source = keys.resolve_thread_key(f"library:{entry.id}", roots)
    assert source is not None and source.kind == "library" and source.entry_id == entry.id
    thread = keys.load_thread_key(f"library:{entry.id}", roots)
    assert thread is not None
    for hostile in ("library:../x", "library:" + "0" * 24, "library:" + entry.id.upper(), "library:" + entry.id + "/"):
        assert keys.resolve_thread_key(hostile, roots) is None, hostile


def test_a_subagent_key_is_looked_up_in_its_parents_thread(tmp_path: Path) -> None:
    roots = _roots(tmp_path)
    parent = keys.load_thread_key("sample:research-report", roots)
    assert parent is not None and parent.subagents, "the research-report sample spawns sub-agents"
    call_id = next(iter(parent.subagents))
    key = f"sub:{call_id}@sample:research-report"
    source = keys.resolve_thread_key(key, roots)
    assert source is not None and (source.kind, source.parent_key, source.call_id) == (
        "subagent", "sample:research-report", call_id)
    sub = keys.load_thread_key(key, roots)
    assert sub is not None and sub.thread_id == parent.subagents[call_id].thread_id
    assert len(sub.messages) == len(parent.subagents[call_id].messages)
    assert keys.load_thread_key("sub:nope@sample:research-report", roots) is None
    assert keys.load_thread_key(f"sub:{call_id}@sample:../README", roots) is None


def test_session_keys_open_only_what_the_caller_holds(tmp_path: Path) -> None:
    roots = _roots(tmp_path)
    thread = keys.load_thread_key("sample:needle", roots)
    assert thread is not None
    held = {"upload:abc": thread, "pg:123:t": thread, keys.DEMO_KEY: thread}
    for key in held:
        assert keys.load_thread_key(key, roots, held=held) is thread
        assert keys.load_thread_key(key, roots) is None
    assert keys.resolve_thread_key("anything-else", roots) is None
