"""L4 dangling tool calls: placeholders right after the AI message, orphans dropped, the request only."""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from engine.config.schema import preset
from engine.layers import LayerContext
from engine.layers.dangling import DanglingToolCallLayer, apply_patch, find_patch
from engine.run.replay import replay
from engine.thread.events import recording
from engine.thread.kinds import message_kind
from engine.thread.model import Thread
from engine.tokens.counters import get_counter

APPROX = get_counter("approximate")


class FakeModel(GenericFakeChatModel):
    def bind_tools(self, tools: Any, **kwargs: Any) -> FakeModel:
        return self


def call(name: str, call_id: str) -> dict[str, Any]:
    return {"name": name, "args": {}, "id": call_id, "type": "tool_call"}


def interrupted() -> list[Any]:
    return [
        HumanMessage("go", id="h1"),
        AIMessage("", id="a1", tool_calls=[call("grep", "c1"), call("ls", "c2"), call("execute", "c3")]),
        ToolMessage("found", tool_call_id="c2", id="t2"),
        HumanMessage("stop, do something else", id="h2"),
        ToolMessage("late orphan", tool_call_id="zz", id="tz"),
        AIMessage("ok", id="a2"),
    ]


def test_deerflow_placeholders_go_right_after_the_ai_message() -> None:
    msgs = interrupted()
    layer = DanglingToolCallLayer(LayerContext(counter=APPROX))
    with recording() as rec:
        view = layer.patched_view(msgs)
    assert view is not None
    assert [m.id for m in view] == ["h1", "a1", "patch-c1", "patch-c3", "t2", "h2", "a2"]
    p1 = view[2]
    assert (p1.content, p1.tool_call_id, p1.name, p1.status) == ("[Tool call was interrupted and did not return a result.]", "c1", "grep", "error")
    assert message_kind(p1) == "patch"
    assert [m.id for m in msgs] == ["h1", "a1", "t2", "h2", "tz", "a2"]  # the input is untouched
    patch, drop = rec.events
    assert (patch.kind, patch.payload["tool_call_ids"], patch.payload["message_ids"]) == ("patch", ["c1", "c3"], ["patch-c1", "patch-c3"])
    total = sum(APPROX.count_message(m) for m in msgs)
    added = APPROX.count_message(view[2]) + APPROX.count_message(view[3])
    assert (patch.tokens_before, patch.tokens_after) == (total, total + added)
    assert (drop.kind, drop.payload["tool_call_ids"], drop.payload["message_ids"]) == ("drop_orphan", ["zz"], ["tz"])
    assert (drop.tokens_before, drop.tokens_after) == (total + added, total + added - APPROX.count_message(msgs[4]))


def test_each_style_texts_and_invalid_calls() -> None:
    ai = AIMessage("", id="a1", tool_calls=[call("grep", "c1")],
                   invalid_tool_calls=[{"name": "search", "args": "{bad", "id": "c9", "error": "bad json", "type": "invalid_tool_call"}])
    history = [HumanMessage("x", id="h"), ai]
    # Deep Agents patches the state when an invocation starts, invalid calls included
    layer = DanglingToolCallLayer(style="deepagents")
    update = layer.before_agent({"messages": history}, None)
    assert update is not None
    assert [m.content for m in update["messages"][3:]] == [
        "Tool call grep with id c1 did not complete - no result was recorded. It may have been cancelled or interrupted.",
        "Tool call search with id c9 could not be executed - arguments were malformed or truncated.",
    ]
    assert all(m.status == "error" for m in update["messages"][3:])
    # DeerFlow v2.0-m0 looks at tool_calls only
    m0 = DanglingToolCallLayer(style="deerflow", drop_orphans=False).patched_view(history)
    assert m0 is not None and [m.content for m in m0[2:]] == ["[Tool call was interrupted and did not return a result.]"]
    # DeerFlow HEAD answers the invalid call too
    head = DanglingToolCallLayer(style="deerflow-head")._head_view(history)
    assert head is not None and [m.content for m in head[2:]] == [
        "[Tool call was interrupted and did not return a result.]",
        "[Tool call could not be executed because its arguments were invalid: bad json]"]


def test_orphans_kept_when_drop_orphans_is_off_and_clean_history_is_unchanged() -> None:
    keep = DanglingToolCallLayer(drop_orphans=False).patched_view(interrupted())
    assert keep is not None and "tz" in [m.id for m in keep]
    clean = [HumanMessage("h", id="h"), AIMessage("", id="a", tool_calls=[call("ls", "c")]), ToolMessage("r", tool_call_id="c", id="t")]
    with recording() as rec:
        assert DanglingToolCallLayer().patched_view(clean) is None
    assert rec.events == []


