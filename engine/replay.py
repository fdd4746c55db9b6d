"""`replay(thread, config) -> Run`: drive a recorded thread through the layers, step by step.

The driver calls the same middleware hooks `create_agent` would, in LangChain's order:
`before_agent` when an invocation starts (a human turn), `before_model` in list order, then the
`wrap_model_call` chain (first layer outermost) around a handler that records the request and
returns the thread's recorded AI message, `after_model` in reverse order, then each recorded
tool result through the `wrap_tool_call` chain, and `after_agent` when the invocation ends.
"""

from __future__ import annotations

import gc
import itertools
from collections.abc import Callable, Sequence
from typing import Any, cast

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.graph.message import add_messages
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command

from engine.calibration import UNRECORDED_PROMPT, CalibratedCounter, thread_calibration
from engine.config import DEFAULT_PRESET, EngineConfig, preset
from engine.events import EventRecorder, emit, recording
from engine.kinds import message_kind
from engine.layers import LayerContext, build_layers
from engine.layers.scan import unchanged_prefix
from engine.layers.user import observe
from engine.recorded import RecordedHistory, keeps_all_thinking, recorded_history
from engine.run import Run, StepRecord
from engine.setting_warnings import KIND as SETTINGS_WARNING
from engine.setting_warnings import setting_warnings
from engine.thread import Thread
from engine.tokens import TokenCounter, counter_for_thread, prime_thread
from engine.vfs import VirtualFilesystem

PARTS_KEY = "ctxi_parts"  # system message parts: [{"part", "category", "text"}], set by prompt layers


