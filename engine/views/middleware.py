"""What the user's own middleware did in a run, as plain data for the Layers page and the CLI.

Its events (engine.layers.user) name message ids; this finds each message before and after the
middleware: for a request edit, the step's state (before) and view (after); for a state edit or a
tool result, the state as it was before that update and as the step saw it.
"""

from __future__ import annotations

from dataclasses import dataclass

from langchain_core.messages import BaseMessage

from engine.config.sections import BUILTIN_LAYERS
from engine.run.run import Run
from engine.thread.events import Event

# Event kinds a user's middleware is recorded with (docs/config.md, "Your own middleware").
MIDDLEWARE_KINDS: frozenset[str] = frozenset({"edit_request", "edit_state", "edit_tool_result", "error"})
OUR_LAYERS: frozenset[str] = BUILTIN_LAYERS | {"input_context"}


@dataclass(frozen=True)
class MessageEdit:
    status: str  # removed | replaced | inserted
    id: str
    before: BaseMessage | None
    after: BaseMessage | None


def middleware_layers(run: Run) -> list[str]:
    """The run's layers that are not ours (the user's middleware), in list order."""
    return [name for name in run.layer_names if name not in OUR_LAYERS]


def middleware_events(run: Run, layer: str) -> list[Event]:
    return [e for e in run.events if e.layer == layer and e.kind in MIDDLEWARE_KINDS]


def _by_id(messages: object) -> dict[str, BaseMessage]:
    return {str(m.id): m for m in messages} if messages is not None else {}  # type: ignore[attr-defined]


def edited_messages(run: Run, event: Event) -> list[MessageEdit]:
    """Each message the event names, as it was before the middleware and as it was after."""
    if not run.steps:
        return []
    k = min(max(event.step, 0), len(run.steps) - 1)
    step = run.steps[k]
    original = _by_id(run.thread.messages)
    if event.kind == "edit_request":
        # after: as this middleware left the request (an inner middleware may rewrite it again before the view)
        before, after = _by_id(step.state), {**_by_id(step.view), **(event.payload.get("_after_messages") or {})}
    else:
        # a state update happened before this step's call: the previous step's state had the old messages
        before = {**original, **_by_id(run.steps[k - 1].state if k > 0 else ())}
        after = _by_id(step.state)
    out: list[MessageEdit] = []
    for status, key in (("removed", "removed_ids"), ("replaced", "replaced_ids"), ("inserted", "inserted_ids")):
        for mid in event.payload.get(key) or []:
            mid = str(mid)
            out.append(MessageEdit(status, mid, None if status == "inserted" else before.get(mid, original.get(mid)),
                                   None if status == "removed" else after.get(mid)))
    return out


__all__ = ["MIDDLEWARE_KINDS", "MessageEdit", "edited_messages", "middleware_events", "middleware_layers"]
