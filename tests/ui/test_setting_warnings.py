"""keep ≥ trigger in the dashboard: flagged next to the keep field (sidebar, Config form) and in the run's events."""

from __future__ import annotations

from engine.config.setting_warnings import KIND


def _warnings(elements) -> list[str]:  # noqa: ANN001
    return [w.value.replace("\\", "") for w in elements if "≥ trigger" in w.value]


def test_keep_at_or_above_the_trigger_is_flagged_beside_the_field_and_in_the_events(start) -> None:  # noqa: ANN001
    at = start(preset="stress")
    assert _warnings(at.sidebar.warning) == []
    at.sidebar.number_input(key="sb_keep_val_fraction").set_value(0.3).run()
    assert not at.exception
    flagged = _warnings(at.sidebar.warning)
    assert len(flagged) == 1
    assert flagged[0].startswith("keep fraction:0.3 (= 30,000 tokens) ≥ trigger fraction:0.25 (= 25,000 tokens)")
    run = at.session_state["last_good_run"][1]
    assert [(e.step, e.severity) for e in run.events if e.kind == KIND] == [(0, "warning")]

    at.switch_page("pages/config.py").run()
    assert not at.exception
    assert len(_warnings(at.main.warning)) == 1

    at.sidebar.number_input(key="sb_keep_val_fraction").set_value(0.1).run()
    assert _warnings(at.sidebar.warning) == [] and _warnings(at.main.warning) == []
