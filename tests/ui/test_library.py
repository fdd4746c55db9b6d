"""The session library in the dashboard (AppTest): uploads saved and listed, reopened by a link in a new
session, deleted; a sub-agent opened as a thread from its Task call and back; two sessions compared."""

from __future__ import annotations

import json
import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

from engine.formats.native import dumps
from engine.workspace.library import Library
from tests.conftest import trace_path
from tests.ui.builders import build_thread

SPAWNED_AT = 3  # the session's 4th model call makes the Task call whose transcript is agent-a2898e3.jsonl


def plain(elements) -> str:  # noqa: ANN001
    return " ".join(re.sub(r"\\(.)", r"\1", e.value) for e in elements)


def _upload(at: AppTest, name: str, data: bytes) -> None:
    at.file_uploader[0].upload(name, data, "application/octet-stream").run()
    assert not at.exception, at.exception


def test_an_upload_is_saved_listed_reopened_from_a_link_and_deleted(start, workspace: Path) -> None:  # noqa: ANN001
    thread = build_thread(7, thread_id="uploaded-one")
    thread.title = "Uploaded thread"
    at = start("pages/threads.py")
    _upload(at, "mine.json", dumps(thread).encode())
    [entry] = Library(workspace).entries()
    key = f"library:{entry.id}"
    assert at.session_state["thread_key"] == key and at.query_params["thread"] == key
    listed = plain(at.markdown)
    assert "Uploaded thread" in listed and f"native · 7 steps · peak {entry.peak_tokens:,} tokens (our count)" in listed

    # a new session (a reload, or a restarted server: nothing but the workspace is shared) opens the link
    again = start("pages/timeline.py", thread=key)
    assert again.session_state["thread_key"] == key
    assert any(m.value == "Uploaded thread" for m in again.sidebar.markdown)
    assert again.metric[0].value == "7"

    again.switch_page("pages/threads.py").run()
    again.button(key=f"lib_bin_{entry.id}").click().run()
    assert Library(workspace).entries() == [entry]  # the bin only asks
    again.button(key=f"lib_delete_{entry.id}").click().run()
    assert not again.exception
    assert Library(workspace).entries() == [] and again.session_state["thread_key"] != key
    gone = start(thread=key)
    assert "is not in this workspace's library" in plain(gone.sidebar.warning)


def test_a_bad_upload_is_not_saved(start, workspace: Path) -> None:  # noqa: ANN001
    at = start("pages/threads.py")
    _upload(at, "notes.json", b'{"hello": "world"}')
    assert "Could not read notes.json" in plain(at.error)
    assert Library(workspace).entries() == []


def test_a_sub_agent_opens_as_a_thread_from_its_task_call_and_leads_back(start, workspace: Path) -> None:  # noqa: ANN001
    session_file = trace_path("claude-code", "4d5611e5-241a-462a-8d15-5122611a9569.jsonl")
    agents = sorted((session_file.parent / session_file.stem / "subagents").glob("agent-*.jsonl"))
    at = start("pages/threads.py")
    at.file_uploader[0].set_value([(p.name, p.read_bytes(), "application/octet-stream")
                                   for p in (session_file, *agents)]).run()
    assert not at.exception
    parent = at.session_state["thread_key"]
    assert parent.startswith("library:")
    [entry] = Library(workspace).entries()
    assert entry.files[1:] == ("agent-a2898e3.jsonl", "agent-acompact-e1f845.jsonl") and entry.subagents == 1

    call_id = "toolu_017pLRuPHYTX5t99EnLyV53m"
    saved = Library(workspace).load(entry.id)
    spawned = next(k for k, i in enumerate(saved.ai_indices())
                   if any(c.get("id") == call_id for c in saved.messages[i].tool_calls))  # type: ignore[attr-defined]
    assert spawned == SPAWNED_AT
    link = start("pages/step.py", thread=parent, step=str(spawned))
    link.button(key=f"open_sub_step_{call_id}").click().run()
    assert not link.exception
    sub = f"sub:{call_id}@{parent}"
    assert link.session_state["thread_key"] == sub and link.query_params["thread"] == sub
    assert [t.value for t in link.title] == ["Timeline"] and link.metric[0].value == "12"
    assert f"spawned by the Task call at step {spawned}" in plain(link.sidebar.caption)

    # the sub-agent's own link opens in a new session too; "back" returns to the parent step
    alone = start("pages/step.py", thread=sub, step="3")
    assert [t.value for t in alone.title] == ["Step 3"]
    alone.sidebar.button(key="sub_back").click().run()
    assert not alone.exception
    assert alone.session_state["thread_key"] == parent and alone.session_state["step"] == spawned
    assert [t.value for t in alone.title] == [f"Step {spawned}"]


