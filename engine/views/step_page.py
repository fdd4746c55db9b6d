"""The Step page's data: filters and search over a view, pages of it, tokens per tool, text diffs.

Pure functions over a StepRecord and its `engine.views.step.ViewEntry` list, so the page only draws
what these return and the tests check exact values. Nothing here imports Streamlit.
"""

from __future__ import annotations

import difflib
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from engine.run.run import StepRecord
from engine.thread.kinds import UNRECORDED_CATEGORIES
from engine.tokens.content import message_text, tool_call_text
from engine.tokens.counters import TokenCounter
from engine.views.step import DiffRow, ViewEntry, call_names, state_view_diff, view_entries

# What the kind filter offers, in this order. The first six are what a layer or the source made of
# a message (engine.thread.kinds.KINDS); "hidden" is a message the provider billed beyond its own text
# (engine.recorded.calibration: `ViewEntry.hidden`), which is not a kind of its own but what a user
# hunting for hidden tokens filters by.
FILTER_KINDS: tuple[str, ...] = ("stub", "summary", "reminder", "patch", "truncated", "memory", "hidden",
                                 "original")
UNKNOWN_TOOL = "(unknown tool)"


def entry_kinds(entry: ViewEntry) -> tuple[str, ...]:
    """The kinds a message can be filtered by: its own kind, plus "hidden" when it carries such tokens."""
    return (entry.kind, "hidden") if entry.hidden else (entry.kind,)


def entry_tools(entry: ViewEntry) -> tuple[str, ...]:
    """The tools a message calls or answers; a result whose call is nowhere in the step answers UNKNOWN_TOOL."""
    return entry.tools or ((UNKNOWN_TOOL,) if entry.role == "tool" else ())


def searchable_text(entry: ViewEntry) -> str:
    """What search looks through: the text, the name, and each tool call's name and arguments."""
    parts = [entry.text]
    if entry.name:
        parts.append(entry.name)
    for name, args in entry.tool_calls:
        parts.extend((name, args))
    return "\n".join(parts)


def _pattern(query: str) -> re.Pattern[str] | None:
    # a literal substring, case-insensitive: the query is user text, never a regular expression
    return re.compile(re.escape(query), re.IGNORECASE) if query else None


def count_matches(text: str, query: str) -> int:
    """Non-overlapping case-insensitive occurrences of `query` in `text` (0 for an empty query)."""
    pattern = _pattern(query)
    return sum(1 for _ in pattern.finditer(text)) if pattern is not None else 0


@dataclass(frozen=True)
class StepFilter:
    """What the Step page shows of a view: empty selections and an empty query keep everything."""

    roles: frozenset[str] = frozenset()
    tools: frozenset[str] = frozenset()
    kinds: frozenset[str] = frozenset()
    query: str = ""

    def keeps(self, entry: ViewEntry) -> bool:
        """Whether the entry passes the role, tool and kind selections (search is counted apart)."""
        if self.roles and entry.role not in self.roles:
            return False
        if self.tools and not self.tools & set(entry_tools(entry)):
            return False
        return not (self.kinds and not self.kinds & set(entry_kinds(entry)))


@dataclass(frozen=True)
class Shown:
    """The entries a filter keeps, each with its search matches, and the totals over them."""

    entries: tuple[ViewEntry, ...]
    matches: tuple[int, ...]  # per shown entry; all 0 without a query
    total_matches: int

    def __len__(self) -> int:
        return len(self.entries)


def apply_filter(entries: Sequence[ViewEntry], flt: StepFilter, haystacks: Sequence[str] | None = None) -> Shown:
    """The entries that pass the filter and, with a query, contain it at least once."""
    texts = haystacks if haystacks is not None else [searchable_text(e) for e in entries]
    pattern = _pattern(flt.query)
    kept: list[ViewEntry] = []
    counts: list[int] = []
    for entry, text in zip(entries, texts, strict=True):
        if not flt.keeps(entry):
            continue
        n = sum(1 for _ in pattern.finditer(text)) if pattern is not None else 0
        if pattern is not None and n == 0:
            continue
        kept.append(entry)
        counts.append(n)
    return Shown(tuple(kept), tuple(counts), sum(counts))


