"""The context a thread's source agent really sent: recorded compactions, recorded edits, provider rules.

`RecordedHistory(thread)` walks a thread the way its agent built each request:

- a **recorded compaction** at `index` replaces everything before it by its `replacement` (the
  summary plus what the agent kept; the summary alone, as a human message, when none is recorded);
- a **recorded edit** at `index` sends the listed old tool results as their placeholder (and, with
  `clear_inputs`, those calls without arguments), or drops the thinking of the listed AI messages;
- the **provider's thinking rule** (engine.tokens.windows `thinking_rule`, engine/data/models.yaml):
  `all` earlier thinking stays in the request (Claude Opus 4.5+ / Sonnet 4.6+, GPT-5.6); `last_turn`
  only the current assistant turn's: Claude models before Opus 4.5 / Sonnet 4.6 and every Haiku through
  4.5 ("Extended thinking", *Thinking block preservation*:
  https://platform.claude.com/docs/en/build-with-claude/extended-thinking; "Context windows", *The
  context window with extended thinking*: https://platform.claude.com/docs/en/build-with-claude/context-windows),
  and OpenAI's reasoning models, whose reasoning items of earlier turns the API ignores and removes
  (openai/openai-cookbook examples/responses_api/reasoning_items.ipynb, *Caching*); `none` never (Gemini:
  thought parts never enter the history, google-gemini/gemini-cli core/geminiChat.ts). A turn starts at a
  user message that is not the agent's own addition: tool results, Claude Code's in-turn hook output and
  attachments, and Codex's contextual fragments (AGENTS.md, environment context) do not start one (Codex
  `is_user_turn_boundary`, codex-rs/core/src/context_manager/history.rs). A user message typed while a
  Codex turn runs does: the reasoning before it leaves the request, which is why a Codex rollout's
  recorded input can fall inside a turn without a compaction;
- **Codex's tool-output truncation**: Codex records each tool output into the history it sends cut to its
  truncation policy, while the rollout keeps the raw output (engine.recorded.codex_rules), so a Codex
  thread's request holds the cut copy.

Every rewritten message (a summary, a cleared result, a stripped AI message) is made once and
handed out as the same object each time, so the calibration (engine.recorded.calibration), which walks the
views here, and the replay's `recorded` layer, which rebuilds them step by step, count the very
same messages.
"""

from __future__ import annotations

import bisect
import threading
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from engine.recorded.codex_rules import recorded_output_tokens, truncate_text
from engine.thread.kinds import mark, message_kind
from engine.thread.model import RecordedCompaction, RecordedEdit, Thread
from engine.tokens.windows import thinking_rule

THINKING_BLOCKS = frozenset({"thinking", "redacted_thinking", "reasoning"})
# Human messages an agent adds inside a turn (hook output, reminders, queued prompts, Codex's contextual
# fragments): sent in the same user message as the tool results they follow, or as the agent's own
# context, so they do not start a new assistant turn.
_IN_TURN_MARKERS = ("claude_code_meta", "claude_code_attachment", "codex_context")
# The opaque reasoning a Codex AI message sends back (codex_turn: encrypted items it carried).
OPAQUE_REASONING_KEY = "codex_encrypted_reasoning"
THINKING_RULES = ("all", "last_turn", "none")


def keeps_all_thinking(model: str | None) -> bool:
    """True when the provider sends a model the thinking of every earlier turn (models.yaml `thinking`)."""
    return thinking_rule(model) == "all"


def starts_turn(message: BaseMessage) -> bool:
    """A human message that opens a new assistant turn (not tool results, not in-turn additions)."""
    if not isinstance(message, HumanMessage) or message_kind(message) != "original":
        return False
    return not any(message.additional_kwargs.get(k) for k in _IN_TURN_MARKERS)


def has_thinking(message: BaseMessage) -> bool:
    """An AI message with thinking or reasoning blocks, or opaque reasoning it sends back (Codex)."""
    if not isinstance(message, AIMessage):
        return False
    if message.additional_kwargs.get(OPAQUE_REASONING_KEY):
        return True
    return isinstance(message.content, list) and any(isinstance(b, dict) and _is_thinking(b) for b in message.content)


