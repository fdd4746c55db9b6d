"""L4 dangling tool calls: a placeholder error result right after each unanswered call (request only).

DeerFlow's `DanglingToolCallMiddleware` patches the model request in `wrap_model_call` and never the
state (via `before_model` the `add_messages` reducer would append the patches at the end instead
of after their AI message). For every AI tool call whose id has no ToolMessage anywhere in the
messages, a `ToolMessage(status="error")` is inserted immediately after that AI message (before
its existing results). Tool results that answer no call (orphans) are dropped when `drop_orphans`
(DeerFlow HEAD). Texts follow the chosen style:

- `deerflow`: `[Tool call was interrupted and did not return a result.]`; invalid calls (HEAD):
  `[Tool call could not be executed because its arguments were invalid: {error[:500]}]`.
- `deepagents`: `PatchToolCallsMiddleware`'s texts, invalid calls included. Deep Agents rewrites the
  state in `before_agent`; here both styles patch the request only, so state stays the record.

`patch` and `drop_orphan` events are emitted at every step where the patch applies (the same
dangling call is patched again in each later request); the dashboard groups them by tool_call_id.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from langchain.agents.middleware import ModelRequest
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, ToolMessage

from engine.config import EngineConfig
from engine.kinds import mark
from engine.layers.base import LayerContext, RequestLayer
from engine.layers.scan import grown_prefix, replaced_in_prefix

Style = Literal["deerflow", "deepagents"]

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


def calls_of(message: AIMessage) -> list[Call]:
    """Tool calls with ids, then invalid ones (both need a result in the next request)."""
    out = [Call(str(tc["id"]), str(tc.get("name") or "unknown")) for tc in message.tool_calls if tc.get("id")]
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


def find_patch(messages: Sequence[BaseMessage], *, drop_orphans: bool = True) -> Patch:
    """The dangling calls (with the index of their AI message) and the orphan results' indices."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    called: set[str] = set()
    dangling: list[tuple[int, Call]] = []
    for i, m in enumerate(messages):
        if isinstance(m, AIMessage):
            for c in calls_of(m):
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


def _structure(message: BaseMessage) -> tuple[Any, ...]:
    """What the patch depends on: the calls an AI message makes, or the call a result answers."""
    if isinstance(message, AIMessage):
        return ("ai", tuple(calls_of(message)))
    if isinstance(message, ToolMessage):
        return ("tool", message.tool_call_id)
    return (message.type,)


class DanglingToolCallLayer(RequestLayer):
    """Placeholder results for unanswered tool calls, orphan results dropped; the request only."""

    layer = "dangling"

    def __init__(self, context: LayerContext | None = None, *, style: Style = "deerflow", drop_orphans: bool = True) -> None:
        super().__init__(context)
        self.style: Style = style
        self.drop_orphans = drop_orphans
        self._patches: dict[str, ToolMessage] = {}
        # incremental bookkeeping over an append-only message list
        self._seen: list[BaseMessage] = []
        self._calls: set[str] = set()
        self._results: set[str] = set()
        self._dangling: dict[str, tuple[int, Call]] = {}
        self._orphans: dict[str, list[int]] = {}
        self._tokens = 0
        self._cached: tuple[Patch, list[BaseMessage]] | None = None  # patch and its patched prefix

    @classmethod
    def from_config(cls, config: EngineConfig, context: LayerContext) -> DanglingToolCallLayer:
        return cls(context, style=config.dangling.style, drop_orphans=config.dangling.drop_orphans)

    def _reset(self) -> None:
        self._seen, self._calls, self._results, self._dangling, self._orphans = [], set(), set(), {}, {}
        self._tokens, self._cached = 0, None

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
                for c in calls_of(m):
                    if c.id in self._calls:
                        continue
                    self._calls.add(c.id)
                    if c.id in self._results:
                        self._orphans.pop(c.id, None)  # answered before it was made: odd, but answered
                    else:
                        self._dangling[c.id] = (i, c)
            elif isinstance(m, ToolMessage):
                self._results.add(m.tool_call_id)
                if self._dangling.pop(m.tool_call_id, None) is None and m.tool_call_id not in self._calls:
                    self._orphans.setdefault(m.tool_call_id, []).append(i)
        self._seen.extend(messages[start:])

    def _swap(self, replaced: list[int], messages: Sequence[BaseMessage]) -> bool:
        """Take same-id copies from an upstream layer in place; False when a copy changes the call structure."""
        count = self.counter.count_message
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

    def _prepare(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        view = self.patched_view(request.messages)
        return request if view is None else request.override(messages=cast(list[AnyMessage], view))



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
    "calls_of",
    "find_patch",
    "placeholder_text",
]
