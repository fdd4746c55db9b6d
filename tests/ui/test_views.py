"""engine.views: the numbers the dashboard draws, computed from a Run."""

from __future__ import annotations

import numpy as np
import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from engine.config.schema import EngineConfig, preset
from engine.config.settings import config_from_params, layer_enabled, url_params, with_layer
from engine.config.sizes import AllOf, ContextSize
from engine.run.replay import replay
from engine.run.run import StepRecord
from engine.thread.events import Event
from engine.thread.kinds import CATEGORIES, mark
from engine.thread.model import RecordedCompaction
from engine.tokens.counters import get_counter
from engine.views.compare import compare_runs
from engine.views.layers import file_rows, stub_for, subagent_rows
from engine.views.step import category_rows, diff_counts, state_view_diff, view_entries
from engine.views.timeline import (
    ThresholdLine,
    describe_event,
    event_markers,
    recorded_compactions,
    resolve_tokens,
    threshold_lines,
    timeline_series,
)
from tests.ui.builders import build_thread

COUNTER = get_counter("approximate")


def bare_run(steps: int = 6, **kwargs):  # noqa: ANN003, ANN201
    """A replay with no layers at all, so tests add exactly the events they need."""
    return replay(build_thread(steps, result_words=40, **kwargs), preset("stress"), token_counter=COUNTER, layers=[])


# -- timeline ----------------------------------------------------------------------------------
def test_timeline_series_matches_the_steps() -> None:
    run = bare_run(5)
    series = timeline_series(run)
    assert series.steps.tolist() == [0, 1, 2, 3, 4]
    assert list(series.by_category) == list(CATEGORIES)
    for j, s in enumerate(run.steps):
        assert sum(int(series.by_category[c][j]) for c in CATEGORIES) == s.view_tokens
    assert series.view_tokens.tolist() == [s.view_tokens for s in run.steps]
    assert series.raw_tokens.tolist() == [s.raw_tokens for s in run.steps]
    assert series.recorded_input_tokens is None
    assert series.event_counts.tolist() == [0, 0, 0, 0, 0]
    assert series.view_tokens.dtype == np.int64


def test_recorded_usage_becomes_a_series_with_gaps() -> None:
    run = bare_run(3)
    run.steps[1].recorded_input_tokens = 1234
    series = timeline_series(run)
    assert series.recorded_input_tokens is not None
    assert np.isnan(series.recorded_input_tokens[0]) and series.recorded_input_tokens[1] == 1234


@pytest.mark.parametrize(("size", "window", "tokens"), [
    (ContextSize(type="fraction", value=0.85), 200_000, 170_000),
    (ContextSize(type="fraction", value=0.0001), 1000, 1),  # LangChain: int(1000 * 0.0001) = 0 -> 1
    (ContextSize(type="tokens", value=30_000), 200_000, 30_000),
    (ContextSize(type="messages", value=20), 200_000, None),
])
def test_resolve_tokens(size: ContextSize, window: int, tokens: int | None) -> None:
    assert resolve_tokens(size, window) == tokens


def test_threshold_lines_follow_the_live_settings() -> None:
    config = preset("stress").with_overrides(["summarization.trigger=fraction:0.5,messages:40,tokens:9000&messages:5",
                                              "summarization.keep=messages:10"])
    assert threshold_lines(config, 100_000) == [
        ThresholdLine("window", "window 100,000 tokens", 100_000),
        ThresholdLine("trigger", "trigger fraction:0.5 = 50,000 tokens", 50_000),
        ThresholdLine("trigger", "trigger messages:40", None,
                      "trigger messages:40 counts messages, so it cannot be drawn as a token level"),
        ThresholdLine("trigger", "trigger (AND tokens:9000&messages:5) tokens:9000", 9000),
        ThresholdLine("trigger", "trigger (AND tokens:9000&messages:5) messages:5", None,
                      "trigger messages:5 counts messages, so it cannot be drawn as a token level"),
        ThresholdLine("keep", "keep messages:10", None, "keep messages:10 counts messages, so it cannot be drawn as a token level"),
    ]


