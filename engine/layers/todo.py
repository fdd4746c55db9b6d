"""L3 todo reminder: DeerFlow's context-loss reminder, persisted in state, and todo tracking.

DeerFlow's `TodoMiddleware.before_model` fires only when the state holds todos, **no** `write_todos`
call is left in the messages (summarization removed it) and **no** earlier reminder is present;
it then appends a `HumanMessage(name="todo_reminder")` to the state (so it is summarized away in
turn, after which a new reminder can fire). `wrap_tool_call` keeps `state["todos"]` in step with
the thread: a successful `write_todos` result becomes `Command(update={"todos": ..., "messages": [...]})`,
as LangChain's `TodoListMiddleware` tool does.

Styles (DeerFlow's `agents/middlewares/todo_middleware.py`): `deerflow` is v2.0-m0 (the reminder has
no `additional_kwargs`); `deerflow-head` (f1f4af99b) marks it `hide_from_ui` and adds the completion
reminder: after a clean final answer with todos still open, DeerFlow jumps back to the model (at
most twice a run) and that request alone ends with a `todo_completion_reminder` message. A replayed
thread records those extra model calls, so a call right after a clean final answer is that jump.
With `system_prompt`, DeerFlow's own todo prompt (the text its lead agent passes to `TodoMiddleware`,
engine/layers/deerflow_todo_text.py) is appended to the system message on every call, as LangChain's
`TodoListMiddleware.wrap_model_call` does; with `tool`, its `write_todos` tool (DeerFlow's
description) goes with every request ahead of the thread's tools, unless the thread has its own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, ClassVar

from langchain.agents.middleware import AgentState, ModelRequest
from langchain.agents.middleware.todo import PlanningState
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command

from engine.config.schema import EngineConfig
from engine.layers.agent_tools import with_agent_tools, write_todos_tool
from engine.layers.base import ContextLayer, LayerContext
from engine.layers.deerflow_todo_text import DEERFLOW_TODO_SYSTEM_PROMPT, DEERFLOW_TODO_TOOL_DESCRIPTION
from engine.layers.request_copy import overridden
from engine.layers.scan import grown_prefix, unchanged_prefix
from engine.thread.kinds import mark
from engine.thread.model import stable_id

REMINDER_NAME = "todo_reminder"
COMPLETION_REMINDER_NAME = "todo_completion_reminder"
TODO_TOOL_NAMES: tuple[str, ...] = ("write_todos",)
_TOOL_CALL_FINISH_REASONS = frozenset({"tool_calls", "function_call"})


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


def completion_reminder_text(todos: Sequence[Mapping[str, Any]]) -> str:
    """DeerFlow HEAD's `_format_completion_reminder`: the items not yet completed."""
    incomplete = "\n".join(f"- [{t.get('status', 'pending')}] {t.get('content', '')}"
                           for t in todos if t.get("status") != "completed")
    return (
        "<system_reminder>\n"
        "You have incomplete todo items that must be finished before giving your final response:\n\n"
        f"{incomplete}\n\n"
        "Please continue working on these tasks. Call `write_todos` to mark items as completed "
        "as you finish them, and only respond when all items are done.\n"
        "</system_reminder>"
    )


def is_clean_final(message: BaseMessage) -> bool:
    """An AI message with no tool-call intent or error (HEAD's `_has_tool_call_intent_or_error` is False)."""
    if not isinstance(message, AIMessage) or message.tool_calls or message.invalid_tool_calls:
        return False
    kwargs = message.additional_kwargs or {}
    if kwargs.get("tool_calls") or kwargs.get("function_call"):
        return False
    return (message.response_metadata or {}).get("finish_reason") not in _TOOL_CALL_FINISH_REASONS


def with_todo_prompt(system: SystemMessage | None, prompt: str) -> SystemMessage:
    """LangChain's `TodoListMiddleware.wrap_model_call`: the prompt as one more text block."""
    if system is None:
        return SystemMessage(content=[{"type": "text", "text": prompt}])
    return SystemMessage(content=[*system.content_blocks, {"type": "text", "text": f"\n\n{prompt}"}])  # type: ignore[list-item]


def is_todo_write(message: BaseMessage, names: Sequence[str] = TODO_TOOL_NAMES) -> bool:
    return isinstance(message, AIMessage) and any(tc.get("name") in names for tc in message.tool_calls)


def is_reminder(message: BaseMessage) -> bool:
    return isinstance(message, HumanMessage) and message.name == REMINDER_NAME


def build_reminder(todos: Sequence[Mapping[str, Any]], position: int | str, *, hidden: bool = True) -> HumanMessage:
    """The reminder message; its id depends only on `position` (the step) and what it says.

    `hidden` marks it `hide_from_ui` as DeerFlow HEAD does (v2.0-m0 does not).
    """
    text = reminder_text(todos)
    msg = HumanMessage(content=text, name=REMINDER_NAME, id=stable_id("todo-reminder", position, text),
                       additional_kwargs={"hide_from_ui": True} if hidden else {})
    mark(msg, "reminder")
    return msg


