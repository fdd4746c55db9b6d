"""The Evals and Workshop pages through AppTest, starting from app.py like a user."""

from __future__ import annotations

import json
import re

from engine.config.sizes import ContextSize

EVALS = "pages/evals.py"
WORKSHOP = "pages/workshop.py"


def chart(at, key: str) -> dict:  # noqa: ANN001
    for element in at.get("plotly_chart"):
        if element.proto.id and key in element.proto.id:
            return json.loads(element.proto.spec)
    raise AssertionError(f"no chart {key!r}")


def metrics(at) -> dict[str, str]:  # noqa: ANN001
    return {m.label: m.value for m in at.metric}


def open_tab(at, label: str):  # noqa: ANN001, ANN201 - AppTest has no tab click; the tabs' key holds the open one
    at.session_state["tab"] = label
    return at.run()


# -- Evals ---------------------------------------------------------------------------------------
def test_evals_needle_and_drift_under_stress(start) -> None:  # noqa: ANN001
    at = start(EVALS, preset="stress")
    assert [t.value for t in at.title] == ["Evals"]
    m = metrics(at)
    assert m["Compactions"] == "6" and m["Retention"] == "100%" and m["Intent kept"] == "100%"
    assert m["Drift flags"] == "0"
    heat = chart(at, "ev_retention_chart")["data"][0]
    assert heat["type"] == "heatmap" and heat["y"] == ["BLUE-HERON-7", "session intent"]
    compactions = at.dataframe[0].value
    assert len(compactions) == 6 and set(compactions["BLUE-HERON-7"]) == {"in summary"}
    at.text_area(key="ev_needles").set_value("blue-heron-7\nNOT-THERE-42").run()
    assert not at.exception
    assert chart(at, "ev_retention_chart")["data"][0]["y"] == ["blue-heron-7", "NOT-THERE-42", "session intent"]


def test_evals_without_compaction_says_so(start) -> None:  # noqa: ANN001
    at = start(EVALS, thread="sample:b_small")  # 20 small steps: far below every trigger
    assert metrics(at)["Compactions"] == "0"
    assert any("No compaction happened" in i.value for i in at.info)


def test_stress_mode_beside_the_default_run(start) -> None:  # noqa: ANN001
    at = open_tab(start(EVALS, thread="sample:b_small"), "Stress mode")
    spec = chart(at, "ev_stress_chart")
    assert [t["name"] for t in spec["data"]][:3] == ["raw (no layers)", "A: view tokens", "B: view tokens"]
    at.slider(key="ev_stress_pct").set_value(10).run()
    assert not at.exception
    table = [d.value for d in at.dataframe if "run" in d.value.columns][0]
    assert list(table["run"]) == ["current settings", "stress 10%"]
    assert table["compactions"][0] == 0 and table["compactions"][1] > 0
    at.button(key="ev_stress_open").click().run()
    assert [t.value for t in at.title] == ["Timeline"]
    assert at.session_state["config"].summarization.trigger == (ContextSize(type="fraction", value=0.1),)


def test_only_the_open_tab_runs_and_the_others_keep_their_values(start, monkeypatch) -> None:  # noqa: ANN001
    from ui import session
    asked: set[object] = set()  # the configs the page asked runs for (the current one on every run)
    run_for = session.run_for
    monkeypatch.setattr(session, "run_for", lambda key, config: asked.add(config) or run_for(key, config))
    at = start(EVALS, thread="sample:b_small")
    # the needle tab is open: nothing of the closed tabs is drawn, and no stress run is asked for
    assert not at.slider and not [t for t in at.text_area if t.key == "ev_grid"]
    assert not [c for c in at.get("plotly_chart") if "ev_stress_chart" in c.proto.id]
    replays = len(asked)
    at.text_area(key="ev_needles").set_value("NOT-THERE-42").run()
    assert len(asked) == replays
    at = open_tab(at, "Stress mode")
    assert not at.exception
    assert len(asked) == replays + 1  # the stress run, only now
    assert not [t for t in at.text_area if t.key == "ev_needles"]
    at.slider(key="ev_stress_pct").set_value(10).run()
    assert not at.exception
    assert at.session_state["ev_needles"] == "NOT-THERE-42"  # what the stress table's retention tracks
    at = open_tab(at, "Needle retention & goal drift")
    assert at.text_area(key="ev_needles").value == "NOT-THERE-42"
    at = open_tab(at, "Stress mode")
    assert at.slider(key="ev_stress_pct").value == 10


