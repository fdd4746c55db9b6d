"""L4 dangling tool calls: a placeholder error result for each unanswered call, in one framework's style.

- `deerflow` (DeerFlow v2.0-m0 `DanglingToolCallMiddleware`, `wrap_model_call`, request only: via
  `before_model` the `add_messages` reducer would append the patches at the end): for every AI
  `tool_calls` entry whose id no ToolMessage anywhere answers, `ToolMessage("[Tool call was
  interrupted and did not return a result.]", name=tc.get("name", "unknown"), status="error")` right
  after that AI message (before its existing results); invalid calls are not looked at. Results
  answering no call are dropped only when `drop_orphans` (an option v2.0-m0 does not have).
- `deerflow-head` (DeerFlow HEAD f1f4af99b, request only): `engine.layers.dangling_head` — ids
  repaired, results regrouped after their AI message, invalid calls and empty names handled,
  orphan results always dropped.
- `deepagents`: `PatchToolCallsMiddleware` exactly: its texts, invalid calls included, and like it
  the layer rewrites the *state* in `before_agent` (when an invocation starts), not the request.

`patch` and `drop_orphan` events are emitted at every step where the patch applies (the same
dangling call is patched again in each later request); the dashboard groups them by tool_call_id.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, cast

from langchain.agents.middleware import ModelRequest
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, RemoveMessage, ToolMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from engine.config.schema import EngineConfig
from engine.layers.base import LayerContext, RequestLayer
from engine.layers.checkpoint import checkpoint_epoch
from engine.layers.dangling_head import head_patch
from engine.layers.request_copy import overridden
from engine.layers.scan import grown_prefix, replaced_in_prefix, unchanged_prefix
from engine.thread.kinds import mark

Style = Literal["deerflow", "deerflow-head", "deepagents"]

DEERFLOW_INTERRUPTED = "[Tool call was interrupted and did not return a result.]"
DEERFLOW_INVALID = "[Tool call could not be executed because its arguments were invalid: {error}]"
DEERFLOW_INVALID_NO_ERROR = "[Tool call could not be executed because its arguments were invalid.]"
DEEPAGENTS_INTERRUPTED = (
    "Tool call {name} with id {id} did not complete - no result was recorded. It may have been cancelled or interrupted."
)
DEEPAGENTS_INVALID = "Tool call {name} with id {id} could not be executed - arguments were malformed or truncated."
MAX_ERROR_CHARS = 500


@dataclass(frozen=True)
class Call:
    """An AI tool call the patch cares about (valid or invalid)."""

    id: str
    name: str
    invalid: bool = False
    error: str | None = None


def calls_of(message: AIMessage, *, invalid: bool = True) -> list[Call]:
    """Tool calls with ids, then (with `invalid`) invalid ones: each needs a result in the next request.

    A call is named as DeerFlow v2.0-m0 names its placeholder, `tc.get("name", "unknown")`.
    """
    out = [Call(str(tc["id"]), str(tc.get("name", "unknown"))) for tc in message.tool_calls if tc.get("id")]
    if invalid:
        for itc in message.invalid_tool_calls:
            if itc.get("id"):
                err = itc.get("error")
                out.append(Call(str(itc["id"]), str(itc.get("name") or "unknown"), True, err if isinstance(err, str) else None))
    return out


def placeholder_text(call: Call, style: Style) -> str:
    if style == "deepagents":
        return (DEEPAGENTS_INVALID if call.invalid else DEEPAGENTS_INTERRUPTED).format(name=call.name, id=call.id)
    if call.invalid:
        return DEERFLOW_INVALID.format(error=call.error[:MAX_ERROR_CHARS]) if call.error else DEERFLOW_INVALID_NO_ERROR
    return DEERFLOW_INTERRUPTED


def build_patch(call: Call, style: Style) -> ToolMessage:
    msg = ToolMessage(content=placeholder_text(call, style), tool_call_id=call.id, name=call.name,
                      status="error", id=f"patch-{call.id}")
    mark(msg, "patch")
    return msg


@dataclass(frozen=True)
class Patch:
    """Where the view differs from the messages: calls to answer (by AI position) and results to drop."""

    dangling: tuple[tuple[int, Call], ...]
    orphans: tuple[int, ...]

    def __bool__(self) -> bool:
        return bool(self.dangling or self.orphans)


def find_patch(messages: Sequence[BaseMessage], *, drop_orphans: bool = True, invalid: bool = True) -> Patch:
    """The dangling calls (with the index of their AI message) and the orphan results' indices."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    called: set[str] = set()
    dangling: list[tuple[int, Call]] = []
    for i, m in enumerate(messages):
        if isinstance(m, AIMessage):
            for c in calls_of(m, invalid=invalid):
                if c.id not in answered and c.id not in called:
                    dangling.append((i, c))
                called.add(c.id)
    orphans = tuple(i for i, m in enumerate(messages) if isinstance(m, ToolMessage) and m.tool_call_id not in called) if drop_orphans else ()
    return Patch(tuple(dangling), orphans)


