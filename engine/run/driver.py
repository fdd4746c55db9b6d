"""The replay driver: one thread's messages through the layers' hooks, step by step, as create_agent runs them.

The driver calls the same middleware hooks `create_agent` would, in LangChain's order:
`before_agent` when an invocation starts (a human turn), `before_model` in list order, then the
`wrap_model_call` chain (first layer outermost) around a handler that records the request and
returns the thread's recorded AI message, `after_model` in reverse order, then each recorded
tool result through the `wrap_tool_call` chain, and `after_agent` when the invocation ends.

Its loop can stop and go on: everything it carries between two messages is on the driver
(`advance(end)` processes messages up to `end`, `finish()` closes the run), so a replay can take
`Checkpoint`s at the start of a step's window and a later replay can start from one
(engine/run/resume.py), or take the driver over when its thread grew.
"""

from __future__ import annotations

import dataclasses
import itertools
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    BaseMessageChunk,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command

from engine.layers import checkpoint as layer_state
from engine.recorded.history import RecordedHistory, has_thinking, starts_turn
from engine.run.chain import model_chain, new_request, new_tool_request, tool_chain
from engine.run.run import StepRecord
from engine.run.step_sums import Snapshot, StepSums, ViewLog
from engine.thread.decisions import DecisionLog
from engine.thread.events import EventRecorder
from engine.thread.kinds import message_kind
from engine.thread.model import Thread
from engine.tokens.counters import TokenCounter
from engine.workspace.vfs import VirtualFilesystem