def test_sweep_runs_and_a_click_opens_the_point_in_the_timeline(start) -> None:  # noqa: ANN001
    at = open_tab(start(EVALS), "Sweep")
    at.text_area(key="ev_grid").set_value("summarization.trigger=fraction:0.25,fraction:0.85\n"
                                          "summarization.keep=messages:6").run()
    at.radio(key="ev_executor").set_value("serial").run()
    at.button(key="ev_sweep_run").click().run()
    assert not at.exception
    spec = chart(at, "ev_sweep_chart_0")
    assert [t["name"] for t in spec["data"] if t.get("mode") == "markers"][-1].startswith("Pareto front")
    result = at.session_state["ev_sweep_result"][1]
    assert [p.point.label for p in result.points] == ["trigger=fraction:0.25 · keep=messages:6",
                                                      "trigger=fraction:0.85 · keep=messages:6"]
    assert result.points[0].metrics["compactions"] > result.points[1].metrics["compactions"]
    # counts in words: one thread on one worker read "1 threads", "1 workers"
    said = [c.value for c in at.caption if "replays in" in c.value]
    assert said and said[0].startswith("2 points × 1 thread = 2 replays in ") and "(serial, 1 worker)" in said[0], said
    # the Pareto axes read as words with their better direction; the widget's values stay the CLI's keys
    pareto = at.multiselect(key="ev_pareto")
    assert pareto.value == ["peak_view_tokens", "retention", "cost"]
    assert [pareto.format_func(k) for k in pareto.value] == [
        "peak view tokens (lower is better)", "needle retention (higher is better)",
        "cost (lower is better)"]
    # a click on the scatter (AppTest's stand-in for plotly's selection) opens that point's settings
    at.session_state["ev_sweep_chart_0"] = {"selection": {"points": [{"customdata": 0}], "point_indices": [0],
                                                          "box": [], "lasso": []}}
    at.run()
    assert not at.exception
    assert [t.value for t in at.title] == ["Timeline"]
    config = at.session_state["config"]
    assert config.summarization.trigger == (ContextSize(type="fraction", value=0.25),)
    assert config.summarization.keep == ContextSize(type="messages", value=6)


def test_sweep_grid_error_is_shown(start) -> None:  # noqa: ANN001
    at = open_tab(start(EVALS), "Sweep")
    at.text_area(key="ev_grid").set_value("summarization.nope=1,2").run()
    at.button(key="ev_sweep_run").click().run()
    assert not at.exception
    shown = [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]
    assert any("summarization.nope: unknown key" in text for text in shown), shown


# -- Workshop ------------------------------------------------------------------------------------
def test_workshop_overview_lists_every_lesson(start) -> None:  # noqa: ANN001
    at = start(WORKSHOP)
    assert [t.value for t in at.title] == ["Overview: what the model actually sees"]
    assert len(at.table[0].value) == 9  # the overview, one per layer, context editing, coding agents
    assert chart(at, "ws_chart_overview")["data"][1]["name"] == "A: view tokens"
    assert any(d.proto.label == "Figure as HTML" for d in at.get("download_button"))


def test_a_new_user_runs_the_summarization_lesson_end_to_end(start) -> None:  # noqa: ANN001
    at = start(WORKSHOP)
    at.selectbox(key="ws_lesson").set_value("summarization").run()
    assert [t.value for t in at.title] == ["L2 Summarization: trigger, keep and mode"]
    # the metric names what it counts in words, not the event's id (issue 35: "summarization.summarize events")
    assert metrics(at)["Summaries written"] == "2"
    # the lesson's own settings: no change, so no "+0" with an arrow that reads as a rise
    unchanged = {m.label: m.proto for m in at.metric}["Summaries written"]
    assert (unchanged.delta, unchanged.direction) == ("no change vs default", 2)  # MetricDirection.NONE
    at.radio(key="ws_try_summarization_summarization.trigger").set_value("fraction:0.25").run()
    assert not at.exception
    assert metrics(at)["Summaries written"] == "16"
    changed = {m.label: m.proto for m in at.metric}["Summaries written"]
    assert (changed.delta, changed.direction) == ("+14 vs default", 1)  # UP
    assert any("trigger fraction:0.85 → fraction:0.25" in c.value for c in at.caption)
    at.radio(key="ws_check_summarization").set_value(0).run()
    assert at.warning and "Not quite" in at.warning[0].value
    at.radio(key="ws_check_summarization").set_value(1).run()
    assert at.success and at.success[0].value.startswith("Right.")


