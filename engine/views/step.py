"""The Step page's data: the category table, the view message by message, the state-vs-view diff, the prompt's parts.
"""

from __future__ import annotations

import difflib
import re
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
        # what is left of the reserved room once the view grew into it (a view past the policy's threshold
        # uses part of it): the rows add up to the window, as /context's do
        left = min(room, max(0, free))
        rows.append({"category": reserved[0], "tokens": left, "percent_of_window": pct(left)})
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
    # each tool call's id, in the order of `tool_calls` (pairs a call with its result on the Step page)
    call_ids: tuple[str, ...] = ()
    # the text's reasoning part (thinking / reasoning blocks), shown labelled apart; "" when none
    thinking: str = ""
    # the text without the reasoning part
    reply: str = ""

    @property
    def total(self) -> int:
        """What the message cost in the request: its own tokens and what it carried beyond them."""
        return self.tokens + self.hidden


# ANSI escape sequences a terminal agent's output carries (Claude Code's local-command stdout:
# "\x1b[2mCompacted …\x1b[22m", "\x1b[1mDefault (recommended)\x1b[22m" in ../shared/traces): CSI
# sequences (ECMA-48 §5.4: ESC [ parameters intermediates final byte) and OSC strings (ESC ] … BEL or ST).
# In a browser the ESC is invisible and "[2m" was left on the page (issue 35); they are dropped from
# what the pages show (token counts are of the message as sent).
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


def display_text(text: str) -> str:
    """Text as a page shows it: ANSI escape sequences removed."""
    return _ANSI.sub("", text) if "\x1b" in text else text


_REASONING_BLOCKS = frozenset({"thinking", "reasoning"})


def reasoning_and_reply(m: BaseMessage) -> tuple[str, str]:
    """An AI message's reasoning (Anthropic `thinking`, LangChain `reasoning` blocks) and the rest of its
    text, each as the pages show it; ("", text) for a message without reasoning blocks."""
    content = m.content
    if not isinstance(m, AIMessage) or not isinstance(content, list) or not any(
            isinstance(b, dict) and b.get("type") in _REASONING_BLOCKS for b in content):
        return "", display_text(message_text(m))
    thinking: list[str] = []
    reply: list[str] = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "thinking":
            thinking.append(str(block.get("thinking", "")))
        elif isinstance(block, dict) and block.get("type") == "reasoning" and isinstance(block.get("reasoning"), str):
            thinking.append(block["reasoning"])
        else:
            reply.append(message_text(AIMessage(content=[block])) if isinstance(block, dict) else str(block))
    return display_text("\n".join(t for t in thinking if t)), display_text("\n".join(r for r in reply if r.strip()))


def message_entry(position: int, m: BaseMessage, counter: TokenCounter,
                  call_names: Mapping[str, str] | None = None) -> ViewEntry:
    """One message as the pages show it: role, kind, tokens, text (ANSI escapes removed) and tool calls.

    `call_names` (tool call id -> tool name) names the tool a result answers when the result
    itself carries no name (LangChain's ToolMessage.name is optional).
    """
    tool_calls = m.tool_calls if isinstance(m, AIMessage) else []
    calls = tuple((str(tc.get("name", "")), tool_call_text(tc)) for tc in tool_calls)
    ids = tuple(str(tc.get("id") or "") for tc in tool_calls)
    if isinstance(m, ToolMessage):
        tool = m.name or (call_names or {}).get(m.tool_call_id)
        tools: tuple[str, ...] = (tool,) if tool else ()
    else:
        tools = tuple(dict.fromkeys(name for name, _ in calls if name))
    breakdown = counter.breakdown(m)
    hidden_by = tuple((c, int(breakdown[c])) for c in CATEGORIES if c in UNRECORDED_CATEGORIES and breakdown.get(c))
    hidden = sum(n for _, n in hidden_by)
    thinking, reply = reasoning_and_reply(m)
    text = display_text(message_text(m))
    return ViewEntry(position, str(m.id or f"#{position}"), m.type, message_kind(m), m.name,
                     counter.count_message(m) - hidden, text, calls,
                     m.tool_call_id if isinstance(m, ToolMessage) else None, hidden, tools, hidden_by,
                     call_ids=ids, thinking=thinking, reply=reply if thinking else text)


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


# Categories of a step's view the transcript does not hold but the provider billed: the agent's own
# system prompt and tool schemas (engine.recorded.calibration's "agent prompt").
AGENT_PROMPT_CATEGORIES: tuple[str, ...] = ("agent_prompt",)


def prompt_summary(step: StepRecord, counter: TokenCounter, source_format: str) -> str:
    """What is known of the prompt a step sent, and where the rest is, in one sentence.

    A Claude Code session records neither its system prompt nor its tool schemas: the Layers page said "0
    tokens in 0 part(s); 0 tool schema(s)" above an empty table while the Step page counted 25,969 tokens
    of the agent's own prompt for the same request (issue 35). The calibrated run carries those tokens
    as their own category; this names them.
    """
    parts = system_parts(step, counter)
    known = sum(p["tokens"] for p in parts)
    agent = sum(int(step.view_by_category.get(c, 0)) for c in AGENT_PROMPT_CATEGORIES)
    tools = len(step.tool_names)
    said = (f"{known:,} tokens of system prompt in {len(parts)} part(s) are in the transcript" if parts
            else f"the {source_format} transcript holds no system prompt")
    said += f"; {tools} tool schema(s) sent alongside" if tools else "; it holds no tool schemas"
    if agent > 0:
        said += (f". The provider's recorded input shows {agent:,} more tokens at this step: the agent's own "
                 "prompt and tool schemas, which the transcript does not hold (the “agent prompt (not recorded)” row "
                 "of the Step page's table, calibrated to the recorded usage)")
    elif not parts and not tools:
        said += ". Nothing recorded says how large the agent's own prompt was (no usage recorded)"
    return said + "."


def tools_sent(step: StepRecord) -> str:
    """The Step page's count of tool schemas: a number when the transcript has them, else where they are."""
    if step.tool_names:
        return f"tools sent: {len(step.tool_names)}"
    agent = sum(int(step.view_by_category.get(c, 0)) for c in AGENT_PROMPT_CATEGORIES)
    if agent > 0:
        return f"tool schemas: not in the transcript (in the agent's prompt, {agent:,} tokens, not recorded)"
    return "tool schemas: none in the transcript"


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
