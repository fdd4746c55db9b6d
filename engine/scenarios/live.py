"""An agent session run live — a scenario's scripted model or a real `provider:model` — through the layers.

The agent is a real `langchain.agents.create_agent` with the engine's layers as middleware and a
recording observer placed last (innermost `wrap_*`): it sees every model response before any
`after_model` rewrite and every tool result before a layer offloads it, so the recorded thread is
the raw, unmanaged transcript even when summarization rewrites the agent's state.

Progress is reported per model call (`StepProgress`: view tokens against the window, raw tokens,
the action taken, the events layers emitted); a `CancelToken` stops the run at the next model or
tool call and keeps everything recorded so far.

Scenarios build on this module; choosing what to run (`run_live`, `start_live`) is `engine.scenarios.live_run`,
which imports both, so neither imports the other.
"""

from __future__ import annotations

import copy
import os
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NotRequired

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain.agents.middleware.types import InputAgentState
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from engine.base.errors import ConfigError, ContextInspectorError
from engine.base.redaction import describe_error, model_output_redaction, one_line, redact, redact_message
from engine.config.schema import EngineConfig
from engine.layers import LayerContext, build_layers
from engine.thread.events import Event, EventRecorder, recording
from engine.thread.model import Thread, stable_id
from engine.tokens.counters import TokenCounter, get_counter, tool_schema
from engine.workspace.vfs import VirtualFilesystem

RECURSION_LIMIT = 100_000  # the step budget is ours (max_steps), not LangGraph's default of 25


class RunCancelled(Exception):
    """The user cancelled the run; what ran so far is kept."""


class StepLimitReached(Exception):
    """The run reached its `max_steps` model calls."""


class LiveRunError(ContextInspectorError):
    """A live run could not start (unknown target, missing provider package, bad model name)."""


