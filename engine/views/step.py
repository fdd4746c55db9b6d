"""The Step page's data: the category table, the view message by message, the state-vs-view diff, the prompt's parts.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from engine.run.run import StepRecord
from engine.thread.kinds import CATEGORIES, PARTS_KEY, UNRECORDED_CATEGORIES, message_kind
from engine.tokens.content import message_text, tool_call_text
from engine.tokens.counters import TokenCounter


# -- step ------------------------------------------------------------------------------------
def category_rows(step: StepRecord, window_tokens: int, reserved: tuple[str, int] | None = None) -> list[dict[str, Any]]:
    """Like Claude Code's /context: tokens and % of the window per category, then free space, then what the
    run's policy reserves above its threshold (`reserved`: Claude Code's "Autocompact buffer",
    engine.views.decisions.reserved), which free space does not count."""
    def pct(n: int) -> float:
        return round(100 * n / window_tokens, 1) if window_tokens else 0.0

    rows = [{"category": c, "tokens": step.view_by_category.get(c, 0), "percent_of_window": pct(step.view_by_category.get(c, 0))}
            for c in CATEGORIES if step.view_by_category.get(c, 0)]
    room = reserved[1] if reserved is not None else 0
    free = window_tokens - step.view_tokens
    # A view over the window says by how much, as a positive amount: negative "free space" would
    # read as a bar running backwards in every table that shows it.
    if free >= 0:
        rows.append({"category": "free space", "tokens": max(0, free - room), "percent_of_window": pct(max(0, free - room))})
    else:
        rows.append({"category": "over the window", "tokens": -free, "percent_of_window": pct(-free)})
    if reserved is not None:
        rows.append({"category": reserved[0], "tokens": room, "percent_of_window": pct(room)})
    return rows


@dataclass(frozen=True)
class ViewEntry:
    """One message of a step's view as the model received it."""

    position: int
    id: str
    role: str
    kind: str
    name: str | None
    tokens: int
    text: str
    tool_calls: tuple[tuple[str, str], ...] = ()  # (name, args json)
    tool_call_id: str | None = None
    # what the provider recorded for this message beyond its own text (engine.recorded.calibration: first-
    # turn context, what a compaction re-attached, the unexplained rest), apart from `tokens`
    hidden: int = 0
    # the tools an AI message calls, or the tool a tool result answers (for the Step page's filter)
    tools: tuple[str, ...] = ()
    hidden_by: tuple[tuple[str, int], ...] = ()  # `hidden` by category, in CATEGORIES order

    @property
    def total(self) -> int:
        """What the message cost in the request: its own tokens and what it carried beyond them."""
        return self.tokens + self.hidden


def message_entry(position: int, m: BaseMessage, counter: TokenCounter,
                  call_names: Mapping[str, str] | None = None) -> ViewEntry:
    """One message as the pages show it: role, kind, tokens, text and tool calls.

    `call_names` (tool call id -> tool name) names the tool a result answers when the result
    itself carries no name (LangChain's ToolMessage.name is optional).
    """
    calls = tuple((str(tc.get("name", "")), tool_call_text(tc)) for tc in m.tool_calls) if isinstance(m, AIMessage) else ()
    if isinstance(m, ToolMessage):
        tool = m.name or (call_names or {}).get(m.tool_call_id)
        tools: tuple[str, ...] = (tool,) if tool else ()
    else:
        tools = tuple(dict.fromkeys(name for name, _ in calls if name))
    breakdown = counter.breakdown(m)
    hidden_by = tuple((c, int(breakdown[c])) for c in CATEGORIES if c in UNRECORDED_CATEGORIES and breakdown.get(c))
    hidden = sum(n for _, n in hidden_by)
    return ViewEntry(position, str(m.id or f"#{position}"), m.type, message_kind(m), m.name,
                     counter.count_message(m) - hidden, message_text(m), calls,
                     m.tool_call_id if isinstance(m, ToolMessage) else None, hidden, tools, hidden_by)


def call_names(*histories: Sequence[BaseMessage]) -> dict[str, str]:
    """Tool call id -> tool name over the AI messages of these histories (later ones win)."""
    out: dict[str, str] = {}
    for history in histories:
        for m in history:
            if isinstance(m, AIMessage):
                for tc in m.tool_calls:
                    if tc.get("id"):
                        out[str(tc["id"])] = str(tc.get("name", ""))
    return out


def view_entries(step: StepRecord, counter: TokenCounter) -> list[ViewEntry]:
    """The view message by message, the system prompt first."""
    # the state too: a result whose call was summarized away still answers a named tool
    names = call_names(step.state, step.view)
    out = [message_entry(0, step.system, counter, names)] if step.system is not None else []
    first = len(out)  # read once: `extend` grows the list while it consumes the generator
    out.extend(message_entry(first + i, m, counter, names) for i, m in enumerate(step.view))
    return out


@dataclass(frozen=True)
class DiffRow:
    status: str  # same | changed | only_state | only_view
    id: str
    role: str
    kind: str
    state_tokens: int | None
    view_tokens: int | None
    # the messages themselves, for the page's text preview and before/after diff
    state_message: BaseMessage | None = field(default=None, compare=False, repr=False)
    view_message: BaseMessage | None = field(default=None, compare=False, repr=False)


def _same(a: BaseMessage, b: BaseMessage) -> bool:
    if a is b:
        return True
    return a.content == b.content and getattr(a, "tool_calls", None) == getattr(b, "tool_calls", None)


def state_view_diff(step: StepRecord, counter: TokenCounter) -> list[DiffRow]:
    """Align state and view by message id: what a layer hid, inserted or rewrote for this request."""
    state, view = list(step.state), list(step.view)
    sid = [str(m.id) for m in state]
    vid = [str(m.id) for m in view]
    rows: list[DiffRow] = []

    def row(status: str, s: BaseMessage | None, v: BaseMessage | None) -> DiffRow:
        m = v if v is not None else s
        assert m is not None
        return DiffRow(status, str(m.id), m.type, message_kind(m),
                       counter.count_message(s) if s is not None else None,
                       counter.count_message(v) if v is not None else None, s, v)

    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=sid, b=vid, autojunk=False).get_opcodes():
        if op == "equal":
            rows.extend(row("same" if _same(state[i], view[j]) else "changed", state[i], view[j])
                        for i, j in zip(range(i1, i2), range(j1, j2), strict=True))
        else:
            rows.extend(row("only_state", state[i], None) for i in range(i1, i2))
            rows.extend(row("only_view", None, view[j]) for j in range(j1, j2))
    return rows


def diff_counts(rows: Sequence[DiffRow]) -> dict[str, int]:
    out = {"same": 0, "changed": 0, "only_state": 0, "only_view": 0}
    for r in rows:
        out[r.status] += 1
    return out


def system_parts(step: StepRecord, counter: TokenCounter) -> list[dict[str, Any]]:
    """The system prompt's parts (set by the prompt layers), each with its tokens."""
    if step.system is None:
        return []
    parts = step.system.additional_kwargs.get(PARTS_KEY) or []
    if not parts:
        return [{"part": "system prompt", "category": "system", "tokens": counter.count_message(step.system),
                 "text": message_text(step.system)}]
    return [{"part": str(p.get("part", "?")), "category": str(p.get("category", "system")),
             "tokens": counter.count_text(str(p.get("text", ""))), "text": str(p.get("text", ""))} for p in parts]