def test_threshold_lines_without_trigger_or_summarization() -> None:
    lines = threshold_lines(preset("langchain"), 1000)
    assert [(li.role, li.tokens, li.note) for li in lines] == [
        ("window", 1000, ""), ("trigger", None, "trigger is none: summarization never fires"),
        ("keep", None, "keep messages:20 counts messages, so it cannot be drawn as a token level")]
    off = with_layer(preset("stress"), "summarization", False)
    assert [li.role for li in threshold_lines(off, 1000)] == ["window"]


def test_event_markers_and_descriptions() -> None:
    run = bare_run(4)
    run.steps[2].events.append(Event("summarization", "summarize", 2, 5000, 1200, message="state: summarized 9"))
    run.steps[3].events.append(Event("dangling", "patch", 7, severity="warning"))  # step past the end is clamped
    markers = event_markers(run)
    assert [(m.step, m.layer, m.kind, m.severity) for m in markers] == [
        (2, "summarization", "summarize", "info"), (3, "dangling", "patch", "warning")]
    assert markers[0].tokens == 5000 and markers[1].tokens == run.steps[3].view_tokens
    assert describe_event(run.steps[2].events[0]) == "summarization · summarize: state: summarized 9 (tokens 5,000 → 1,200)"
    assert describe_event(Event("todo", "reminder", 1, tokens_after=30)) == "todo · reminder (tokens ? → 30)"


def test_recorded_compactions_map_to_the_following_step() -> None:
    run = bare_run(6, recorded_compaction_at=6)
    indices = [s.message_index for s in run.steps]
    (step, compaction), = recorded_compactions(run)
    assert indices[step] >= 6 and (step == 0 or indices[step - 1] < 6)
    run.thread.compactions.append(RecordedCompaction(index=10_000))
    assert recorded_compactions(run)[-1][0] == len(run.steps) - 1


# -- step --------------------------------------------------------------------------------------
def _step(state: list, view: list) -> StepRecord:  # noqa: ANN401
    return StepRecord(index=0, message_index=0, message_id="x", state=tuple(state), view=tuple(view), system=None,
                      tool_names=(), state_tokens=0, view_tokens=900, raw_tokens=0,
                      view_by_category={"human": 100, "tool_results": 800}, state_by_category={})


def test_category_rows_like_context() -> None:
    assert category_rows(_step([], []), 1000) == [
        {"category": "human", "tokens": 100, "percent_of_window": 10.0},
        {"category": "tool_results", "tokens": 800, "percent_of_window": 80.0},
        {"category": "free space", "tokens": 100, "percent_of_window": 10.0},
    ]
    assert category_rows(_step([], []), 800)[-1] == {"category": "over the window", "tokens": 100, "percent_of_window": 12.5}
    assert category_rows(_step([], []), 900)[-1] == {"category": "free space", "tokens": 0, "percent_of_window": 0.0}
    # the reserved room above a policy's threshold: what is left of it once the view grew into it, so the
    # rows add up to the window (a view of 900 past a 700 threshold on 1,000 left 100, not 300: 1,200 of 1,000)
    rows = category_rows(_step([], []), 1000, ("reserved above the trigger", 300))
    assert rows[-2:] == [{"category": "free space", "tokens": 0, "percent_of_window": 0.0},
                         {"category": "reserved above the trigger", "tokens": 100, "percent_of_window": 10.0}]
    assert sum(r["tokens"] for r in rows) == 1000
    assert category_rows(_step([], []), 2000, ("reserved", 300))[-2:] == [
        {"category": "free space", "tokens": 800, "percent_of_window": 40.0},
        {"category": "reserved", "tokens": 300, "percent_of_window": 15.0}]


