"""A library or sub-agent link names a content-addressed entry inside the workspace, never a path.

`thread=library:<id>` opens only a folder `engine.workspace.library` created directly in `<workspace>/library/`
(24 hex digits); `thread=sub:<call id>@<parent>` only a sub-agent transcript the parent thread holds.
Anything else is "not available here", the default thread opens, and no file outside is read.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from engine.config.links import library_id, split_subagent_key, subagent_key, valid_library_id
from engine.formats.native import dumps
from engine.workspace.library import Library
from tests.ui.builders import build_thread

CANARY = "CANARY-outside-the-library"


def _outside_entry(root: Path) -> Path:
    """A folder shaped like a library entry, outside the library, holding a thread titled CANARY."""
    thread = build_thread(5, thread_id="outside")
    thread.title = CANARY
    (root / "files").mkdir(parents=True)
    (root / "files" / "x.json").write_text(dumps(thread), encoding="utf-8")
    (root / "entry.json").write_text(json.dumps({"files": ["x.json"], "title": CANARY}), encoding="utf-8")
    return root


@pytest.mark.parametrize("key", [
    "library:../outside", "library:../../etc/passwd", "library:/etc/passwd", "library:{outside}",
    "library:" + "A" * 24, "library:" + "0" * 23, "library:" + "0" * 24 + "/..", "library:" + "0" * 24 + "%2F..",
    "library:", "library:" + "0" * 24,  # well formed, but no such entry
    "library:" + "a" * 24,  # a symlink in the library pointing outside it
    "sub:x@library:../outside", "sub:../../x@sample:a_demo", "sub:@sample:a_demo", "sub:nope@sample:a_demo",
    "sub:x@sub:y@library:{outside}", "sub:" + "x" * 3000 + "@sample:a_demo",
])
def test_a_hostile_library_link_opens_nothing_outside(start, workspace: Path, tmp_path: Path, key: str) -> None:  # noqa: ANN001
    outside = _outside_entry(tmp_path / "outside")
    (workspace / "library").mkdir(parents=True)
    os.symlink(outside, workspace / "library" / ("a" * 24))
    at = start(thread=key.format(outside=outside))
    assert not at.exception
    assert at.session_state["thread_key"] == "sample:a_demo"
    assert "from the link is not available here" in " ".join(w.value for w in at.sidebar.warning)
    shown = " ".join(m.value for m in (*at.markdown, *at.sidebar.markdown, *at.caption))
    assert CANARY not in shown


def test_the_key_rules() -> None:
    assert valid_library_id("0123456789abcdef01234567")
    for bad in ("0123456789ABCDEF01234567", "0123456789abcdef0123456", "../0123456789abcdef01234", ""):
        assert not valid_library_id(bad)
    assert library_id("library:0123456789abcdef01234567") == "0123456789abcdef01234567"
    assert library_id("library:/etc/passwd") is None and library_id("sample:x") is None
    key = subagent_key("toolu_01A", "library:0123456789abcdef01234567")
    assert split_subagent_key(key) == ("toolu_01A", "library:0123456789abcdef01234567")
    assert split_subagent_key("sub:a/b@sample:x") is None and split_subagent_key("sub:a") is None
    assert split_subagent_key("sub:a@") is None


def test_a_saved_entry_opens_by_its_link(start, workspace: Path) -> None:  # noqa: ANN001
    thread = build_thread(5, thread_id="saved")
    thread.title = "Saved one"
    entry = Library(workspace).add("saved.json", dumps(thread).encode())
    at = start(thread=f"library:{entry.id}")
    assert at.session_state["thread_key"] == f"library:{entry.id}"
    assert any(m.value == "Saved one" for m in at.sidebar.markdown)
