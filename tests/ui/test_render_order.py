"""What a rerun draws and in which order: the sidebar once per page open, after the Timeline's chart
once the browser shows a sidebar or when its Run is cached (app.py), the headline totals computed
once per Run (ui.widgets.run_totals)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from engine.run.cache import RunCache


def _record(monkeypatch: pytest.MonkeyPatch, calls: list[str]) -> None:
    """Log each sidebar render and each Timeline chart mount, in the order the script makes them."""
    import ui.sidebar
    import ui.timeline_chart

    def wrap(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            return fn(*args, **kwargs)
        return wrapped

    monkeypatch.setattr(ui.sidebar, "render", wrap("sidebar", ui.sidebar.render))
    monkeypatch.setattr(ui.timeline_chart, "timeline_chart", wrap("chart", ui.timeline_chart.timeline_chart))


def _sidebar_keys(at: Any) -> list[str]:  # noqa: ANN401 - an AppTest
    return [w.key for w in (*at.sidebar.number_input, *at.sidebar.selectbox, *at.sidebar.toggle, *at.sidebar.button)]


def test_the_sidebar_follows_the_timeline_chart_once_the_browser_shows_one(start, monkeypatch) -> None:  # noqa: ANN001
    from ui import session

    session._RUNS.clear()
    calls: list[str] = []
    _record(monkeypatch, calls)
    at = start(preset="stress")
    assert calls == ["sidebar", "chart"]  # a session's first replay: the sidebar is drawn while it runs
    keys = _sidebar_keys(at)
    calls.clear()
    at.sidebar.number_input(key="sb_trig_val_0_fraction").set_value(0.5).run()  # a new config
    assert not at.exception
    assert calls == ["chart", "sidebar"]  # the chart's message does not wait for the sidebar's
    assert _sidebar_keys(at) == keys  # the same sidebar, drawn after the page
    assert at.sidebar.number_input(key="sb_trig_val_0_fraction").value == 0.5
    calls.clear()
    at.sidebar.number_input(key="sb_trig_val_0_fraction").set_value(0.25).run()  # back: the Run is cached
    assert not at.exception
    assert calls == ["chart", "sidebar"]
    assert _sidebar_keys(at) == keys
    assert at.sidebar.number_input(key="sb_trig_val_0_fraction").value == 0.25
    calls.clear()
    at.switch_page("pages/step.py").run()  # other pages keep the sidebar first
    assert not at.exception and calls == ["sidebar"]


def test_a_cached_run_puts_the_chart_first_even_on_a_sessions_first_run(start, monkeypatch) -> None:  # noqa: ANN001
    start(preset="stress")  # the Run is now in the server's run cache
    calls: list[str] = []
    _record(monkeypatch, calls)
    at = start(preset="stress")  # a new session (a reload) on the same settings
    assert calls == ["chart", "sidebar"]
    assert _sidebar_keys(at)


def test_a_timeline_with_no_thread_still_draws_the_sidebar(start) -> None:  # noqa: ANN001
    at = start(preset="stress")
    at.session_state["thread_key"] = "sample:no-such-thread"
    at.run()  # the page stops (st.stop) after saying there is no run
    assert not at.exception
    assert "No thread loaded. Open the **Threads** page." in [c.value for c in at.sidebar.caption]
    assert at.sidebar.number_input(key="sb_trig_val_0_fraction").value == 0.25


def test_opening_a_step_from_the_timeline_draws_the_sidebar_once(start, monkeypatch) -> None:  # noqa: ANN001
    calls: list[str] = []
    at = start(preset="stress")
    _record(monkeypatch, calls)
    at.number_input(key="timeline_open_step").set_value(7).run()
    calls.clear()
    at.button(key="timeline_open").click().run()  # the callback's run switches pages before drawing
    assert not at.exception and [h.value for h in at.title] == ["Step 7"]
    assert calls == ["sidebar"]


def test_the_headline_totals_are_computed_once_per_run(start, monkeypatch) -> None:  # noqa: ANN001
    from engine.run.run import Run
    from ui import session

    session._RUNS.clear()
    count = [0]
    original = Run.totals

    def counted(self: Run) -> dict[str, Any]:
        count[0] += 1
        return original(self)

    monkeypatch.setattr(Run, "totals", counted)
    at = start(preset="stress")
    run = session.run_for(at.session_state["thread_key"], at.session_state["config"])
    assert count[0] == 1
    assert run.derived["ui.totals"]["billed_tokens"] == sum(s.view_tokens for s in run.steps)
    assert {k: v for k, v in run.derived["ui.totals"].items()
            if k not in ("billed_tokens", "raw_input_tokens")} == original(run)
    at.run()
    at.number_input(key="timeline_open_step").set_value(3).run()
    assert count[0] == 1  # reruns of the same Run read the kept totals
    caption = " ".join(c.value for c in at.caption)
    sent, raw = sum(s.view_tokens for s in run.steps), sum(s.raw_tokens for s in run.steps)
    # the input sent and the input not sent are said as parts of one cumulative total (issue 35)
    assert (f"Over all {len(run.steps)} steps the requests held {sent:,} input tokens in total (what is billed, not "
            f"how full the window was); without the layers they would have held {raw:,}: {run.tokens_saved():,} "
            "not sent.") in caption


def test_run_cache_membership_leaves_the_order_alone() -> None:
    cache = RunCache(10, size=lambda run: 4)
    cache.put("a", "A")
    cache.put("b", "B")
    assert "a" in cache and "b" in cache and "c" not in cache
    cache.put("c", "C")  # 12 bytes > 10: the least recently used goes; `in` did not refresh "a"
    assert "a" not in cache and "b" in cache and "c" in cache


def test_the_chart_script_is_sent_without_comments_or_indentation() -> None:
    from ui.timeline_chart import _JS, _SCRIPT, KEEP_DRAWN, TEST_ID, compact_js

    assert compact_js("  // a note\n  const a = 1;  // why\n\n    f(a);\n") == "const a = 1;\nf(a);"
    full = _JS % {"keep": KEEP_DRAWN, "testid": TEST_ID}
    assert "//" not in _SCRIPT and len(_SCRIPT) < len(full) - 500
    # every line of code survives, in order, less its indentation and trailing comment
    code = [line.strip().split("  // ")[0] for line in full.splitlines()]
    assert _SCRIPT.splitlines() == [line for line in code if line and not line.startswith("//")]
    assert "export default async function (component) {" in _SCRIPT and "Plotly.newPlot(gd" in _SCRIPT


class _PageFailed(Exception):
    pass


class _Rerun(BaseException):  # like Streamlit's RerunException / StopException: not an Exception
    pass


@pytest.mark.parametrize(("raised", "synced"), [(None, 1), (_PageFailed, 1), (_Rerun, 0)])
def test_a_fragment_rerun_syncs_the_url_even_when_its_page_fails(monkeypatch: pytest.MonkeyPatch,
                                                                  raised: type[BaseException] | None,
                                                                  synced: int) -> None:
    # The Timeline's fragment rerun (ui.sidebar.fragment_run) syncs the URL after the page; a page
    # that raised still gets the edit into the URL, and the Runs are sized either way. A rerun or
    # stop the page asked for syncs on that run instead.
    from ui import session, sidebar

    calls: list[str] = []
    monkeypatch.setattr(session, "pending_page", lambda: None)
    monkeypatch.setattr(session, "sync_url", lambda: calls.append("url"))
    monkeypatch.setattr(session, "settle_runs", lambda: calls.append("settle"))
    monkeypatch.setattr(sidebar, "with_page", lambda draw: draw())

    def page() -> None:
        calls.append("page")
        if raised is not None:
            raise raised()

    if raised is None:
        sidebar.fragment_run(page)
    else:
        with pytest.raises(raised):
            sidebar.fragment_run(page)
    assert calls == ["page", *["url"] * synced, "settle"]


def test_a_new_run_is_sized_after_its_page_ran_on_a_timer_not_in_the_script(start, monkeypatch) -> None:  # noqa: ANN001
    # The walk that sizes a new Run (engine/run/size.py) ran at the end of the script, while the
    # browser drew the new chart; it now runs on the run cache's timer thread, SETTLE_DELAY_S later
    import time

    from ui import session

    session._RUNS.clear()
    monkeypatch.setattr(session, "SETTLE_DELAY_S", 30.0)  # long enough to look before it fires
    at = start(preset="stress")
    at.sidebar.number_input(key="sb_trig_val_0_fraction").set_value(0.5).run()  # a new config
    assert not at.exception
    timer = session._RUNS._timer
    assert session._RUNS._pending and timer is not None and timer.is_alive()  # the script did not walk it
    assert timer.interval == 30.0
    session._RUNS.settle_later(0.0)  # the timer, now
    deadline = time.monotonic() + 10
    while session._RUNS._pending and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not session._RUNS._pending and timer.finished.is_set()
    assert session._RUNS.held_bytes > 0