class TodoReminderLayer(ContextLayer):
    """DeerFlow's todo context-loss reminder; also keeps `state["todos"]` following `write_todos` calls."""

    layer = "todo"
    state_schema = PlanningState
    # how a checkpoint keeps each run-time attribute (engine/layers/checkpoint.py)
    checkpoint_kinds: ClassVar[dict[str, str]] = {"_seen": "grow", "_seen_src": "reset", "_writes": "value",
                                                  "_reminders": "value", "_with_tools": "memo"}

    def __init__(self, context: LayerContext | None = None, *, todo_tool_names: Sequence[str] = TODO_TOOL_NAMES,
                 style: str = "deerflow-head", system_prompt: str | None = None,
                 tool_description: str | None = None) -> None:
        super().__init__(context)
        self.todo_tool_names = tuple(todo_tool_names)
        self.style = style
        self.system_prompt = system_prompt
        self.framework_tools: list[dict[str, Any]] = [write_todos_tool(tool_description)] if tool_description else []
        self._with_tools: tuple[tuple[Any, ...], list[Any]] | None = None
        # incremental detection over an append-only message list
        self._seen: list[BaseMessage] = []
        self._writes = 0
        self._reminders = 0

    @classmethod
    def from_config(cls, config: EngineConfig, context: LayerContext) -> TodoReminderLayer:
        t = config.todo
        return cls(context, style=t.style, system_prompt=DEERFLOW_TODO_SYSTEM_PROMPT if t.system_prompt else None,
                   tool_description=DEERFLOW_TODO_TOOL_DESCRIPTION if t.tool else None)

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
        reminder = build_reminder(todos, step if step is not None else f"m{len(messages)}",
                                  hidden=self.style == "deerflow-head")
        before = sum(self.counter.count_message(m) for m in messages)
        after = before + self.counter.count_message(reminder)
        self.emit("reminder", tokens_before=before, tokens_after=after, message_id=reminder.id, todos=len(todos),
                  open_todos=sum(1 for t in todos if t.get("status") != "completed"), text=reminder.content,
                  message=f"todo list ({len(todos)} items) no longer visible; reminder appended")
        return {"messages": [reminder]}

    async def abefore_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        return self.before_model(state, runtime)

    def _tools(self, tools: Sequence[Any]) -> list[Any]:
        hit = self._with_tools
        if hit is None or len(tools) != len(hit[0]) or not all(a is b for a, b in zip(tools, hit[0], strict=True)):
            hit = self._with_tools = (tuple(tools), with_agent_tools(tools, self.framework_tools))
        return hit[1]

    def _prepare(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        if self.framework_tools:
            request = overridden(request, tools=self._tools(request.tools))
        if self.system_prompt is not None:
            request = overridden(request, system_message=with_todo_prompt(request.system_message, self.system_prompt))
        if self.style != "deerflow-head":
            return request
        state: Mapping[str, Any] = request.state if isinstance(request.state, Mapping) else {}
        todos: list[dict[str, Any]] = list(state.get("todos") or [])
        messages: Sequence[BaseMessage] = state.get("messages") or ()
        # HEAD's after_model looks at the last AI message of the state; the jump back to the model runs
        # before_model again, which may append a todo reminder after it
        tail = len(messages)
        while tail and is_reminder(messages[tail - 1]):
            tail -= 1
        if not tail or not is_clean_final(messages[tail - 1]) or all(t.get("status") == "completed" for t in todos):
            return request
        text = completion_reminder_text(todos)
        reminder = HumanMessage(content=text, name=COMPLETION_REMINDER_NAME, additional_kwargs={"hide_from_ui": True},
                                id=stable_id("todo-completion", self.current_step() or 0, text))
        mark(reminder, "reminder")
        before = self.counter(request.messages)
        self.emit("completion_reminder", tokens_before=before, tokens_after=before + self.counter.count_message(reminder),
                  message_id=reminder.id, open_todos=sum(1 for t in todos if t.get("status") != "completed"),
                  message="final answer with todos still open: the model is called again with a reminder")
        return overridden(request, messages=[*request.messages, reminder])

    def wrap_model_call(self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Any]) -> Any:
        return handler(self._prepare(request))

    async def awrap_model_call(self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Awaitable[Any]]) -> Any:
        return await handler(self._prepare(request))

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
    "COMPLETION_REMINDER_NAME",
    "REMINDER_NAME",
    "TODO_TOOL_NAMES",
    "TodoReminderLayer",
    "build_reminder",
    "completion_reminder_text",
    "is_clean_final",
    "format_todos",
    "is_reminder",
    "is_todo_write",
    "reminder_text",
]
