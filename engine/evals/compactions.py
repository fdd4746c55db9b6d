"""Where a run compacted its context: the events of the layers that replaced its history.

A run's compactions are its own: the summarization layer's summaries, a coding-agent policy's
compactions (the `compaction` layer) and, in the as-recorded run, the source agent's recorded
compactions re-enacted by the `recorded` layer (`engine.run.whatif.is_compaction`). A compaction
the source recorded but this run does not re-enact is not one of this run's: every eval reads the
run's own views, so the score, the bands and the table after each compaction agree.

Evals look at the view right after each compaction. A compaction fires inside a step's model
call (before_model in state mode, wrap_model_call in view mode), so the view recorded for that
step is already the compacted one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from engine.run.run import Run
from engine.run.whatif import is_compaction
from engine.thread.kinds import message_kind
from engine.tokens.content import message_text

# LangChain's text when trimming leaves nothing to summarize (the "too long" pitfall).
TOO_LONG_PLACEHOLDER = "Previous conversation was too long to summarize."
SUMMARIZATION_LAYER = "summarization"
EMPTY_KIND = "summarize_empty"


@dataclass(frozen=True)
class Compaction:
    """One compaction: the step whose view is the first after it, and what replaced the history."""

    step: int
    source: str  # "recorded" (the source agent's, re-enacted by the recorded layer) or "simulated" (any other)
    kind: str
    summary_text: str = ""
    placeholder: bool = False  # the "too long to summarize" case
    message_index: int | None = None  # recorded: the first thread message after the source's cut

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "source": self.source, "kind": self.kind, "placeholder": self.placeholder}


def compactions(run: Run) -> list[Compaction]:
    """Every compaction of the run (its own events), in step order."""
    found: list[Compaction] = []
    last = len(run.steps) - 1
    events = run.events
    empty_steps = {e.step for e in events if e.layer == SUMMARIZATION_LAYER and e.kind == EMPTY_KIND}
    for event in events:
        if not is_compaction(event):  # the one rule, engine.run.whatif: the steps compaction_steps names
            continue
        text = str(event.payload.get("summary_text") or event.payload.get("summary") or "")
        placeholder = event.step in empty_steps or TOO_LONG_PLACEHOLDER in text
        recorded = event.layer == "recorded"
        index = event.payload.get("message_index")
        found.append(Compaction(min(max(event.step, 0), last), "recorded" if recorded else "simulated",
                                str(event.payload.get("trigger") or "recorded") if recorded else event.kind, text,
                                placeholder, index if isinstance(index, int) else None))
    return sorted(found, key=lambda c: (c.step, c.source != "simulated"))


def source_compaction_steps(run: Run) -> list[int]:
    """Where the source agent compacted (its recorded compactions), whether or not this run re-enacts them."""
    steps = (step_after_message(run, rec.index) for rec in run.thread.compactions)
    return sorted(s for s in steps if s is not None)


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
