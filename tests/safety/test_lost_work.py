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
from engine.live import LiveResult
from engine.live_run import run_live
from engine.thread import Thread


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
    monkeypatch.setattr("engine.live_run.run_live", failed_run)
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
