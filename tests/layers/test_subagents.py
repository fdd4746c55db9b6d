"""L1 sub-agents: DeerFlow's task-call clamp and the tokens spent inside sub-agents."""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime

from engine.config.schema import preset
from engine.layers import LayerContext
from engine.layers.subagents import (
    LIMIT_REACHED_TEXT,
    SubagentLayer,
    allowed_task_calls,
    clamp_message,
    subagent_cost,
)
from engine.run.replay import replay
from engine.thread.events import recording
from engine.thread.model import RecordedUsage, Thread
from engine.tokens.counters import get_counter

APPROX = get_counter("approximate")


class FakeModel(GenericFakeChatModel):
    def bind_tools(self, tools: Any, **kwargs: Any) -> FakeModel:
        return self


def task(call_id: str, description: str = "look into it") -> dict[str, Any]:
    return {"name": "task", "args": {"description": description, "prompt": "p", "subagent_type": "general-purpose"},
            "id": call_id, "type": "tool_call"}


def other(call_id: str) -> dict[str, Any]:
    return {"name": "grep", "args": {"pattern": "x"}, "id": call_id, "type": "tool_call"}


def test_allowed_is_the_smaller_of_concurrent_and_remaining_total() -> None:
    assert allowed_task_calls(3, None, 0) == 3
    assert allowed_task_calls(3, 6, 4) == 2
    assert allowed_task_calls(3, 6, 9) == 0
    assert allowed_task_calls(None, None, 5) is None
    assert allowed_task_calls(None, 2, 1) == 1


def test_clamp_keeps_the_first_task_calls_and_other_calls_untouched() -> None:
    ai = AIMessage("delegating", id="a1", tool_calls=[task("k1"), other("g1"), task("k2"), task("k3"), task("k4")],
                   response_metadata={"finish_reason": "tool_calls"})
    clamped, dropped = clamp_message(ai, ("task",), 2)  # type: ignore[misc]
    assert [tc["id"] for tc in clamped.tool_calls] == ["k1", "g1", "k2"]
    assert [tc["id"] for tc in dropped] == ["k3", "k4"]
    assert clamped.id == "a1" and clamped.content == "delegating"
    assert [tc["id"] for tc in clamped.response_metadata["ctxi_dropped_calls"]] == ["k3", "k4"]
    assert clamped.response_metadata["finish_reason"] == "tool_calls"
    assert len(ai.tool_calls) == 5 and "ctxi_dropped_calls" not in ai.response_metadata  # never mutated
    assert clamp_message(ai, ("task",), 4) is None


def test_clamp_drops_tool_use_blocks_and_raw_calls() -> None:
    ai = AIMessage([{"type": "text", "text": "go"}, {"type": "tool_use", "id": "k1", "name": "task", "input": {}},
                    {"type": "tool_use", "id": "k2", "name": "task", "input": {}}],
                   id="a1", tool_calls=[task("k1"), task("k2")],
                   additional_kwargs={"tool_calls": [{"id": "k1", "function": {}}, {"id": "k2", "function": {}}]})
    clamped, _ = clamp_message(ai, ("task",), 1)  # type: ignore[misc]
    assert [b.get("id") for b in clamped.content] == [None, "k1"]
    assert clamped.additional_kwargs["tool_calls"] == [{"id": "k1", "function": {}}]


def test_limit_reached_text_when_no_call_remains() -> None:
    ai = AIMessage("more", id="a1", tool_calls=[task("k1")], response_metadata={"finish_reason": "tool_calls"})
    clamped, _ = clamp_message(ai, ("task",), 0)  # type: ignore[misc]
    assert clamped.tool_calls == []
    assert clamped.content == "more\n\n" + LIMIT_REACHED_TEXT
    assert LIMIT_REACHED_TEXT.startswith("[SUBAGENT LIMIT REACHED] The subagent delegation limit for this run has been reached.")
    assert clamped.response_metadata["finish_reason"] == "stop"


