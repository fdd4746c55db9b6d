from __future__ import annotations

import pytest

from engine.workspace.vfs import PathError, VirtualFilesystem, normalize_path


@pytest.mark.parametrize("bad", ["../etc/passwd", "/a/../../b", "/..", "", "a\x00b"])
def test_paths_cannot_escape(bad: str) -> None:
    with pytest.raises(PathError):
        normalize_path(bad)


def test_normalize() -> None:
    assert normalize_path("a//b/./c") == "/a/b/c"


def test_write_read_ls_glob_grep_edit() -> None:
    fs = VirtualFilesystem()
    fs.write("/large_tool_results/call_1", "alpha\nbeta\ngamma\n", step=3, layer="filesystem")
    fs.write("/conversation_history/s.md", "## Summarized\nBLUE-HERON-7 here\n")
    assert fs.ls("/") == ["/conversation_history/", "/large_tool_results/"]
    assert fs.ls("/large_tool_results") == ["/large_tool_results/call_1"]
    assert fs.read("/large_tool_results/call_1", offset=1, limit=1) == "beta\n"
    assert fs.glob("/large_tool_results/*") == ["/large_tool_results/call_1"]
    assert fs.grep("HERON") == [{"path": "/conversation_history/s.md", "line": 2, "text": "BLUE-HERON-7 here"}]
    assert fs.grep("beta", path="/conversation_history") == []
    assert fs.edit("/large_tool_results/call_1", "beta", "BETA") == 1
    with pytest.raises(ValueError, match="not found"):
        fs.edit("/large_tool_results/call_1", "zzz", "y")
    assert fs.entry("/large_tool_results/call_1").step == 3
    assert VirtualFilesystem.from_dict(fs.to_dict()).to_dict() == fs.to_dict()
