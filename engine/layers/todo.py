"""L3 todo reminder: DeerFlow's context-loss reminder, persisted in state, and todo tracking.

DeerFlow's `TodoMiddleware.before_model` fires only when the state holds todos, **no** `write_todos`
call is left in the messages (summarization removed it) and **no** earlier reminder is present;
it then appends a `HumanMessage(name="todo_reminder")` to the state (so it is summarized away in
turn, after which a new reminder can fire). `wrap_tool_call` keeps `state["todos"]` in step with
the thread: a successful `write_todos` result becomes `Command(update={"todos": ..., "messages": [...]})`,
as LangChain's `TodoListMiddleware` tool does.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from langchain.agents.middleware import AgentState
from langchain.agents.middleware.todo import PlanningState
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command

from engine.config import EngineConfig
from engine.kinds import mark
from engine.layers.base import ContextLayer, LayerContext
from engine.layers.scan import grown_prefix, unchanged_prefix
from engine.thread import stable_id

REMINDER_NAME = "todo_reminder"
TODO_TOOL_NAMES: tuple[str, ...] = ("write_todos",)


def format_todos(todos: Sequence[Mapping[str, Any]]) -> str:
    """DeerFlow's `_format_todos`: one `- [{status}] {content}` line per item."""
    return "\n".join(f"- [{t.get('status', 'pending')}] {t.get('content', '')}" for t in todos)


def reminder_text(todos: Sequence[Mapping[str, Any]]) -> str:
    """DeerFlow's reminder text, as it is."""
    return (
        "<system_reminder>\n"
        "Your todo list from earlier is no longer visible in the current context window, "
        "but it is still active. Here is the current state:\n\n"
        f"{format_todos(todos)}\n\n"
        "Continue tracking and updating this todo list as you work. "
        "Call `write_todos` whenever the status of any item changes.\n"
        "</system_reminder>"
    )


def is_todo_write(message: BaseMessage, names: Sequence[str] = TODO_TOOL_NAMES) -> bool:
    return isinstance(message, AIMessage) and any(tc.get("name") in names for tc in message.tool_calls)


def is_reminder(message: BaseMessage) -> bool:
    return isinstance(message, HumanMessage) and message.name == REMINDER_NAME


def build_reminder(todos: Sequence[Mapping[str, Any]], position: int | str) -> HumanMessage:
    """The reminder message; its id depends only on `position` (the step) and what it says."""
    text = reminder_text(todos)
    msg = HumanMessage(content=text, name=REMINDER_NAME, id=stable_id("todo-reminder", position, text),
                       additional_kwargs={"hide_from_ui": True})
    mark(msg, "reminder")
    return msg


class TodoReminderLayer(ContextLayer):
    """DeerFlow's todo context-loss reminder; also keeps `state["todos"]` following `write_todos` calls."""

    layer = "todo"
    state_schema = PlanningState

    def __init__(self, context: LayerContext | None = None, *, todo_tool_names: Sequence[str] = TODO_TOOL_NAMES) -> None:
        super().__init__(context)
        self.todo_tool_names = tuple(todo_tool_names)
        # incremental detection over an append-only message list
        self._seen: list[BaseMessage] = []
        self._writes = 0
        self._reminders = 0

    @classmethod
    def from_config(cls, config: EngineConfig, context: LayerContext) -> TodoReminderLayer:
        return cls(context)

    def _scan(self, messages: Sequence[BaseMessage]) -> None:
        start = grown_prefix(self, messages) or unchanged_prefix(self._seen, messages)
        if start == 0:
            self._writes = self._reminders = 0
        for m in messages[start:]:
            self._writes += is_todo_write(m, self.todo_tool_names)
            self._reminders += is_reminder(m)
        if start == 0:
            self._seen = list(messages)
        else:
            self._seen.extend(messages[start:])

    def before_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        todos: list[dict[str, Any]] = state.get("todos") or []  # type: ignore[assignment]
        if not todos:
            return None
        messages = state.get("messages") or []
        self._scan(messages)
        if self._writes or self._reminders:
            return None
        # the step when someone records events (replay, the parity harness), else the state's length
        step = self.current_step()
        reminder = build_reminder(todos, step if step is not None else f"m{len(messages)}")
        before = sum(self.counter.count_message(m) for m in messages)
        after = before + self.counter.count_message(reminder)
        self.emit("reminder", tokens_before=before, tokens_after=after, message_id=reminder.id, todos=len(todos),
                  open_todos=sum(1 for t in todos if t.get("status") != "completed"), text=reminder.content,
                  message=f"todo list ({len(todos)} items) no longer visible; reminder appended")
        return {"messages": [reminder]}

    async def abefore_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        return self.before_model(state, runtime)

    def _track(self, request: ToolCallRequest, result: Any) -> Any:
        call = request.tool_call
        if call.get("name") not in self.todo_tool_names or not isinstance(result, ToolMessage) or result.status == "error":
            return result
        todos = (call.get("args") or {}).get("todos")
        if not isinstance(todos, list) or not all(isinstance(t, Mapping) for t in todos):
            return result
        return Command(update={"todos": [dict(t) for t in todos], "messages": [result]})

    def wrap_tool_call(self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]) -> Any:
        return self._track(request, handler(request))

    async def awrap_tool_call(self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[Any]]) -> Any:
        return self._track(request, await handler(request))


__all__ = [
    "REMINDER_NAME",
    "TODO_TOOL_NAMES",
    "TodoReminderLayer",
    "build_reminder",
    "format_todos",
    "is_reminder",
    "is_todo_write",
    "reminder_text",
]