def test_after_model_replaces_by_id_and_counts_a_per_run_total() -> None:
    layer = SubagentLayer(LayerContext(counter=APPROX), max_concurrent=3, max_total=4)
    runtime = Runtime()
    layer.before_agent({"messages": []}, runtime)
    first = AIMessage("", id="a1", tool_calls=[task("k1"), task("k2")])
    assert layer.after_model({"messages": [HumanMessage("h"), first]}, runtime) is None
    second = AIMessage("", id="a2", tool_calls=[task("k3"), task("k4"), task("k5")])
    with recording() as rec:
        update = layer.after_model({"messages": [second]}, runtime)
    [new] = update["messages"]  # type: ignore[index]
    assert new.id == "a2" and [tc["id"] for tc in new.tool_calls] == ["k3", "k4"]
    [event] = rec.events
    assert (event.kind, event.payload["kept"], event.payload["dropped"], event.payload["dropped_ids"]) == ("clamp", 2, 1, ["k5"])
    assert event.payload["limit_reached"] is True
    third = AIMessage("", id="a3", tool_calls=[task("k6")])
    [stop] = layer.after_model({"messages": [third]}, runtime)["messages"]  # type: ignore[index]
    assert stop.tool_calls == [] and stop.content == LIMIT_REACHED_TEXT
    layer.before_agent({"messages": []}, runtime)  # a new run starts from zero
    assert layer.after_model({"messages": [third]}, runtime) is None


def test_limits_are_clamped_into_deerflows_range_and_none_means_unlimited() -> None:
    assert SubagentLayer(max_concurrent=9, max_total=99).max_concurrent == 4
    assert SubagentLayer(max_concurrent=0, max_total=0).max_total == 1
    free = SubagentLayer(max_concurrent=None)
    many = AIMessage("", id="a", tool_calls=[task(f"k{i}") for i in range(8)])
    assert free.after_model({"messages": [many]}, Runtime()) is None


# -- sub-agent accounting ----------------------------------------------------------------------------
def sub_thread() -> Thread:
    msgs = [HumanMessage("find the bug", id="s-h"),
            AIMessage("", id="s-a1", tool_calls=[other("sg1")]),
            ToolMessage("match " * 200, tool_call_id="sg1", id="s-t1"),
            AIMessage("The bug is in parse().", id="s-a2")]
    return Thread("sub", msgs, system_prompt="You are a sub-agent.",
                  usage={"s-a1": RecordedUsage(input_tokens=100), "s-a2": RecordedUsage(input_tokens=400, cache_read_input_tokens=50)})


def test_subagent_cost_sums_the_context_sent_at_each_step() -> None:
    sub = sub_thread()
    base = APPROX.count_message(SystemMessage(content="You are a sub-agent."))
    h, a1, t1 = (APPROX.count_message(m) for m in sub.messages[:3])
    cost = subagent_cost(sub, APPROX)
    assert cost.inside_steps == 2
    assert cost.inside_tokens == (base + h) + (base + h + a1 + t1)
    assert cost.inside_peak_tokens == base + h + a1 + t1
    assert cost.transcript_tokens == base + sum(APPROX.count_message(m) for m in sub.messages)
    assert cost.recorded_inside_tokens == 550


def parent_thread() -> Thread:
    msgs = [HumanMessage("fix it", id="h"),
            AIMessage("", id="a1", tool_calls=[task("k1"), task("k2"), task("k3"), task("k4")]),
            ToolMessage("Task Succeeded. Result: The bug is in parse().", tool_call_id="k1", id="t1", name="task"),
            ToolMessage("Task Succeeded. Result: two", tool_call_id="k2", id="t2", name="task"),
            ToolMessage("Task Succeeded. Result: three", tool_call_id="k3", id="t3", name="task"),
            ToolMessage("Task Succeeded. Result: four", tool_call_id="k4", id="t4", name="task"),
            AIMessage("fixed", id="a2")]
    return Thread("parent", msgs, system_prompt="lead", subagents={"k1": sub_thread()})