class ReplayModel(GenericFakeChatModel):
    """The model object a replayed request carries: never called, but has a profile (the window)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ReplayModel:  # create_agent calls this
        return self


def replay_model(window_tokens: int) -> ReplayModel:
    return ReplayModel(messages=iter(()), profile={"max_input_tokens": window_tokens})


# A checkpoint every this many steps (plus one at the start of the last step's window): a resume replays
# at most this many steps before the one where the new config starts to matter (~6 ms at 0.1 ms a step),
# and each checkpoint costs O(1) (references and lengths: engine/layers/checkpoint.py).
CHECKPOINT_EVERY = 64


@dataclass(frozen=True)
class Checkpoint:
    """The replay at the start of step `step`'s window: every message before `index` processed.

    A step's window is what happens between the previous model call and its own: the tool results
    and human turns before it (their events carry its step), its hooks, its model call. Lists are kept
    as (list, length) of lists the replay only appends to; nothing here is changed afterwards.
    """

    index: int  # the next message of the thread
    step: int  # the steps recorded so far (the window's step)
    last_record: StepRecord | None  # the last record as it was then (a run's last record gets the tail events)
    state: dict[str, Any]  # the state's other keys (their values are replaced, never changed in place)
    messages: tuple[list[BaseMessage], int]
    index_of: tuple[dict[str | None, int], int]
    invalid_calls: bool
    in_invocation: bool
    end_due: bool  # the previous step was a final answer: its `after_agent` comes first in this window
    pending: dict[str, dict[str, Any]]
    answered: tuple[dict[str, None], int] | None
    events: tuple[list[Any], int]
    events_mark: int
    decisions: tuple[list[Any], int, int] | None  # the decision log (list, length) and its step
    warnings: int  # the run's setting warnings at the start of its events
    raw_prefix: int
    sums: dict[str, Any]
    views: dict[str, Any]
    layers: tuple[dict[str, Any], ...]
    files: int  # the virtual filesystem's journal length
    config: Any  # the config of the run that took it (a layer's memo is shared only under the same settings)


_message_id = operator.attrgetter("id")

# LangChain's concrete message classes, none a subclass of another: a message of one of these exact
# types answers isinstance against another without ABCMeta's __instancecheck__ (pydantic's model
# metaclass is an ABCMeta: a negative isinstance costs ~0.2 us, and the loop asks several per step)
_NOT_REMOVALS = frozenset({AIMessage, ToolMessage, HumanMessage, SystemMessage})


def _overrides(mw: AgentMiddleware, hook: str) -> bool:
    return getattr(type(mw), hook) is not getattr(AgentMiddleware, hook)


class Driver:
    """One replay in progress: its state, its layers' hooks, and where its loop stands."""

    def __init__(self, thread: Thread, layers: Sequence[AgentMiddleware], counter: TokenCounter,
                 window_tokens: int, recorder: EventRecorder, *, prompt_at: Callable[[int], int] | None = None,
                 provider: RecordedHistory | None = None, rule: str = "all", decisions: DecisionLog | None = None,
                 files: VirtualFilesystem | None = None, checkpoints: bool = False, seed_todos: bool = True,
                 config: Any = None) -> None:
        self.thread = thread
        self.config = config
        # The agent's own prompt and tools the transcript lacks (engine.recorded.calibration), sent every
        # call; measured again after a recorded compaction, so it is the prompt at each step.
        self.prompt_at = prompt_at or _no_prompt
        # The provider's rewrite of each request (earlier turns' thinking, by `rule`), when the model has one.
        self.provider = provider
        self.rule = rule
        self.decisions = decisions
        self.layers = list(layers)
        self.counter = counter
        self.window = window_tokens
        self.recorder = recorder
        self.runtime: Runtime[Any] = Runtime()
        self.model = replay_model(window_tokens)
        # each hook list holds the bound hooks, in the order create_agent calls them
        self.before_agent = [m.before_agent for m in self.layers if _overrides(m, "before_agent")]
        self.before_model = [m.before_model for m in self.layers if _overrides(m, "before_model")]
        self.after_model = [m.after_model for m in reversed(self.layers) if _overrides(m, "after_model")]
        # how many after_model hooks, from the first one run, belong to layers that keep nothing of the
        # state's list between calls (`keeps_state_view` False): while only those have seen the newest
        # message, a replacement of it by id is made in place (see `_replace_fresh`)
        self._blind_after_model = sum(1 for _ in itertools.takewhile(
            lambda m: getattr(m, "keeps_state_view", True) is False,
            (m for m in reversed(self.layers) if _overrides(m, "after_model"))))
        # the position of the response message model_call just appended, while nothing but the driver has
        # read the state since; None otherwise
        self._fresh: int | None = None
        self.after_agent = [m.after_agent for m in reversed(self.layers) if _overrides(m, "after_agent")]
        self.wrap_tool = [m for m in self.layers if _overrides(m, "wrap_tool_call")]
        self.sums = StepSums(counter, self.prompt_at(0))
        self._views = ViewLog()
        self._seen: list[ModelRequest[Any]] = []
        self._recorded: AIMessage | None = None
        # a layer that says its wrap_model_call passes the request and response through unchanged
        # (`wraps_model_call` False) is left out: composing it is the identity, at a cost per call
        self._model_chain = model_chain([m for m in self.layers if _overrides(m, "wrap_model_call")
                                         and getattr(m, "wraps_model_call", True) is not False], self._innermost)
        self._tool_result: ToolMessage | None = None
        self._tool_chain = tool_chain(self.wrap_tool, self._tool_innermost)
        # set when the loop reaches the thread's first AI message with an invalid call: layers never make
        # AI messages, so no state holds one before (repair_invalid_calls would find nothing to answer)
        self._invalid_calls = False

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
        if seed_todos and thread.todos and not any(tc.get("name") == "write_todos" for tc in thread.tool_calls()):
            self.state["todos"] = list(thread.todos)

        # where the loop stands (everything it carries from one message to the next)
        self.files = files  # the layers' virtual filesystem (its journal length goes into checkpoints)
        self.steps: list[StepRecord] = []
        self.next_index = self.body_start  # the next message of the thread to process
        self.in_invocation = False
        self.end_due = False  # a final answer's `after_agent`, run at the start of the next window
        self.pending: dict[str, dict[str, Any]] = {}
        # every recorded result's call id, read when first needed: a dict only added to (a checkpoint keeps
        # its length; a grown thread's new results are added)
        self.answered: dict[str, None] | None = None
        self.events_mark = 0
        self.warnings = len(recorder.events)  # the setting warnings emitted before the loop
        count = counter.count_message
        self.base_raw = self.sums.tools_entry(thread.tools)[1] + (count(self.system) if self.system else 0)
        # raw tokens of the thread body before `next_index` (the recorded messages: layers never change
        # them in place), summed as the loop goes
        self.raw_prefix = 0
        self.checkpoints: list[Checkpoint] | None = [] if checkpoints else None
        self._last_window = _last_window_start(thread.messages)
        self._restored_at = -1  # the message a restored replay starts at (it has a checkpoint there already)
        self.open_record: StepRecord | None = None  # the last record before `finish` added the tail events

    # -- state updates --------------------------------------------------------------------
    def append(self, m: BaseMessage) -> None:
        """`apply({"messages": [m]})` for one message (the common case: a tool result, a human turn)."""
        index = self._index
        message_id = m.id
        if message_id is None or message_id in index or (type(m) not in _NOT_REMOVALS and isinstance(m, RemoveMessage)):
            self.apply({"messages": [m]})
            return
        current = self.state["messages"]
        index[message_id] = len(current)
        current.append(m)

    def apply(self, update: dict[str, Any] | None) -> None:
        if not update:
            return
        for key, value in update.items():
            if key == "messages":
                new = list(value)
                if any(isinstance(m, RemoveMessage) or m.id is None for m in new):
                    kept = replaced_history(self.state["messages"], new)
                    self.state["messages"] = kept if kept is not None else add_messages(self.state["messages"], new)
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
    def run_hooks(self, hooks: list[Callable[..., Any]]) -> None:
        for hook in hooks:
            update = hook(self.state, self.runtime)
            if update:
                self.apply(update)

    def run_after_model(self) -> None:
        """`run_hooks(self.after_model)`, replacing the response in place while only blind hooks saw it."""
        fresh, self._fresh = self._fresh, None
        blind = self._blind_after_model
        for k, hook in enumerate(self.after_model):
            update = hook(self.state, self.runtime)
            if not update:
                continue
            if fresh is not None and k < blind and self._replace_fresh(update, fresh):
                continue
            fresh = None  # the state changed some other way: later updates go through apply
            self.apply(update)

    def _replace_fresh(self, update: dict[str, Any], pos: int) -> bool:
        """`apply(update)` without forking the state, for `{"messages": [m]}` replacing the message at
        `pos`, the one model_call just appended. Forking (`apply`) keeps earlier snapshots intact, but
        costs a copy of the whole state, and every layer's incremental scan then re-compares the new
        list with the one it saw (O(state), a few dozen times per thousand steps in a clamping run).
        Replacing in place is the same state: no snapshot reaches `pos` (each step's is taken before
        its model call), no layer's scan has seen it (only the blind hooks ran since it was appended),
        and the id index does not change."""
        if len(update) != 1:
            return False
        new = update.get("messages")
        if not isinstance(new, (list, tuple)) or len(new) != 1:
            return False
        m = new[0]
        current = self.state["messages"]
        if (isinstance(m, RemoveMessage) or m.id is None or pos != len(current) - 1
                or current[pos].id != m.id or self._index.get(m.id) != pos):
            return False
        current[pos] = m
        return True

    def _innermost(self, request: ModelRequest[Any]) -> tuple[ModelResponse[Any], list[Command[Any]]]:
        """The model: records the request it got and answers with the thread's recorded message."""
        self._seen.append(request)
        assert self._recorded is not None  # set by model_call before the chain runs
        return ModelResponse([self._recorded]), []  # result=

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
        request = new_request(self.model, repaired if repaired is not None else self.state["messages"],
                              self.system, list(self.thread.tools), self.state, self.runtime)
        response, commands = self._model_chain(request)
        messages = list(response.result)
        if repaired is not None:
            self.state["messages"] = list(repaired)  # a copy: the request's list is this step's view
            self._index = {m.id: i for i, m in enumerate(self.state["messages"])}
        self._fresh = None
        if len(messages) == 1:
            self.append(messages[0])
            current = self.state["messages"]
            if not commands and current and current[-1] is messages[0]:
                self._fresh = len(current) - 1
        else:
            self.apply({"messages": messages})
        for cmd in commands:
            self.apply_command(cmd)
        if not seen:  # a layer answered without calling the model; keep the state's view
            seen.append(request)
        return seen[-1], messages

    def _tool_innermost(self, request: ToolCallRequest) -> ToolMessage | Command[Any]:
        assert self._tool_result is not None  # set by tool_call before the chain runs
        return self._tool_result

    def tool_call(self, call: dict[str, Any], recorded: ToolMessage) -> None:
        if not self.wrap_tool:  # no layer wraps tool calls: the recorded result is what the tool returns
            self.append(recorded)
            return
        self._tool_result = recorded
        result = self._tool_chain(new_tool_request(call, self.state))
        if isinstance(result, Command):
            self.apply_command(result)
        else:
            self.append(result)

    # -- the loop -------------------------------------------------------------------------
    def run(self) -> tuple[list[StepRecord], Snapshot]:
        """Every message of the thread, then the end of the run: (steps, final state)."""
        self.advance(len(self.thread.messages))
        return self.finish()

    def advance(self, end: int) -> None:
        """Process the thread's messages from `next_index` up to `end` (not included)."""
        msgs = self.thread.messages
        count = self.counter.count_message
        sums = self.sums
        steps = self.steps
        in_invocation = self.in_invocation
        pending = self.pending
        step = len(steps)
        recorder = self.recorder
        events = recorder.events
        events_mark = self.events_mark
        usages = self.thread.usage
        raw = self.raw_prefix
        end_due = self.end_due
        checkpoints = self.checkpoints
        last_window = self._last_window
        recorder.step = step
        prompt_at, decisions = self.prompt_at, self.decisions
        for i in range(self.next_index, end):
            # a checkpoint where a step's window opens (right after the previous step's AI message)
            if (checkpoints is not None and step and (step % CHECKPOINT_EVERY == 0 or i == last_window)
                    and steps[-1].message_index == i - 1 and i != self._restored_at):
                self.next_index, self.in_invocation, self.end_due, self.pending, self.events_mark, self.raw_prefix = \
                    i, in_invocation, end_due, pending, events_mark, raw
                checkpoints.append(self.checkpoint())
            if end_due:  # the previous step was a final answer: its invocation ends here
                end_due = False
                self.run_hooks(self.after_agent)
                in_invocation = False
            # Any: the branches below test the exact type first, which mypy does not narrow on
            m: Any = msgs[i]
            kind = type(m)
            if kind is AIMessage or (kind is not ToolMessage and isinstance(m, AIMessage)):
                if not in_invocation:
                    self.run_hooks(self.before_agent)
                    in_invocation = True
                if m.invalid_tool_calls:
                    self._invalid_calls = True
                recorder.step = step
                prompt = sums.agent_prompt = prompt_at(step)
                if decisions is not None:
                    decisions.step = step
                if self.before_model:
                    self.run_hooks(self.before_model)
                state_msgs = Snapshot(self.state["messages"])
                request, result = self.model_call(m)
                # request.messages is list[AnyMessage]; Snapshot only reads it (no cast() call per step)
                sent: list[BaseMessage] = request.messages  # type: ignore[assignment]
                view = Snapshot(sent, state_msgs.n) if sent is state_msgs.src else self._views.add(sent)
                if self.provider is not None:
                    rewritten = self.provider.provider_view(view, rule=self.rule)
                    view = view if rewritten is view else self._views.add(rewritten)
                ai = m
                for r in result:
                    if isinstance(r, AIMessage):
                        ai = r
                        break
                if self.after_model:
                    self.run_after_model()
                # after_model may replace the AI message by id (e.g. the sub-agent clamp)
                current = self.state["messages"]
                last = current[-1] if current else None
                if last is not ai:  # the response itself, still last: nothing replaced it
                    if last is not None and last.id == ai.id:
                        ai = last
                    else:
                        ai = next((x for x in reversed(current) if x.id == ai.id), ai)
                pending = {cid: tc for tc in ai.tool_calls if (cid := tc.get("id"))}  # type: ignore[misc]
                message_id = m.id
                usage = usages.get(message_id or "")
                # events since the previous step: tool results and turn boundaries belong to this call
                step_events = events[events_mark:]
                events_mark = len(events)
                system = request.system_message
                entry = sums.tools_entry(request.tools)
                view_by, state_by, view_tokens, state_tokens = sums.step(view, state_msgs, system, entry)
                # positional, in StepRecord's field order: keywords cost ~0.5 us more per step
                steps.append(StepRecord(
                    step,  # index
                    i,  # message_index
                    message_id or f"step-{step}",  # message_id
                    state_msgs,  # state
                    view,  # view
                    system,  # system
                    entry[2],  # tool_names
                    state_tokens,  # state_tokens
                    view_tokens,  # view_tokens
                    self.base_raw + prompt + raw,  # raw_tokens
                    view_by,  # view_by_category
                    state_by,  # state_by_category
                    ai,  # response
                    usage.context_tokens if usage else None,  # recorded_input_tokens
                    step_events,  # events
                    entry[0],  # tools
                ))
                step += 1
                # what happens before the next model call (tool results, a new turn) is that call's
                recorder.step = step
                # a final answer ends the invocation: its after_agent runs first thing in the next window
                # (nothing happens in between: the same order of calls)
                end_due = not ai.tool_calls
            elif kind is ToolMessage or isinstance(m, ToolMessage):
                call = pending.pop(m.tool_call_id, None)
                if call is not None:
                    self.tool_call(call, m)
                elif not _was_dropped(m, steps):
                    self.append(m)  # an orphan result: kept, as the source recorded it
            else:
                # a human turn ends the invocation, unless it arrives while calls still wait for results
                # that come later (a call that never gets one was interrupted: the run had stopped)
                if isinstance(m, HumanMessage) and in_invocation and message_kind(m) == "original":
                    if pending and self.answered is None:
                        self.answered = dict.fromkeys(t.tool_call_id for t in msgs if isinstance(t, ToolMessage))
                    if not (pending and pending.keys() & self.answered.keys()):  # type: ignore[union-attr]
                        self.run_hooks(self.after_agent)
                        in_invocation = False
                self.append(m)
            raw += count(m) if self.provider is None else _raw_cost(self.provider, self.rule, msgs, i, count)
        self.next_index = max(self.next_index, end)
        self.in_invocation, self.end_due, self.pending, self.events_mark, self.raw_prefix = \
            in_invocation, end_due, pending, events_mark, raw

    def finish(self) -> tuple[list[StepRecord], Snapshot]:
        """The end of the run: the last invocation's `after_agent`, and events after the last model call
        attached to the last step (a new record: the one before may be shared with a checkpoint).

        The loop's own state is left as it was, so `take_over` can go on from here when every
        `after_agent` hook is pure (changes nothing): a followed session's next lines."""
        if self.end_due or self.in_invocation:
            self.run_hooks(self.after_agent)
        steps = self.steps
        self.open_record = steps[-1] if steps else None
        if steps:
            tail = self.recorder.events[self.events_mark:]  # emitted after the last model call (its step on)
            if tail:
                steps[-1] = dataclasses.replace(steps[-1], events=[*steps[-1].events, *tail])
        # the state's list as it ends (it is only appended to, or replaced whole, if the run goes on)
        return steps, Snapshot(self.state["messages"])

    @property
    def resumable_end(self) -> bool:
        """Whether the end of the run changed nothing a continuation reads (every `after_agent` it ran is
        pure): the driver can then take more messages of its thread (`take_over`)."""
        return not (self.end_due or self.in_invocation) or all(
            getattr(m, "pure_after_agent", False) for m in self.layers if _overrides(m, "after_agent"))

    def take_over(self, thread: Thread, steps: list[StepRecord], files: VirtualFilesystem,
                  provider: RecordedHistory | None) -> bool:
        """Go on with `thread`, this run's thread grown (its first messages the same objects): the records
        so far (a copy of the finished run's, its last one without the tail events) and a filesystem of
        this run's own (the finished Run keeps its). False when a layer cannot follow the thread."""
        old_length = len(self.thread.messages)
        if self.answered is not None:  # every result's call id, read at a human turn before the end
            new = thread.messages[old_length:]
            results = {m.tool_call_id for m in new if isinstance(m, ToolMessage)}
            made = {tc.get("id") for m in new if isinstance(m, AIMessage) for tc in m.tool_calls}
            if (results - made) - self.answered.keys():
                return False  # a result for an earlier call: a turn read before may have ended otherwise
            self.answered.update(dict.fromkeys(results))  # what reading the grown thread gives
        context = getattr(self.layers[0], "context", None) if self.layers else None
        if context is not None:
            context.thread, context.vfs, context.provider = thread, files, provider
        if not all(m.grown_from(old_length) for m in self.layers if hasattr(m, "grown_from")):
            return False
        if not all(m.thread_grew(thread, old_length) for m in self.layers if hasattr(m, "thread_grew")):
            return False
        self.thread, self.files, self.provider, self.steps = thread, files, provider, steps
        if self.open_record is not None:
            steps[-1] = self.open_record
        self._last_window = _last_window_start(thread.messages)
        self._restored_at = -1
        return True

    # -- checkpoints ------------------------------------------------------------------------
    def checkpoint(self) -> Checkpoint:
        """The replay as it stands between two messages, kept in O(1) (engine/layers/checkpoint.py)."""
        layer_state.next_checkpoint_epoch()  # lists held from here on are copied before a write below their end
        state = self.state
        messages = state["messages"]
        events = self.recorder.events
        return Checkpoint(
            index=self.next_index, step=len(self.steps), last_record=self.steps[-1] if self.steps else None,
            state={k: v for k, v in state.items() if k != "messages"}, messages=(messages, len(messages)),
            index_of=(self._index, len(self._index)), invalid_calls=self._invalid_calls,
            in_invocation=self.in_invocation, end_due=self.end_due, pending=dict(self.pending),
            answered=(self.answered, len(self.answered)) if self.answered is not None else None,
            events=(events, len(events)), events_mark=self.events_mark,
            decisions=(log.decisions, len(log.decisions), log.step) if (log := self.decisions) is not None else None,
            warnings=self.warnings, raw_prefix=self.raw_prefix, sums=layer_state.save(self.sums),
            views=layer_state.save(self._views), layers=tuple(layer_state.save(m) for m in self.layers),
            files=(self.files.journal_length or 0) if self.files is not None else 0, config=self.config)

    def restore(self, cp: Checkpoint, steps: list[StepRecord], warnings: list[Any], *,
                same_settings: Sequence[bool]) -> None:
        """Continue from `cp` (taken by another replay of this thread): `steps` the records before it,
        `warnings` this run's setting warnings (events; the checkpoint's own ones are left out)."""
        source, n = cp.messages
        state: dict[str, Any] = dict(cp.state)
        state["messages"] = source[:n]
        self.state = state
        index, size = cp.index_of
        self._index = layer_state.kept_prefix(index, size)
        self._invalid_calls = cp.invalid_calls
        self.in_invocation, self.end_due = cp.in_invocation, cp.end_due
        self.pending = dict(cp.pending)
        self.answered = layer_state.kept_prefix(*cp.answered) if cp.answered is not None else None
        events, size = cp.events
        self.recorder.events[:] = [*warnings, *events[cp.warnings:size]]
        self.warnings = len(warnings)
        self.events_mark = cp.events_mark - cp.warnings + len(warnings)
        self.raw_prefix = cp.raw_prefix
        layer_state.restore(self.sums, cp.sums)
        layer_state.restore(self._views, cp.views)
        for layer, saved, same in zip(self.layers, cp.layers, same_settings, strict=True):
            layer_state.restore(layer, saved, same_settings=same)
        self.steps = steps
        self.next_index = self._restored_at = cp.index
        self.recorder.step = cp.step