def apply_patch(messages: Sequence[BaseMessage], patch: Patch, patches: dict[str, ToolMessage]) -> list[BaseMessage]:
    """The patched view: placeholders right after their AI message, orphans left out."""
    after: dict[int, list[ToolMessage]] = {}
    for i, c in patch.dangling:
        after.setdefault(i, []).append(patches[c.id])
    drop = set(patch.orphans)
    out: list[BaseMessage] = []
    for i, m in enumerate(messages):
        if i in drop:
            continue
        out.append(m)
        out.extend(after.get(i, ()))
    return out


def deepagents_patched_state(messages: Sequence[BaseMessage]) -> list[BaseMessage] | None:
    """Deep Agents' `PatchToolCallsMiddleware.before_agent`: the state with a placeholder result after
    each AI message for every call (invalid ones included) that no ToolMessage answers; None if none.

    deepagents 0.7.32, middleware/patch_tool_calls.py: answered = every ToolMessage's tool_call_id,
    a call counts when its id is not None; the placeholder is named after the call ("unknown" if empty).
    """
    answered = {m.tool_call_id for m in messages if m.type == "tool"}  # type: ignore[attr-defined]

    def open_calls(m: AIMessage) -> list[Call]:
        out = [Call(str(tc["id"]), str(tc.get("name") or "unknown")) for tc in m.tool_calls
               if tc.get("id") is not None and tc["id"] not in answered]
        out += [Call(str(tc["id"]), str(tc.get("name") or "unknown"), True, None) for tc in m.invalid_tool_calls
                if tc.get("id") is not None and tc["id"] not in answered]
        return out

    if not any(open_calls(m) for m in messages if isinstance(m, AIMessage)):
        return None
    patched: list[BaseMessage] = []
    for m in messages:
        patched.append(m)
        if isinstance(m, AIMessage):
            patched.extend(build_patch(c, "deepagents") for c in open_calls(m))
    return patched


class _OpenCallLedger:
    """Whether `deepagents_patched_state` has anything to patch, kept as the state grows: the answered ids
    seen so far and the calls among those seen that none answers yet (its own sets), so an invocation
    start costs the new messages (not a subset check over every call of the thread)."""

    # how a checkpoint keeps each run-time attribute (engine/layers/checkpoint.py); the answered ids
    # are a dict only added to (a set has no order to cut at a checkpoint's length)
    checkpoint_kinds: ClassVar[dict[str, str]] = {"_seen": "grow", "_seen_src": "reset", "_open": "copy",
                                                  "_answered": "ordered"}

    def __init__(self) -> None:
        self._seen: list[BaseMessage] = []
        self._open: set[Any] = set()
        self._answered: dict[Any, None] = {}

    def any_open(self, messages: Sequence[BaseMessage]) -> bool:
        start = grown_prefix(self, messages) or unchanged_prefix(self._seen, messages)
        if start == 0:
            self._open, self._answered = set(), {}
        is_open, answered = self._open, self._answered
        for m in messages[start:]:
            if m.type == "tool":
                answered.setdefault(m.tool_call_id)  # type: ignore[attr-defined]
                is_open.discard(m.tool_call_id)  # type: ignore[attr-defined]
            elif isinstance(m, AIMessage):
                for calls in (m.tool_calls, m.invalid_tool_calls):
                    for tc in calls:
                        if (cid := tc.get("id")) is not None and cid not in answered:
                            is_open.add(cid)
        if start == 0:
            self._seen = list(messages)
        else:
            self._seen.extend(messages[start:])
        return bool(is_open)


def _structure(message: BaseMessage) -> tuple[Any, ...]:
    """What the patch depends on: the calls an AI message makes, or the call a result answers."""
    if isinstance(message, AIMessage):
        return ("ai", tuple(calls_of(message)), tuple(calls_of(message, invalid=False)))
    if isinstance(message, ToolMessage):
        return ("tool", message.tool_call_id)
    return (message.type,)