def test_incremental_view_matches_the_pure_function_as_messages_grow() -> None:
    layer = DanglingToolCallLayer()
    msgs = interrupted()
    grown: list[Any] = []
    for m in [*msgs, AIMessage("", id="a3", tool_calls=[call("ls", "c4")]), ToolMessage("r", tool_call_id="c4", id="t4"),
              ToolMessage("answer c1 at last", tool_call_id="c1", id="t1")]:
        grown.append(m)
        patch = find_patch(grown)
        expected = apply_patch(grown, patch, {c.id: layer._patch_for(c) for _, c in patch.dangling}) if patch else None
        got = layer.patched_view(list(grown))
        assert (None if got is None else [x.id for x in got]) == (None if expected is None else [x.id for x in expected])
    # once c1 is answered only c3 dangles, and the late result is no longer an orphan
    assert [x.id for x in layer.patched_view(grown) or []][:4] == ["h1", "a1", "patch-c3", "t2"]


def test_same_id_copies_from_upstream_are_taken_in_place() -> None:
    layer = DanglingToolCallLayer(LayerContext(counter=APPROX))
    msgs = interrupted()
    layer.patched_view(msgs)
    copy = msgs[1].model_copy(update={"content": "shorter"})  # e.g. a truncated copy: same id, same calls
    swapped = [msgs[0], copy, *msgs[2:]]
    with recording() as rec:
        view = layer.patched_view(swapped)
    assert view is not None and view[1] is copy
    assert rec.events[0].tokens_before == sum(APPROX.count_message(m) for m in swapped)
    # a copy that changes the calls starts the bookkeeping over, with the same result as a fresh layer
    fewer = msgs[1].model_copy(update={"tool_calls": msgs[1].tool_calls[:1]})
    changed = [msgs[0], fewer, *msgs[2:]]
    got = layer.patched_view(changed)
    want = DanglingToolCallLayer().patched_view(changed)
    assert got is not None and want is not None
    assert [m.id for m in got] == [m.id for m in want] == ["h1", "a1", "patch-c1", "h2", "a2"]  # t2 is now an orphan


def test_same_placeholder_object_every_step() -> None:
    layer = DanglingToolCallLayer()
    first = layer.patched_view(interrupted())
    second = layer.patched_view([*interrupted()[:0], *interrupted()])  # new list, new objects
    again = layer.patched_view(interrupted())
    assert first is not None and second is not None and again is not None
    assert first[2] is second[2] is again[2]


class Seen(AgentMiddleware):
    def __init__(self) -> None:
        super().__init__()
        self.requests: list[list[Any]] = []

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        self.requests.append(list(request.messages))
        return handler(request)


def test_inside_create_agent_the_request_is_patched_and_the_state_is_not() -> None:
    @tool
    def slow(x: str) -> str:
        """Never answers (the run is interrupted before it)."""
        return "never"

    seen = Seen()
    model = FakeModel(messages=iter([AIMessage("answer", id="m2")]))
    agent = create_agent(model, [slow], middleware=[DanglingToolCallLayer(), seen], checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "t"}}
    # a checkpoint holding an unanswered call, as an interrupted run leaves it
    agent.update_state(cfg, {"messages": [HumanMessage("go", id="h1"), AIMessage("", id="m1", tool_calls=[call("slow", "s1")])]})
    with recording() as rec:
        out = agent.invoke({"messages": [HumanMessage("next", id="h2")]}, cfg)
    assert [m.id for m in seen.requests[0]] == ["h1", "m1", "patch-s1", "h2"]
    assert [m.id for m in out["messages"]] == ["h1", "m1", "h2", "m2"]
    assert [e.kind for e in rec.events] == ["patch"]


def test_replay_patches_every_later_step_and_keeps_state() -> None:
    msgs = [HumanMessage("go", id="h1"), AIMessage("", id="a1", tool_calls=[call("grep", "c1")]),
            HumanMessage("never mind", id="h2"), AIMessage("", id="a2", tool_calls=[call("ls", "c2")]),
            ToolMessage("x", tool_call_id="c2", id="t2"), AIMessage("done", id="a3")]
    config = preset("deerflow").with_overrides(["summarization.enabled=false", "memory.enabled=false"])
    run = replay(Thread("d", msgs, system_prompt="s"), config)
    assert [[e.kind for e in s.events if e.layer == "dangling"] for s in run.steps] == [[], ["patch"], ["patch"]]
    assert [m.id for m in run.steps[2].view] == ["h1", "a1", "patch-c1", "h2", "a2", "t2"]
    assert [m.id for m in run.steps[2].state] == ["h1", "a1", "h2", "a2", "t2"]
    assert [e["kind"] for e in run.steps[1].view_entries(run.counter)] == ["original", "original", "original", "patch", "original"]
