"""Drive a recorded thread through a real `create_agent` with the same layers, recording each request.

This is the ground truth `replay` is checked against: a scripted chat model returns the thread's
AI messages in order, one tool per recorded tool name returns the recorded result for each call,
and an observer middleware placed last (innermost `wrap_model_call`) records what the model got.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ModelRequest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import ConfigDict

from engine.config.presets import DEFAULT_PRESET
from engine.config.schema import EngineConfig, preset
from engine.layers import LayerContext, build_layers
from engine.thread.events import recording
from engine.thread.kinds import message_kind
from engine.thread.model import Thread
from engine.tokens.counters import TokenCounter, counter_for_thread, tool_schema
from engine.workspace.vfs import VirtualFilesystem


class ScriptedChatModel(BaseChatModel):
    """Returns the given AI messages in order; `bind_tools` returns itself (create_agent calls it)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    responses: list[AIMessage]
    position: int = 0

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        if self.position >= len(self.responses):
            raise RuntimeError("the scripted model ran out of recorded responses")
        msg = self.responses[self.position]
        self.position += 1
        return ChatResult(generations=[ChatGeneration(message=msg)])


class RecordedResultTool(BaseTool):
    """A tool that answers each call with the thread's recorded ToolMessage for that call id."""

    name: str
    description: str = "replays a recorded result"
    results: dict[str, ToolMessage]

    def _run(self, *args: Any, **kwargs: Any) -> str:  # never reached: invoke is overridden
        raise NotImplementedError

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        call_id = input.get("id") if isinstance(input, dict) else None
        if call_id not in self.results:
            raise Interrupted(call_id)
        return self.results[call_id]


class Interrupted(Exception):
    """The recorded run stopped before this call returned (a dangling tool call)."""


@dataclass
class ObservedRequest:
    system: SystemMessage | None
    messages: list[BaseMessage]
    tool_names: list[str]


class Observer(AgentMiddleware):
    """Innermost middleware: sees the request after every other layer rewrote it."""

    def __init__(self, sink: list[ObservedRequest], on_call: Callable[[int], None] | None = None) -> None:
        super().__init__()
        self.sink = sink
        self.on_call = on_call

    def wrap_model_call(self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Any]) -> Any:
        self.sink.append(ObservedRequest(request.system_message, list(request.messages),
                                         [getattr(t, "name", None) or cast(dict[str, Any], t).get("name", "")
                                          for t in request.tools]))
        response = handler(request)
        if self.on_call is not None:
            self.on_call(len(self.sink))
        return response


def recorded_tools(thread: Thread, results: dict[str, ToolMessage]) -> list[RecordedResultTool]:
    """One tool per name the thread declares or calls: a declared one carries the thread's schema (so the
    request's tool tokens, and any trigger counting them, are the replay's), in the thread's order."""
    tools: list[RecordedResultTool] = []
    seen: set[str] = set()
    for spec in thread.tools:
        schema = tool_schema(spec)
        name = str(schema["name"])
        if name and name not in seen:
            seen.add(name)
            tools.append(RecordedResultTool(name=name, description=str(schema["description"]),
                                            args_schema=schema["parameters"] or None, results=results))
    called = {tc["name"] for m in thread.messages if isinstance(m, AIMessage) for tc in m.tool_calls}
    tools.extend(RecordedResultTool(name=n, results=results) for n in sorted(called - seen - {""}))
    return tools


def _turns(thread: Thread) -> list[HumanMessage | None]:
    """The human messages that start invocations (None: the thread starts with an AI message)."""
    body = [m for m in thread.messages if not isinstance(m, SystemMessage)]
    turns: list[HumanMessage | None] = []
    if body and not isinstance(body[0], HumanMessage):
        turns.append(None)
    turns.extend(m for m in body if isinstance(m, HumanMessage) and message_kind(m) == "original")
    return turns


def drive_with_create_agent(
    thread: Thread,
    config: EngineConfig | None = None,
    *,
    token_counter: TokenCounter | None = None,
    summarizer: Any = None,
    extra_middleware: Sequence[AgentMiddleware] = (),
    middleware: Sequence[AgentMiddleware] | None = None,
) -> list[ObservedRequest]:
    """Run the thread through `create_agent` with the config's layers; the requests the model got.

    `middleware`, when given, replaces the config's layers (e.g. LangChain's own
    SummarizationMiddleware alone, to time a plain agent against our preset).
    """
    config = config or preset(DEFAULT_PRESET)
    counter = token_counter or counter_for_thread(thread, config.tokens.counter)
    window = config.window_tokens(thread.max_input_tokens)
    context = LayerContext(counter=counter, vfs=VirtualFilesystem(), window_tokens=window, thread=thread,
                           summarizer=summarizer)
    layers = list(middleware) if middleware is not None else build_layers(config, context)
    observed: list[ObservedRequest] = []
    ai_messages = [m for m in thread.messages if isinstance(m, AIMessage)]
    results = {m.tool_call_id: m for m in thread.messages if isinstance(m, ToolMessage)}
    tools = recorded_tools(thread, results)
    model = ScriptedChatModel(responses=ai_messages, profile={"max_input_tokens": window})

    with recording() as recorder:
        observer = Observer(observed, on_call=lambda n: setattr(recorder, "step", n))
        agent = create_agent(model, tools, system_prompt=thread.system_prompt or _leading_system(thread),
                             middleware=[*layers, *extra_middleware, observer], checkpointer=InMemorySaver())
        cfg: RunnableConfig = {"configurable": {"thread_id": thread.thread_id}, "recursion_limit": 100_000}
        for human in _turns(thread):
            if model.position >= len(ai_messages):
                break
            try:
                agent.invoke({"messages": [human] if human is not None else []}, cfg)
            except Interrupted:
                continue  # the recorded run stopped here; the next turn resumes from the checkpoint
    return observed


def _schema_fields(schema: dict[str, Any] | None) -> dict[str, Any]:
    if not schema:
        return {}
    fields: dict[str, Any] = {"description": str(schema.get("description", ""))}
    if isinstance(schema.get("parameters"), dict):
        fields["args_schema"] = schema["parameters"]
    return fields


def _leading_system(thread: Thread) -> str | None:
    lead = []
    for m in thread.messages:
        if not isinstance(m, SystemMessage):
            break
        lead.append(str(m.content))
    return "\n\n".join(lead) or None