@dataclass(frozen=True)
class Snippet:
    """A match with a little text on each side, flattened to one line (shown as text, never HTML)."""

    before: str
    match: str
    after: str


def _flat(text: str) -> str:
    return " ".join(text.split())


def _spaced(text: str) -> str:
    # whitespace runs become one space, kept at the ends: a snippet's parts join back as they read
    return re.sub(r"\s+", " ", text)


def snippets(text: str, query: str, *, context_chars: int = 60, limit: int = 3) -> list[Snippet]:
    """The first `limit` matches of `query` in `text`, each with `context_chars` around it."""
    pattern = _pattern(query)
    if pattern is None:
        return []
    out: list[Snippet] = []
    for m in pattern.finditer(text):
        if len(out) >= limit:
            break
        start, stop = m.span()
        before = text[max(0, start - context_chars):start]
        after = text[stop:stop + context_chars]
        out.append(Snippet(("…" if start > context_chars else "") + _spaced(before).lstrip(), _spaced(m.group()),
                           _spaced(after).rstrip() + ("…" if stop + context_chars < len(text) else "")))
    return out


# -- cards: a model call's message with the results of its tool calls -------------------------
@dataclass(frozen=True)
class Card:
    """What the Step page draws as one card: a message, and for an AI message the results of its tool
    calls found in the same view, in the order of the calls (issue 35: a call and its result were two
    rows apart). A result whose call is not in the view (summarized away) is a card of its own."""

    head: int  # index into the step's entries
    results: tuple[tuple[int, int], ...] = ()  # (call index in head.tool_calls, entry index)

    @property
    def members(self) -> tuple[int, ...]:
        return (self.head, *(entry for _, entry in self.results))


def cards(entries: Sequence[ViewEntry]) -> tuple[Card, ...]:
    """The view's entries grouped into cards (see Card); every entry is in exactly one card."""
    answered: dict[str, int] = {}
    for i, e in enumerate(entries):
        if e.role == "tool" and e.tool_call_id and e.tool_call_id not in answered:
            answered[e.tool_call_id] = i
    taken: set[int] = set()
    heads: dict[int, list[tuple[int, int]]] = {}
    for i, e in enumerate(entries):
        if e.role != "ai" or not e.call_ids:
            continue
        results = [(c, answered[cid]) for c, cid in enumerate(e.call_ids) if cid in answered and answered[cid] > i]
        heads[i] = results
        taken.update(r for _, r in results)
    return tuple(Card(i, tuple(heads.get(i, ()))) for i in range(len(entries)) if i not in taken)


# Tools that replace a string in a file, and where their arguments keep the file, the old text and
# the new text: the Step page shows such a call as a diff of old -> new instead of its JSON arguments.
# Claude Code `Edit` (file_path, old_string, new_string, replace_all) and `MultiEdit` (file_path, edits:
# [{old_string, new_string}]) — its tool schema, docs.claude.com "Claude Code settings: tools available";
# Deep Agents `edit_file` (file_path, old_string, new_string: deepagents 0.7.32 middleware/filesystem.py);
# Gemini CLI `replace` (file_path, old_string, new_string: packages/core/src/tools/edit.ts); OpenHands and
# SWE-agent `str_replace_editor` with command "str_replace" (path, old_str, new_str: openhands
# agenthub/codeact_agent/tools/str_replace_editor.py).
EDIT_TOOLS: dict[str, tuple[str, str, str]] = {
    "Edit": ("file_path", "old_string", "new_string"),
    "edit_file": ("file_path", "old_string", "new_string"),
    "replace": ("file_path", "old_string", "new_string"),
    "str_replace_editor": ("path", "old_str", "new_str"),
    "str_replace_based_edit_tool": ("path", "old_str", "new_str"),
}


