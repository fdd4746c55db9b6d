"""Events: the record of one layer acting at one step, collected by whoever is listening."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal

from engine.thread.lazytext import text_of

LAYERS: tuple[str, ...] = (
    "filesystem",
    "subagents",
    "summarization",
    "context_editing",
    "todo",
    "dangling",
    "memory",
    "input_context",
)


@dataclass
class Event:
    """One layer acting at one step: what it did and the tokens before and after."""

    layer: str
    kind: str
    step: int
    tokens_before: int | None = None
    tokens_after: int | None = None
    severity: Literal["info", "warning"] = "info"
    message: str = ""
    payload: dict[str, Any] = field(default_factory=dict)

    @property
    def tokens_saved(self) -> int:
        if self.tokens_before is None or self.tokens_after is None:
            return 0
        return self.tokens_before - self.tokens_after

    def to_dict(self) -> dict[str, Any]:
        return {
            "layer": self.layer,
            "kind": self.kind,
            "step": self.step,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "severity": self.severity,
            "message": self.message,
            # a text the run rebuilds on demand (engine.thread.lazytext) is rendered here
            # a key starting with "_" holds in-memory references for the pages (not JSON data)
            **{k: text_of(v) for k, v in self.payload.items() if k not in _RESERVED and not k.startswith("_")},
        }


_RESERVED = frozenset({"layer", "kind", "step", "tokens_before", "tokens_after", "severity", "message"})


class EventRecorder:
    """Collects events; `step` is set by the driver (replay, or an observer in a live agent)."""

    def __init__(self) -> None:
        self.step = 0
        self.events: list[Event] = []

    def record(self, event: Event) -> None:
        self.events.append(event)


_current: ContextVar[EventRecorder | None] = ContextVar("ctxi_event_recorder", default=None)


@contextmanager
def recording(recorder: EventRecorder | None = None) -> Iterator[EventRecorder]:
    """Route events emitted by layers in this context to `recorder`."""
    rec = recorder or EventRecorder()
    token = _current.set(rec)
    try:
        yield rec
    finally:
        _current.reset(token)


def current_recorder() -> EventRecorder | None:
    return _current.get()


def emit(
    layer: str,
    kind: str,
    *,
    tokens_before: int | None = None,
    tokens_after: int | None = None,
    severity: Literal["info", "warning"] = "info",
    message: str = "",
    **payload: Any,
) -> Event | None:
    """Record an event if anyone listens; layers call this and never care who does."""
    rec = _current.get()
    if rec is None:
        return None
    event = Event(
        layer=layer,
        kind=kind,
        step=rec.step,
        tokens_before=tokens_before,
        tokens_after=tokens_after,
        severity=severity,
        message=message,
        payload=payload,
    )
    rec.record(event)
    return event