class CancelToken:
    """Set from any thread (a Cancel button, Ctrl-C); checked before every model and tool call."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()


@dataclass
class StepProgress:
    """One model call of a live run, as a progress callback receives it."""

    agent: str  # "main", or "task:<tool_call_id>" for a sub-agent
    step: int  # 1-based count of this agent's model calls
    max_steps: int | None
    view_tokens: int  # what the model was sent: system + tool schemas + messages, after every layer
    raw_tokens: int  # the unmanaged transcript so far, with the same system prompt and tools
    window_tokens: int
    action: str  # what the model decided, e.g. "read_file /project/README.md" or "final answer"
    events: list[Event] = field(default_factory=list)

    @property
    def view_fraction(self) -> float:
        return self.view_tokens / self.window_tokens if self.window_tokens else 0.0


ProgressCallback = Callable[[StepProgress], None]


class _TodoState(AgentState):
    todos: NotRequired[list[dict[str, Any]]]


def describe_action(message: AIMessage) -> str:
    """A short label for what a model response does (for progress bars and logs)."""
    if not message.tool_calls:
        return "final answer"
    parts = []
    for tc in message.tool_calls:
        args = tc.get("args") or {}
        target = next((str(args[k]) for k in ("file_path", "path", "pattern", "query", "command", "description")
                       if isinstance(args.get(k), str)), "")
        parts.append(f"{tc['name']} {target}".strip())
    return ", ".join(parts)


class TranscriptRecorder(AgentMiddleware):
    """The observer: records the raw transcript and reports progress; appended last to the middleware."""

    state_schema = _TodoState

    def __init__(self, *, counter: TokenCounter, window_tokens: int, label: str = "main",
                 id_prefix: str = "", on_step: ProgressCallback | None = None,
                 cancel: CancelToken | None = None, max_steps: int | None = None,
                 events: EventRecorder | None = None) -> None:
        super().__init__()
        self.counter = counter
        self.window_tokens = window_tokens
        self.label = label
        self.id_prefix = id_prefix
        self.on_step = on_step
        self.cancel = cancel
        self.max_steps = max_steps
        self.events = events
        self.messages: list[BaseMessage] = []
        self.steps = 0
        self._results: dict[str, ToolMessage] = {}
        self._last_calls: list[str] = []
        self._lock = threading.Lock()
        self._tools_tokens: dict[tuple[int, ...], int] = {}
        self._events_seen = 0
        self.system_prompt: str | None = None
        self.tool_schemas: list[dict[str, Any]] = []

    # -- transcript ----------------------------------------------------------------------------
    def add_human(self, message: HumanMessage) -> None:
        with self._lock:
            self._flush()
            self.messages.append(message)

    def _flush(self) -> None:
        """Append the results of the last response in its tool-call order (tools run in parallel)."""
        for call_id in self._last_calls:
            result = self._results.pop(call_id, None)
            if result is not None:
                self.messages.append(result)
        self._last_calls = []

    def transcript(self) -> list[BaseMessage]:
        with self._lock:
            self._flush()
            return list(self.messages)

    def raw_tokens(self) -> int:
        count = self.counter.count_message
        base = self.counter.count_text(self.system_prompt or "") + 3 if self.system_prompt else 0
        return base + self._tools_count(self.tool_schemas) + sum(count(m) for m in self.messages)

    def _tools_count(self, tools: Sequence[Any]) -> int:
        key = tuple(id(t) for t in tools)
        if key not in self._tools_tokens:
            self._tools_tokens[key] = self.counter.count_tools(list(tools)) if tools else 0
        return self._tools_tokens[key]

    def _check(self) -> None:
        if self.cancel is not None and self.cancel.cancelled:
            raise RunCancelled()

    # -- model calls ---------------------------------------------------------------------------
    def _before_model(self, request: Any) -> None:
        self._check()
        if self.max_steps is not None and self.steps >= self.max_steps:
            raise StepLimitReached()
        with self._lock:
            self._flush()

    def _after_model(self, request: Any, response: Any) -> None:
        result = getattr(response, "result", None)
        if result is None:  # an ExtendedModelResponse from an outer layer is not what we get here
            result = getattr(getattr(response, "model_response", None), "result", [])
        ai = next((m for m in result if isinstance(m, AIMessage)), None)
        self.steps += 1
        if self.events is not None:  # what layers do before the next model call belongs to that step
            self.events.step = self.steps
        if ai is None:
            return
        # a reply can hold the key it was sent (an echoing endpoint or proxy): out before the agent's state,
        # the transcript and the saved thread keep it (innermost, so before any layer sees the reply)
        redact_message(ai)
        if ai.id is None:  # the transcript needs an id per AI message (usage and steps are keyed by it)
            ai.id = stable_id(f"{self.id_prefix}ai", self.steps, ai.content)
        recorded = ai.model_copy(deep=True)
        with self._lock:
            self.messages.append(recorded)
            self._last_calls = [cid for tc in recorded.tool_calls if (cid := tc.get("id"))]
        if self.on_step is not None:
            system = request.system_message
            view = (self.counter.count_message(system) if system is not None else 0)
            view += self._tools_count(request.tools) + sum(self.counter.count_message(m) for m in request.messages)
            new_events: list[Event] = []
            if self.events is not None:
                new_events = list(self.events.events[self._events_seen:])
                self._events_seen = len(self.events.events)
            self.on_step(StepProgress(
                agent=self.label, step=self.steps, max_steps=self.max_steps, view_tokens=view,
                raw_tokens=self.raw_tokens(), window_tokens=self.window_tokens,
                action=describe_action(recorded), events=new_events,
            ))

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        self._before_model(request)
        response = handler(request)
        self._after_model(request, response)
        return response

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        self._before_model(request)
        response = await handler(request)
        self._after_model(request, response)
        return response

    # -- tool calls ----------------------------------------------------------------------------
    # Cancellation and interruptions are decided between steps (the agent pauses before its tools
    # node), never by raising inside parallel tool calls.

    def _after_tool(self, request: Any, result: Any) -> Any:
        call = request.tool_call
        messages = [result] if isinstance(result, ToolMessage) else []
        if isinstance(result, Command) and isinstance(result.update, dict):
            messages = [m for m in result.update.get("messages", []) if isinstance(m, ToolMessage)]
        for m in messages:
            if m.id is None:
                # deterministic ids: LangGraph would otherwise assign a uuid4
                m.id = f"{self.id_prefix}tool-{m.tool_call_id}"
            if not m.name:
                m.name = call.get("name")
            with self._lock:
                self._results[m.tool_call_id] = m.model_copy(deep=True)
        return result

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return self._after_tool(request, handler(request))

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return self._after_tool(request, await handler(request))


class AgentSession:
    """One agent conversation through `create_agent`: send human turns, then take the raw thread."""

    def __init__(self, *, model: Any, tools: Sequence[Any], system_prompt: str, config: EngineConfig,
                 thread_id: str, vfs: VirtualFilesystem | None = None, counter: TokenCounter | None = None,
                 window_tokens: int | None = None, workspace: Any = None, label: str = "main",
                 id_prefix: str = "", on_step: ProgressCallback | None = None,
                 cancel: CancelToken | None = None, max_steps: int | None = None,
                 layers: Sequence[AgentMiddleware] | None = None) -> None:
        self.config = config
        self.thread_id = thread_id
        self.vfs = vfs if vfs is not None else VirtualFilesystem()
        self.counter = counter or get_counter(config.tokens.counter)
        self.window_tokens = window_tokens or config.window_tokens(None)
        self.system_prompt = system_prompt
        self.tools = list(tools)
        self.events = EventRecorder()
        self.context = LayerContext(counter=self.counter, vfs=self.vfs, window_tokens=self.window_tokens,
                                    thread=None, workspace=workspace)
        self.layers = list(layers) if layers is not None else build_layers(config, self.context)
        self.recorder = TranscriptRecorder(counter=self.counter, window_tokens=self.window_tokens, label=label,
                                           id_prefix=id_prefix, on_step=on_step, cancel=cancel,
                                           max_steps=max_steps, events=self.events)
        self.recorder.system_prompt = system_prompt
        self.recorder.tool_schemas = [tool_schema(t) for t in self.tools]
        # Pausing before every tools step lets a run stop cleanly between steps: a cancel, or a scripted
        # interruption that leaves the step's tool calls without results (dangling), as a user's Stop does.
        self.agent = create_agent(model, self.tools, system_prompt=system_prompt,
                                  middleware=[*self.layers, self.recorder], checkpointer=InMemorySaver(),
                                  interrupt_before=["tools"])
        self.cancel = cancel
        self._turns = 0
        self.outcome = "not started"
        self.final_state: dict[str, Any] = {}

    @property
    def steps(self) -> int:
        return self.recorder.steps

    def send(self, text: str, *, interrupt_at_step: int | None = None, message_id: str | None = None) -> str:
        """Run one invocation; returns "done", "cancelled", "interrupted" or "step limit"."""
        human = HumanMessage(content=text, id=message_id or stable_id(f"{self.recorder.id_prefix}human", self._turns, text))
        self._turns += 1
        self.recorder.add_human(human)
        cfg: RunnableConfig = {"configurable": {"thread_id": self.thread_id}, "recursion_limit": RECURSION_LIMIT}
        payload: InputAgentState | None = {"messages": [human]}
        try:
            with recording(self.events), model_output_redaction():
                while True:
                    self.final_state = self.agent.invoke(payload, cfg)
                    if not self.agent.get_state(cfg).next:
                        self.outcome = "done"
                        break
                    # paused before the tools of step `self.steps`
                    if interrupt_at_step is not None and self.steps == interrupt_at_step:
                        self.outcome = "interrupted"
                        break
                    if self.cancel is not None and self.cancel.cancelled:
                        self.outcome = "cancelled"
                        break
                    payload = None  # resume: run the tools, then the next model call
        except RunCancelled:
            self.outcome = "cancelled"
        except StepLimitReached:
            self.outcome = "step limit"
        return self.outcome

    def state_values(self) -> dict[str, Any]:
        cfg: RunnableConfig = {"configurable": {"thread_id": self.thread_id}}
        try:
            return dict(self.agent.get_state(cfg).values)
        except Exception:  # no checkpoint yet (cancelled before the first step)
            return {}

    def thread(self, *, model_name: str | None, title: str | None = None, extra: dict[str, Any] | None = None,
               subagents: dict[str, Thread] | None = None) -> Thread:
        """The raw transcript as a Thread (usage is not recorded: scripted models report none)."""
        messages = self.recorder.transcript()
        # Thread.todos stays empty: the list is in the write_todos calls, and a replay seeds its initial
        # state with Thread.todos (a final list there would look "lost" at step 0). Kept in extra instead.
        final_todos = self.state_values().get("todos") or _last_todos(messages)
        called = {tc.get("id") for m in messages if isinstance(m, AIMessage) for tc in m.tool_calls}
        return Thread(
            thread_id=self.thread_id,
            messages=messages,
            source_format="native",
            model=model_name,
            max_input_tokens=self.window_tokens,
            system_prompt=self.system_prompt,
            tools=[tool_schema(t) for t in self.tools],
            todos=[],
            subagents={k: v for k, v in sorted((subagents or {}).items()) if k in called},
            title=title,
            extra={**(extra or {}), **({"final_todos": [dict(t) for t in final_todos]} if final_todos else {})},
        )


def _last_todos(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    for m in reversed(messages):
        if isinstance(m, AIMessage):
            for tc in reversed(m.tool_calls):
                if tc["name"] == "write_todos" and isinstance(tc.get("args", {}).get("todos"), list):
                    return copy.deepcopy(tc["args"]["todos"])
    return []


# -- real models ---------------------------------------------------------------------------------
def redact_secrets(text: str) -> str:
    """Remove API keys from a message meant for a user (`engine.base.redaction.redact`)."""
    return redact(text)


def is_model_target(target: str) -> bool:
    """`provider:model` (e.g. `openai:gpt-4o-mini`), as opposed to a scenario name."""
    return ":" in target


def init_real_model(target: str, **kwargs: Any) -> Any:
    """A chat model through `init_chat_model`; keys come from the provider's environment variables."""
    from langchain.chat_models import init_chat_model

    try:
        return init_chat_model(target, **kwargs)
    except ImportError as exc:
        raise LiveRunError(f"{target}: the provider package is not installed ({one_line(str(exc), 200)}); "
                           "install the [llm] extra, e.g. pip install 'context-inspector[llm]'") from None
    except Exception as exc:  # unknown provider, missing key
        raise LiveRunError(f"{target}: cannot create the model ({describe_error(exc)})") from None


