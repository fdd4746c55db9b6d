"""What is read from one message's text, computed once per message object and reused by later reads.

The offline summarizer reads the same messages again on every re-run of a thread (a config change
re-runs the whole replay) and, in a run, a message kept by a summary is read again by the next
one. Its reading of a message (the text, its sentences, its first line, the conclusions picked
from them) depends only on the message's content, so it is kept per message object, the way the
token counter keeps counts (engine.tokens.counters `_CachedCounter`): keyed by identity, checked against
the content object (a message whose content is reassigned is read again), and dropped with the
message (a weak reference), so the memo never keeps a message alive.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from langchain_core.messages import BaseMessage

T = TypeVar("T")


class MessageMemo:
    """`get(message, name, build)`: `build(message)` once per message object (and content object)."""

    def __init__(self) -> None:
        self._cache: dict[int, tuple[weakref.ref[BaseMessage], Any, dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def slot(self, message: BaseMessage) -> dict[str, Any]:
        """The message's dict of readings (new and empty for a message not seen, or whose content was
        reassigned), for a reader whose reading depends on more than the content (`keyed`'s case with
        several fields, e.g. engine/policies/gemini_cli.py)."""
        key = id(message)
        hit = self._cache.get(key)
        if hit is not None and hit[0]() is message and hit[1] is message.content:
            return hit[2]
        cache = self._cache

        def _drop(ref: weakref.ref[BaseMessage], key: int = key) -> None:
            entry = cache.get(key)
            if entry is not None and entry[0] is ref:
                cache.pop(key, None)

        slot: dict[str, Any] = {}
        with self._lock:
            cache[key] = (weakref.ref(message, _drop), message.content, slot)
        return slot

    def get(self, message: BaseMessage, name: str, build: Callable[[BaseMessage], T]) -> T:
        slot = self.slot(message)
        try:
            return slot[name]  # type: ignore[no-any-return]
        except KeyError:
            value = slot[name] = build(message)
            return value

    def keyed(self, message: BaseMessage, name: str, key: Any, build: Callable[[BaseMessage], T]) -> T:
        """`get` for a reading that also depends on another field of the message (`key`, e.g. its
        `tool_calls`): rebuilt when that field is another object than the one it was built from."""
        slot = self.slot(message)
        hit = slot.get(name)
        if hit is not None and hit[0] is key:
            return hit[1]  # type: ignore[no-any-return]
        value = build(message)
        slot[name] = (key, value)
        return value

    def __len__(self) -> int:
        return len(self._cache)


__all__ = ["MessageMemo"]
