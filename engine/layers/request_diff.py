"""What a middleware changed: the messages (and prompt, tools) before and after it, compared by id.

The replay records a user's middleware by this diff instead of asking it for events: a message
whose id is new was inserted, an id that disappeared was removed, the same id with other content
was replaced. Messages are compared by value, so a middleware that deep-copies the request
(LangChain's ContextEditingMiddleware does, context_editing.py `wrap_model_call`) changes only the
messages it really edited; `reconcile` hands the unchanged ones back as the original objects, so
token counts stay cached and the step's view shares the state's messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage

from engine.base.wording import plural


@dataclass(frozen=True)
class MessageDiff:
    removed: tuple[str, ...] = ()
    replaced: tuple[str, ...] = ()
    inserted: tuple[str, ...] = ()
    reordered: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.removed or self.replaced or self.inserted or self.reordered)

    def describe(self) -> str:
        """`removed 3 messages, replaced 1 message`; empty when nothing changed."""
        parts = [f"{verb} {plural(len(ids), 'message')}" for verb, ids in
                 (("removed", self.removed), ("replaced", self.replaced), ("inserted", self.inserted)) if ids]
        text = ", ".join(parts)
        if self.reordered:
            text = f"{text}, reordered" if text else "reordered the messages"
        return text


NO_CHANGE = MessageDiff()


def message_key(message: BaseMessage, position: int) -> str:
    """A message's id; a message without one is known by its position."""
    return str(message.id) if message.id is not None else f"#{position}"


def same_message(a: Any, b: Any) -> bool:
    """Identical, or equal in every field (type, content, tool calls, metadata, name, id)."""
    return a is b or (type(a) is type(b) and a == b)


def reconcile(before: Sequence[BaseMessage], after: Sequence[BaseMessage]) -> tuple[Sequence[BaseMessage], MessageDiff]:
    """`after` with every message equal to the one `before` had under its id swapped for that
    original object, and what changed. When nothing changed, `before` itself is returned."""
    if after is before:
        return before, NO_CHANGE
    if len(after) == len(before) and all(a is b for a, b in zip(after, before, strict=True)):
        return before, NO_CHANGE
    old = {message_key(m, i): m for i, m in enumerate(before)}
    out: list[BaseMessage] = []
    replaced: list[str] = []
    inserted: list[str] = []
    common: list[str] = []
    for i, m in enumerate(after):
        key = message_key(m, i)
        original = old.get(key)
        if original is None:
            inserted.append(key)
            out.append(m)
            continue
        common.append(key)
        if same_message(original, m):
            out.append(original)
        else:
            replaced.append(key)
            out.append(m)
    kept = set(common)
    removed = tuple(k for k in old if k not in kept)
    reordered = common != [k for k in old if k in kept]
    diff = MessageDiff(removed=removed, replaced=tuple(replaced), inserted=tuple(inserted), reordered=reordered)
    if not diff.changed:
        return before, NO_CHANGE
    return out, diff


def tool_names(tools: Sequence[Any]) -> list[str]:
    """The names of a request's tools (BaseTool objects or provider dicts)."""
    names = []
    for t in tools:
        if isinstance(t, dict):
            fn = t.get("function")
            names.append(str((fn if isinstance(fn, dict) else t).get("name", "")))
        else:
            names.append(str(getattr(t, "name", "")))
    return names


def same_system(a: BaseMessage | None, b: BaseMessage | None) -> bool:
    if a is None or b is None:
        return a is b
    return same_message(a, b) or a.content == b.content


__all__ = ["NO_CHANGE", "MessageDiff", "message_key", "reconcile", "same_message", "same_system", "tool_names"]
