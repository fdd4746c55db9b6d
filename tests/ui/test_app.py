"""Every page through Streamlit's AppTest: the sidebar re-runs the engine, pages show the run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from engine.config.schema import preset
from engine.config.sizes import ContextSize
from engine.evals.policy_compare import DEFAULT_COMPARE
from engine.formats.native import dumps
from engine.workspace.library import Library
from tests.conftest import trace_path
from tests.ui.builders import HOSTILE, build_thread
from tests.ui.conftest import figure, hline_levels, layer_event_counts
from ui import session

ROOT = Path(__file__).resolve().parents[2]


def titles(at) -> list[str]:  # noqa: ANN001
    return [t.value for t in at.title]


def plain(elements) -> str:  # noqa: ANN001
    """The text of Markdown elements with our backslash escapes removed."""
    return " ".join(re.sub(r"\\(.)", r"\1", e.value) for e in elements)


# -- timeline and sidebar ----------------------------------------------------------------------
def test_opens_on_the_first_sample_with_the_default_preset(start) -> None:  # noqa: ANN001
    at = start()
    assert titles(at) == ["Timeline"]
    # the cost tiles are in the Cost section, drawn once opened (tests/ui/test_cost_pages.py)
    assert [m.label for m in at.metric] == ["Steps", "Peak view", "Peak raw (no layers)", "Input not sent", "Events",
                                             "Summarizer calls"]
    from engine.views.timeline import event_markers
    from ui import session

    markers = event_markers(session.run_for(at.session_state["thread_key"], at.session_state["config"]))
    assert [e.label for e in at.expander][:2] == [
        f"Events ({len(markers)}): every layer action, step by step",
        "Cost: modelled dollars, cache hit rate, did each compaction pay for itself?"]
    assert at.metric[0].value == "120"
    assert hline_levels(at) == {"window": [100_000], "trigger": [85_000], "keep": [10_000]}
    assert dict(at.query_params) == {"thread": "sample:a_demo", "step": "0", "preset": "deepagents"}


def test_changing_the_trigger_in_the_sidebar_changes_the_summarization_events(start) -> None:  # noqa: ANN001
    at = start(preset="stress")
    assert layer_event_counts(at)["summarization"] == 6
    assert hline_levels(at)["trigger"] == [25_000]
    at.sidebar.number_input(key="sb_trig_val_0_fraction").set_value(0.5).run()
    assert not at.exception
    assert layer_event_counts(at)["summarization"] == 3
    assert hline_levels(at)["trigger"] == [50_000]
    assert at.session_state["config"].summarization.trigger == (ContextSize(type="fraction", value=0.5),)
    assert at.query_params["summarization.trigger"] == "fraction:0.5"


def test_trigger_type_switch_keeps_the_level_and_messages_clauses_are_not_drawn(start) -> None:  # noqa: ANN001
    at = start(preset="stress")
    at.sidebar.selectbox(key="sb_trig_type_0").set_value("tokens").run()
    assert at.session_state["config"].summarization.trigger == (ContextSize(type="tokens", value=25_000),)
    assert hline_levels(at)["trigger"] == [25_000]
    at.sidebar.button(key="sb_trig_add").click().run()
    assert at.session_state["config"].summarization.trigger[1] == ContextSize(type="messages", value=50)
    names = [(t.get("name") or "").replace("<br>", " ") for t in figure(at)["data"]]  # long names wrap (issue 35)
    assert "trigger messages:50 counts messages, so it cannot be drawn as a token level" in names
    at.sidebar.button(key="sb_trig_rm_0").click().run()
    assert at.session_state["config"].summarization.trigger == (ContextSize(type="messages", value=50),)
    assert "trigger" not in hline_levels(at)
    at.sidebar.button(key="sb_trig_rm_0").click().run()
    assert at.session_state["config"].summarization.trigger is None
    assert layer_event_counts(at)["summarization"] == 1  # only the fallback when the request outgrows the window


def test_keep_mode_window_counter_and_layer_toggles(start) -> None:  # noqa: ANN001
    at = start(preset="stress")
    at.sidebar.number_input(key="sb_keep_val_fraction").set_value(0.1).run()
    assert hline_levels(at)["keep"] == [10_000]
    at.sidebar.radio(key="sb_mode").set_value("state").run()
    assert at.session_state["config"].summarization.mode == "state"
    at.sidebar.number_input(key="sb_window").set_value(200_000).run()
    assert hline_levels(at)["window"] == [200_000]
    assert hline_levels(at)["trigger"] == [50_000]
    assert "filesystem" in layer_event_counts(at)
    at.sidebar.toggle(key="sb_layer_filesystem").set_value(False).run()
    assert "filesystem" not in layer_event_counts(at)
    assert "filesystem" not in at.session_state["config"].order or not at.session_state["config"].filesystem.enabled
    at.sidebar.selectbox(key="sb_counter").set_value("approximate").run()
    assert at.session_state["config"].tokens.counter == "approximate"
    assert not at.exception


def test_preset_switch_keeps_window_and_counter(start) -> None:  # noqa: ANN001
    at = start()
    at.sidebar.number_input(key="sb_window").set_value(150_000).run()
    at.sidebar.selectbox(key="sb_preset").set_value("langchain").run()
    config = at.session_state["config"]
    assert config.preset == "langchain" and config.model.max_input_tokens == 150_000
    assert config.summarization.trigger is None
    assert "No trigger: summarization never fires." in [c.value for c in at.sidebar.caption]


def test_a_click_on_the_timeline_names_a_step_only_as_a_whole_number() -> None:
    # the chart's click trigger comes from the browser (ui/timeline_chart.py): a step, or nothing;
    # the click itself is tested in Chromium (tests/e2e/test_dashboard.py)
    from ui.timeline_chart import clicked_step

    assert [clicked_step(v) for v in (42, 0, 7.0)] == [42, 0, 7]
    assert [clicked_step(v) for v in (None, -1, 2.5, float("nan"), True, "3", [4], {"x": 1})] == [None] * 8


def test_the_timeline_sends_a_figure_once_then_only_its_digest(start) -> None:  # noqa: ANN001
    from tests.ui.conftest import timeline_payload

    at = start(preset="stress")
    first = timeline_payload(at)
    assert first is not None and first["figure"]["data"] and first["plotly_url"].endswith("/plotly.min.js")
    at.run()  # the same figure: this session's browser holds it
    assert timeline_payload(at) == {**first, "figure": None}
    at.sidebar.number_input(key="sb_trig_val_0_fraction").set_value(0.5).run()
    other = timeline_payload(at)
    assert other["digest"] != first["digest"] and other["figure"] is not None
    at.sidebar.number_input(key="sb_trig_val_0_fraction").set_value(0.25).run()  # back: shown from the browser's copy
    assert timeline_payload(at) == {**first, "figure": None}
    assert at.session_state["timeline_chart_sent"] == [other["digest"], first["digest"]]  # the browser's keep list
    at.session_state["timeline_chart_sent"] = []  # a new browser session (reload): the figure again
    at.run()
    assert timeline_payload(at)["figure"] == first["figure"]


def test_going_back_through_ten_configs_sends_only_digests(start) -> None:  # noqa: ANN001
    # The browser keeps the last KEEP_DRAWN graphs and the server mirrors all but two of them. Kept
    # in order and revisited in the same order (ten edits, then back through them: the browser
    # bench's cached case), a keep list shorter than the sequence evicts each figure just before it
    # is wanted again, so every "back" was a full redraw (8 kept: new/cached 1.9x, 2026-12-02).
    from tests.ui.conftest import timeline_payload
    from ui.timeline_chart import KEEP_DRAWN

    at = start(preset="stress")
    values = [round(0.30 + 0.05 * i, 2) for i in range(10)]
    assert KEEP_DRAWN - 2 >= len(values)
    box = lambda: at.sidebar.number_input(key="sb_trig_val_0_fraction")  # noqa: E731
    for v in values:
        box().set_value(v).run()
        assert timeline_payload(at)["figure"] is not None  # a new config: its figure
    for v in values:
        box().set_value(v).run()
        assert timeline_payload(at)["figure"] is None, v  # back: the browser still holds it


def test_timeline_figure_is_compact_for_the_page(start) -> None:  # noqa: ANN001
    at = start(preset="stress")
    spec = json.dumps(figure(at))
    assert len(spec) < 400_000  # 120 steps; bench/bench_ui.py checks 1,000 steps against 2 MB


def test_timeline_fits_the_data_whole_window_on_demand_and_exports(start) -> None:  # noqa: ANN001
    at = start(preset="stress")
    fit = figure(at)["layout"]["yaxis"]["range"][1]
    at.toggle(key="timeline_whole_window").set_value(True).run()
    assert not at.exception
    whole = figure(at)["layout"]["yaxis"]["range"][1]
    # the stress run's raw curve rises above the whole window: one line of note, and room for it
    assert figure(at)["layout"]["annotations"][0]["text"].startswith("raw curve clipped")
    assert whole == int(100_000 * 1.1 * 1.06) > fit
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels == ["Table (CSV)", "Chart (HTML)"]
    # the peak and raw tiles state a share of the window: no up/down arrow
    from streamlit.proto.Metric_pb2 import Metric
    assert [m.proto.direction for m in at.metric[1:3]] == [Metric.MetricDirection.NONE] * 2


def test_a_cached_config_redraws_the_timeline_without_rebuilding_its_figures(start) -> None:  # noqa: ANN001
    """Going back to settings already computed reuses the run and its figures (built once per run and
    options, ui.figures.cached_figure); so does a widget below the chart. Builds are counted, not timed."""
    from ui import session
    from ui.figures import FIGURE_BUILDS

    session._RUNS.clear()  # runs (and the figures kept on them) are shared by every AppTest in this process
    # priced: an unpriced run without cache hits draws no cost chart (ui/cost_panel.py)
    at = start(preset="stress", **{"cost.model": "claude-sonnet-4-5"})
    at.session_state["timeline_cost"] = True  # the Cost section open: its chart is counted too
    at.run()
    first = figure(at)
    built = dict(FIGURE_BUILDS)
    box = at.sidebar.number_input(key="sb_trig_val_0_fraction")
    box.set_value(0.5).run()
    assert layer_event_counts(at)["summarization"] == 3
    assert FIGURE_BUILDS["timeline"] == built.get("timeline", 0) + 1  # a new config: one new figure
    assert FIGURE_BUILDS["cost"] == built.get("cost", 0) + 1
    at.sidebar.number_input(key="sb_trig_val_0_fraction").set_value(0.25).run()  # back to the first settings
    assert not at.exception
    assert FIGURE_BUILDS["timeline"] == built.get("timeline", 0) + 1  # served from the run: no rebuild
    assert FIGURE_BUILDS["cost"] == built.get("cost", 0) + 1
    assert figure(at) == first and layer_event_counts(at)["summarization"] == 6
    at.number_input(key="timeline_open_step").set_value(5).run()  # a widget below the chart
    assert FIGURE_BUILDS["timeline"] == built.get("timeline", 0) + 1
    at.toggle(key="timeline_whole_window").set_value(True).run()  # another scale: its own figure, once
    at.toggle(key="timeline_whole_window").set_value(False).run()
    at.toggle(key="timeline_whole_window").set_value(True).run()
    assert FIGURE_BUILDS["timeline"] == built.get("timeline", 0) + 2
    assert figure(at)["layout"]["yaxis"]["range"][1] == int(100_000 * 1.1 * 1.06)


def test_the_timeline_lists_its_events_once_the_section_is_opened_and_opens_a_step(start) -> None:  # noqa: ANN001
    from engine.views.timeline import event_markers
    from ui import session

    at = start(preset="stress")
    markers = event_markers(session.run_for(at.session_state["thread_key"], at.session_state["config"]))
    assert not any("what happened" in f.value.columns for f in at.dataframe)  # closed: not drawn
    at.session_state["timeline_events"] = True
    at.run()
    rows = next(f.value for f in at.dataframe if "what happened" in f.value.columns)
    assert rows["step"].tolist() == [m.step for m in markers] and rows["what happened"].tolist() == [m.text for m in markers]
    at.number_input(key="timeline_open_step").set_value(7).run()
    at.button(key="timeline_open").click().run()
    assert not at.exception and titles(at) == ["Step 7"]


# -- step --------------------------------------------------------------------------------------
def test_step_page_budget_breakdown_view_and_diff(start) -> None:  # noqa: ANN001
    at = start("pages/step.py", preset="stress", step="30")
    assert titles(at) == ["Step 30"]
    assert not at.get("plotly_chart")  # no chart until the Tokens per tool tab is opened
    bar = at.get("progress")[0].proto
    used = int(bar.text.split("**")[1].replace(",", ""))
    assert bar.text.startswith(f"**{used:,}** of 100,000 tokens")
    # the rule's own decision at this step: what it measured against its threshold, and its verdict
    assert "view summarization trigger: Deep Agents" in bar.text and " against 25,000: " in bar.text
    assert bar.value == min(100, int(100 * used / 100_000))
    categories = at.dataframe[0].value
    assert list(categories.columns) == ["category", "tokens", "% of window"]
    # the categories, the free space and what the trigger reserves above it fill the window
    assert categories["tokens"].sum() == 100_000
    assert "reserved above view summarization trigger" in set(categories["category"])
    # the quantity it is measured in, under the table (in the label it was cut off at the column's edge)
    import re

    assert any(re.sub(r"\\(.)", r"\1", c.value).startswith(  # our Markdown escapes removed
        "Reserved above view summarization trigger: measured in Deep Agents' count of the request")
        for c in at.caption)
    # state vs view (a lazy tab: drawn once opened): in view mode the summarized messages stay in
    # state but are hidden from the model
    at.session_state["step_tab"] = "State vs view"
    at.run()
    assert any("only in state (hidden from the model):" in m.value and "hidden from the model): 0 " not in m.value
               for m in at.markdown)
    at.button(key="step_next").click().run()
    assert titles(at) == ["Step 31"]
    at.button(key="step_prev").click().run()
    at.button(key="step_prev").click().run()
    assert titles(at) == ["Step 29"]
    at.number_input(key="step_input").set_value(119).run()
    assert titles(at) == ["Step 119"]
    assert at.button(key="step_next").disabled


def test_hostile_text_is_shown_literally(start) -> None:  # noqa: ANN001
    at = start("pages/step.py", thread="sample:hostile", step="2")
    assert not at.exception
    assert not at.code  # messages start closed, and a closed message sends its header only
    at.button(key="step_expand_all").click().run()
    bodies = [c.value for c in at.code]
    assert any(HOSTILE in b for b in bodies), "the hostile text must appear verbatim in a code block"
    for md in at.markdown:
        assert "<script" not in md.value and "<img" not in md.value and "](javascript" not in md.value
    mine = ["app.py", "pages/threads.py", "pages/timeline.py", "pages/step.py", "pages/layers.py", "pages/config.py",
            "ui/session.py", "ui/sidebar.py", "ui/widgets.py", "ui/text.py", "ui/figures.py", "ui/step_view.py"]
    sources = [ROOT / p for p in mine]
    assert not [p.name for p in sources if "unsafe_allow_html" in p.read_text() or "st.html(" in p.read_text()]


# -- layers ------------------------------------------------------------------------------------
def test_layers_page_shows_summaries_files_and_events(start) -> None:  # noqa: ANN001
    at = start("pages/layers.py", preset="stress")
    assert titles(at) == ["Layers"]
    assert not at.exception
    codes = [c.value for c in at.code]
    assert any("SESSION INTENT" in c for c in codes), "the summary text is shown"
    selects = {s.key: s for s in at.selectbox}
    assert selects["layers_file"].options[0].startswith("/")
    assert len(selects["layers_summary"].options) == 6
    markdown = " ".join(m.value for m in at.markdown)
    assert "Removed from the context" in markdown and "Summary" in markdown


def test_layers_page_on_a_thread_without_events(start) -> None:  # noqa: ANN001
    at = start("pages/layers.py", thread="sample:b_small", preset="langchain")
    assert not at.exception
    infos = " ".join(i.value for i in at.info)
    assert "No summarization happened" in infos and "No files were written" in infos


# -- config ------------------------------------------------------------------------------------
def _yaml_area(at):  # noqa: ANN001, ANN202
    return next(t for t in at.text_area if t.label.startswith("Config YAML"))


def test_invalid_yaml_shows_an_error_and_keeps_the_previous_run(start) -> None:  # noqa: ANN001
    at = start("pages/config.py", preset="stress")
    before = at.session_state["config"]
    _yaml_area(at).set_value("summarization:\n  keep: bogus\n")
    at.button(key="yaml_apply").click().run()
    assert not at.exception
    errors = plain(at.error)
    assert "previous run is kept" in errors and "summarization.keep" in errors
    assert at.session_state["config"] == before
    _yaml_area(at).set_value("summarization: [unclosed\n")
    at.button(key="yaml_apply").click().run()
    assert "invalid YAML at line" in plain(at.error)
    assert at.session_state["config"] == before
    at.switch_page("pages/timeline.py").run()
    assert layer_event_counts(at)["summarization"] == 6


def test_valid_yaml_applies_and_re_runs(start) -> None:  # noqa: ANN001
    at = start("pages/config.py", preset="stress")
    text = preset("stress").with_overrides(["summarization.trigger=fraction:0.5"]).to_yaml()
    _yaml_area(at).set_value(text)
    at.button(key="yaml_apply").click().run()
    assert not at.error
    assert at.session_state["config"].summarization.trigger == (ContextSize(type="fraction", value=0.5),)
    at.switch_page("pages/timeline.py").run()
    assert layer_event_counts(at)["summarization"] == 3


def test_form_error_is_shown_next_to_the_field(start) -> None:  # noqa: ANN001
    at = start("pages/config.py", preset="stress")
    before = at.session_state["config"]
    keep = next(t for t in at.text_input if t.key.endswith("_summarization.keep"))
    keep.set_value("fraction:2")
    submit = next(b for b in at.button if b.label == "Apply and re-run")
    submit.click().run()
    assert not at.exception
    assert at.session_state["config"] == before
    errors = [plain([e]) for e in at.error]
    message = "summarization.keep: Fractional values must be between 0 and 1, got 2.0. (as written: 'fraction:2')"
    assert errors == [f"Not applied — {message}", message]  # at the top of the form, then under the keep field


@pytest.mark.parametrize(("preset_name", "shown"), [
    ("as-recorded", "As recorded (the source's own compactions)"),  # summarization is off in it
    ("claude-code", "Coding-agent compaction (Claude Code, Codex, Gemini CLI, Cline, OpenHands, server-side)"),
    ("deepagents", "L2 summarization"),
])
def test_the_config_form_opens_the_section_of_what_the_stack_runs(start, preset_name: str, shown: str) -> None:  # noqa: ANN001
    at = start("pages/config.py", preset=preset_name)
    assert not at.exception
    assert at.session_state["config"].preset == preset_name
    assert [e.label for e in at.expander if e.proto.expanded] == [shown]


def test_form_applies_a_valid_change(start) -> None:  # noqa: ANN001
    at = start("pages/config.py", preset="stress")
    next(t for t in at.text_input if t.key.endswith("_summarization.trigger")).set_value("tokens:40000, messages:80")
    next(b for b in at.button if b.label == "Apply and re-run").click().run()
    assert not at.error
    assert at.session_state["config"].summarization.trigger == (ContextSize(type="tokens", value=40_000),
                                                                  ContextSize(type="messages", value=80))


def open_tab(at, label: str):  # noqa: ANN001, ANN201 - AppTest has no tab click; the tabs' key holds the open one
    at.session_state["tab"] = label
    return at.run()


def test_compare_pins_a_and_shows_deltas(start) -> None:  # noqa: ANN001
    at = open_tab(start("pages/config.py", preset="stress"), "Compare runs")
    at.button(key="pin").click().run()
    at.sidebar.number_input(key="sb_trig_val_0_fraction").set_value(0.5).run()
    assert not at.exception
    frames = at.dataframe
    rows = [json.dumps(f.value.to_dict(orient="records")) for f in frames]
    delta = next(r for r in rows if '"metric"' in r)  # the A/B table; the agents' policies table comes first
    table = json.loads(delta)
    summ = next(r for r in table if r["metric"] == "events: summarization")
    assert (summ["A"], summ["B"], summ["B − A"]) == (6, 3, -3)
    assert any("summarization.trigger" in r for r in rows)
    # the agents' policies side by side, the overlaid timelines, then the cost curves (tests/ui/test_cost_pages.py)
    assert [c.key for c in at.get("plotly_chart")] == [
        "cmp_policies_chart", "compare_chart", "compare_cost_chart"]


def test_the_compare_tab_replays_its_policies_only_while_it_is_open(start, monkeypatch) -> None:  # noqa: ANN001
    asked: list[str | None] = []
    run_for = session.run_for
    monkeypatch.setattr(session, "run_for", lambda key, config: asked.append(config.preset) or run_for(key, config))
    at = start("pages/config.py", preset="stress")
    assert not at.exception
    # the Form tab is open: only the page's own run (the sidebar's), nothing of the Compare tab
    assert set(asked) == {"stress"}
    assert [m.key for m in at.multiselect] == [] and at.get("plotly_chart") == []
    at = open_tab(at, "Compare runs")
    assert not at.exception
    assert [p for p in asked if p != "stress"] == list(DEFAULT_COMPARE)
    assert [c.key for c in at.get("plotly_chart")] == ["cmp_policies_chart"]
    # a pick survives a visit to another tab (the widget is not drawn there, so Streamlit drops it)
    picked = list(DEFAULT_COMPARE[:2])
    at.multiselect(key="cmp_policies").set_value(picked).run()
    at = open_tab(open_tab(at, "YAML"), "Compare runs")
    assert not at.exception
    assert at.multiselect(key="cmp_policies").value == picked
    assert asked[-2:] == picked


# -- threads, upload, deep links ---------------------------------------------------------------
def _saved_thread_id(at, workspace: Path) -> str | None:  # noqa: ANN001
    """The thread id of the library entry the app opened (an upload opens as `library:<id>`)."""
    key = at.session_state["thread_key"]
    assert key.startswith("library:")
    entry = Library(workspace).entry(key.removeprefix("library:"))
    return entry.thread_id if entry else None


def test_threads_page_lists_samples_and_opens_one(start) -> None:  # noqa: ANN001
    at = start("pages/threads.py")
    assert titles(at) == ["Threads"]
    at.button(key="open_b_small").click().run()
    assert at.session_state["thread_key"] == "sample:b_small"
    assert at.session_state["step"] == 0


def test_upload_a_thread_and_a_bad_file(start) -> None:  # noqa: ANN001 - saved in the library: tests/ui/test_library.py
    at = start("pages/threads.py")
    thread = build_thread(7, thread_id="uploaded-one")
    thread.title = "Uploaded thread"
    at.file_uploader[0].upload("mine.json", dumps(thread).encode(), "application/json").run()
    assert not at.exception
    assert at.session_state["thread_key"].startswith("library:")
    assert any(m.value == "Uploaded thread" for m in at.sidebar.markdown)
    at.file_uploader[0].upload("notes.json", b'{"hello": "world"}', "application/json").run()
    errors = plain(at.error)
    assert "Could not read notes.json" in errors and "unrecognised thread format" in errors


def test_upload_a_multi_thread_file_lets_the_user_pick(start, workspace: Path) -> None:  # noqa: ANN001
    entries = [{"task_id": t, "trial": 0, "reward": 1.0, "info": {},
                "traj": [{"role": "system", "content": "policy"}, {"role": "user", "content": f"task {t}"},
                         {"role": "assistant", "content": f"done {t}"}]} for t in (11, 12)]
    at = start("pages/threads.py")
    at.file_uploader[0].upload("tau.json", json.dumps(entries).encode(), "application/json").run()
    assert not at.exception
    pick = at.selectbox(key="upload_pick")
    assert pick.options == ["11-0: reward 1.0 (3 messages)", "12-0: reward 1.0 (3 messages)"]
    pick.set_value("12-0")
    at.button(key="upload_open").click().run()
    assert _saved_thread_id(at, workspace) == "12-0"


def test_deep_link_restores_thread_step_and_settings(start) -> None:  # noqa: ANN001
    at = start("pages/step.py", thread="sample:b_small", step="3", preset="stress",
               **{"summarization.trigger": "fraction:0.5", "summarization.mode": "state"})
    assert titles(at) == ["Step 3"]
    config = at.session_state["config"]
    assert config == preset("stress").with_overrides(["summarization.trigger=fraction:0.5",
                                                      "summarization.mode=state"])
    assert at.session_state["thread_key"] == "sample:b_small"


def test_a_bad_link_falls_back_and_says_why(start) -> None:  # noqa: ANN001
    at = start(thread="upload:deadbeef", preset="nope", **{"summarization.keep": "bogus"})
    assert not at.exception
    warnings = plain(at.sidebar.warning)
    assert "not available here" in warnings and "unknown preset" in warnings and "summarization.keep" in warnings
    assert at.session_state["thread_key"] == "sample:a_demo"


def test_every_page_renders_without_a_thread(start, tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("CTXI_SAMPLES_DIR", str(tmp_path))
    monkeypatch.setattr("ui.session.synthetic_available", lambda: False)
    at = start()
    assert at.session_state["thread_key"] is None
    for page in ("pages/threads.py", "pages/step.py", "pages/layers.py", "pages/config.py", "pages/timeline.py"):
        at.switch_page(page).run()
        assert not at.exception, page
    assert any("no sample threads" in i.value for i in at.info)


# -- real public transcripts (skipped when ../shared/traces is absent) ---------------------------
TRACES = [
    ("claude-code", "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"),
    ("swe-agent", "pydicom__pydicom-1458.traj"),
    ("tau-bench", "gpt-4o-airline.json"),
    ("nilenso-context-viewer", "storymachine_run_42.responses.json"),
]


@pytest.mark.parametrize("parts", TRACES, ids=[p[0] for p in TRACES])
def test_real_transcripts_open_on_every_page(start, monkeypatch, parts: tuple[str, str]) -> None:  # noqa: ANN001
    path = trace_path(*parts)
    monkeypatch.setenv("CTXI_OPEN", str(path))  # what `ctxi ui FILE` sets
    at = start()
    assert at.session_state["thread_key"] == f"file:{path.resolve()}"
    steps = int(at.metric[0].value.replace(",", ""))
    assert steps > 0
    if parts[0] == "claude-code":  # its compact_boundary is drawn as a recorded compaction
        assert any("recorded in the source" in (t.get("name") or "").replace("<br>", " ") for t in figure(at)["data"])
    for page in ("pages/step.py", "pages/layers.py", "pages/config.py", "pages/threads.py"):
        at.switch_page(page).run()
        assert not at.exception, page
    at.switch_page("pages/step.py").run()
    at.number_input(key="step_input").set_value(steps - 1).run()
    assert titles(at) == [f"Step {steps - 1}"]


def test_upload_a_langgraph_sqlite_database_and_pick_a_thread(start, tmp_path: Path, workspace: Path) -> None:  # noqa: ANN001
    from tests.formats.test_langgraph_sqlite import build_database

    db = tmp_path / "checkpoints.sqlite"
    build_database(db)
    at = start("pages/threads.py")
    at.file_uploader[0].upload("checkpoints.sqlite", db.read_bytes(), "application/octet-stream").run()
    assert not at.exception
    pick = at.selectbox(key="upload_pick")
    assert pick.options == ["alpha: read a.py (4 messages)", "beta (4 messages)"]
    pick.set_value("beta")
    at.button(key="upload_open").click().run()
    assert _saved_thread_id(at, workspace) == "beta"
    at.switch_page("pages/timeline.py").run()
    assert not at.exception
    assert at.metric[0].value == "2"  # the latest checkpoint state, after LangChain summarized it


def test_a_claude_code_session_uploaded_with_its_sub_agent_files(start) -> None:  # noqa: ANN001
    session_file = trace_path("claude-code", "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl")
    folder = session_file.parent / session_file.stem / "subagents"
    agents = sorted(folder.glob("agent-*.jsonl"))
    assert [p.name for p in agents] == ["agent-a93ccab.jsonl", "agent-aa84377.jsonl", "agent-acompact-70d8e7.jsonl"]
    at = start("pages/threads.py")
    at.file_uploader[0].upload(session_file.name, session_file.read_bytes()).run()
    alone = at.session_state["thread_key"]
    assert "ai 157, human 3, tool 197" in plain(at.caption)  # no compaction-call file: no hook messages
    # the box now holds the session and its three sub-agent files, as after dropping them in a browser
    at.file_uploader[0].set_value([(p.name, p.read_bytes(), "application/octet-stream")
                                   for p in (session_file, *agents)]).run()
    assert not at.exception
    assert at.session_state["thread_key"] != alone
    # the compaction call's file gives back the 13 hook messages the session file never kept
    assert "ai 157, human 16, tool 197" in plain(at.caption)
    assert "with 3 sub-agent file(s): agent-a93ccab.jsonl" in plain(at.caption)


def test_open_a_thread_from_a_langgraph_postgres_database(start, postgres_cluster) -> None:  # noqa: ANN001
    from langgraph.checkpoint.postgres import PostgresSaver

    from tests.formats.langgraph_agents import write_threads

    url = postgres_cluster.create_database("lg_ui")
    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
        write_threads(saver)
    secret, shown = postgres_cluster.password, url.replace(postgres_cluster.password, "***")
    at = start("pages/threads.py")
    at.text_input(key="pg_url").input(url)
    at.button(key="pg_list").click().run()
    assert not at.exception
    assert f"5 thread(s) in {shown}" in plain(at.caption)
    assert secret not in str(dict(at.query_params))  # the box is not bound to the URL
    pick = at.selectbox(key="pg_pick")
    assert pick.options == ["alpha: read a.py (4 messages)", "beta (4 messages)", "chat: custom key (2 messages)",
                            "counter (? messages)", "dicts: dict question (3 messages)"]
    pick.set_value("beta")
    at.button(key="pg_open").click().run()
    key = at.session_state["thread_key"]
    assert key.startswith("pg:") and key.endswith(":beta")
    assert dict(at.query_params)["thread"] == key and secret not in key
    shown_text = " ".join(e.value for kind in ("markdown", "caption", "error", "warning", "info", "title")
                          for e in at.get(kind) if isinstance(getattr(e, "value", None), str))
    assert secret not in shown_text
    at.switch_page("pages/timeline.py").run()
    assert not at.exception
    assert at.metric[0].value == "2"  # the latest checkpoint state, after LangChain summarized it
    # the key in a link does not make another session connect: nothing opens there
    other = start(thread=key)
    assert other.session_state["thread_key"] == "sample:a_demo"
    assert "threads read from PostgreSQL last only for the session that opened them" in plain(other.sidebar.warning)


def test_a_bad_postgres_url_is_one_line_without_its_password(start, postgres_cluster) -> None:  # noqa: ANN001
    at = start("pages/threads.py")
    for typed, expected in (("not a url", "Type a URL that starts with postgresql://"),
                            (postgres_cluster.url("lg_ui_missing", password="s3cret-wrong"),
                             "password authentication failed for user")):
        at.text_input(key="pg_url").input(typed)
        at.button(key="pg_list").click().run()
        assert not at.exception
        errors = plain(at.error)
        assert expected in errors and "s3cret-wrong" not in errors
    assert "postgresql://postgres:***@127.0.0.1" in plain(at.error)
    assert [s.key for s in at.selectbox if s.key == "pg_pick"] == []


def test_a_cline_task_uploaded_as_its_files_opens_as_one_thread(start, tmp_path: Path) -> None:  # noqa: ANN001
    from tests.formats.test_cline import META, XML_API, XML_UI, task_folder

    folder = task_folder(tmp_path, XML_API, XML_UI, META)
    files = [(p.name, p.read_bytes(), "application/json") for p in sorted(folder.iterdir())]
    assert [name for name, _, _ in files] == ["api_conversation_history.json", "task_metadata.json", "ui_messages.json"]
    at = start("pages/threads.py")
    at.file_uploader[0].set_value(files).run()
    assert not at.exception
    assert "Format cline" in plain(at.caption)
    assert "with 2 companion file(s): task_metadata.json, ui_messages.json" in plain(at.caption)
    assert "provider usage recorded for 5 calls" in plain(at.caption)
    assert at.metric[0].value == "5" and at.metric[3].value == "1"  # five requests, one deleted-range trim


def test_a_claude_code_session_opens_as_recorded_and_a_what_if_says_how_it_differs(start, monkeypatch) -> None:  # noqa: ANN001
    path = trace_path("claude-code", "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl")
    monkeypatch.setenv("CTXI_OPEN", str(path))
    at = start()
    assert at.session_state["config"].preset == "as-recorded"
    assert at.selectbox(key="sb_preset").value == "as-recorded"
    assert any("calibrated to its recorded input" in c.value and "Claude tokenizer ≈ 1.19 × o200k_base" in c.value
               for c in at.caption)
    names = [(t.get("name") or "").replace("<br>", " ") for t in figure(at)["data"]]
    assert "agent prompt (not recorded)" in names and "first-turn context (not recorded)" in names
    assert not any("You would have" in i.value or "With these settings" in i.value for i in at.info)
    at.selectbox(key="sb_preset").set_value("claude-code").run()
    assert not at.exception
    [headline] = [i.value for i in at.info if "With these settings" in i.value]
    assert "you would have compacted at the same step as the agent \\(126\\)" in headline  # escaped Markdown
    # the Step page shows the unrecorded categories in its /context table
    at.switch_page("pages/step.py").run()
    at.number_input(key="step_input").set_value(125).run()
    table = at.dataframe[0].value
    assert {"agent prompt (not recorded)", "first-turn context (not recorded)"} <= set(table["category"])


def test_a_preset_picked_in_the_sidebar_is_the_run_and_url_a_link_gives(start, monkeypatch) -> None:  # noqa: ANN001
    """Issue 31: `deepagents` picked in the sidebar on a recorded session gave `tokens.layer_counter=null` in
    the URL and another run (compacting at 205) than `?preset=deepagents` (never compacting)."""
    path = trace_path("claude-code", "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl")
    monkeypatch.setenv("CTXI_OPEN", str(path))
    at = start()
    assert at.session_state["config"].preset == "as-recorded"
    at.selectbox(key="sb_preset").set_value("deepagents").run()
    assert not at.exception
    assert at.session_state["config"] == preset("deepagents")
    params = dict(at.query_params)
    assert params["preset"] == "deepagents" and not any(k.startswith("tokens.") for k in params)
    picked = figure(at)
    # the same run as a link naming the preset: the same figure, event for event
    linked = start(thread=params["thread"], preset="deepagents")
    assert linked.session_state["config"] == at.session_state["config"]
    assert [t.get("name") for t in figure(linked)["data"]] == [t.get("name") for t in picked["data"]]
    assert layer_event_counts(linked) == layer_event_counts(at)


def test_the_layers_page_says_a_recorded_summary_was_the_agents_own(start, monkeypatch) -> None:  # noqa: ANN001
    path = trace_path("claude-code", "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl")
    monkeypatch.setenv("CTXI_OPEN", str(path))
    at = start("pages/layers.py")
    assert not at.exception and at.session_state["config"].preset == "as-recorded"
    captions = [c.value for c in at.caption]
    assert any(c.startswith("Summaries written by the source agent itself") for c in captions)
    assert not any(c.startswith("Summarizer: none") for c in captions)


def test_the_server_settings_hold_whichever_way_the_server_starts(monkeypatch) -> None:  # noqa: ANN001
    """`streamlit run app.py` from the project reads .streamlit/config.toml; `ctxi ui` passes the flag."""
    import argparse
    import tomllib

    from engine.cli import ui as ui_command

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    seen: list[list[str]] = []
    monkeypatch.setattr(ui_command, "launch", lambda cmd, env: seen.append(cmd) or 0)
    parser = argparse.ArgumentParser()
    ui_command.add_arguments(parser)
    assert ui_command.run(parser.parse_args([])) == 0
    cmd = seen[0]
    assert config["global"]["maxCachedMessageAge"] == 20
    assert cmd[cmd.index("--global.maxCachedMessageAge") + 1] == "20"
    # no gc.collect(2) after each script run: it paused page switches by up to a second
    assert config["runner"]["postScriptGC"] is False
    assert cmd[cmd.index("--runner.postScriptGC") + 1] == "false"
    # no magic: a page that wrote a bare expression would now show nothing for it (test below)
    assert config["runner"]["magicEnabled"] is False
    assert cmd[cmd.index("--runner.magicEnabled") + 1] == "false"
    # the sidebar and the lazy tabs' kept widgets set state and a default on purpose: no log line per run
    assert config["global"]["disableWidgetStateDuplicationWarning"] is True
    assert cmd[cmd.index("--global.disableWidgetStateDuplicationWarning") + 1] == "true"
    # the largest upload: the importers' limit (512 MiB), also when started outside the project folder
    assert config["server"]["maxUploadSize"] == 512
    assert cmd[cmd.index("--server.maxUploadSize") + 1] == "512"


def test_no_page_relies_on_streamlit_magic() -> None:
    """With `runner.magicEnabled = false`, a bare expression on its own line draws nothing: none may
    be there (Streamlit's magic writes every expression statement but calls, awaits, yields and
    docstrings, at module level and in with/if/for blocks)."""
    import ast

    bare = []
    for path in [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py"))]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Expr) or isinstance(node.value, ast.Call | ast.Await | ast.Yield | ast.YieldFrom):
                continue
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                continue  # a docstring (or a string used as a comment): magic skips docstrings only, but says nothing
            bare.append(f"{path.name}:{node.lineno}")
    assert bare == []


def test_the_timeline_metrics_stay_above_the_chart_though_drawn_after_it(start) -> None:  # noqa: ANN001
    """pages/timeline.py draws the chart first (a new config's figure leaves before the metrics) into
    a page whose order is unchanged: title, metrics, chart; and the new Run is sized once the page ran
    (on the run cache's timer, ui/session.py SETTLE_DELAY_S after it)."""
    import time

    from ui import session

    session._RUNS.clear()
    at = start(preset="stress")
    assert not at.exception

    def walk(node):  # noqa: ANN001, ANN202 - AppTest's tree, in page order
        yield node
        for child in getattr(node, "children", {}).values():
            yield from walk(child)

    kinds = [getattr(n, "type", None) for n in walk(at.main)]
    assert kinds.index("metric") < kinds.index("bidi_component")
    assert at.metric[0].label == "Steps"
    deadline = time.monotonic() + 10
    while session._RUNS._pending and time.monotonic() < deadline:  # app.py asked for it after the page
        time.sleep(0.01)
    assert session._RUNS._pending == {}
    assert session._RUNS.held_bytes > 0


def test_the_workshop_lists_whole_lessons_and_colours_only_a_real_change(start) -> None:  # noqa: ANN001
    at = start()
    at.switch_page("pages/workshop.py").run()
    assert not at.exception
    peak = next(m for m in at.metric if m.label == "Peak view tokens")
    # the lesson's default choices: nothing changed, so no red "no change" (Streamlit colours a text delta)
    assert peak.delta == "no change"
    from streamlit.proto.Metric_pb2 import Metric

    assert peak.proto.color == Metric.MetricColor.GRAY
    # the lessons are a table that wraps its cells (a dataframe cut the sentences off at the column's edge)
    from engine.lessons.catalog import LESSONS

    assert list(at.table[0].value["what it shows"]) == [x.summary for x in LESSONS]


def test_the_timeline_chart_leaves_before_the_rest_of_the_page_is_built(start, monkeypatch) -> None:  # noqa: ANN001
    # ui/timeline_chart.py pauses once the chart's element is queued, at least two of the server's
    # flush cycles (as st.switch_page does for its query params): the pause comes after the chart and
    # before the sidebar, which the Timeline draws after the page once the browser shows one. A new
    # figure's pause grows with its size (the browser draws it meanwhile: draw_pause_s); when only
    # the digest of a figure the browser holds is sent, it pauses KEPT_PAUSE_S, so the browser
    # paints the graph it kept before the rest of the rerun reaches it
    import time as real_time

    from streamlit.runtime.runtime_util import MESSAGE_FLUSH_INTERVAL_SECS

    from ui import sidebar, timeline_chart

    sleep, component, render = real_time.sleep, timeline_chart._component, sidebar.render
    payload = timeline_chart.figure_payload
    seen: list[str] = []
    sizes: list[int] = []

    def record_sleep(seconds: float) -> None:
        if seconds == timeline_chart.KEPT_PAUSE_S:
            seen.append("kept pause")
        elif sizes and seconds == timeline_chart.draw_pause_s(sizes[-1]):
            seen.append("pause")
        sleep(seconds)

    def record_payload(*args: object, **kwargs: object) -> object:
        out = payload(*args, **kwargs)  # type: ignore[arg-type]
        sizes.append(out.nbytes)
        return out

    def record_component() -> object:
        draw = component()

        def drawn(*args: object, **kwargs: object) -> object:
            out = draw(*args, **kwargs)
            seen.append("chart")
            return out
        return drawn

    def record_render() -> None:
        seen.append("sidebar")
        render()

    monkeypatch.setattr(timeline_chart.time, "sleep", record_sleep)
    monkeypatch.setattr(timeline_chart, "_component", record_component)
    monkeypatch.setattr(timeline_chart, "figure_payload", record_payload)
    monkeypatch.setattr(sidebar, "render", record_render)
    assert timeline_chart.FLUSH_PAUSE_S >= 2 * MESSAGE_FLUSH_INTERVAL_SECS
    assert timeline_chart.KEPT_PAUSE_S > timeline_chart.FLUSH_PAUSE_S
    at = start(preset="stress")
    seen.clear()
    at.run()  # the browser shows a sidebar: it is drawn after the page; it holds this figure
    assert seen == ["chart", "kept pause", "sidebar"]
    at.sidebar.number_input(key="sb_trig_val_0_fraction").set_value(0.5).run()  # a new figure
    assert seen == ["chart", "kept pause", "sidebar", "chart", "pause", "sidebar"]
    assert sizes[-1] > 0
    seen.clear()
    at.sidebar.number_input(key="sb_trig_val_0_fraction").set_value(0.25).run()  # back: the digest only
    assert seen == ["chart", "kept pause", "sidebar"]


def test_a_new_figure_pauses_in_proportion_to_its_size_within_bounds() -> None:
    # the browser's draw time grows with the figure (ui/timeline_chart.py DRAW_PAUSE_S_PER_KB): the
    # script waits that long before the rest of the page, from two flush cycles to DRAW_PAUSE_MAX_S
    from ui.timeline_chart import DRAW_PAUSE_MAX_S, DRAW_PAUSE_S_PER_KB, FLUSH_PAUSE_S, draw_pause_s

    assert draw_pause_s(0) == FLUSH_PAUSE_S
    assert draw_pause_s(2_000) == FLUSH_PAUSE_S  # a small figure: the rest of its page is not held back
    assert draw_pause_s(200 * 1024) == pytest.approx(200 * DRAW_PAUSE_S_PER_KB)  # ~1,000 steps: 80 ms
    assert FLUSH_PAUSE_S < draw_pause_s(200 * 1024) < draw_pause_s(250 * 1024) < DRAW_PAUSE_MAX_S
    assert draw_pause_s(50 * 1024 * 1024) == DRAW_PAUSE_MAX_S  # a huge figure: bounded


def test_prompt_and_memory_say_what_a_claude_code_session_holds_and_where_the_rest_is(start, monkeypatch) -> None:  # noqa: ANN001
    """Issue 35: "0 tokens in 0 part(s); 0 tool schema(s)" above an empty table, "tools sent: 0" on the Step
    page, while the calibrated run counted the agent's own prompt for the same request."""
    from ui import session

    path = trace_path("claude-code", "4d5611e5-241a-462a-8d15-5122611a9569.jsonl")
    monkeypatch.setenv("CTXI_OPEN", str(path))
    at = start("pages/layers.py")
    run = session.run_for(at.session_state["thread_key"], at.session_state["config"])
    agent = run.steps[0].view_by_category["agent_prompt"]
    assert agent > 20_000
    text = " ".join(re.sub(r"\\(.)", r"\1", m.value) for m in at.markdown)
    assert (f"System prompt at step 0**: the claude_code transcript holds no system prompt; it holds no tool "
            f"schemas. The provider's recorded input shows {agent:,} more tokens at this step: the agent's own "
            "prompt and tool schemas, which the transcript does not hold (the “agent prompt (not recorded)” row of "
            "the Step page's table") in text
    # the sentence is escaped as text: Markdown asterisks in it were shown as "*agent prompt (not recorded)*"
    assert not any("\\*" in m.value for m in at.markdown)
    assert "0 tokens in 0 part(s)" not in text
    at.switch_page("pages/step.py").run()
    assert any(f"tool schemas: not in the transcript (in the agent's prompt, {agent:,} tokens, not recorded)" in c.value
               for c in at.caption)