def edit_diff(name: str, args_json: str) -> str | None:
    """A string-replacing edit call as a unified diff of its old and new text (several for MultiEdit), the
    file named in the header; None for any other call or arguments that are not such an edit."""
    try:
        args = json.loads(args_json)
    except ValueError:
        return None
    if not isinstance(args, dict):
        return None
    pairs: list[tuple[Any, Any]] = []
    if name == "MultiEdit" and isinstance(args.get("edits"), list):
        path = args.get("file_path")
        pairs = [(e.get("old_string"), e.get("new_string")) for e in args["edits"] if isinstance(e, dict)]
    elif name in EDIT_TOOLS:
        path_key, old_key, new_key = EDIT_TOOLS[name]
        if name.startswith("str_replace") and args.get("command") not in (None, "str_replace"):
            return None
        path = args.get(path_key)
        pairs = [(args.get(old_key), args.get(new_key))]
    if not pairs or not all(isinstance(o, str) and isinstance(n, str) for o, n in pairs):
        return None
    label = str(path) if isinstance(path, str) else "file"
    chunks = []
    for old, new in pairs:
        chunks.append("\n".join(difflib.unified_diff(old.splitlines(), new.splitlines(), f"{label} (before)",
                                                      f"{label} (after)", n=3, lineterm="")))
    return "\n".join(chunks)


@dataclass(frozen=True)
class ShownCards:
    """The cards a filter keeps (a card passes when any of its messages does), each with its matches."""

    cards: tuple[Card, ...]
    matches: tuple[int, ...]
    total_matches: int

    def __len__(self) -> int:
        return len(self.cards)


def filter_cards(detail: StepDetail, flt: StepFilter) -> ShownCards:
    """The step's cards that hold a message passing the filter (and, with a query, containing it)."""
    shown = apply_filter(detail.entries, flt, detail.haystacks)
    hits = {e.position: n for e, n in zip(shown.entries, shown.matches, strict=True)}
    positions = [e.position for e in detail.entries]
    kept: list[Card] = []
    counts: list[int] = []
    for card in detail.cards:
        members = [positions[i] for i in card.members]
        if any(p in hits for p in members):
            kept.append(card)
            counts.append(sum(hits.get(p, 0) for p in members))
    return ShownCards(tuple(kept), tuple(counts), sum(counts))


# -- search across the session -----------------------------------------------------------------
@dataclass(frozen=True)
class SessionHits:
    """Where a text appears in the views of a whole run: the first and last step, and how many steps."""

    query: str
    first: int | None
    last: int | None
    steps: int
    messages: int  # distinct messages holding it

    def sentence(self) -> str:
        if self.first is None:
            return "in no step's view of this session"
        where = (f"at step {self.first:,} only" if self.first == self.last
                 else f"first at step {self.first:,}, last at step {self.last:,}")
        return f"in the view of {self.steps:,} step{'s' if self.steps != 1 else ''}: {where} ({self.messages:,} message" \
               f"{'s' if self.messages != 1 else ''})"


SESSION_INDEX = "step_page.session_index"


def _session_index(run: Any) -> list[tuple[str, list[tuple[int, int]]]]:
    """Each distinct message of the run's views (system prompts included): its searchable text and the
    step ranges whose view holds it. Built once per run (kept in `Run.derived`): a message sits in the
    views of consecutive steps until a layer removes it, so a range or two each."""
    hit = run.derived.get(SESSION_INDEX)
    if hit is not None:
        return hit  # type: ignore[no-any-return]
    ranges: dict[str, list[list[int]]] = {}
    texts: dict[str, str] = {}
    names = call_names(*(s.view for s in run.steps[-1:]))
    for step in run.steps:
        messages = ([step.system] if step.system is not None else []) + list(step.view)
        for m in messages:
            key = f"{m.type}:{m.id}" if m.id else f"{m.type}:{id(m)}"
            if key not in texts:
                parts = [message_text(m)]
                if isinstance(m, AIMessage):
                    parts += [f"{tc.get('name', '')} {tool_call_text(tc)}" for tc in m.tool_calls]
                if isinstance(m, ToolMessage) and (m.name or names.get(m.tool_call_id)):
                    parts.append(str(m.name or names.get(m.tool_call_id)))
                texts[key] = "\n".join(parts)
            spans = ranges.setdefault(key, [])
            if spans and spans[-1][1] == step.index - 1:
                spans[-1][1] = step.index
            elif not spans or spans[-1][1] != step.index:
                spans.append([step.index, step.index])
    index = [(texts[k], [(a, b) for a, b in v]) for k, v in ranges.items()]
    run.derived[SESSION_INDEX] = index
    return index