def _is_thinking(block: dict[str, Any]) -> bool:
    kind = block.get("type")
    return isinstance(kind, str) and kind in THINKING_BLOCKS  # a list-valued type is not hashable


def without_thinking(message: AIMessage) -> AIMessage:
    """A copy of an AI message without its thinking or reasoning (same id)."""
    content: Any = message.content
    if isinstance(content, list):
        kept = [b for b in content if not (isinstance(b, dict) and _is_thinking(b))]
        content = kept
        if all(isinstance(b, dict) and b.get("type") == "text" for b in kept):
            content = "".join(str(b.get("text", "")) for b in kept if isinstance(b, dict))
    copy = message.model_copy(update={"content": content})
    kwargs = {k: v for k, v in message.additional_kwargs.items() if k != OPAQUE_REASONING_KEY}
    copy.additional_kwargs = {**kwargs, "ctxi_thinking_stripped": True}
    return copy


@dataclass(frozen=True)
class RecordedView:
    """The request of one step as recorded: `messages` is the history sent (read it at once: the walk
    reuses the list), `compactions`/`edits` what took effect just before this step."""

    step: int
    message_index: int
    response: AIMessage
    messages: list[BaseMessage]
    compactions: tuple[RecordedCompaction, ...]
    edits: tuple[RecordedEdit, ...]


class _Scan:
    """has_thinking and starts_turn over a list that only grows, each message read once."""

    __slots__ = ("src", "done", "first_thinking", "turns")

    def __init__(self, src: list[BaseMessage]) -> None:
        self.src = src
        self.done = 0
        self.first_thinking: int | None = None
        self.turns: list[int] = []  # positions of the messages that open a turn, in order

    def read(self, n: int) -> None:
        if len(self.src) < self.done:  # not the append-only list it was: read it again
            self.done, self.first_thinking, self.turns = 0, None, []
        for i in range(self.done, min(n, len(self.src))):
            m = self.src[i]
            if self.first_thinking is None and has_thinking(m):
                self.first_thinking = i
            if starts_turn(m):
                self.turns.append(i)
        self.done = max(self.done, min(n, len(self.src)))


