"""L3 todo reminder: DeerFlow's detection, exact text and de-duplication; todos follow write_todos."""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command

from engine.config.schema import preset
from engine.layers import LayerContext
from engine.layers.todo import TodoReminderLayer, build_reminder, format_todos, reminder_text
from engine.run.replay import replay
from engine.thread.events import recording
from engine.thread.kinds import message_kind
from engine.thread.model import Thread, stable_id
from engine.tokens.counters import get_counter

APPROX = get_counter("approximate")
TODOS = [{"content": "read the spec", "status": "completed"}, {"content": "write the parser", "status": "in_progress"},
         {"content": "test it"}]

EXPECTED = (
    "<system_reminder>\n"
    "Your todo list from earlier is no longer visible in the current context window, but it is still active. "
    "Here is the current state:\n\n"
    "- [completed] read the spec\n- [in_progress] write the parser\n- [pending] test it\n\n"
    "Continue tracking and updating this todo list as you work. Call `write_todos` whenever the status of any item changes.\n"
    "</system_reminder>"
)


class FakeModel(GenericFakeChatModel):
    def bind_tools(self, tools: Any, **kwargs: Any) -> FakeModel:
        return self


def write_todos_call(call_id: str, todos: list[dict[str, Any]]) -> dict[str, Any]:
    return {"name": "write_todos", "args": {"todos": todos}, "id": call_id, "type": "tool_call"}


def test_format_and_exact_text() -> None:
    assert format_todos(TODOS) == "- [completed] read the spec\n- [in_progress] write the parser\n- [pending] test it"
    assert reminder_text(TODOS) == EXPECTED


def test_reminder_message_name_id_and_kind() -> None:
    r = build_reminder(TODOS, 7)
    assert r.name == "todo_reminder" and r.content == EXPECTED
    assert r.id == stable_id("todo-reminder", 7, EXPECTED) == build_reminder(TODOS, 7).id
    assert message_kind(r) == "reminder"
    assert r.additional_kwargs["hide_from_ui"] is True


def test_without_a_recorder_the_id_comes_from_the_state_length() -> None:
    update = TodoReminderLayer().before_model({"messages": [HumanMessage("x", id="h")], "todos": TODOS}, Runtime())
    assert update["messages"][0].id == stable_id("todo-reminder", "m1", EXPECTED)  # type: ignore[index]


def test_fires_only_with_todos_no_visible_write_and_no_reminder() -> None:
    layer = TodoReminderLayer(LayerContext(counter=APPROX))
    rt = Runtime()
    plain = [HumanMessage("go", id="h"), AIMessage("ok", id="a")]
    assert layer.before_model({"messages": plain, "todos": []}, rt) is None
    visible = [*plain, AIMessage("", id="w", tool_calls=[write_todos_call("c1", TODOS)])]
    assert layer.before_model({"messages": visible, "todos": TODOS}, rt) is None
    with recording() as rec:
        update = layer.before_model({"messages": plain, "todos": TODOS}, rt)
    [reminder] = update["messages"]  # type: ignore[index]
    assert reminder.content == EXPECTED and reminder.id == stable_id("todo-reminder", 0, EXPECTED)  # step 0
    [event] = rec.events
    assert (event.layer, event.kind, event.payload["todos"], event.payload["open_todos"]) == ("todo", "reminder", 3, 2)
    before = sum(APPROX.count_message(m) for m in plain)
    assert (event.tokens_before, event.tokens_after) == (before, before + APPROX.count_message(reminder))
    # de-duplicated while the reminder is still in the messages
    assert layer.before_model({"messages": [*plain, reminder], "todos": TODOS}, rt) is None
    # summarized away: a new reminder fires
    assert layer.before_model({"messages": [HumanMessage("summary", id="s")], "todos": TODOS}, rt) is not None