def session_hits(run: Any, query: str) -> SessionHits:
    """The steps of `run` whose view contains `query` (case-insensitive, literal): the first, the last,
    how many. The Step page's search covered one step's view only (issue 35)."""
    pattern = _pattern(query)
    if pattern is None:
        return SessionHits(query, None, None, 0, 0)
    steps: set[int] = set()
    found = 0
    for text, spans in _session_index(run):
        if pattern.search(text):
            found += 1
            for a, b in spans:
                steps.update(range(a, b + 1))
    if not steps:
        return SessionHits(query, None, None, 0, found)
    return SessionHits(query, min(steps), max(steps), len(steps), found)


# -- pages -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Page:
    """One page of a list: 1-based `number` of `pages`, items [start, stop)."""

    number: int
    pages: int
    start: int
    stop: int


def page_of(total: int, number: int, size: int) -> Page:
    """Page `number` (clamped to 1..pages) of `total` items, `size` per page; an empty list has one empty page."""
    size = max(1, size)
    pages = max(1, -(-total // size))
    number = min(max(1, number), pages)
    start = (number - 1) * size
    return Page(number, pages, start, min(total, start + size))


# -- events ----------------------------------------------------------------------------------
def event_step(steps: Sequence[StepRecord], k: int, direction: int) -> int | None:
    """The nearest step after (direction > 0) or before (< 0) step `k` that has events, else None."""
    order = range(k + 1, len(steps)) if direction > 0 else range(min(k, len(steps)) - 1, -1, -1)
    return next((i for i in order if steps[i].events), None)


# -- tokens per tool -------------------------------------------------------------------------
@dataclass(frozen=True)
class ToolTokens:
    """One tool's share of a view: its calls' argument tokens and its results' tokens."""

    tool: str
    calls: int
    call_tokens: int
    results: int
    result_tokens: int

    @property
    def tokens(self) -> int:
        return self.call_tokens + self.result_tokens


def split_tokens(total: int, weights: Sequence[int]) -> list[int]:
    """`total` shared in proportion to `weights` (largest remainder; ties go to the earlier one), summing to `total`."""
    if not weights:
        return []
    weight_sum = sum(weights)
    if weight_sum <= 0:
        weights, weight_sum = [1] * len(weights), len(weights)
    exact = [total * w / weight_sum for w in weights]
    shares = [int(x) for x in exact]
    left = total - sum(shares)
    for i in sorted(range(len(weights)), key=lambda i: (-(exact[i] - shares[i]), i))[:left]:
        shares[i] += 1
    return shares


def tool_tokens(step: StepRecord, counter: TokenCounter) -> list[ToolTokens]:
    """Tokens of the view per tool name, like Claude Code's /context but by tool: Read vs Bash vs Edit.

    A result counts toward the tool it answers, whatever a layer made of it (an offloaded stub, a
    patched call), with the tokens the view charges for it (`counter.breakdown`, what the provider billed
    beyond its text left out: those are their own categories). An AI message's tool-call tokens (the
    `tool_calls` category) are shared among its calls in proportion to each call's own name and
    arguments, so the rows add up to the view's `tool_calls` category exactly.
    """
    names = call_names(step.state, step.view)
    calls: Counter[str] = Counter()
    call_tokens: Counter[str] = Counter()
    results: Counter[str] = Counter()
    result_tokens: Counter[str] = Counter()
    for m in step.view:
        if isinstance(m, AIMessage) and m.tool_calls:
            tcs = m.tool_calls
            weights = [counter.count_text(str(tc.get("name", ""))) + counter.count_text(tool_call_text(tc)) for tc in tcs]
            for tc, share in zip(tcs, split_tokens(int(counter.breakdown(m).get("tool_calls", 0)), weights), strict=True):
                tool = str(tc.get("name") or UNKNOWN_TOOL)
                calls[tool] += 1
                call_tokens[tool] += share
        elif isinstance(m, ToolMessage):
            tool = m.name or names.get(m.tool_call_id) or UNKNOWN_TOOL
            results[tool] += 1
            result_tokens[tool] += sum(v for c, v in counter.breakdown(m).items() if c not in UNRECORDED_CATEGORIES)
    rows = [ToolTokens(t, calls[t], call_tokens[t], results[t], result_tokens[t]) for t in {*calls, *results}]
    return sorted(rows, key=lambda r: (-r.tokens, r.tool))


# -- state vs view, as text ------------------------------------------------------------------
def message_body(m: BaseMessage) -> str:
    """A message as text for the diff: its content, then one line per tool call (name and arguments)."""
    lines = [message_text(m)]
    if isinstance(m, AIMessage):
        lines.extend(f"↳ {tc.get('name', '')} {tool_call_text(tc)}" for tc in m.tool_calls)
    return "\n".join(line for line in lines if line)


def preview(text: str, chars: int = 120) -> str:
    """The start of a text on one line, at most `chars` characters (an ellipsis when cut)."""
    flat = _flat(text)
    return flat if len(flat) <= chars else flat[: chars - 1] + "…"


def text_diff(before: str, after: str, *, context_lines: int = 2, max_lines: int = 200,
              line_chars: int = 400) -> str:
    """A unified diff of two texts (state → view), long lines cut and at most `max_lines` lines."""
    def cut(lines: list[str]) -> list[str]:
        return [line if len(line) <= line_chars else line[:line_chars] + f" … (+{len(line) - line_chars:,} chars)"
                for line in lines]

    diff = list(difflib.unified_diff(cut(before.splitlines()), cut(after.splitlines()), "state", "view",
                                     n=context_lines, lineterm=""))
    if len(diff) > max_lines:
        diff = [*diff[:max_lines], f"… {len(diff) - max_lines:,} more diff lines"]
    return "\n".join(diff)


# -- everything the page needs for one step, computed once ---------------------------------------
class StepDetail:
    """A step's derived data for the page: entries, their search texts, options, tokens per tool, diff rows.

    The View tab's data (entries, search texts, filter options) is computed at once: opening a step
    shows it. Tokens per tool and the state-vs-view rows are computed on first use (their tabs are
    lazy): on a ~300-message step they were ~40 % of the page's script time (docs/benchmarks.md,
    2026-12-02), spent on every step opened whether or not those tabs were looked at.
    """

    def __init__(self, step: StepRecord, counter: TokenCounter) -> None:
        self._step = step
        self._counter = counter
        entries = tuple(view_entries(step, counter))
        state_ids = {str(m.id) for m in step.state}
        tools: Counter[str] = Counter()
        kinds: Counter[str] = Counter()
        for e in entries:
            tools.update(entry_tools(e))
            kinds.update(entry_kinds(e))
        self.entries: tuple[ViewEntry, ...] = entries
        self.haystacks: tuple[str, ...] = tuple(searchable_text(e) for e in entries)
        # per entry; None for the system prompt (never in state)
        self.in_state: tuple[bool | None, ...] = tuple(None if e.role == "system" else e.id in state_ids
                                                       for e in entries)
        self.roles: dict[str, int] = dict(Counter(e.role for e in entries))  # role -> messages, first seen first
        # tool -> messages that call or answer it, most first
        self.tools: dict[str, int] = dict(sorted(tools.items(), key=lambda kv: (-kv[1], kv[0])))
        self.kinds: dict[str, int] = {k: kinds[k] for k in FILTER_KINDS if kinds[k]}  # FILTER_KINDS order
        self.cards: tuple[Card, ...] = cards(entries)

    @cached_property
    def tool_tokens(self) -> tuple[ToolTokens, ...]:
        return tuple(tool_tokens(self._step, self._counter))

    @cached_property
    def diff(self) -> tuple[DiffRow, ...]:
        return tuple(state_view_diff(self._step, self._counter))


def step_detail(step: StepRecord, counter: TokenCounter) -> StepDetail:
    """A step's entries, search texts and filter options; its tokens per tool and state-vs-view rows on first use."""
    return StepDetail(step, counter)


__all__ = [
    "Card", "EDIT_TOOLS", "SessionHits", "ShownCards", "cards", "edit_diff", "filter_cards", "session_hits",
    "FILTER_KINDS", "UNKNOWN_TOOL", "Page", "Shown", "Snippet", "StepDetail", "StepFilter", "ToolTokens",
    "apply_filter", "count_matches", "entry_kinds", "entry_tools", "event_step", "message_body", "page_of", "preview",
    "searchable_text", "snippets", "split_tokens", "step_detail", "text_diff", "tool_tokens",
]