def test_two_sessions_side_by_side(start) -> None:  # noqa: ANN001
    at = start("pages/compare.py", thread="sample:a_demo", vs="sample:b_small")
    assert not at.exception
    assert [t.value for t in at.title] == ["Compare sessions"]
    rows = {r[""]: (r["A"], r["B"]) for r in at.dataframe[0].value.to_dict("records")}
    assert rows["steps (model calls)"] == ("120", "20")
    assert len(at.get("plotly_chart")) == 2
    for chart in at.get("plotly_chart"):
        # half a page wide: the legend sits in its own band under the plot, and the plot keeps the
        # right margin a side legend would take (a real session's chart was 40 px wide without this)
        layout = json.loads(chart.proto.spec)["layout"]
        assert layout["legend"]["orientation"] == "h" and layout["legend"]["yref"] == "container"
        assert layout["margin"]["r"] == 20 and layout["margin"]["b"] >= 240
        assert all("<br>" in a["text"] or " · " not in a["text"] for a in layout.get("annotations", []))
    assert at.query_params["vs"] == "sample:b_small"
    at.button(key="cmp_open_b").click().run()
    assert at.session_state["thread_key"] == "sample:b_small"
    rows = {r[""]: (r["A"], r["B"]) for r in at.dataframe[0].value.to_dict("records")}
    assert rows["steps (model calls)"] == ("20", "120")


def test_one_broken_entry_is_one_notice_and_hides_nothing_else(start, workspace: Path) -> None:  # noqa: ANN001
    """#39.5: `"steps": 1e999` in one entry.json emptied the list and put a traceback on Compare sessions."""
    lib = Library(workspace)
    good = lib.add("good.json", dumps(build_thread(5, thread_id="good")).encode())
    broken = lib.add("broken.json", dumps(build_thread(6, thread_id="broken")).encode())
    path = workspace / "library" / broken.id / "entry.json"
    path.write_text(re.sub(r'"steps": \d+', '"steps": 1e999', path.read_text()))
    at = start("pages/threads.py")
    assert not at.exception
    assert [re.sub(r"\\(.)", r"\1", w.value) for w in at.warning] == [
        f"Skipped a library entry: {path}: not a library entry (steps: expected a count, got inf)"]
    assert at.button(key=f"lib_open_{good.id}") and not any(b.key == f"lib_open_{broken.id}" for b in at.button)
    at.switch_page("pages/compare.py").run()
    assert not at.exception


def test_an_entry_title_holding_a_lone_surrogate_lists_on_every_page(start, workspace: Path) -> None:  # noqa: ANN001
    """An edited entry.json titled `"x\\ud800"` put a UnicodeEncodeError on the Threads and Compare pages."""
    lib = Library(workspace)
    entry = lib.add("s.json", dumps(build_thread(5, thread_id="s")).encode())
    path = workspace / "library" / entry.id / "entry.json"
    path.write_text(re.sub(r'"title": "[^"]*"', lambda m: '"title": "x\\ud800 y"', path.read_text()))
    at = start("pages/threads.py")
    assert not at.exception
    at.switch_page("pages/compare.py").run()
    assert not at.exception