def test_state_view_diff_aligns_by_id() -> None:
    h = HumanMessage("do it", id="h")
    a = AIMessage("", id="a", tool_calls=[{"id": "c1", "name": "read", "args": {"p": 1}}])
    t = ToolMessage("big result " * 50, tool_call_id="c1", id="t")
    stub = mark(ToolMessage("stub", tool_call_id="c1", id="t"), "stub")
    summary = mark(HumanMessage("summary", id="s"), "summary")
    rows = state_view_diff(_step([h, a, t], [summary, a, stub]), COUNTER)
    assert [(r.status, r.id, r.kind) for r in rows] == [
        ("only_state", "h", "original"), ("only_view", "s", "summary"), ("same", "a", "original"),
        ("changed", "t", "stub")]
    assert rows[0].view_tokens is None and rows[1].state_tokens is None
    assert diff_counts(rows) == {"same": 1, "changed": 1, "only_state": 1, "only_view": 1}


def test_view_entries_keep_text_and_calls_literal() -> None:
    a = AIMessage("<b>hi</b>", id="a", tool_calls=[{"id": "c1", "name": "read", "args": {"p": "<x>"}}])
    entries = view_entries(_step([a], [a]), COUNTER)
    assert entries[0].text == "<b>hi</b>" and entries[0].tool_calls == (("read", '{"p": "<x>"}'),)
    assert entries[0].role == "ai" and entries[0].kind == "original"


# -- layers and compare ------------------------------------------------------------------------
def test_files_stub_and_subagents() -> None:
    run = bare_run(3)
    run.files.write("/large_tool_results/call-0", "x" * 400, step=1, layer="filesystem", source_id="call-0")
    assert file_rows(run) == [{"path": "/large_tool_results/call-0", "chars": 400, "tokens": 100, "step": 1,
                               "layer": "filesystem", "source_id": "call-0"}]
    assert stub_for(run, "/large_tool_results/call-0", "call-0") is None
    stub = mark(ToolMessage("see /large_tool_results/call-0", tool_call_id="call-0", id="tool-0"), "stub")
    run.final_state = (stub,)
    assert stub_for(run, "/large_tool_results/call-0", "call-0") is stub
    assert subagent_rows(run) == []  # read_file calls are not task calls


def test_offloaded_files_are_listed_in_natural_order() -> None:
    """call-9 before call-10 (text order put call-10 and call-11 first; issue 35)."""
    run = bare_run(3)
    for n in (10, 9, 11, 2):
        run.files.write(f"/large_tool_results/call-{n}", "x" * 40, step=1, layer="filesystem", source_id=f"call-{n}")
    run.files.write("/conversation_history/s.md", "y", step=2, layer="summarization")
    assert [r["path"] for r in file_rows(run)] == [
        "/conversation_history/s.md", "/large_tool_results/call-2", "/large_tool_results/call-9",
        "/large_tool_results/call-10", "/large_tool_results/call-11"]


def test_compare_runs_deltas() -> None:
    a, b = bare_run(4), bare_run(4)
    b.steps[1].events.append(Event("summarization", "summarize", 1, 10, 5))
    b.summarizer_calls = 1
    rows = {r["metric"]: r for r in compare_runs(a, b)}
    assert rows["events: summarization"] == {"metric": "events: summarization", "A": 0, "B": 1, "B − A": 1}
    assert rows["summarizer calls"]["B − A"] == 1
    assert rows["peak view tokens"]["B − A"] == 0
    assert list(rows)[:6] == ["steps", "window tokens", "peak view tokens", "total view tokens (billed input)",
                              "tokens saved", "events"]


# -- config helpers and URL state --------------------------------------------------------------
def test_with_layer_places_a_new_layer_in_the_default_order() -> None:
    config = with_layer(preset("langchain"), "todo", True)
    assert config.order == ("summarization", "todo") and layer_enabled(config, "todo")
    assert not layer_enabled(with_layer(config, "todo", False), "todo")