class RecordedHistory:
    """A thread's recorded context events, with every rewritten message made once (see module doc)."""

    def __init__(self, thread: Thread) -> None:
        self.thread = thread
        self.rule = thinking_rule(thread.model)
        self.keeps_all_thinking = self.rule == "all"
        # Codex sends tool outputs as it recorded them into its history: cut (module docstring)
        self.cuts_outputs = thread.source_format == "codex"
        self.compactions_at: dict[int, list[RecordedCompaction]] = {}
        for c in sorted(thread.compactions, key=lambda c: c.index):
            self.compactions_at.setdefault(c.index, []).append(c)
        self.edits_at: dict[int, list[RecordedEdit]] = {}
        for e in sorted(thread.edits, key=lambda e: e.index):
            self.edits_at.setdefault(e.index, []).append(e)
        self._replacements: dict[int, list[BaseMessage]] = {}
        self._copies: dict[tuple[int, int], BaseMessage] = {}
        self._stripped: dict[int, AIMessage] = {}
        self._originals: dict[int, BaseMessage] = {}  # id(rewritten copy) -> the recorded message
        self._cut: dict[int, BaseMessage] = {}
        self._lock = threading.Lock()
        self._scans: list[_Scan] = []  # the lists behind the latest Snapshot views (provider_view)

    @property
    def has_events(self) -> bool:
        return bool(self.compactions_at or self.edits_at)

    # -- canonical rewritten messages -----------------------------------------------------------
    def replacement(self, compaction: RecordedCompaction) -> list[BaseMessage]:
        """What replaced the history before the compaction (its summary marked as one)."""
        key = id(compaction)
        with self._lock:
            hit = self._replacements.get(key)
            if hit is None:
                if compaction.replacement is not None:
                    # the leading system messages are the system prompt, sent with every request
                    # anyway (as the replay sends them): a replacement that repeats them (Codex's
                    # initial context) does not send them twice
                    prompt = {id(m) for m in self.thread.messages[: self.body_start()]}
                    prompt_ids = {m.id for m in self.thread.messages[: self.body_start()] if m.id}
                    hit = [m for m in compaction.replacement
                           if id(m) not in prompt and not (isinstance(m, SystemMessage) and m.id in prompt_ids)]
                else:
                    summary = HumanMessage(content=compaction.summary,
                                           id=compaction.message_id or f"recorded-summary-{compaction.index}")
                    hit = [mark(summary, "summary", recorded=True)]
                self._replacements[key] = hit
            return hit

    def apply_edit(self, edit: RecordedEdit, message: BaseMessage) -> BaseMessage:
        """`message` as the edit leaves it (the same object when the edit does not touch it)."""
        if edit.kind == "clear_tool_results":
            if isinstance(message, ToolMessage) and message.tool_call_id in edit.tool_call_ids:
                return self._copy(edit, message, lambda: mark(
                    ToolMessage(content=edit.placeholder, tool_call_id=message.tool_call_id, name=message.name,
                                status=message.status, id=message.id), "stub", cleared=True))
            if edit.clear_inputs and isinstance(message, AIMessage) and any(
                    tc.get("id") in edit.tool_call_ids for tc in message.tool_calls):
                return self._copy(edit, message, lambda: message.model_copy(update={"tool_calls": [
                    {**tc, "args": {}} if tc.get("id") in edit.tool_call_ids else tc for tc in message.tool_calls]}))
        elif edit.kind == "clear_thinking":
            if isinstance(message, AIMessage) and message.id in edit.message_ids and has_thinking(message):
                return self._copy(edit, message, lambda: without_thinking(message))
        return message

    def _copy(self, edit: RecordedEdit, message: BaseMessage, make: Any) -> BaseMessage:
        key = (id(edit), id(message))
        with self._lock:
            hit = self._copies.get(key)
            if hit is None:
                hit = self._copies[key] = make()
            return hit

    def stripped(self, message: AIMessage) -> AIMessage:
        """The AI message without its thinking, made once."""
        with self._lock:
            hit = self._stripped.get(id(message))
            if hit is None:
                hit = self._stripped[id(message)] = without_thinking(message)
                self._originals[id(hit)] = message
            return hit

    def original_of(self, message: BaseMessage) -> BaseMessage | None:
        """The recorded message a stripped copy was made from (None for anything else)."""
        return self._originals.get(id(message))

    def sent(self, message: BaseMessage) -> BaseMessage:
        """A recorded message as the agent put it into its request: a Codex tool output cut to its policy."""
        if not self.cuts_outputs or not isinstance(message, ToolMessage) or not isinstance(message.content, str):
            return message
        with self._lock:
            hit = self._cut.get(id(message))
            if hit is None:
                cut = truncate_text(message.content, recorded_output_tokens())
                hit = message if cut == message.content else mark(
                    message.model_copy(update={"content": cut}), "truncated", recorded_cut=True)
                self._cut[id(message)] = hit
            return hit

    def provider_view(self, messages: Sequence[BaseMessage], *, keep_all: bool | None = None,
                      rule: str | None = None) -> Sequence[BaseMessage]:
        """The history as the provider hands it to the model, by the thinking rule (module docstring;
        `rule` None: the model's own, `keep_all` True/False: "all"/"last_turn"): AI messages whose thinking
        is not kept lose it. Returns `messages` itself when nothing changes."""
        rule = rule or ({True: "all", False: "last_turn"}[keep_all] if keep_all is not None else self.rule)
        if rule == "all":
            return messages
        scan = self._scan(messages)
        if rule == "none":
            if scan is not None:
                if scan.first_thinking is None or scan.first_thinking >= len(messages):
                    return messages
            elif not any(has_thinking(m) for m in messages):
                return messages
            return [self.stripped(m) if has_thinking(m) else m for m in messages]  # type: ignore[arg-type]
        if scan is not None:
            k = bisect.bisect_left(scan.turns, len(messages))
            last_turn = scan.turns[k - 1] if k else -1
            if last_turn <= 0 or scan.first_thinking is None or scan.first_thinking >= last_turn:
                return messages
        else:
            last_turn = next((i for i in range(len(messages) - 1, -1, -1) if starts_turn(messages[i])), -1)
            if last_turn <= 0 or not any(has_thinking(m) for m in messages[:last_turn]):
                return messages
        return [self.stripped(m) if i < last_turn and isinstance(m, AIMessage) and has_thinking(m) else m
                for i, m in enumerate(messages)]

    def _scan(self, messages: Sequence[BaseMessage]) -> _Scan | None:
        """For a Snapshot view (the first n messages of a list the replay driver only appends to,
        engine/run/step_sums.py): where that list's first thinking message and its turn starts are, read
        once as the list grows. Scanning every view again made a replay O(steps x view): a Gemini CLI
        session of 10,000 messages called has_thinking 25 million times."""
        src = getattr(messages, "src", None)
        if type(src) is not list or type(messages).__name__ != "Snapshot":
            return None
        with self._lock:
            scan = next((sc for sc in self._scans if sc.src is src), None)
            if scan is None:
                scan = _Scan(src)
                self._scans = [scan, *self._scans[:3]]
            scan.read(len(messages))
            return scan

    # -- the walk -------------------------------------------------------------------------------
    def body_start(self) -> int:
        """Leading system messages are the system prompt, not history (as the replay treats them)."""
        n = 0
        for m in self.thread.messages:
            if not isinstance(m, SystemMessage):
                break
            n += 1
        return n

    def views(self) -> Iterator[RecordedView]:
        """The recorded request at every step, in order (before the provider's thinking rule)."""
        yield from self._walk([])

    def final_history(self) -> list[BaseMessage]:
        """What a next model call would be sent after the thread's last message (compactions applied)."""
        end: list[BaseMessage] = []
        for _ in self._walk(end):
            pass
        return end

    def _walk(self, end: list[BaseMessage]) -> Iterator[RecordedView]:
        history: list[BaseMessage] = []
        step = 0
        pending_c: list[RecordedCompaction] = []
        pending_e: list[RecordedEdit] = []
        for i in range(self.body_start(), len(self.thread.messages)):
            for c in self.compactions_at.get(i, ()):
                history = list(self.replacement(c))
                pending_c.append(c)
            for e in self.edits_at.get(i, ()):
                history = [self.apply_edit(e, m) for m in history]
                pending_e.append(e)
            m = self.thread.messages[i]
            if isinstance(m, AIMessage):
                yield RecordedView(step, i, m, history, tuple(pending_c), tuple(pending_e))
                pending_c, pending_e = [], []
                step += 1
            history.append(self.sent(m))
        for c in self.compactions_at.get(len(self.thread.messages), ()):
            history = list(self.replacement(c))
        end.extend(history)


