"""Issue 11, nothing lost: a failed live run is shown as failed, saved as partial, and does not replace
the open thread; every live run gets its own id; an unreadable saved file is skipped and named;
a saved file whose thread_id differs from its name opens.

Repros on main before this series: a 401 run was reported green ("Finished … Saved … and opened")
and replaced the current thread; two runs with the same model and task had the same id, so the
later (even failed, 0-step) run overwrote the earlier saved one; one unreadable file hid every
saved run; a renamed saved file crashed "Open saved run".
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from streamlit.testing.v1 import AppTest

from engine.formats.native import dumps
from engine.scenarios.live import LiveResult
from engine.scenarios.live_run import run_live
from engine.thread.model import Thread


def _panel() -> None:
    from ui.run_panel import render_run_panel

    render_run_panel()


def failed_run(target: str, **kwargs: Any) -> LiveResult:
    """What run_live returns when the provider answers 401 on the second call (redacted error)."""
    thread = Thread(thread_id="live-failed", messages=[HumanMessage("look around", id="h"), AIMessage("ok", id="a")],
                    extra={"live": {"outcome": "error"}})
    return LiveResult(thread=thread, outcome="error", steps=1,
                      error="AuthenticationError: Error code: 401 - Incorrect API key provided: [redacted]")


def test_a_failed_run_is_shown_as_failed_saved_as_partial_and_keeps_the_open_thread(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXI_WORKSPACE", str(tmp_path))
    monkeypatch.setattr("engine.scenarios.live_run.run_live", failed_run)
    at = AppTest.from_function(_panel, default_timeout=60)
    at.session_state["thread_key"] = "sample:needle"
    at.run()
    at.selectbox(key="run_scenario").set_value("needle").run()
    at.button(key="run_start").click().run()
    handle = at.session_state["run_handle"]
    assert handle.wait(60)
    at.run()
    assert not at.exception
    assert [s.value for s in at.success] == []  # never green
    saved = tmp_path / "threads" / "live-failed.json"
    assert [re.sub(r"\\(.)", r"\1", e.value) for e in at.error] == [  # markdown escapes removed
        "The run failed after 1 step: AuthenticationError: Error code: 401 - Incorrect API key provided: "
        f"[redacted]. What ran so far is saved as a partial run to {saved}; the open thread is unchanged."]
    assert at.session_state["thread_key"] == "sample:needle"
    assert json.loads(saved.read_text(encoding="utf-8"))["extra"]["live"]["outcome"] == "error"


def test_two_live_runs_with_the_same_model_and_task_get_two_ids() -> None:
    def model() -> GenericFakeChatModel:
        return GenericFakeChatModel(messages=iter([AIMessage("done", id="r1")]))

    first = run_live("openai:gpt-4o-mini", task="look around", model=model(), steps=1)
    second = run_live("openai:gpt-4o-mini", task="look around", model=model(), steps=1)
    assert first.thread.thread_id != second.thread.thread_id
    assert first.thread.thread_id.rsplit("-", 1)[0] == second.thread.thread_id.rsplit("-", 1)[0]  # same stem


def test_saved_runs_skip_an_unreadable_file_and_open_a_renamed_one(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXI_WORKSPACE", str(tmp_path))
    folder = tmp_path / "threads"
    folder.mkdir()
    (folder / "broken.json").write_text("{", encoding="utf-8")
    thread = Thread(thread_id="the-real-id", messages=[HumanMessage("hi", id="h"), AIMessage("yo", id="a")])
    (folder / "renamed.json").write_text(dumps(thread), encoding="utf-8")
    at = AppTest.from_function(_panel, default_timeout=60)
    at.run()
    assert not at.exception
    assert [re.sub(r"\\(.)", r"\1", c.value) for c in at.caption if c.value.startswith("Skipped")] == [
        f"Skipped an unreadable saved run: {folder / 'broken.json'}, format native, at line 1, column 2: "
        "invalid JSON: Expecting property name enclosed in double quotes"]
    assert at.selectbox(key="run_saved_pick").value == "the-real-id"
    at.button(key="run_saved_open").click().run()
    assert not at.exception and not at.error
    key = at.session_state["thread_key"]
    assert key.startswith("upload:") and at.session_state["uploads"][key].name == "renamed.json"


def two_thread_run(first_text: str) -> LiveResult:
    """A run of two threads where the second names the first (the memory scenario's shape)."""
    first = Thread(thread_id="mem-1", messages=[HumanMessage(first_text, id="h1"), AIMessage("noted", id="a1")])
    second = Thread(thread_id="mem-2", messages=[HumanMessage("what was it?", id="h2"), AIMessage("x", id="a2")],
                    extra={"previous_thread": "mem-1"})
    return LiveResult(thread=second, outcome="done", steps=1, related=[first])


def test_a_renamed_save_keeps_previous_thread_pointing_at_this_runs_first_thread(tmp_path: Path) -> None:
    from engine.scenarios.live import save_run
    from engine.workspace.workspace import Workspace

    ws = Workspace(tmp_path)
    assert save_run(two_thread_run("the codename is KESTREL"), ws) == [
        str(tmp_path / "threads" / "mem-1.json"), str(tmp_path / "threads" / "mem-2.json")]
    later = two_thread_run("the codename is OSPREY")  # a different run under the same ids
    assert save_run(later, ws) == [str(tmp_path / "threads" / "mem-1-2.json"), str(tmp_path / "threads" / "mem-2-2.json")]
    assert [later.related[0].thread_id, later.thread.thread_id] == ["mem-1-2", "mem-2-2"]
    # the link names the thread saved by this run (on main it still said mem-1: the earlier run's thread)
    saved_second = ws.load("mem-2-2")
    assert saved_second.extra["previous_thread"] == "mem-1-2"
    assert ws.load(saved_second.extra["previous_thread"]).messages[0].content == "the codename is OSPREY"
    assert ws.load("mem-2").extra["previous_thread"] == "mem-1"  # the earlier run's link is untouched
    # saving the same run again renames nothing and changes no link
    again = two_thread_run("the codename is KESTREL")
    assert save_run(again, ws)[1] == str(tmp_path / "threads" / "mem-2.json")
    assert again.thread.extra["previous_thread"] == "mem-1"


def test_ctxi_run_save_twice_links_each_second_thread_to_its_own_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from engine.cli.ctxi import main
    from engine.workspace.workspace import Workspace

    monkeypatch.setenv("CTXI_WORKSPACE", str(tmp_path))
    base = ["run", "memory-two-threads", "--steps", "6", "--save", "--quiet"]
    assert main(base) == 0
    assert main([*base, "--task", "Remember: the deploy slot is Monday 09:00 UTC."]) == 0
    folder = tmp_path / "threads"
    stem = "memory-two-threads-steps6-seed0"
    assert [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("saved ")] == [
        f"saved {folder / f'{stem}-1.json'}", f"saved {folder / f'{stem}-2.json'}",
        f"saved {folder / f'{stem}-1-2.json'}", f"saved {folder / f'{stem}-2-2.json'}"]
    ws = Workspace(tmp_path)
    second = ws.load(f"{stem}-2-2")
    assert second.extra["previous_thread"] == f"{stem}-1-2"  # on main: {stem}-1, the first run's thread
    first = ws.load(second.extra["previous_thread"])
    assert first.messages[0].content == "Remember: the deploy slot is Monday 09:00 UTC."
    assert ws.load(f"{stem}-2").extra["previous_thread"] == f"{stem}-1"