@dataclass
class LiveResult:
    """What a live run produced: the raw thread, how it ended, and the events layers emitted."""

    thread: Thread
    outcome: str  # done | cancelled | interrupted | step limit | error
    steps: int
    events: list[Event] = field(default_factory=list)
    error: str | None = None
    saved_path: str | None = None
    related: list[Thread] = field(default_factory=list)  # earlier threads of the same run (memory scenario)

    @property
    def cancelled(self) -> bool:
        return self.outcome == "cancelled"


# -- saving ------------------------------------------------------------------------------------
def default_threads_dir() -> Path:
    """Where live runs are saved when no Workspace module is available: CTXI_WORKSPACE or ~/.context-inspector."""
    root = os.environ.get("CTXI_WORKSPACE")
    base = Path(root) if root else Path.home() / ".context-inspector"
    return base / "threads"


def save_thread(thread: Thread, workspace: Any = None) -> str:
    """Save a thread in the user's workspace (engine.workspace.workspace when present); returns the path."""
    if workspace is not None and hasattr(workspace, "save_thread"):
        return str(workspace.save_thread(thread))
    try:
        from engine.workspace.workspace import Workspace  # type: ignore[import-not-found]
    except ModuleNotFoundError:
        return _save_thread_file(thread, default_threads_dir())
    ws = Workspace()
    return str(ws.save_thread(thread))


