"""Layers › Sub-agents: the inside columns hold what the opened sub-agent shows, also when the run has no
sub-agent layer (the as-recorded preset, whose only layer is `recorded`)."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from engine.config.presets import RECORDED_PRESET
from engine.config.schema import preset
from engine.config.settings import default_config
from engine.formats import load_thread
from engine.layers.subagents import subagent_cost
from engine.run.replay import replay
from engine.thread.model import RecordedUsage, Thread
from engine.views.layers import subagent_rows
from tests.conftest import trace_path

SESSION = ("claude-code", "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl")
INSIDE = ("inside steps", "sent inside (all its calls)", "peak inside")


def opened(sub: Thread) -> tuple[int, int, int]:
    """What opening the sub-agent as a thread shows: it opens on its own default settings (ui/session.py
    `select_thread`): steps, the tokens sent over its steps, its peak view."""
    run = replay(sub, default_config(sub))
    return len(run.steps), sum(s.view_tokens for s in run.steps), run.peak_view_tokens()


def inside(row: dict) -> tuple:  # type: ignore[type-arg]
    return tuple(row[k] for k in INSIDE)


# -- a small synthetic parent and its sub-agents -------------------------------------------------------
def sub_thread(*, recorded: bool) -> Thread:
    msgs = [HumanMessage("find the bug", id="s-h"),
            AIMessage("", id="s-a1", tool_calls=[{"name": "Grep", "args": {"q": "bug"}, "id": "g1", "type": "tool_call"}]),
            ToolMessage("match " * 300, tool_call_id="g1", id="s-t1"),
            AIMessage("The bug is in parse().", id="s-a2")]
    usage = {"s-a1": RecordedUsage(input_tokens=1_200), "s-a2": RecordedUsage(input_tokens=300, cache_read_input_tokens=1_500)}
    return Thread("sub", msgs, system_prompt="You are a sub-agent.", usage=usage if recorded else {})


def parent_thread() -> Thread:
    task = {"name": "Task", "args": {"subagent_type": "Explore", "description": "find it"}, "type": "tool_call"}
    msgs = [HumanMessage("fix it", id="h"),
            AIMessage("", id="a1", tool_calls=[{**task, "id": "k1"}, {**task, "id": "k2"}]),
            ToolMessage("The bug is in parse().", tool_call_id="k1", id="t1", name="Task"),
            ToolMessage("No bug found.", tool_call_id="k2", id="t2", name="Task"),
            AIMessage("fixed", id="a2")]
    return Thread("parent", msgs, system_prompt="lead", usage={"a1": RecordedUsage(input_tokens=500)},
                  subagents={"k1": sub_thread(recorded=True), "k2": sub_thread(recorded=False)})


def test_as_recorded_rows_hold_what_the_opened_sub_agent_shows() -> None:
    thread = parent_thread()
    run = replay(thread, preset(RECORDED_PRESET))
    assert "subagents" not in run.layer_names  # no sub-agent layer, so no event to read
    rows = {r["tool_call_id"]: r for r in subagent_rows(run)}
    # the recorded transcript: its two calls as recorded (1,200 then 1,800 tokens), as when opened
    assert inside(rows["k1"]) == opened(thread.subagents["k1"]) == (2, 3_000, 1_800)
    # a transcript without usage: our count of what it sent
    cost = subagent_cost(thread.subagents["k2"], run.counter)
    assert inside(rows["k2"]) == (2, cost.inside_tokens, cost.inside_peak_tokens)
    assert all(v is not None for r in rows.values() for v in inside(r))


def test_a_recorded_transcript_is_measured_as_recorded_also_beside_the_layers_event() -> None:
    thread = parent_thread()
    run = replay(thread, preset("deerflow").with_overrides(["summarization.enabled=false", "memory.enabled=false"]))
    events = {e.payload["tool_call_id"]: e for e in run.events if e.layer == "subagents" and e.kind == "subagent"}
    assert set(events) == {"k1", "k2"}
    rows = {r["tool_call_id"]: r for r in subagent_rows(run)}
    assert inside(rows["k1"]) == opened(thread.subagents["k1"])
    p = events["k2"].payload  # no recorded usage: the layer's own measure
    assert inside(rows["k2"]) == (p["inside_steps"], p["inside_tokens"], p["inside_peak_tokens"])


# -- the real Claude Code session with its sub-agent transcripts (skipped without ../shared/traces) -----
def test_a_claude_code_sessions_sub_agent_rows_match_the_opened_sub_agents() -> None:
    thread = load_thread(trace_path(*SESSION))  # its subagents/ folder beside it is attached
    assert len(thread.subagents) == 2
    run = replay(thread, default_config(thread))
    assert run.config.preset == RECORDED_PRESET
    rows = subagent_rows(run)
    assert [r["transcript tokens"] for r in rows] == [31_243, 39_285]
    assert [inside(r) == opened(thread.subagents[r["tool_call_id"]]) for r in rows] == [True, True]
    assert (rows[0]["inside steps"], rows[0]["peak inside"]) == (11, 45_627)
    assert (rows[1]["inside steps"], rows[1]["peak inside"]) == (9, 52_567)


def test_the_layers_table_and_the_opened_sub_agent_agree_in_the_dashboard(start, monkeypatch) -> None:  # noqa: ANN001
    path = trace_path(*SESSION)
    monkeypatch.setenv("CTXI_OPEN", str(path))
    at = start("pages/layers.py")
    [table] = [d.value for d in at.dataframe if "peak inside" in d.value.columns]
    first = table.iloc[0]
    assert (int(first["inside steps"]), int(first["peak inside"])) == (11, 45_627)
    assert int(first["sent inside (all its calls)"]) == 374_761
    at.button(key=f"open_sub_layers_{first['tool_call_id']}").click().run()
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert (metrics["Steps"], metrics["Peak view"].split()[0]) == ("11", "45,627")