@pytest.mark.parametrize("overrides", [
    [],
    ["summarization.trigger=tokens:30000&messages:5,fraction:0.5", "summarization.keep=messages:7"],
    ["summarization.trigger=null", "model.max_input_tokens=128000", "tokens.counter=approximate"],
    ["summarization.trigger=[]", "order=[summarization, todo]", "filesystem.excluded_tools=[\"ls\", \"b:c\"]"],
    ["summarization.summary_prompt='Summarize: keep = facts'", "input_context.custom_prompt='true'"],
])
def test_url_params_round_trip(overrides: list[str]) -> None:
    config = preset("stress").with_overrides(overrides)
    params = url_params(config)
    assert params["preset"] == "stress"
    assert config_from_params(params) == (config, [])


def test_url_params_hold_only_what_differs() -> None:
    config = preset("deerflow").with_overrides(["summarization.mode=view"])
    assert url_params(config) == {"preset": "deerflow", "summarization.mode": "view"}
    assert url_params(EngineConfig()) == {"preset": "custom"}
    assert config_from_params({"preset": "custom"}) == (EngineConfig(), [])


def test_an_unknown_preset_falls_back_to_the_threads_default() -> None:
    config, errors = config_from_params({"preset": "banana"}, default="as-recorded")
    assert config == preset("as-recorded") and errors[0].endswith("; showing as-recorded, this thread's default")


def test_bad_url_params_are_reported_and_skipped() -> None:
    config, errors = config_from_params({"preset": "nope", "summarization.keep": "bogus", "x.y": "1",
                                         "thread": "sample:a", "step": "3"})
    assert config == preset("deepagents")
    assert errors == [
        "preset: unknown preset 'nope'; choose one of as-recorded, claude-code, codex, gemini-cli, cline, openhands, "
        "anthropic-compaction, openai-compaction, deepagents, langchain, deerflow, deerflow-head, stress; "
        "showing deepagents, this thread's default",
        # the value is named once (issue 35: "got 'bogus' (got 'bogus')")
        "summarization.keep: expected TYPE:VALUE like tokens:30000, got 'bogus'",
        "x.y: not taken from a link (links may only carry the sidebar's and the Config form's replay settings); "
        "set it on the Config page if you want it",
    ]


def test_trigger_clause_kinds_survive_the_url() -> None:
    config = preset("stress").model_copy(update={"summarization": preset("stress").summarization.model_copy(
        update={"trigger": (AllOf(all=(ContextSize(type="tokens", value=5), ContextSize(type="messages", value=2))),)})})
    assert url_params(config)["summarization.trigger"] == "tokens:5&messages:2"
    assert config_from_params(url_params(config))[0] == config


def test_subagent_rows_join_transcripts_and_layer_events() -> None:
    synthetic = pytest.importorskip("engine.thread.synthetic")
    thread = synthetic.synthetic_thread(60, seed=1, tokens_per_step=200)
    run = replay(thread, preset("deepagents"), token_counter=COUNTER)
    calls = [tc for m in thread.messages if isinstance(m, AIMessage) for tc in m.tool_calls if tc["name"] == "task"]
    rows = subagent_rows(run)
    assert [r["tool_call_id"] for r in rows] == [tc["id"] for tc in calls]
    events = {e.payload["tool_call_id"]: e for e in run.events if e.layer == "subagents" and e.kind == "subagent"}
    assert events, "the synthetic thread carries sub-agent transcripts"
    for r in rows:
        inner = thread.subagents.get(r["tool_call_id"])
        if inner is not None:
            assert r["transcript tokens"] == sum(COUNTER.count_message(m) for m in inner.messages)
        if r["tool_call_id"] in events:
            assert r["sent inside (all its calls)"] == events[r["tool_call_id"]].payload["inside_tokens"]
            assert r["returned tokens"] == events[r["tool_call_id"]].tokens_after