def save_run(result: LiveResult, workspace: Any = None) -> list[str]:
    """Save a run's threads (the earlier ones of `result.related` first, then `result.thread`); their paths.

    A save may rename a thread to `<id>-2` (engine.workspace.workspace: a different thread already holds the
    id), so a later thread's `extra["previous_thread"]` (the memory scenario's second thread names
    its first) is pointed at the id the earlier thread was actually saved under: the link opens
    the thread of this run, never an older run's thread that kept the name.
    """
    renamed: dict[str, str] = {}
    paths: list[str] = []
    for thread in [*result.related, result.thread]:
        previous = thread.extra.get("previous_thread")
        if isinstance(previous, str) and previous in renamed:
            thread.extra["previous_thread"] = renamed[previous]
        before = thread.thread_id
        paths.append(save_thread(thread, workspace))
        if thread.thread_id != before:
            renamed[before] = thread.thread_id
    return paths


def _save_thread_file(thread: Thread, folder: Path) -> str:
    from engine.formats.native import dumps

    folder.mkdir(parents=True, exist_ok=True)
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", thread.thread_id)[:120] or "thread"
    path = folder / f"{safe}.json"
    path.write_text(dumps(thread), encoding="utf-8")
    return str(path)


def resolve_config(config_path: str | None, preset_name: str | None, default_preset: str) -> EngineConfig:
    """The CLI rule for runs: --config YAML, else --preset, else the target's own preset."""
    from engine.config.loading import load_config

    if config_path is not None and preset_name is not None:
        raise ConfigError("give --config or --preset, not both", key="--config")
    return load_config(config_path, preset_name=None if config_path else (preset_name or default_preset))


__all__ = [
    "AgentSession", "CancelToken", "LiveResult", "LiveRunError", "RunCancelled",
    "StepLimitReached", "StepProgress", "TranscriptRecorder", "default_threads_dir", "describe_action",
    "init_real_model", "is_model_target", "redact_secrets", "resolve_config", "save_run", "save_thread",
]
