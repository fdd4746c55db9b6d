"""The `recorded` layer: the source agent's own compactions and context edits, replayed as recorded.

At the model call a recorded compaction or edit first applies to, `before_model` rewrites the
state the way the agent did (engine.recorded.history): a compaction replaces the history before its
`index` by its replacement (the summary plus what the agent kept); an edit sends the listed old
tool results as their placeholder. The messages it puts in are the RecordedHistory's own objects,
so the calibrated counts (engine.recorded.calibration) apply to them exactly. Events: `compaction` and
`edit`, with the recorded trigger, pre/post tokens and the summary.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, ClassVar

from langchain_core.messages import BaseMessage, RemoveMessage, ToolMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.prebuilt.tool_node import ToolCallRequest

from engine.config.schema import EngineConfig
from engine.layers.base import ContextLayer, LayerContext
from engine.recorded.history import RecordedHistory, recorded_history
from engine.thread.model import RecordedCompaction, RecordedEdit, Thread


class RecordedLayer(ContextLayer):
    """Replays a thread's recorded compactions and edits at the steps they happened."""

    layer = "recorded"
    # how a checkpoint keeps each run-time attribute (engine/layers/checkpoint.py)
    checkpoint_kinds: ClassVar[dict[str, str]] = {"_next": "value"}

    def __init__(self, context: LayerContext | None = None, *, compactions: bool = True, edits: bool = True) -> None:
        super().__init__(context)
        self.include_compactions, self.include_edits = compactions, edits
        thread = self.context.thread or Thread(thread_id="none", messages=[])
        self.history: RecordedHistory = recorded_history(thread)
        self._position = {id(m): i for i, m in enumerate(thread.messages)}
        self._position_by_id = {m.id: i for i, m in enumerate(thread.messages) if m.id}
        self._events: list[tuple[int, RecordedCompaction | RecordedEdit]] = sorted(
            [*((c.index, c) for c in thread.compactions if compactions),
             *((e.index, e) for e in thread.edits if edits)],
            key=lambda pair: (pair[0], isinstance(pair[1], RecordedEdit)))
        self._next = 0

    @classmethod
    def from_config(cls, config: EngineConfig, context: LayerContext) -> RecordedLayer:
        thread = context.thread
        kind = cls if thread is None or not recorded_history(thread).cuts_outputs else CodexRecordedLayer
        return kind(context, compactions=config.recorded.compactions, edits=config.recorded.edits)

    def thread_grew(self, thread: Thread, old_length: int) -> bool:
        """The new messages' positions, and the compactions and edits recorded among them (after the others)."""
        known = {id(r) for _, r in self._events}
        records: list[RecordedCompaction | RecordedEdit] = [
            *(c for c in thread.compactions if self.include_compactions),
            *(e for e in thread.edits if self.include_edits)]
        new = [(r.index, r) for r in records if id(r) not in known]
        if any(index < old_length for index, _ in new):
            return False
        self.history = recorded_history(thread)
        for i in range(old_length, len(thread.messages)):
            m = thread.messages[i]
            self._position[id(m)] = i
            if m.id:
                self._position_by_id[m.id] = i
        self._events.extend(sorted(new, key=lambda pair: (pair[0], isinstance(pair[1], RecordedEdit))))
        return True

    def _index_of(self, message: BaseMessage) -> int | None:
        at = self._position.get(id(message))
        return at if at is not None else self._position_by_id.get(message.id or "")

    def _upcoming(self, messages: Sequence[BaseMessage]) -> int:
        """The thread position of the model call about to be made: after the last thread message held."""
        for m in reversed(messages):
            at = self._index_of(m)
            if at is not None:
                return at + 1
        return 0

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        if self._next >= len(self._events):
            return None
        messages: list[BaseMessage] = list(state["messages"])
        upcoming = self._upcoming(messages)
        changed = False
        while self._next < len(self._events) and self._events[self._next][0] <= upcoming:
            _, record = self._events[self._next]
            self._next += 1
            before = self.counter(messages)
            if isinstance(record, RecordedCompaction):
                kept = [m for m in messages if (self._index_of(m) or 0) >= record.index]
                removed = [m.id for m in messages if (self._index_of(m) or 0) < record.index]
                messages = [*self.history.replacement(record), *kept]
                self.emit("compaction", tokens_before=before, tokens_after=self.counter(messages),
                          message=f"recorded compaction ({record.trigger or 'trigger not recorded'})",
                          recorded=True, trigger=record.trigger, pre_tokens=record.pre_tokens,
                          post_tokens=record.post_tokens, compaction_kind=record.kind, source=record.source,
                          summary=record.summary, removed_ids=removed, kept_ids=[m.id for m in kept],
                          message_index=record.index)
            else:
                edited = [self.history.apply_edit(record, m) for m in messages]
                cleared = [m.id for m, e in zip(messages, edited, strict=True) if e is not m]
                messages = edited
                self.emit("edit", tokens_before=before, tokens_after=self.counter(messages),
                          message=f"recorded {record.kind.replace('_', ' ')} ({len(cleared)} cleared)",
                          recorded=True, edit_kind=record.kind, trigger=record.trigger,
                          pre_tokens=record.pre_tokens, recorded_tokens_saved=record.tokens_saved,
                          source=record.source, cleared_ids=cleared, message_index=record.index)
            changed = True
        if not changed:
            return None
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *messages]}


class CodexRecordedLayer(RecordedLayer):
    """The recorded layer of a Codex rollout: each tool output enters the history the way Codex recorded it
    into what it sent, cut to its truncation policy (engine.recorded.codex_rules); the same copy the
    calibration measured (RecordedHistory.sent). Only Codex threads pay for a tool-call hook."""

    def _sent(self, result: Any) -> Any:
        return self.history.sent(result) if isinstance(result, ToolMessage) else result

    def wrap_tool_call(self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]) -> Any:
        return self._sent(handler(request))

    async def awrap_tool_call(self, request: ToolCallRequest,
                              handler: Callable[[ToolCallRequest], Awaitable[Any]]) -> Any:
        return self._sent(await handler(request))
