"""The dashboard's Run panel in AppTest: a scenario run completes, is saved and becomes the current thread."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest


def _panel() -> None:
    from ui.run_panel import render_run_panel

    render_run_panel()


def test_live_scenario_run_completes_saves_and_opens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXI_WORKSPACE", str(tmp_path))
    at = AppTest.from_function(_panel, default_timeout=60)
    at.run()
    assert [s.label for s in at.selectbox] == ["Scenario", "Config"]
    at.selectbox(key="run_scenario").set_value("interrupted").run()
    at.number_input(key="run_steps_interrupted").set_value(6).run()
    at.button(key="run_start").click().run()
    assert not at.exception
    assert at.success[0].value.startswith("Finished after 6 steps: 12 messages")
    saved = sorted(p.name for p in (tmp_path / "threads").iterdir())
    assert saved == ["interrupted-steps6-seed0.json"]
    key = at.session_state["thread_key"]
    assert key.startswith("upload:") and key in at.session_state["uploads"]
    # a fresh app (as after a restart) lists the saved run and opens it
    again = AppTest.from_function(_panel, default_timeout=60)
    again.run()
    assert again.selectbox(key="run_saved_pick").value == "interrupted-steps6-seed0"
    again.button(key="run_saved_open").click().run()
    assert again.session_state["thread_key"].startswith("upload:")


def test_real_model_needs_a_model_and_a_task(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXI_WORKSPACE", str(tmp_path))
    at = AppTest.from_function(_panel, default_timeout=30)
    at.run()
    at.radio(key="run_kind").set_value("Real model").run()
    at.button(key="run_start").click().run()
    assert at.error[0].value == "Give a model as provider:model and a task."


def test_run_from_the_threads_page_opens_in_the_timeline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXI_WORKSPACE", str(tmp_path))
    root = Path(__file__).resolve().parents[2]
    at = AppTest.from_file(str(root / "app.py"), default_timeout=60)
    at.run()
    at.switch_page("pages/threads.py").run()
    at.selectbox(key="run_scenario").set_value("needle").run()
    at.number_input(key="run_steps_needle").set_value(6).run()
    at.button(key="run_start").click().run()
    assert not at.exception
    assert at.success[0].value.startswith("Finished after 6 steps")
    at.switch_page("pages/timeline.py").run()
    assert not at.exception
    assert at.session_state["thread_key"].startswith("upload:")
    assert any(m.value == "6" for m in at.metric)  # the timeline shows the new thread's 6 steps


def test_a_run_is_saved_by_its_worker_and_found_again_after_a_reload(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 35: reloading the page during a run lost it, with nothing saved (only the page that started it
    saved it). The worker saves what ran; a new session (a reload) finds the run and can watch it."""
    from engine.scenarios.live_run import live_runs, start_live
    from engine.workspace.workspace import Workspace

    monkeypatch.setenv("CTXI_WORKSPACE", str(tmp_path))
    # no page polls this handle: the run is saved anyway
    handle = start_live("interrupted", steps=6, seed=1, save_to=Workspace(tmp_path))
    assert handle in live_runs()
    assert handle.wait(60) and handle.saved == [str(tmp_path / "threads" / "interrupted-steps6-seed1.json")]
    assert handle.result is not None and handle.result.thread.title == (
        "An interrupted run with dangling tool calls — 6-step run, seed 1")  # not the 30-step sample's title
    # a new session (a reload) says the run was saved, and where
    at = AppTest.from_function(_panel, default_timeout=60)
    at.run()
    captions = [re.sub(r"\\(.)", r"\1", c.value) for c in at.caption]
    assert any("Runs started earlier (another page load) and saved when they ended: interrupted at " in c
               and "interrupted-steps6-seed1.json" in c for c in captions)


def test_a_running_run_can_be_watched_from_a_new_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.scenarios.live import CancelToken
    from engine.scenarios.live_run import LiveRunHandle, live_runs
    from engine.workspace.workspace import Workspace

    monkeypatch.setenv("CTXI_WORKSPACE", str(tmp_path))
    handle = LiveRunHandle("needle", steps=4, seed=2, save_to=Workspace(tmp_path))
    handle.cancel_token = CancelToken()
    import engine.scenarios.live_run as live_run

    with live_run._REGISTRY_LOCK:
        live_run._REGISTRY[handle.id] = handle  # listed, not started yet: it reads as still going
    try:
        at = AppTest.from_function(_panel, default_timeout=60)
        at.run()
        infos = [re.sub(r"\\(.)", r"\1", i.value) for i in at.info]
        assert any(i.startswith("A run started at ") and "still going: needle" in i for i in infos)
        at.button(key=f"run_watch_{handle.id}").click()
        handle.start()
        at.run()
        assert at.session_state["run_handle"] is handle
        assert handle.wait(60) and handle.saved
    finally:
        with live_run._REGISTRY_LOCK:
            live_run._REGISTRY.pop(handle.id, None)
    assert handle not in live_runs()
