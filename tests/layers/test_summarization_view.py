"""View mode (Deep Agents), the context-overflow fallback, and the layer inside replay and create_agent."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse
from langchain_core.exceptions import ContextOverflowError
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, RemoveMessage, ToolMessage
from langchain_core.messages.utils import get_buffer_string
from langgraph.checkpoint.memory import InMemorySaver

from engine.config.schema import preset
from engine.layers.base import LayerContext
from engine.layers.offload import read_file_clip, stub_text
from engine.layers.summarization import EVENT_KEY, SummarizationLayer
from engine.layers.summary_rules import VIEW_SUMMARY_TEMPLATE, apply_event, session_id, state_cutoff
from engine.run.replay import replay
from engine.thread.events import recording
from engine.thread.kinds import message_kind
from engine.thread.model import Thread
from engine.thread.synthetic import synthetic_thread
from engine.tokens.counters import ApproximateCounter

HISTORY = f"/conversation_history/{session_id('view-demo')}.md"


def tool_round(k: int, calls: int = 1) -> list[BaseMessage]:
    ids = [f"c{k}" if calls == 1 else f"c{k}-{j}" for j in range(calls)]
    out: list[BaseMessage] = [AIMessage(f"Reading part {k}.", id=f"a{k}",
                                        tool_calls=[{"name": "grep", "args": {"pattern": "x"}, "id": i} for i in ids])]
    out += [ToolMessage(f"result {i}", tool_call_id=i, id=f"t-{i}") for i in ids]
    return out


def demo_thread() -> Thread:
    messages: list[BaseMessage] = [HumanMessage("Find every TODO in the repo", id="h0")]
    for k in range(6):
        messages += tool_round(k)
    messages.append(AIMessage("All TODOs are listed above.", id="a-final"))
    return Thread(thread_id="view-demo", messages=messages, max_input_tokens=100_000)


def view_layer(thread: Thread, **kw: Any) -> SummarizationLayer:
    context = LayerContext(counter=ApproximateCounter(), thread=thread, window_tokens=kw.pop("window", 100_000))
    kw.setdefault("trigger", ("messages", 6))
    kw.setdefault("keep", ("messages", 2))
    return SummarizationLayer(context, mode="view", **kw)


def ids(messages: Any) -> list[str | None]:
    return [m.id for m in messages]


def test_view_mode_projects_without_rewriting_state() -> None:
    thread = demo_thread()
    layer = view_layer(thread)
    run = replay(thread, preset("langchain"), layers=[layer])
    body = thread.messages
    for step in run.steps:
        assert ids(step.state) == ids(body[: step.message_index])  # the state is the raw prefix, always
    summaries = [(e.step, e.payload["cutoff_index"]) for e in run.events if e.kind == "summarize"]
    assert summaries == [(3, 5), (5, 9)]
    s1 = run.steps[3].view[0]
    assert ids(run.steps[3].view[1:]) == ["a2", "t-c2"]
    assert ids(run.steps[4].view) == [s1.id, "a2", "t-c2", "a3", "t-c3"]
    s2 = run.steps[5].view[0]
    assert ids(run.steps[5].view[1:]) == ["a4", "t-c4"]  # chained: 5 + 5 - 1 = 9 in state
    assert ids(run.steps[6].view) == [s2.id, "a4", "t-c4", "a5", "t-c5"]
    assert s1.id.startswith("summary-1-") and s2.id.startswith("summary-2-")
    assert message_kind(s2) == "summary" and s2.additional_kwargs["lc_source"] == "summarization"
    assert run.steps[5].events[0].payload["removed_ids"] == [s1.id, "a2", "t-c2", "a3", "t-c3"]
    assert run.steps[5].events[0].payload["history_path"] == HISTORY


def test_summary_text_and_history_file() -> None:
    thread = demo_thread()
    layer = view_layer(thread)
    run = replay(thread, preset("langchain"), layers=[layer])
    first = run.steps[3].events[0].payload["summary_text"]
    assert run.steps[3].view[0].content == VIEW_SUMMARY_TEMPLATE.format(file_path=HISTORY, summary=first)
    assert run.steps[3].view[0].content.startswith(
        "You are in the middle of a conversation that has been summarized.\n\n"
        f"The full conversation history has been saved to {HISTORY} should you need to refer back to it for details.")
    body = thread.messages
    assert layer.vfs.paths() == [HISTORY]
    assert layer.vfs.read(HISTORY) == (
        f"## Summarized at step 3\n\n{get_buffer_string(body[0:5], format='xml')}\n\n"
        f"## Summarized at step 5\n\n{get_buffer_string(body[5:9], format='xml')}\n\n")  # S1 not re-written


def test_event_helpers() -> None:
    msgs = [HumanMessage(str(i), id=str(i)) for i in range(8)]
    summary = HumanMessage("S", id="S")
    event = {"cutoff_index": 5, "summary_message": summary}
    assert ids(apply_event(msgs, event)) == ["S", "5", "6", "7"]
    assert ids(apply_event(msgs, None)) == ids(msgs)
    assert ids(apply_event(msgs[:3], event)) == ["S"]
    assert state_cutoff(event, 3) == 7
    assert state_cutoff(None, 3) == 3


def test_private_event_reaches_state_through_the_command() -> None:
    thread = demo_thread()
    layer = view_layer(thread)
    state: dict[str, Any] = {"messages": list(thread.messages[:7])}
    request = ModelRequest(model=GenericFakeChatModel(messages=iter(())), messages=list(state["messages"]),
                           system_message=None, tools=[], state=state, runtime=None)  # type: ignore[arg-type]
    seen: list[list[BaseMessage]] = []

    def handler(req: ModelRequest) -> ModelResponse:
        seen.append(list(req.messages))
        return ModelResponse(result=[AIMessage("ok", id="r")])

    result = layer.wrap_model_call(request, handler)
    assert isinstance(result, ExtendedModelResponse)
    update = result.command.update  # type: ignore[union-attr]
    assert set(update) == {EVENT_KEY}
    assert update[EVENT_KEY]["cutoff_index"] == 5
    assert update[EVENT_KEY]["file_path"] == HISTORY
    assert update[EVENT_KEY]["summary_message"] is seen[0][0]
    assert ids(seen[0][1:]) == ["a2", "t-c2"]
    assert ids(result.model_response.result) == ["r"]


# -- overflow fallback ---------------------------------------------------------------------------
BIG_READ = "\n".join(f"{i:05d} " + "r" * 70 for i in range(300))  # 22,799 chars
BIG_GREP = "\n".join(f"src/mod_{i}.py:{i}: match " + "g" * 40 for i in range(200))


def overflow_thread() -> Thread:
    calls = [{"name": "read_file", "args": {"file_path": "/data/big.txt"}, "id": "c0"},
             {"name": "grep", "args": {"pattern": "match"}, "id": "c1"}]
    messages: list[BaseMessage] = [
        HumanMessage("Inspect the data file and find the matches", id="h0"),
        AIMessage("Reading both.", id="a0", tool_calls=calls),
        ToolMessage(BIG_READ, tool_call_id="c0", name="read_file", id="t0"),
        ToolMessage(BIG_GREP, tool_call_id="c1", name="grep", id="t1"),
        AIMessage("Done.", id="a1"),
    ]
    return Thread(thread_id="overflow-demo", messages=messages, max_input_tokens=4000)


@pytest.mark.parametrize("mode", ["view", "state"])
def test_overflow_fallback_summarizes_below_the_trigger_and_clips_the_tail(mode: str) -> None:
    thread = overflow_thread()
    context = LayerContext(counter=ApproximateCounter(), thread=thread, window_tokens=4000)
    layer = SummarizationLayer(context, mode=mode, trigger=("tokens", 1_000_000), keep=("messages", 3))  # type: ignore[arg-type]
    run = replay(thread, preset("langchain"), layers=[layer])
    step = run.steps[1]
    kinds = [(e.kind, e.severity) for e in step.events]
    assert kinds == [("overflow_fallback", "info"), ("summarize", "info")]
    overflow, summarize = step.events
    assert overflow.payload["clipped_ids"] == ["t0", "t1"]
    assert overflow.tokens_before > 4000
    # view mode is Deep Agents 0.7.32: above 95 % of the window it summarizes, then clips what is
    # still over; state mode (our own extension for LangChain's layout) does it at the window
    assert summarize.payload["trigger"] == ("input_budget" if mode == "view" else "overflow")
    assert summarize.payload["removed_ids"] == ["h0"]
    read, grep = step.view[2], step.view[3]
    assert read.content == read_file_clip(BIG_READ, "/data/big.txt")
    assert read.content.endswith("call read_file with file_path='/data/big.txt', offset=0, limit=100.]")
    assert grep.content == stub_text("c1", "/large_tool_results/c1", BIG_GREP)
    assert (message_kind(read), message_kind(grep)) == ("truncated", "stub")
    assert layer.vfs.read("/large_tool_results/c1") == BIG_GREP
    assert layer.vfs.entry("/large_tool_results/c1").layer == "summarization"
    # the clipped results are persisted under the same ids, so the next call does not overflow again
    final = {m.id: m for m in run.final_state}
    assert final["t0"].content == read.content and final["t1"].content == grep.content
    if mode == "state":
        assert ids(run.final_state) == [step.view[0].id, "a0", "t0", "t1", "a1"]
    else:
        assert ids(run.final_state) == ["h0", "a0", "t0", "t1", "a1"]


def test_unrecoverable_overflow_is_a_warning() -> None:
    thread = Thread(thread_id="huge", messages=[HumanMessage("z" * 40_000, id="h0"), AIMessage("ok", id="a0")],
                    max_input_tokens=1000)
    layer = SummarizationLayer(LayerContext(counter=ApproximateCounter(), thread=thread, window_tokens=1000),
                               mode="view", keep=("messages", 2))
    run = replay(thread, preset("langchain"), layers=[layer])
    [event] = run.steps[0].events
    assert (event.kind, event.severity, event.payload["window_tokens"]) == ("overflow_unrecovered", "warning", 1000)


def test_live_context_overflow_error_triggers_the_fallback_once() -> None:
    thread = overflow_thread()
    layer = SummarizationLayer(LayerContext(counter=ApproximateCounter(), thread=thread), mode="view",
                               trigger=("tokens", 1_000_000), keep=("messages", 3))
    msgs = list(thread.messages[:4])
    request = ModelRequest(model=GenericFakeChatModel(messages=iter(())), messages=msgs, system_message=None,
                           tools=[], state={"messages": msgs}, runtime=None)  # type: ignore[arg-type]
    sent: list[list[str | None]] = []

    def handler(req: ModelRequest) -> ModelResponse:
        sent.append(ids(req.messages))
        if len(sent) == 1:
            raise ContextOverflowError("prompt is too long")
        return ModelResponse(result=[AIMessage("ok", id="r")])

    with recording() as rec:
        result = layer.wrap_model_call(request, handler)
    assert sent[0] == ["h0", "a0", "t0", "t1"]
    assert sent[1][1:] == ["a0", "t0", "t1"] and sent[1][0].startswith("summary-1-")  # type: ignore[union-attr]
    assert [e.kind for e in rec.events] == ["overflow_fallback", "summarize"]
    assert set(result.command.update) == {EVENT_KEY, "messages"}
    strict = SummarizationLayer(LayerContext(counter=ApproximateCounter(), thread=thread), mode="view",
                                trigger=("tokens", 1_000_000), overflow_fallback=False)
    sent.clear()
    with pytest.raises(ContextOverflowError):
        strict.wrap_model_call(request, handler)


# -- replay and create_agent -------------------------------------------------------------------
def test_replay_with_the_stress_preset_is_deterministic() -> None:
    thread = synthetic_thread(60, seed=11, max_input_tokens=60_000)
    first = replay(thread, preset("stress"))
    second = replay(thread, preset("stress"))
    summaries = [e for e in first.events if e.layer == "summarization" and e.kind == "summarize"]
    assert len(summaries) >= 2
    assert all(e.payload["mode"] == "view" and e.payload["trigger"] == "fraction:0.25" for e in summaries)
    assert first.summarizer_name == "offline" and first.summarizer_calls == len(summaries)
    history = f"/conversation_history/{session_id(thread.thread_id)}.md"
    assert history in first.files.paths()
    assert json.dumps(first.to_report(), sort_keys=True) == json.dumps(second.to_report(), sort_keys=True)


class Recording(GenericFakeChatModel):
    inputs: list[list[BaseMessage]] = []

    def bind_tools(self, tools: Any, **kwargs: Any) -> Recording:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.inputs.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


@pytest.mark.parametrize("mode", ["state", "view"])
def test_standalone_in_create_agent(mode: str) -> None:
    model = Recording(messages=iter([AIMessage(f"answer {i}", id=f"r{i}") for i in range(4)]), inputs=[])
    layer = SummarizationLayer(trigger=("messages", 4), keep=("messages", 1), mode=mode,  # type: ignore[arg-type]
                               summarizer=lambda msgs: "short summary")
    agent = create_agent(model, [], middleware=[layer], checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "live-1"}}
    for i in range(4):
        agent.invoke({"messages": [HumanMessage(f"question {i}", id=f"q{i}")]}, cfg)
    sent = [[m.id for m in call] for call in model.inputs]
    assert sent[:2] == [["q0"], ["q0", "r0", "q1"]]
    assert sent[2][1:] == ["q2"] and sent[2][0].startswith("summary-1-")  # type: ignore[union-attr]
    values = agent.get_state(cfg).values
    if mode == "state":
        assert not any(isinstance(m, RemoveMessage) for m in values["messages"])
        assert [m.id for m in values["messages"]][1:] == ["q3", "r3"]
    else:
        assert [m.id for m in values["messages"]] == ["q0", "r0", "q1", "r1", "q2", "r2", "q3", "r3"]
        assert values[EVENT_KEY]["file_path"] == f"/conversation_history/{session_id('live-1')}.md"
        assert layer.vfs.paths() == [values[EVENT_KEY]["file_path"]]
