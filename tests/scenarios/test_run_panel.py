"""The dashboard's Run panel in AppTest: a scenario run completes, is saved and becomes the current thread."""

from __future__ import annotations

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