class ReplayModel(GenericFakeChatModel):
    """The model object a replayed request carries: never called, but has a profile (the window)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ReplayModel:  # create_agent calls this
        return self


def replay_model(window_tokens: int) -> ReplayModel:
    return ReplayModel(messages=iter(()), profile={"max_input_tokens": window_tokens})


class Snapshot(Sequence[BaseMessage]):
    """The first `n` messages of a list the driver only appends to: a step's state or view
    without copying it (the driver forks the list before any in-place replacement)."""

    __slots__ = ("src", "n")

    def __init__(self, src: list[BaseMessage], n: int | None = None) -> None:
        self.src = src
        self.n = len(src) if n is None else n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            start, stop, step = i.indices(self.n)
            if step == 1:
                return tuple(self.src[start:stop])
            return tuple(self.src[j] for j in range(start, stop, step))
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise IndexError(i)
        return self.src[i]

    def __iter__(self) -> Any:
        return itertools.islice(self.src, self.n)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Snapshot):
            return (other.src is self.src and other.n == self.n) or tuple(self) == tuple(other)
        if isinstance(other, (tuple, list)):
            return tuple(self) == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Snapshot({self.n} messages)"


class _ViewLog:
    """Views as Snapshots of append-only lists: a view that extends the previous one shares its list.

    A step's view is usually the previous view plus the new messages, but layers hand it over as a
    new list each time; keeping those lists would hold O(view) references per step (gigabytes
    over a long thread whose window holds thousands of small messages). The check is one list
    comparison, identity first at C speed (`unchanged_prefix`).
    """

    def __init__(self) -> None:
        self.src: list[BaseMessage] = []

    def add(self, messages: Sequence[BaseMessage]) -> Snapshot:
        src = self.src
        n = len(src)
        if n and unchanged_prefix(src, messages):
            src.extend(messages[n:])
        else:
            src = self.src = list(messages)
        return Snapshot(src, len(messages))


class _PrefixSums:
    """Token breakdown of a message list, re-using the previous list's sums when it is a prefix.

    Most steps only append to the previous state or view, so the cost per step is the new
    messages, not the whole list (identity checks run at C speed).
    """

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self.prev: Sequence[BaseMessage] = ()
        self.prev_totals: dict[str, int] = {}

    def breakdown(self, messages: Sequence[BaseMessage]) -> dict[str, int]:
        prev = self.prev
        n = len(prev)
        if (isinstance(messages, Snapshot) and isinstance(prev, Snapshot) and messages.src is prev.src
                and messages.n >= n):
            prefix = True  # the same append-only list: O(1)
        else:
            # tuple == checks identity first, element by element, at C speed
            prefix = bool(n) and len(messages) >= n and tuple(messages[:n]) == tuple(prev)
        totals, start = (dict(self.prev_totals), n) if prefix else ({}, 0)
        bd = self.counter.breakdown
        tail = messages.src[start : messages.n] if isinstance(messages, Snapshot) else messages[start:]
        get = totals.get
        for m in tail:
            for cat, k in bd(m).items():
                totals[cat] = get(cat, 0) + k
        self.prev, self.prev_totals = messages, totals
        return dict(totals)


def _overrides(mw: AgentMiddleware, hook: str) -> bool:
    return getattr(type(mw), hook) is not getattr(AgentMiddleware, hook)


class _Driver:
    def __init__(self, thread: Thread, layers: Sequence[AgentMiddleware], counter: TokenCounter,
                 window_tokens: int, recorder: EventRecorder, *, unrecorded_prompt_tokens: int = 0,
                 provider: RecordedHistory | None = None) -> None:
        self.thread = thread
        # The agent's own prompt and tools the transcript lacks (engine.calibration), sent every call.
        self.unrecorded_prompt = unrecorded_prompt_tokens
        # The provider's rewrite of each request (earlier turns' thinking), when the model has one.
        self.provider = provider
        self.layers = list(layers)
        self.counter = counter
        self.window = window_tokens
        self.recorder = recorder
        self.runtime: Runtime[Any] = Runtime()
        self.model = replay_model(window_tokens)
        self.before_agent = [m for m in self.layers if _overrides(m, "before_agent")]
        self.before_model = [m for m in self.layers if _overrides(m, "before_model")]
        self.after_model = [m for m in reversed(self.layers) if _overrides(m, "after_model")]
        self.after_agent = [m for m in reversed(self.layers) if _overrides(m, "after_agent")]
        self.wrap_model = [m for m in self.layers if _overrides(m, "wrap_model_call")]
        self.wrap_tool = [m for m in self.layers if _overrides(m, "wrap_tool_call")]
        self._tools_cache: dict[tuple[int, ...], tuple[tuple[Any, ...], int, tuple[str, ...]]] = {}
        self._system_cache: dict[int, tuple[SystemMessage, dict[str, int]]] = {}
        self._state_sums = _PrefixSums(counter)
        self._view_sums = _PrefixSums(counter)
        self._views = _ViewLog()
        self._seen: list[ModelRequest[Any]] = []
        self._recorded: AIMessage | None = None
        chain: Callable[[ModelRequest[Any]], tuple[ModelResponse[Any], list[Command[Any]]]] = self._innermost
        for mw in reversed(self.wrap_model):
            chain = _compose_model(mw, chain)
        self._model_chain = chain
        self._invalid_calls = any(isinstance(m, AIMessage) and m.invalid_tool_calls for m in thread.messages)

        leading = list(itertools.takewhile(lambda m: isinstance(m, SystemMessage), thread.messages))
        self.body_start = len(leading)
        prompt = thread.system_prompt
        if prompt is None and leading:
            prompt = "\n\n".join(str(m.content) for m in leading)
        self.system = SystemMessage(content=prompt, id="system") if prompt else None
        self.state: dict[str, Any] = {"messages": []}
        self._index: dict[str | None, int] = {}
        # A thread that records its own write_todos calls builds the list as it goes; seeding it
        # with the final list would make the todo reminder fire before any call was made.
        if thread.todos and not any(tc.get("name") == "write_todos" for tc in thread.tool_calls()):
            self.state["todos"] = list(thread.todos)

    # -- state updates --------------------------------------------------------------------
    def append(self, m: BaseMessage) -> None:
        """`apply({"messages": [m]})` for one message (the common case: a tool result, a human turn)."""
        index = self._index
        if isinstance(m, RemoveMessage) or m.id is None or m.id in index:
            self.apply({"messages": [m]})
            return
        current = self.state["messages"]
        index[m.id] = len(current)
        current.append(m)

    def apply(self, update: dict[str, Any] | None) -> None:
        if not update:
            return
        for key, value in update.items():
            if key == "messages":
                new = list(value)
                if any(isinstance(m, RemoveMessage) or m.id is None for m in new):
                    self.state["messages"] = add_messages(self.state["messages"], new)
                    self._index = {m.id: i for i, m in enumerate(self.state["messages"])}
                    continue
                # add_messages' semantics without its O(state) cost per update: a known id is
                # replaced in place, a new one appended (ids are tracked incrementally)
                current, index = self.state["messages"], self._index
                if any(m.id in index for m in new):
                    # earlier steps' snapshots share this list: replace in a copy
                    current = self.state["messages"] = list(current)
                for m in new:
                    pos = index.get(m.id)
                    if pos is None:
                        index[m.id] = len(current)
                        current.append(m)
                    else:
                        current[pos] = m
            elif key != "jump_to":
                self.state[key] = value

    def apply_command(self, cmd: Command[Any]) -> None:
        update = cmd.update
        if isinstance(update, dict):
            self.apply(update)
        elif isinstance(update, (list, tuple)):
            for k, v in update:
                self.apply({k: v})

    # -- hooks ----------------------------------------------------------------------------
    def run_hooks(self, hooks: list[AgentMiddleware], name: str) -> None:
        for mw in hooks:
            self.apply(getattr(mw, name)(self.state, self.runtime))

    def _innermost(self, request: ModelRequest[Any]) -> tuple[ModelResponse[Any], list[Command[Any]]]:
        """The model: records the request it got and answers with the thread's recorded message."""
        self._seen.append(request)
        assert self._recorded is not None  # set by model_call before the chain runs
        return ModelResponse(result=[self._recorded]), []

    def model_call(self, recorded: AIMessage) -> tuple[ModelRequest[Any], list[BaseMessage]]:
        """Run the wrap_model_call chain; apply the response, then layers' commands (inner first).

        Mirrors create_agent's composition: each layer's handler returns a plain ModelResponse,
        and commands from ExtendedModelResponse results accumulate inner-first, then outer.
        """
        seen = self._seen = []
        self._recorded = recorded
        # create_agent's model node answers open invalid calls in the request, and persists that
        # history with the response (the state seen by this call's layers is the unrepaired one)
        # (only a thread that recorded an invalid call can have one: layers never make them, and the
        # scan is O(state) per step)
        repaired = repair_invalid_calls(self.state["messages"]) if self._invalid_calls else None
        # like create_agent, the request carries the state's own list (layers override, never mutate)
        # the driver's state is a plain dict shaped like AgentState
        request = ModelRequest(model=self.model,
                               messages=cast(list[Any], repaired) if repaired is not None else self.state["messages"],
                               system_message=self.system,
                               tools=list(self.thread.tools), state=cast(AgentState[Any], self.state),
                               runtime=self.runtime)
        response, commands = self._model_chain(request)
        messages = list(response.result)
        if repaired is not None:
            self.state["messages"] = list(repaired)  # a copy: the request's list is this step's view
            self._index = {m.id: i for i, m in enumerate(self.state["messages"])}
        self.apply({"messages": messages})
        for cmd in commands:
            self.apply_command(cmd)
        if not seen:  # a layer answered without calling the model; keep the state's view
            seen.append(request)
        return seen[-1], messages

    def tool_call(self, ai: AIMessage, call: dict[str, Any], recorded: ToolMessage) -> None:
        if not self.wrap_tool:  # no layer wraps tool calls: the recorded result is what the tool returns
            self.append(recorded)
            return

        def innermost(request: ToolCallRequest) -> ToolMessage | Command[Any]:
            return recorded

        handler: Callable[[ToolCallRequest], Any] = innermost
        for mw in reversed(self.wrap_tool):
            handler = _bind_tool(mw, handler)
        request = ToolCallRequest(tool_call=call, tool=None, state=self.state, runtime=None)  # type: ignore[arg-type]
        result = handler(request)
        if isinstance(result, Command):
            self.apply_command(result)
        else:
            self.apply({"messages": [result]})

    # -- tokens ---------------------------------------------------------------------------
    def tools_tokens(self, tools: Sequence[Any]) -> int:
        return self._tools_entry(tools)[1]

    def tool_names(self, tools: Sequence[Any]) -> tuple[str, ...]:
        return self._tools_entry(tools)[2]

    def _tools_entry(self, tools: Sequence[Any]) -> tuple[tuple[Any, ...], int, tuple[str, ...]]:
        """(the tools, their tokens, their names), computed once per distinct set of tool objects.

        The entry keeps the tools alive, so their ids cannot be reused by other objects.
        """
        key = tuple(map(id, tools))
        hit = self._tools_cache.get(key)
        if hit is None:
            if len(self._tools_cache) >= 256:  # a layer making new tool objects every step
                self._tools_cache.clear()
            hit = self._tools_cache[key] = (tuple(tools), self.counter.count_tools(list(tools)) if tools else 0,
                                            tuple(_tool_name(t) for t in tools))
        return hit

    def system_breakdown(self, system: SystemMessage | None) -> dict[str, int]:
        if system is None:
            return {}
        hit = self._system_cache.get(id(system))
        if hit is not None and hit[0] is system:
            return hit[1]
        parts = system.additional_kwargs.get(PARTS_KEY)
        total = self.counter.count_message(system)
        if parts:
            out: dict[str, int] = {}
            for p in parts:
                cat = p.get("category", "system")
                out[cat] = out.get(cat, 0) + self.counter.count_text(str(p.get("text", "")))
            # framing and separators stay "system", so parts always add up to the message's count
            out["system"] = out.get("system", 0) + max(0, total - sum(out.values()))
        else:
            out = {"system": total}
        self._system_cache[id(system)] = (system, out)
        return out

    def breakdown(self, messages: Sequence[BaseMessage], system: SystemMessage | None, tools: Sequence[Any]) -> dict[str, int]:
        totals = dict(self.system_breakdown(system))
        if self.unrecorded_prompt > 0:
            totals[UNRECORDED_PROMPT] = self.unrecorded_prompt
        tool_tokens = self.tools_tokens(tools)
        if tool_tokens:
            totals["tools"] = totals.get("tools", 0) + tool_tokens
        if self.unrecorded_prompt < 0:
            # the provider billed less for the prompt and tools than we count: take it off our count
            over = -self.unrecorded_prompt
            for cat in ("tools", "system"):
                cut = min(over, totals.get(cat, 0))
                if cut:
                    totals[cat] -= cut
                    over -= cut
        for cat, n in self._view_sums.breakdown(messages).items():
            totals[cat] = totals.get(cat, 0) + n
        return totals

    # -- the loop -------------------------------------------------------------------------
    def run(self) -> tuple[list[StepRecord], tuple[BaseMessage, ...]]:
        thread = self.thread
        msgs = thread.messages
        count = self.counter.count_message
        base_raw = (self.tools_tokens(thread.tools) + (count(self.system) if self.system else 0)
                    + self.unrecorded_prompt)
        prefix = 0  # raw tokens of the thread body before the current message
        steps: list[StepRecord] = []
        in_invocation = False
        pending: dict[str, tuple[AIMessage, dict[str, Any]]] = {}
        answered = {m.tool_call_id for m in msgs if isinstance(m, ToolMessage)}
        step = 0
        events_mark = 0
        self.recorder.step = 0
        for i in range(self.body_start, len(msgs)):
            m = msgs[i]
            if isinstance(m, AIMessage):
                if not in_invocation:
                    self.run_hooks(self.before_agent, "before_agent")
                    in_invocation = True
                self.recorder.step = step
                self.run_hooks(self.before_model, "before_model")
                state_msgs = Snapshot(self.state["messages"])
                request, result = self.model_call(m)
                # request.messages is list[AnyMessage]; Snapshot only reads it
                view: Snapshot = (Snapshot(cast(list[BaseMessage], request.messages), len(state_msgs))
                                  if request.messages is state_msgs.src
                                  else self._views.add(request.messages))
                if self.provider is not None:
                    sent = self.provider.provider_view(view, keep_all=False)
                    view = view if sent is view else self._views.add(sent)
                ai = next((r for r in result if isinstance(r, AIMessage)), m)
                self.run_hooks(self.after_model, "after_model")
                # after_model may replace the AI message by id (e.g. the sub-agent clamp)
                ai = next((x for x in reversed(self.state["messages"]) if x.id == ai.id), ai)
                pending = {cid: (ai, cast(dict[str, Any], tc)) for tc in ai.tool_calls if (cid := tc.get("id"))}
                usage = thread.usage.get(m.id or "")
                # events since the previous step: tool results and turn boundaries belong to this call
                step_events = self.recorder.events[events_mark:]
                events_mark = len(self.recorder.events)
                steps.append(StepRecord(
                    index=step,
                    message_index=i,
                    message_id=m.id or f"step-{step}",
                    state=state_msgs,
                    view=view,
                    system=request.system_message,
                    tool_names=self.tool_names(request.tools),
                    state_tokens=0,
                    view_tokens=0,
                    raw_tokens=base_raw + prefix,
                    view_by_category=self.breakdown(view, request.system_message, request.tools),
                    state_by_category=self._state_sums.breakdown(state_msgs),
                    response=ai,
                    recorded_input_tokens=usage.context_tokens if usage else None,
                    events=list(step_events),
                ))
                rec = steps[-1]
                rec.view_tokens = sum(rec.view_by_category.values())
                rec.state_tokens = sum(rec.state_by_category.values())
                step += 1
                # what happens before the next model call (tool results, a new turn) is that call's
                self.recorder.step = step
                if not ai.tool_calls:
                    self.run_hooks(self.after_agent, "after_agent")
                    in_invocation = False
            elif isinstance(m, ToolMessage):
                match = pending.pop(m.tool_call_id, None)
                if match is not None:
                    self.tool_call(match[0], match[1], m)
                elif not _was_dropped(m, steps):
                    self.append(m)  # an orphan result: kept, as the source recorded it
            else:
                # a human turn ends the invocation, unless it arrives while calls still wait for results
                # that come later (a call that never gets one was interrupted: the run had stopped)
                if (isinstance(m, HumanMessage) and message_kind(m) == "original" and in_invocation
                        and not (pending.keys() & answered)):
                    self.run_hooks(self.after_agent, "after_agent")
                    in_invocation = False
                self.append(m)
            prefix += count(m)
        if in_invocation:
            self.run_hooks(self.after_agent, "after_agent")
        # events after the last model call are attached to the last step
        if steps:
            tail = [e for e in self.recorder.events if e.step >= len(steps)]
            steps[-1].events.extend(tail)
        return steps, tuple(self.state["messages"])