# One history per thread object, shared by the calibration and every replay of that thread.
_histories: dict[int, tuple[weakref.ref[Thread], RecordedHistory]] = {}
_histories_lock = threading.Lock()


def recorded_history(thread: Thread, *, like: Thread | None = None) -> RecordedHistory:
    """The shared RecordedHistory of `thread` (made once per thread object).

    `like`: an earlier state of the same session (a followed thread before its new lines, sharing its
    message and record objects): the new history makes the same rewritten messages as that one's (the
    same objects), so what was counted and calibrated on them holds for the grown thread too
    (engine/run/resume.py). It only matters the first time `thread` is asked for."""
    key = id(thread)
    with _histories_lock:
        hit = _histories.get(key)
        if hit is not None and hit[0]() is thread:
            return hit[1]
        history = RecordedHistory(thread)
        before = _histories.get(id(like)) if like is not None else None
        if before is not None and before[0]() is like:
            # the memos are keyed by the records' and messages' own ids, which the two threads share
            history._replacements = before[1]._replacements
            history._copies = before[1]._copies
            history._stripped = before[1]._stripped

        def _drop(_ref: weakref.ref[Thread], key: int = key) -> None:
            # no lock here: a weakref callback may run inside a locked section (a GC pass), and a
            # dict pop is atomic; at interpreter exit the module globals may already be gone
            entries = _histories
            if entries is not None:
                entry = entries.get(key)
                if entry is not None and entry[0] is _ref:
                    entries.pop(key, None)

        _histories[key] = (weakref.ref(thread, _drop), history)
        return history


def histories_shared(old: Thread, new: Thread) -> bool:
    """Whether `new`'s history makes the same rewritten messages as `old`'s (`recorded_history(new, like=old)`
    was its first call): what was calibrated on them holds for both."""
    return recorded_history(new)._stripped is recorded_history(old)._stripped
