"""Where a run compacted its context: simulated summarizations (events) and recorded compactions.

Evals look at the view right after each compaction. A compaction fires inside a step's model
call (before_model in state mode, wrap_model_call in view mode), so the view recorded for that
step is already the compacted one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from engine.kinds import message_kind
from engine.run import Run
from engine.tokens import message_text

# LangChain's text when trimming leaves nothing to summarize (the "too long" pitfall).
TOO_LONG_PLACEHOLDER = "Previous conversation was too long to summarize."
SUMMARIZATION_LAYER = "summarization"
EMPTY_KIND = "summarize_empty"


@dataclass(frozen=True)
class Compaction:
    """One compaction: the step whose view is the first after it, and what replaced the history."""

    step: int
    source: str  # "simulated" (a summarization event of this replay) or "recorded" (the source agent's)
    kind: str
    summary_text: str = ""
    placeholder: bool = False  # the "too long to summarize" case
    message_index: int | None = None  # recorded: the first thread message after the source's cut

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "source": self.source, "kind": self.kind, "placeholder": self.placeholder}


def is_compaction_event(layer: str, kind: str, payload: Mapping[str, Any]) -> bool:
    """A summarization event that replaced history (`summarize`, or another kind carrying a summary).

    `summarize_empty` is not one: it accompanies the `summarize` event of the same step as a warning.
    """
    return layer == SUMMARIZATION_LAYER and kind != EMPTY_KIND and (kind == "summarize" or "summary_text" in payload)


def compactions(run: Run) -> list[Compaction]:
    """Every compaction of the run, simulated and recorded, in step order."""
    found: list[Compaction] = []
    last = len(run.steps) - 1
    events = run.events
    empty_steps = {e.step for e in events if e.layer == SUMMARIZATION_LAYER and e.kind == EMPTY_KIND}
    for event in events:
        if not is_compaction_event(event.layer, event.kind, event.payload):
            continue
        text = str(event.payload.get("summary_text") or "")
        placeholder = event.step in empty_steps or TOO_LONG_PLACEHOLDER in text
        found.append(Compaction(min(event.step, last), "simulated", event.kind, text, placeholder))
    for rec in run.thread.compactions:
        step = step_after_message(run, rec.index)
        if step is not None:
            found.append(Compaction(step, "recorded", rec.trigger or "recorded", rec.summary,
                                    TOO_LONG_PLACEHOLDER in rec.summary, rec.index))
    return sorted(found, key=lambda c: (c.step, c.source != "simulated"))


def step_after_message(run: Run, message_index: int) -> int | None:
    """The first step whose model call comes at or after thread message `message_index`."""
    for s in run.steps:
        if s.message_index >= message_index:
            return s.index
    return None


def summary_messages(view: Iterable[BaseMessage]) -> list[BaseMessage]:
    return [m for m in view if message_kind(m) == "summary"]


def searchable_text(message: BaseMessage) -> str:
    """What a reader of the message could find in it: its text plus every string in tool-call arguments."""
    text = message_text(message)
    if isinstance(message, AIMessage) and message.tool_calls:
        parts = [text]
        for tc in message.tool_calls:
            parts.extend(_strings(tc.get("args", {})))
        return "\n".join(parts)
    return text


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)):
        return [s for v in value for s in _strings(v)]
    return [] if value is None else [str(value)]