def test_write_todos_results_update_the_todos() -> None:
    layer = TodoReminderLayer()
    result = ToolMessage("Updated todo list", tool_call_id="c1", id="t1")
    request = ToolCallRequest(tool_call=write_todos_call("c1", TODOS), tool=None, state={}, runtime=None)  # type: ignore[arg-type]
    out = layer.wrap_tool_call(request, lambda _r: result)
    assert isinstance(out, Command)
    assert out.update == {"todos": TODOS, "messages": [result]}
    failed = ToolMessage("bad", tool_call_id="c1", id="t1", status="error")
    assert layer.wrap_tool_call(request, lambda _r: failed) is failed
    other = ToolCallRequest(tool_call={"name": "ls", "args": {}, "id": "c2"}, tool=None, state={}, runtime=None)  # type: ignore[arg-type]
    assert layer.wrap_tool_call(other, lambda _r: result) is result


class Compactor(AgentMiddleware):
    """Stands in for state-mode summarization: before the 3rd model call, history becomes one summary."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        self.calls += 1
        if self.calls != 3:
            return None
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), HumanMessage("Here is a summary: planning done.", id="sum")]}


class Seen(AgentMiddleware):
    def __init__(self) -> None:
        super().__init__()
        self.requests: list[list[Any]] = []

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        self.requests.append(list(request.messages))
        return handler(request)


def test_inside_create_agent_todos_follow_and_the_reminder_is_persisted() -> None:
    @tool
    def write_todos(todos: list[dict[str, Any]]) -> str:
        """Write the todo list."""
        return "Updated todo list"

    model = FakeModel(messages=iter([
        AIMessage("", id="m1", tool_calls=[write_todos_call("c1", TODOS)]),
        AIMessage("", id="m2", tool_calls=[write_todos_call("c2", TODOS[:2])]),
        AIMessage("still working", id="m3"),
    ]))
    seen = Seen()
    agent = create_agent(model, [write_todos], middleware=[Compactor(), TodoReminderLayer(), seen])
    with recording() as rec:
        out = agent.invoke({"messages": [HumanMessage("plan", id="h")]})
    assert out["todos"] == TODOS[:2]
    assert [e.kind for e in rec.events] == ["reminder"]
    third = seen.requests[2]
    assert [m.id for m in third] == ["sum", stable_id("todo-reminder", 0, reminder_text(TODOS[:2]))]
    # the recorder's step is the id's position; nobody set it here, so it is 0
    assert third[1].name == "todo_reminder"
    assert any(m.name == "todo_reminder" for m in out["messages"] if isinstance(m, HumanMessage))


def todo_thread() -> Thread:
    msgs = [HumanMessage("plan", id="h1"),
            AIMessage("", id="a1", tool_calls=[write_todos_call("c1", TODOS)]),
            ToolMessage("Updated todo list", tool_call_id="c1", id="t1", name="write_todos")]
    for i in range(2, 14):
        msgs.append(AIMessage("", id=f"a{i}", tool_calls=[{"name": "grep", "args": {"pattern": "x" * 50}, "id": f"g{i}"}]))
        msgs.append(ToolMessage("found " * 400, tool_call_id=f"g{i}", id=f"t{i}", name="grep"))
    msgs.append(AIMessage("done", id="a14"))
    return Thread("todo", msgs, system_prompt="sys", max_input_tokens=6000)


def test_replay_reminds_after_summarization_removes_the_write_and_keeps_it_in_state() -> None:
    config = preset("deerflow").with_overrides([
        "summarization.trigger=messages:12", "summarization.keep=messages:4", "memory.enabled=false",
        "tokens.counter=approximate"])
    run = replay(todo_thread(), config)
    reminders = [(s.index, e.payload["message_id"]) for s in run.steps for e in s.events if e.layer == "todo"]
    assert len(reminders) >= 1
    assert [step for step, _ in reminders] == [6, 9, 12]
    assert [rid for _, rid in reminders] == [stable_id("todo-reminder", s, EXPECTED) for s in (6, 9, 12)]
    first_step, first_id = reminders[0]
    view = run.steps[first_step].view
    assert view[-1].id == first_id and view[-1].content == EXPECTED
    assert not any(tc["name"] == "write_todos" for m in view[:-1] if isinstance(m, AIMessage) for tc in m.tool_calls)
    # persisted: the next step's state still holds the reminder (until summarized away)
    assert first_id in [m.id for m in run.steps[first_step + 1].state]
    # never two reminders in one state
    assert all(sum(1 for m in s.state if getattr(m, "name", None) == "todo_reminder") <= 1 for s in run.steps)