def _no_prompt(step: int) -> int:
    return 0


def _raw_cost(provider: RecordedHistory, rule: str, messages: Sequence[BaseMessage], i: int,
              count: Callable[[BaseMessage], int]) -> int:
    """What message `i` adds to the unmanaged request: the provider's thinking rule rewrites it there as in
    the view (engine.recorded.history `provider_view`), so a run whose layers remove nothing has raw = view
    and no input "not sent". `none` (Gemini): an AI message counts without its thought parts; `last_turn`:
    a message opening a turn takes the thinking of the previous turn's AI messages out."""
    m = messages[i]
    if rule == "none":
        return count(provider.stripped(m)) if has_thinking(m) else count(m)  # type: ignore[arg-type]
    cost = count(m)
    if rule == "last_turn" and starts_turn(m):
        for j in range(i - 1, -1, -1):  # back to the previous turn's start: each AI message once
            earlier = messages[j]
            if starts_turn(earlier):
                break
            if has_thinking(earlier):
                cost -= count(earlier) - count(provider.stripped(earlier))  # type: ignore[arg-type]
    return cost


def _last_window_start(messages: Sequence[BaseMessage]) -> int:
    """The index after the second-to-last AI message (where the last step's window opens), or -1."""
    seen = 0
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], AIMessage):
            seen += 1
            if seen == 2:
                return i + 1
    return -1