def repair_invalid_calls(messages: Sequence[BaseMessage]) -> list[BaseMessage] | None:
    """LangChain 1.5's `create_agent` model node (`_patch_invalid_tool_calls`): an unanswered invalid tool
    call gets `"Tool call {name} with id {id} could not be executed - arguments were malformed or
    truncated."` right after its AI message, in the request and the state; None when nothing is open."""
    if not any(isinstance(m, AIMessage) and m.invalid_tool_calls for m in messages):
        return None
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    out: list[BaseMessage] = []
    for m in messages:
        out.append(m)
        if not isinstance(m, AIMessage):
            continue
        for call in m.invalid_tool_calls:
            call_id = call.get("id")
            if call_id is None or call_id in answered:
                continue
            name = call.get("name") or "unknown"
            out.append(ToolMessage(f"Tool call {name} with id {call_id} could not be executed - arguments were "
                                   "malformed or truncated.", name=name, tool_call_id=call_id, status="error",
                                   id=f"invalid-{call_id}"))
            answered.add(call_id)
    return out if len(out) != len(messages) else None


def _was_dropped(m: ToolMessage, steps: list[StepRecord]) -> bool:
    """A result for a call that the last response no longer has (clamped away by a layer)."""
    if not steps or steps[-1].response is None:
        return False
    last = steps[-1].response
    original_ids = {tc.get("id") for tc in (last.response_metadata.get("ctxi_dropped_calls") or [])}
    return m.tool_call_id in original_ids