def test_the_coding_agents_lesson_switches_policies(start) -> None:  # noqa: ANN001
    at = start(WORKSHOP)
    at.selectbox(key="ws_lesson").set_value("coding-agents").run()
    assert [t.value for t in at.title] == ["Coding agents' compaction policies side by side"]
    assert metrics(at)["Compactions"] == "2"  # Claude Code compacts at steps 29 and 52
    at.radio(key="ws_try_coding-agents_compaction.policy").set_value("openhands").run()
    assert not at.exception
    assert metrics(at)["Compactions"] == "1"  # OpenHands condenses once, past 120 events


def test_presenter_mode_reveals_step_by_step_and_navigates(start) -> None:  # noqa: ANN001
    at = start(WORKSHOP)
    at.selectbox(key="ws_lesson").set_value("dangling").run()
    at.toggle(key="presenter").set_value(True).run()
    assert not at.exception

    def bullets() -> int:
        return sum(line.startswith("- ") for md in at.markdown for line in md.value.splitlines())

    assert bullets() == 1 and not at.get("plotly_chart")
    for _ in range(2):
        at.button(key="ws_next_point").click().run()
    assert bullets() == 3 and not at.get("plotly_chart")
    at.button(key="ws_next_point").click().run()  # the try-this part
    assert at.get("plotly_chart") and not at.radio(key="ws_try_dangling_dangling.enabled").disabled
    at.button(key="ws_next_point").click().run()  # the check question
    assert at.radio(key="ws_check_dangling").value is None
    assert at.button(key="ws_next_point").disabled
    at.button(key="ws_next_lesson").click().run()
    assert at.session_state["ws_lesson"] == "memory" and bullets() == 1
    at.button(key="ws_prev_lesson").click().run()
    assert at.session_state["ws_lesson"] == "dangling"
    assert [b.proto.shortcut for b in at.button if b.key in ("ws_next_point", "ws_next_lesson")] == ["right", "pagedown"]


def test_presenter_lesson_and_slide_come_from_the_url_and_go_into_it(start) -> None:  # noqa: ANN001
    at = start(WORKSHOP, lesson="dangling", presenter="true", slide="3")
    assert [t.value for t in at.title] == ["L4 Dangling tool calls: repair an interrupted run"]
    assert sum(line.startswith("- ") for md in at.markdown for line in md.value.splitlines()) == 3
    assert any("[data-testid=\"stSidebar\"]" in h.proto.body for h in at.get("html"))  # the sidebar is hidden
    at.button(key="ws_next_point").click().run()
    assert at.session_state["slide"] == 4 and at.query_params["slide"] == "4"
    assert at.query_params["lesson"] == "dangling" and at.query_params["presenter"] == "true"
    at.button(key="ws_next_lesson").click().run()
    assert at.query_params["lesson"] == "memory" and "slide" not in at.query_params  # slide 1 is the default


def test_hostile_workshop_parameters_open_the_overview(start) -> None:  # noqa: ANN001
    at = start(WORKSHOP, lesson="../../etc/passwd", presenter="maybe", slide="-4")
    assert not at.exception
    assert [t.value for t in at.title] == ["Overview: what the model actually sees"]
    assert not [w for w in at.sidebar.warning if "not taken from a link" in w.value]
    # each bad value said once, in the page (the sidebar is hidden in presenter mode), and the URL fixed
    shown = [re.sub(r"\\(.)", r"\1", w.value) for w in at.warning]
    assert shown[0].startswith("Ignored lesson='../../etc/passwd' from the link (no such lesson; the lessons are overview")
    assert shown[0].endswith("; showing the overview.")
    assert shown[1:] == ["Ignored presenter='maybe' from the link (it is true or false); showing it off.",
                         "Ignored slide='-4' from the link (this one goes from 1 to 6); showing slide 1."]
    # the URL shows what is displayed: the overview, presenter mode off and slide 1 (defaults: left out)
    assert not {"lesson", "presenter", "slide"} & set(at.query_params)
    at.run()
    assert not at.warning  # said once


def test_the_lesson_names_of_the_table_open_their_lesson(start) -> None:  # noqa: ANN001
    """`lesson=compaction` is the layer the lessons table lists for the coding agents' lesson (issue 35:
    it opened the overview)."""
    at = start(WORKSHOP, lesson="compaction")
    assert [t.value for t in at.title] == ["Coding agents' compaction policies side by side"]
    assert at.query_params["lesson"] == "coding-agents" and not at.warning
    at = start(WORKSHOP, lesson="context_editing")
    assert [t.value for t in at.title] == ["Context editing vs summarization"]