def _plain(messages: Sequence[Any] | set[type]) -> bool:
    """Every item a message add_messages passes on unchanged (langgraph `_coerce_to_messages`); a set
    is the items' types."""
    types = messages if isinstance(messages, set) else set(map(type, messages))
    return all(issubclass(t, BaseMessage) and not issubclass(t, BaseMessageChunk) for t in types)


def replaced_history(current: Sequence[BaseMessage], new: Sequence[Any]) -> list[BaseMessage] | None:
    """`add_messages(current, new)` for `[RemoveMessage(REMOVE_ALL_MESSAGES), *messages]` (a summary's
    update), else None: langgraph 1.x `graph/message.py::add_messages` gives an id to each message of
    either side that has none (uuid4, in place), then returns what follows the last remove-all
    marker. With every id set, no other RemoveMessage and plain messages on both sides, that is
    `new[1:]`, with no side effect, and without add_messages' passes over the whole history."""
    if not (new and isinstance(new[0], RemoveMessage) and new[0].id == REMOVE_ALL_MESSAGES):
        return None
    rest = new[1:]
    rest_types = set(map(type, rest))
    # a RemoveMessage among them, by type: every type is a real message class once _plain holds
    if not (_plain(rest_types) and _plain(current)) or any(issubclass(t, RemoveMessage) for t in rest_types) \
            or None in map(_message_id, rest) or None in map(_message_id, current):
        return None
    return list(rest)


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


