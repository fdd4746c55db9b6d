"""A file that holds less or more than the thread it opens as says so in one line (issue 35: a Claude Code
session cut mid-line opened silently as fewer steps; a file holding 25 copies of one session as one copy)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import trace_path

SESSION = ("claude-code", "4d5611e5-241a-462a-8d15-5122611a9569.jsonl")


def plain(elements) -> list[str]:  # noqa: ANN001
    return [re.sub(r"\\(.)", r"\1", e.value) for e in elements]


def test_a_session_cut_mid_line_says_so(start, tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    data = trace_path(*SESSION).read_bytes()
    cut = data[: data.index(b"\n", len(data) // 2) + 40]  # 40 bytes into a line
    line = cut.count(b"\n") + 1
    path = tmp_path / "cut.jsonl"
    path.write_bytes(cut)
    monkeypatch.setenv("CTXI_OPEN", str(path))
    at = start()
    assert plain(at.sidebar.warning) == [
        f"The file ends in the middle of line {line:,} (the session was still being written, or the copy was cut): "
        "that line is left out, the thread ends with the line before it."]
    at.switch_page("pages/threads.py").run()
    assert any(w.startswith(f"The file ends in the middle of line {line:,}") for w in plain(at.warning))


def test_a_file_holding_one_session_25_times_says_so(start, tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    data = trace_path(*SESSION).read_bytes()
    path = tmp_path / "copies.jsonl"
    path.write_bytes(data * 25)
    records = sum(1 for line in data.splitlines() if b'"uuid"' in line)
    monkeypatch.setenv("CTXI_OPEN", str(path))
    at = start()
    [note] = plain(at.sidebar.warning)
    assert note.startswith("The file holds the same session about 25 times (") and note.endswith(": it is shown once.")
    assert at.session_state["thread_key"].startswith("file:") and records > 400


def test_a_whole_session_says_nothing(start, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("CTXI_OPEN", str(trace_path(*SESSION)))
    assert plain(start().sidebar.warning) == []