def _normalize_model_result(result: Any) -> tuple[ModelResponse[Any], list[Command[Any]]]:
    if isinstance(result, ExtendedModelResponse):
        return result.model_response, [result.command] if result.command is not None else []
    if isinstance(result, AIMessage):
        return ModelResponse(result=[result]), []
    return result, []


def _compose_model(mw: AgentMiddleware, inner: Callable[..., Any]) -> Callable[..., Any]:
    def composed(request: ModelRequest[Any]) -> tuple[ModelResponse[Any], list[Command[Any]]]:
        accumulated: list[Command[Any]] = []

        def inner_handler(req: ModelRequest[Any]) -> ModelResponse[Any]:
            accumulated.clear()  # a retrying layer calls the handler again
            response, commands = inner(req)
            accumulated.extend(commands)
            return response

        response, own = _normalize_model_result(mw.wrap_model_call(request, inner_handler))
        return response, [*accumulated, *own]

    return composed


def _bind_tool(mw: AgentMiddleware, handler: Callable[..., Any]) -> Callable[..., Any]:
    return lambda request: mw.wrap_tool_call(request, handler)


def _tool_name(tool: Any) -> str:
    if isinstance(tool, dict):
        fn = tool.get("function")
        return str((fn or tool).get("name", "")) if isinstance(fn or tool, dict) else ""
    return str(getattr(tool, "name", ""))