def test_replay_clamps_skips_dropped_results_and_accounts_subagents() -> None:
    config = preset("deerflow").with_overrides(["summarization.enabled=false", "memory.enabled=false",
                                                "dangling.enabled=false", "tokens.counter=approximate",
                                                # plain counts: the sub-agent's recorded usage would calibrate them
                                                "tokens.calibrate=false"])
    run = replay(parent_thread(), config)
    step0, step1 = run.steps
    [clamp] = [e for e in step0.events if e.kind == "clamp"]
    assert (clamp.payload["kept"], clamp.payload["dropped_ids"]) == (3, ["k4"])
    assert [m.id for m in step1.view] == ["h", "a1", "t1", "t2", "t3"]  # t4 answered a dropped call
    assert [tc["id"] for tc in step1.view[1].tool_calls] == ["k1", "k2", "k3"]
    [sub] = [e for e in step1.events if e.kind == "subagent"]
    cost = subagent_cost(sub_thread(), APPROX)
    returned = APPROX.count_message(parent_thread().messages[2])
    assert sub.payload["tool_call_id"] == "k1"
    assert (sub.payload["inside_tokens"], sub.payload["inside_steps"], sub.payload["returned_tokens"]) == (cost.inside_tokens, 2, returned)
    assert sub.payload["ratio"] == round(cost.inside_tokens / returned, 2)
    assert (sub.tokens_before, sub.tokens_after) == (cost.transcript_tokens, returned)
    # the recorded thread is untouched
    assert len(parent_thread().messages[1].tool_calls) == 4


def test_inside_create_agent_the_excess_task_calls_never_run() -> None:
    ran: list[str] = []

    @tool("task")
    def task_tool(description: str, prompt: str, subagent_type: str) -> str:
        """Delegate to a sub-agent."""
        ran.append(description)
        return f"Task Succeeded. Result: {description}"

    model = FakeModel(messages=iter([
        AIMessage("", id="m1", tool_calls=[task("k1", "one"), task("k2", "two"), task("k3", "three")]),
        AIMessage("all done", id="m2"),
    ]))
    agent = create_agent(model, [task_tool], middleware=[SubagentLayer(max_concurrent=2)])
    with recording() as rec:
        out = agent.invoke({"messages": [HumanMessage("go", id="h")]})
    assert sorted(ran) == ["one", "two"]  # the tool node runs parallel calls in threads
    m1 = next(m for m in out["messages"] if m.id == "m1")
    assert [tc["id"] for tc in m1.tool_calls] == ["k1", "k2"]
    assert [tc["id"] for tc in m1.response_metadata["ctxi_dropped_calls"]] == ["k3"]
    assert [e.kind for e in rec.events] == ["clamp"]


def test_wrap_tool_call_passes_other_calls_through_silently() -> None:
    layer = SubagentLayer(LayerContext(thread=parent_thread()))
    msg = ToolMessage("x", tool_call_id="g1", id="t")
    request = ToolCallRequest(tool_call=other("g1"), tool=None, state={}, runtime=None)  # type: ignore[arg-type]
    with recording() as rec:
        assert layer.wrap_tool_call(request, lambda _r: msg) is msg
    assert rec.events == []


def test_a_clamped_call_is_one_copy_across_re_runs() -> None:
    """A re-run after an edit clamps a message to the copy it made (and counted) before."""
    from engine.config.schema import preset
    from engine.config.sizes import ContextSize
    from engine.run.replay import replay
    from engine.thread.synthetic import synthetic_thread
    from ui import controls

    thread = synthetic_thread(300, seed=0)
    base = preset("stress")

    def clamped(config: Any) -> dict[str, Any]:
        run = replay(thread, config)
        originals = {m.id: m for m in thread.messages}
        return {m.id: m for m in run.final_state if m.id in originals and m is not originals[m.id]
                and m.type == "ai" and len(m.tool_calls) < len(originals[m.id].tool_calls)}

    first = clamped(base)
    assert first, "the stress preset clamps concurrent task calls on this thread"
    again = clamped(controls.set_trigger_clause(base, 0, ContextSize(type="fraction", value=0.4)))
    assert first.keys() == again.keys() and all(first[k] is again[k] for k in first)