class DanglingToolCallLayer(RequestLayer):
    """Placeholder results for unanswered tool calls, orphan results dropped; the request only."""

    layer = "dangling"
    # how a checkpoint keeps each run-time attribute (engine/layers/checkpoint.py); the call and result
    # ids seen are dicts only added to (a set has no order to cut at a checkpoint's length)
    checkpoint_kinds: ClassVar[dict[str, str]] = {
        "_patches": "memo", "_seen": "grow", "_seen_src": "reset", "_seen_epoch": "reset", "_calls": "ordered",
        "_results": "ordered", "_dangling": "copy", "_orphans": "copy", "_tokens": "value", "_cached": "reset",
        "_open": "helper"}

    def __init__(self, context: LayerContext | None = None, *, style: Style = "deerflow", drop_orphans: bool = True) -> None:
        super().__init__(context)
        self.style: Style = style
        self.drop_orphans = drop_orphans
        self._patches: dict[str, ToolMessage] = {}
        # incremental bookkeeping over an append-only message list
        self._seen: list[BaseMessage] = []
        self._seen_epoch = checkpoint_epoch()  # `_seen` is copied before a write once a checkpoint holds it
        self._calls: dict[str, None] = {}
        self._results: dict[str, None] = {}
        self._dangling: dict[str, tuple[int, Call]] = {}
        self._orphans: dict[str, list[int]] = {}
        self._tokens = 0
        self._cached: tuple[Patch, list[BaseMessage]] | None = None  # patch and its patched prefix
        self._open = _OpenCallLedger()  # the deepagents style's check at each invocation start

    @classmethod
    def from_config(cls, config: EngineConfig, context: LayerContext) -> DanglingToolCallLayer:
        return cls(context, style=config.dangling.style, drop_orphans=config.dangling.drop_orphans)

    def _reset(self) -> None:
        self._seen, self._calls, self._results, self._dangling, self._orphans = [], {}, {}, {}, {}
        self._tokens, self._cached, self._seen_epoch = 0, None, checkpoint_epoch()

    def _scan(self, messages: Sequence[BaseMessage]) -> None:
        replaced = [] if grown_prefix(self, messages) else replaced_in_prefix(self._seen, messages)
        if replaced is None or not self._swap(replaced, messages):
            self._reset()
        start = len(self._seen)
        count = self.counter.count_message
        for i in range(start, len(messages)):
            m = messages[i]
            self._tokens += count(m)
            if isinstance(m, AIMessage):
                for c in calls_of(m, invalid=self.style != "deerflow"):
                    if c.id in self._calls:
                        continue
                    self._calls[c.id] = None
                    if c.id in self._results:
                        self._orphans.pop(c.id, None)  # answered before it was made: odd, but answered
                    else:
                        self._dangling[c.id] = (i, c)
            elif isinstance(m, ToolMessage):
                self._results.setdefault(m.tool_call_id)
                if self._dangling.pop(m.tool_call_id, None) is None and m.tool_call_id not in self._calls:
                    self._orphans.setdefault(m.tool_call_id, []).append(i)
        self._seen.extend(messages[start:])

    def _swap(self, replaced: list[int], messages: Sequence[BaseMessage]) -> bool:
        """Take same-id copies from an upstream layer in place; False when a copy changes the call structure."""
        count = self.counter.count_message
        if replaced and self._seen_epoch != checkpoint_epoch():  # a checkpoint holds `_seen`: write a copy
            self._seen, self._seen_epoch = list(self._seen), checkpoint_epoch()
        for i in replaced:
            old, new = self._seen[i], messages[i]
            if _structure(old) != _structure(new):
                return False
            self._tokens += count(new) - count(old)
            self._seen[i] = new
        if replaced:
            self._cached = None  # the patched prefix may hold the old objects
        return True

    def _current_patch(self) -> Patch:
        # by AI position; calls of one message keep their order (dicts keep insertion order)
        dangling = tuple(sorted(self._dangling.values(), key=lambda x: x[0]))
        orphans = tuple(sorted(i for idx in self._orphans.values() for i in idx)) if self.drop_orphans else ()
        return Patch(dangling, orphans)

    def _patch_for(self, call: Call) -> ToolMessage:
        # One placeholder object per call, so counts are cached and the view is stable across steps.
        hit = self._patches.get(call.id)
        if hit is None:
            hit = self._patches[call.id] = build_patch(call, self.style)
        return hit

    def patched_view(self, messages: Sequence[BaseMessage]) -> list[BaseMessage] | None:
        """The patched messages, or None when nothing dangles and nothing is orphaned."""
        self._scan(messages)
        patch = self._current_patch()
        if not patch:
            return None
        for _, c in patch.dangling:
            self._patch_for(c)
        # Reuse the patched prefix while the patch positions are unchanged; only new messages follow.
        upto = max([i for i, _ in patch.dangling] + list(patch.orphans)) + 1
        if self._cached is not None and self._cached[0] == patch:
            view = self._cached[1] + list(messages[upto:])
        else:
            prefix = apply_patch(messages[:upto], patch, self._patches)
            self._cached = (patch, prefix)
            view = prefix + list(messages[upto:])
        self._emit(patch, messages)
        return view

    def _emit(self, patch: Patch, messages: Sequence[BaseMessage]) -> None:
        before = self._tokens
        count = self.counter.count_message
        if patch.dangling:
            added = sum(count(self._patches[c.id]) for _, c in patch.dangling)
            ids = [c.id for _, c in patch.dangling]
            self.emit("patch", tokens_before=before, tokens_after=before + added, tool_call_ids=ids,
                      message_ids=[self._patches[i].id for i in ids], style=self.style,
                      message=f"{len(ids)} unanswered tool call(s) given a placeholder error result")
            before += added
        if patch.orphans:
            removed = sum(count(messages[i]) for i in patch.orphans)
            self.emit("drop_orphan", tokens_before=before, tokens_after=before - removed,
                      tool_call_ids=[messages[i].tool_call_id for i in patch.orphans],  # type: ignore[attr-defined]
                      message_ids=[messages[i].id for i in patch.orphans],
                      message=f"{len(patch.orphans)} tool result(s) answering no call dropped from the request")

    def _head_view(self, messages: Sequence[BaseMessage]) -> list[BaseMessage] | None:
        """DeerFlow HEAD's patch (a full pass per request: it regroups and repairs, so no incremental scan)."""
        found = head_patch(messages)
        if found is None:
            return None
        view, added, dropped = found
        for m in added:
            m.id = f"patch-{m.tool_call_id}"
            mark(m, "patch")
        before = self.counter(messages)
        if added:
            after = before + sum(self.counter.count_message(m) for m in added)
            self.emit("patch", tokens_before=before, tokens_after=after, tool_call_ids=[m.tool_call_id for m in added],
                      message_ids=[m.id for m in added], style=self.style,
                      message=f"{len(added)} unanswered tool call(s) given a placeholder error result")
            before = after
        if dropped:
            self.emit("drop_orphan", tokens_before=before,
                      tokens_after=before - sum(self.counter.count_message(m) for m in dropped),
                      tool_call_ids=[m.tool_call_id for m in dropped], message_ids=[m.id for m in dropped],
                      message=f"{len(dropped)} tool result(s) answering no call dropped from the request")
        return view

    def _prepare(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        if self.style == "deepagents":  # Deep Agents patches the state when an invocation starts
            return request
        if self.style == "deerflow-head":
            head = self._head_view(request.messages)
            return request if head is None else overridden(request, messages=cast(list[AnyMessage], head))
        view = self.patched_view(request.messages)
        return request if view is None else overridden(request, messages=cast(list[AnyMessage], view))

    def before_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        if self.style != "deepagents":
            return None
        messages = state.get("messages") or []
        patched = deepagents_patched_state(messages) if self._open.any_open(messages) else None
        if patched is None:
            return None
        present = {id(m) for m in messages}
        added = [m for m in patched if id(m) not in present]
        before = self.counter(messages)
        self.emit("patch", tokens_before=before, tokens_after=before + sum(self.counter.count_message(m) for m in added),
                  tool_call_ids=[m.tool_call_id for m in added],  # type: ignore[attr-defined]
                  message_ids=[m.id for m in added], style=self.style, state=True,
                  message=f"{len(added)} unanswered tool call(s) given a placeholder error result in the state")
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *patched]}

    async def abefore_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self.before_agent(state, runtime)



__all__ = [
    "DEEPAGENTS_INTERRUPTED",
    "DEEPAGENTS_INVALID",
    "DEERFLOW_INTERRUPTED",
    "DEERFLOW_INVALID",
    "Call",
    "DanglingToolCallLayer",
    "Patch",
    "apply_patch",
    "build_patch",
    "deepagents_patched_state",
    "calls_of",
    "find_patch",
    "placeholder_text",
]
