"""Every bad link value gets one line saying what was ignored and what is shown, and the URL then shows
what is displayed (issue 35: step=-5/abc became 0 without a word, a huge step stayed in the URL,
preset=banana on a recorded thread fell back to deepagents, "(got 'potato')" was printed twice)."""

from __future__ import annotations

import re

import pytest


def plain(elements) -> list[str]:  # noqa: ANN001
    return [re.sub(r"\\(.)", r"\1", e.value) for e in elements]


@pytest.mark.parametrize("raw,step,notice", [
    ("-5", 0, "Ignored step='-5' from the link (steps count from 0); showing step 0."),
    ("abc", 0, "Ignored step='abc' from the link (not a whole number); showing step 0."),
    ("99999999999999999999", 119,
     "Ignored step='99999999999999999999' from the link (this thread's last step is 119); showing step 119."),
])
def test_a_bad_step_is_said_and_the_url_shows_the_step_displayed(start, raw: str, step: int, notice: str) -> None:  # noqa: ANN001
    at = start(thread="sample:a_demo", step=raw)
    assert plain(at.sidebar.warning) == [notice]
    assert dict(at.query_params)["step"] == str(step)
    at.switch_page("pages/step.py").run()
    assert [t.value for t in at.title] == [f"Step {step}"]
    assert plain(at.sidebar.warning) == [] and dict(at.query_params)["step"] == str(step)  # said once


def test_a_good_step_says_nothing(start) -> None:  # noqa: ANN001
    at = start(thread="sample:a_demo", step="7")
    assert plain(at.sidebar.warning) == []
    at.switch_page("pages/step.py").run()
    assert [t.value for t in at.title] == ["Step 7"]


def test_an_unknown_preset_on_a_recorded_thread_falls_back_to_its_own_default(start) -> None:  # noqa: ANN001
    at = start(thread="sample:hostile", preset="banana")  # records a compaction: opens as recorded
    assert at.session_state["config"].preset == "as-recorded"
    [notice] = plain(at.sidebar.warning)
    assert notice.startswith("Ignored a setting from the link: preset: unknown preset 'banana'")
    assert notice.endswith("; showing as-recorded, this thread's default")
    assert dict(at.query_params)["preset"] == "as-recorded"


def test_a_bad_value_is_named_once(start) -> None:  # noqa: ANN001
    at = start(thread="sample:a_demo", **{"summarization.keep": "potato"})
    assert plain(at.sidebar.warning) == [
        "Ignored a setting from the link: summarization.keep: expected TYPE:VALUE like tokens:30000, got 'potato'"]


def test_an_unknown_session_b_is_said_on_the_compare_page(start) -> None:  # noqa: ANN001
    at = start("pages/compare.py", thread="sample:a_demo", vs="library:deadbeef")
    b = at.session_state["cmp_b"]
    assert b != "library:deadbeef" and dict(at.query_params)["vs"] == b
    [notice] = plain(at.warning)
    assert notice.startswith("Ignored vs='library:deadbeef' from the link (not available here")
    assert notice.endswith(" instead.") and "comparing with " in notice