def replay(
    thread: Thread,
    config: EngineConfig | None = None,
    *,
    token_counter: TokenCounter | None = None,
    summarizer: Any = None,
    layers: Sequence[AgentMiddleware] | None = None,
    workspace: Any = None,
) -> Run:
    """Replay `thread` through the layers `config` describes; same inputs give an identical Run."""
    config = config or preset(DEFAULT_PRESET)
    base_counter = token_counter or counter_for_thread(thread, config.tokens.counter)
    # count every recorded message up front in one batch (all cores) instead of one by one
    prime_thread(base_counter, thread)
    calibration = thread_calibration(thread, base_counter) if config.tokens.calibrate else None
    counter: TokenCounter = CalibratedCounter(base_counter, calibration) if calibration else base_counter
    window = config.window_tokens(thread.max_input_tokens)
    vfs = VirtualFilesystem()
    context = LayerContext(counter=counter, vfs=vfs, window_tokens=window, thread=thread,
                           summarizer=summarizer, workspace=workspace, calibration=calibration)
    # middleware that is not one of our layers (the user's own) is observed: its effect becomes events
    mws = [observe(m, context) for m in layers] if layers is not None else build_layers(config, context)
    thinking = config.model.thinking
    strips = (not keeps_all_thinking(thread.model)) if thinking == "auto" else thinking == "last_turn"
    provider = recorded_history(thread) if strips else None
    # The cyclic GC would re-scan the whole thread (every message, every count) on each full
    # collection, which makes long replays superlinear; nothing here needs it (no cycles are
    # built), so it is paused for the replay and restored after.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        with recording() as recorder:
            if layers is None:  # settings that defeat themselves are part of the run's record (step 0)
                for warning in setting_warnings(config, window):
                    emit(warning.layer, SETTINGS_WARNING, severity="warning", message=warning.message,
                         key=warning.key)
            driver = _Driver(thread, mws, counter, window, recorder,
                             unrecorded_prompt_tokens=calibration.prompt_tokens if calibration else 0,
                             provider=provider)
            steps, final_state = driver.run()
    finally:
        if gc_was_enabled:
            gc.enable()
    summarizers = [sm for m in mws if getattr(m, "layer", None) in ("summarization", "compaction")
                   and (sm := getattr(m, "summarizer", None)) is not None]
    return Run(
        thread=thread,
        config=config,
        counter=counter,
        window_tokens=window,
        steps=steps,
        files=vfs,
        final_state=final_state,
        layer_names=tuple(getattr(m, "layer", type(m).__name__) for m in mws),
        summarizer_name=", ".join(dict.fromkeys(getattr(sm, "name", "offline") for sm in summarizers)) or "none",
        summarizer_calls=sum(getattr(sm, "calls", 0) for sm in summarizers),
        summarizer_input_tokens=sum(getattr(sm, "input_tokens", 0) for sm in summarizers),
        calibration=calibration,
    )
