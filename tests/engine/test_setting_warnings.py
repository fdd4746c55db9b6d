"""keep ≥ trigger: flagged per clause in the same unit, and recorded as a warning event at step 0 of the run."""

from __future__ import annotations

import pytest

from engine.config.presets import PRESETS
from engine.config.schema import preset
from engine.config.setting_warnings import KEEP_KEY, KIND, keep_meets_trigger, setting_warnings
from engine.run.replay import replay
from tests.ui.builders import build_thread


def _summarization(trigger: str, keep: str):  # noqa: ANN202
    return preset("langchain").with_overrides([f"summarization.trigger={trigger}", f"summarization.keep={keep}"]).summarization


@pytest.mark.parametrize(("trigger", "keep", "flagged"), [
    ("fraction:0.85", "fraction:0.10", 0),
    ("fraction:0.85", "fraction:0.85", 1),      # equal meets it (LangChain compares with >=)
    ("tokens:50000", "fraction:0.5", 1),        # 0.5 of 100,000 = 50,000 tokens
    ("tokens:50001", "fraction:0.5", 0),
    ("messages:20", "messages:20", 1),
    ("messages:20", "tokens:90000", 0),         # different units are not compared
    ("tokens:30000&messages:5", "tokens:40000", 0),  # an AND clause: keep says nothing about messages
    ("tokens:30000&fraction:0.2", "tokens:40000", 1),
])
def test_one_warning_per_clause_that_keep_already_meets(trigger: str, keep: str, flagged: int) -> None:
    assert len(keep_meets_trigger(_summarization(trigger, keep), 100_000)) == flagged


def test_the_message_names_both_levels_and_each_flagged_clause() -> None:
    warnings = keep_meets_trigger(_summarization("fraction:0.5,messages:500", "fraction:0.6"), 100_000)
    assert [w.key for w in warnings] == [KEEP_KEY]
    assert warnings[0].message.startswith("keep fraction:0.6 (= 60,000 tokens) ≥ trigger fraction:0.5 (= 50,000 tokens): ")


def test_a_fraction_without_a_window_is_not_compared_and_no_preset_warns() -> None:
    assert keep_meets_trigger(_summarization("tokens:10", "fraction:0.9"), None) == []
    for name in PRESETS:
        assert setting_warnings(preset(name), 200_000) == [], name


def test_switched_off_summarization_does_not_warn() -> None:
    config = preset("stress").with_overrides(["summarization.keep=fraction:0.9", "summarization.enabled=false"])
    assert setting_warnings(config, 100_000) == []


def test_the_run_records_the_warning_as_an_event_at_step_0() -> None:
    thread = build_thread(20)
    config = preset("stress").with_overrides(["summarization.keep=fraction:0.9"])
    run = replay(thread, config)
    warned = [e for e in run.events if e.kind == KIND]
    assert [(e.step, e.layer, e.severity, e.payload["key"]) for e in warned] == [(0, "summarization", "warning", KEEP_KEY)]
    assert warned[0] in run.steps[0].events
    assert not [e for e in replay(thread, preset("stress")).events if e.kind == KIND]
