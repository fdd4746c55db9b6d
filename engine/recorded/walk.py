"""The requests a thread's agent sent, call by call, as the provider received them, in time linear in the thread.

`SentWalk(history)` follows `history.views()` (recorded compactions and edits, Codex's cut outputs) and
applies the provider's thinking rule (engine.recorded.history) incrementally: between two calls the request
only grows at its end, except where a recorded compaction or edit rebuilt it, and, for models that keep
only the current turn's thinking, where a new turn starts (each earlier AI message is then stripped once).
Each `SentCall` says what is new in the request since the previous call the walk reported, and which
messages were replaced by their stripped copies, so the calibration never re-reads the whole request.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from langchain_core.messages import AIMessage, BaseMessage

from engine.recorded.history import RecordedHistory, RecordedView, has_thinking, starts_turn


@dataclass
class SentCall:
    """One model call: the request as sent, and how it differs from the previous reported call's."""

    view: RecordedView
    sent: list[BaseMessage]  # the whole request's messages (the walk's own list: read it at once)
    new: list[BaseMessage]  # messages of `sent` first sent since the previous reported call, in order
    stripped: list[tuple[BaseMessage, BaseMessage]] = field(default_factory=list)  # (original, stripped copy)
    rebuilt: bool = False  # a recorded compaction or edit rebuilt the request: `new` is every message not seen

    @property
    def grows(self) -> bool:
        """The request is the previous one plus `new` at its end (nothing replaced or removed)."""
        return not self.rebuilt and not self.stripped


class SentWalk:
    """Calls of one `history.views()` walk; `report(call)` marks what the next call counts as new."""

    def __init__(self, history: RecordedHistory) -> None:
        self.history = history
        self.rule = history.rule

    def calls(self, wanted: set[str] | None = None) -> Iterator[SentCall]:
        """Every call (or those whose response id is in `wanted`): `new` is relative to the previous one yielded."""
        history = self.history
        rule = self.rule
        raw: list[BaseMessage] | None = None
        raw_seen = 0
        sent: list[BaseMessage] = []
        pending: list[int] = []  # positions in `sent` of AI messages whose thinking a later turn strips
        reported = 0  # messages of `sent` before this were in a yielded call
        known: set[int] = set()  # ids of messages in a yielded call (checked after a rebuild only)
        stripped: list[tuple[BaseMessage, BaseMessage]] = []
        rebuilt = False
        for view in history.views():
            messages = view.messages
            if messages is not raw or view.compactions or view.edits or len(messages) < raw_seen:
                sent = list(history.provider_view(messages))
                pending = self._pending(sent)
                raw, raw_seen, rebuilt, stripped = messages, len(messages), True, []
            else:
                for m in messages[raw_seen:]:
                    if rule == "last_turn" and starts_turn(m) and pending:
                        for i in pending:
                            copy = history.stripped(sent[i])  # type: ignore[arg-type]
                            stripped.append((sent[i], copy))
                            sent[i] = copy
                        pending = []
                    form = history.stripped(m) if rule == "none" and has_thinking(m) else m  # type: ignore[arg-type]
                    if rule == "last_turn" and has_thinking(form):
                        pending.append(len(sent))
                    sent.append(form)
                raw_seen = len(messages)
            if wanted is not None and (view.response.id or "") not in wanted:
                continue
            if rebuilt:
                new = [m for m in sent if id(m) not in known]
            else:
                new = sent[reported:]
            # a stripped copy of a message already sent replaces it; it is not new
            replaced = [(o, c) for o, c in stripped if id(o) in known]
            copies = {id(c) for _, c in replaced}
            new = [m for m in new if id(m) not in copies]
            yield SentCall(view, sent, new, replaced, rebuilt)
            known.update(map(id, new))
            known.update(copies)
            reported = len(sent)
            stripped, rebuilt = [], False

    def _pending(self, sent: list[BaseMessage]) -> list[int]:
        if self.rule != "last_turn":
            return []
        last = next((i for i in range(len(sent) - 1, -1, -1) if starts_turn(sent[i])), -1)
        return [i for i in range(max(last, 0), len(sent)) if isinstance(sent[i], AIMessage) and has_thinking(sent[i])]
