"""Pick the facts a person would plant and check (needles) when the user gives none.

A needle the thread records itself comes first (the needle scenario stores its planted codename
in `thread.extra["needle"]["text"]`). Then, deterministically, facts stated where a person states
them, best source first:

1. what the person typed: the session intent (the first human request), then the other early
   human messages a person wrote — not the harness's own messages (Claude Code's meta messages and
   its `<system-reminder>`, `<command-name>`, `<local-command-stdout>`, `<task-notification>` blocks,
   "[Request interrupted …]", a SWE-agent demonstration);
2. decisions the agent announced ("I'll use `X`", "let's go with X", "decided to use X"): the name;
3. facts a tool result states as facts ("the fallback region is KESTREL-09": a value after
   *is* / *are* / *=* / *:*);
4. what the agent's first calls worked on: the files they read or wrote and the commands they ran
   (engine.evals.fact_classes, the survival classes).

Kinds of fact, best first: codes (BLUE-HERON-7, ERR_42, JIRA-1234: upper-case segments with a
digit), file paths (`src/billing/invoice.py`), commands, named slugs (spotter-a0y, build_42:
lower-case segments with a digit, or a slug the message names twice), names (CamelCase such as
TimeDelta, or capitalised words mid-sentence such as Pixel Representation), and numbers with what
they count (8443 in "port 8443", $4,200, 30 days). Never a needle: a hex string of 7+ characters (a
git hash, a UUID piece), part of a path or URL (a path is one needle whole), a tool's name, markup (a
tag's name, a code fence's language), a bare number. Facts occurring at most `MAX_OCCURRENCES` times
in the thread are picked (a fact stated everywhere is kept trivially): the best source, the best kind,
the rarest and the earliest first. The files and commands of the first calls (source 4) are picked
only when no person, decision or tool result stated a rare fact, and facts stated more often only when
there is nothing else: a session whose every stated fact recurs (Claude Code sessions name their task
in every other message) still gets the needles a person would plant.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from engine.evals.compactions import searchable_text
from engine.evals.fact_classes import facts_in_message, paths_in
from engine.thread.kinds import message_kind
from engine.thread.model import Thread
from engine.tokens.content import message_text

_CODE = re.compile(r"\b[A-Z][A-Z0-9]*(?:[-_][A-Z0-9]+)+\b")
_SLUG = re.compile(r"(?<![\w/.-])[a-z][a-z0-9]*(?:[-_][a-z0-9]+)+(?![\w/-]|\.\w)")
_CAMEL = re.compile(r"\b[A-Z][a-z]+(?:[A-Z][a-z0-9]+)+\b")
_WORDS = re.compile(r"(?<=[a-z0-9,;:(] )[A-Z][a-z]{2,}(?: [A-Z][a-z]{2,})+\b")
_COUNTED = re.compile(
    r"(?:\b(?:port|version|v|pid|issue|ticket|pr|build|id|code|budget|limit|timeout)\s*#?\s*|\$|€|£|#)"
    r"(\d[\d,]*(?:\.\d+)?)\b"
    r"|\b(\d[\d,]*(?:\.\d+)?)\s?(?:%|ms|s|seconds|minutes|hours|days|weeks|months|years|gb|mb|kb|tb|"
    r"k|tokens|users|requests|dollars|usd|eur)\b(?![/\\])", re.IGNORECASE)  # not sed's `1,10s/a/b/`
_HEX = re.compile(r"^(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}$", re.IGNORECASE)
# "I'll use `X`", "let's go with X", "decided to use X", "switching to X"
_DECISION = re.compile(
    r"\b(?:I'll|I will|we'll|we will|let's|let us|decided to|going to|chose to|choose to)\s+"
    r"(?:use|go with|switch to|keep|adopt|pick)\s+(?:the\s+)?(`?)([A-Za-z][\w.:-]*[\w])`?", re.IGNORECASE)
_STATED = re.compile(r"\b(?:is|are|was|=|:)\s+`?([A-Za-z0-9][\w.-]*[\w])`?")
# The harness's own user-role messages, not a person's words: Claude Code wraps them in tags
# (<system-reminder>, <command-name>, <local-command-stdout>, <task-notification>), Codex CLI too
# (<environment_context>, <user_instructions>); a person does not open a message with a tag.
_HARNESS_OPENING = re.compile(r"^(?:<[A-Za-z][\w-]*[ >]|\[Request interrupted)")
_HARNESS_MARKS = ("claude_code_meta", "swe_agent_demo")

KINDS: dict[str, int] = {"code": 6, "path": 5, "command": 4, "slug": 3, "name": 2, "number": 1}
SOURCES: dict[str, int] = {"intent": 5, "typed": 4, "decision": 3, "tool": 2, "action": 1}
EARLY_CALLS = 6  # the agent's first calls say what the session works on; later ones wander
MIN_EARLY_MESSAGES = 12
MAX_CANDIDATES = 60
SCAN_CHARS_PER_MESSAGE = 20_000  # planted facts sit near the start of what a message says
SCAN_CHARS_TOTAL = 300_000  # bounds the cost on huge threads; the scan stays deterministic
MAX_OCCURRENCES = 3  # in the whole thread; more and the fact is everywhere, so retention is trivial


@dataclass(frozen=True)
class Candidate:
    text: str
    kind: str
    source: str
    position: int  # thread message index of the first occurrence
    occurrences: int = 0

    @property
    def rank(self) -> tuple[int, int]:
        return SOURCES[self.source], KINDS[self.kind]


def typed_by_person(m: BaseMessage) -> bool:
    """A human message a person wrote, not one the agent's harness injected in the user role."""
    if not isinstance(m, HumanMessage) or message_kind(m) != "original":
        return False
    if any(m.additional_kwargs.get(mark) for mark in _HARNESS_MARKS):
        return False
    text = message_text(m).lstrip()
    return bool(text) and not _HARNESS_OPENING.match(text)


def _in_path_or_url(text: str, start: int, end: int) -> bool:
    before = text[max(0, start - 1):start]
    after = text[end:end + 1]
    return before in ("/", "\\", ".", "@", "=") or after in ("/", "\\") or (
        after == "." and end + 1 < len(text) and text[end + 1].isalnum())


def _is_markup(text: str, start: int) -> bool:
    """A tag's name (`<example_response>`, `</output>`) or a code fence's info string (```bash):
    the harness's markup, not a fact anybody states."""
    return text[max(0, start - 1):start] == "<" or text[max(0, start - 2):start] == "</" or (
        text[max(0, start - 3):start] == "```")


def facts_in(text: str, *, tools: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    """(fact, kind) stated in `text`, in order of appearance (see the module doc for the kinds)."""
    found: list[tuple[int, str, str]] = []

    def add(start: int, end: int, kind: str) -> None:
        word = text[start:end]
        if _HEX.match(word) or word in tools or _in_path_or_url(text, start, end) or _is_markup(text, start):
            return
        found.append((start, word, kind))

    for m in _CODE.finditer(text):
        if any(c.isdigit() for c in m.group(0)):
            add(m.start(), m.end(), "code")
    for m in _SLUG.finditer(text):
        word = m.group(0)
        if any(c.isdigit() for c in word) or text.count(word) >= 2:
            add(m.start(), m.end(), "slug")
    for pattern in (_CAMEL, _WORDS):
        for m in pattern.finditer(text):
            add(m.start(), m.end(), "name")
    for m in _COUNTED.finditer(text):
        group = 1 if m.group(1) is not None else 2
        number = m.group(group)
        if len(number.replace(",", "").replace(".", "")) >= 2:
            add(m.start(group), m.end(group), "number")
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for _, word, kind in sorted(found, key=lambda f: (f[0], -KINDS[f[2]])):
        if word.lower() not in seen:
            seen.add(word.lower())
            out.append((word, kind))
    return out


def _decisions(text: str, tools: frozenset[str]) -> list[tuple[str, str]]:
    """Names the agent announced it would use: quoted as code (`X`), or a code, slug or name by shape."""
    out: list[tuple[str, str]] = []
    for m in _DECISION.finditer(text):
        quoted, word = m.group(1), m.group(2)
        shaped = [k for w, k in facts_in(word, tools=tools) if w == word]
        if len(word) >= 3 and not _HEX.match(word) and word not in tools and (quoted or shaped):
            out.append((word, shaped[0] if shaped else "name"))
    return out


def _stated(text: str, tools: frozenset[str]) -> list[tuple[str, str]]:
    """Facts a tool result states as values ("X is VALUE"): the values only, never a bare number."""
    out: list[tuple[str, str]] = []
    for m in _STATED.finditer(text):
        out.extend((w, k) for w, k in facts_in(m.group(1), tools=tools) if w == m.group(1))
    return out


def candidates(thread: Thread) -> list[Candidate]:
    """Candidate facts from the early messages, each with its best source and kind."""
    early = max(MIN_EARLY_MESSAGES, len(thread.messages) // 4)
    tools = frozenset(_tool_names(thread))
    intent = next((m for m in thread.messages if typed_by_person(m)), None)
    best: dict[str, Candidate] = {}
    budget = SCAN_CHARS_TOTAL
    calls = 0
    for pos, m in enumerate(thread.messages[:early]):
        if isinstance(m, AIMessage) and calls < EARLY_CALLS:
            for word, kind in _worked_on(m, EARLY_CALLS - calls):
                key = word.lower()
                if key not in best:
                    best[key] = Candidate(word, kind, "action", pos)
            calls += len(m.tool_calls)
        if m is intent:
            source = "intent"
        elif typed_by_person(m):
            source = "typed"
        elif isinstance(m, AIMessage):
            source = "decision"
        elif isinstance(m, ToolMessage) and message_kind(m) == "original":
            source = "tool"
        else:
            continue
        text = message_text(m)[: min(SCAN_CHARS_PER_MESSAGE, budget)]
        budget -= len(text)
        facts = (_decisions(text, tools) if source == "decision" else _stated(text, tools) if source == "tool"
                 else [*((p, "path") for p in paths_in(text)), *facts_in(text, tools=tools)])
        for word, kind in facts:
            key = word.lower()
            new = Candidate(word, kind, source, pos)
            old = best.get(key)
            if old is None or new.rank > old.rank:
                best[key] = Candidate(word, kind, source, old.position if old else pos)
        if len(best) >= MAX_CANDIDATES or budget <= 0:
            break
    return list(best.values())


def _worked_on(message: AIMessage, limit: int) -> list[tuple[str, str]]:
    """The files an AI message's first calls read or wrote and the commands they ran."""
    out: list[tuple[str, str]] = []
    for tc in message.tool_calls[:limit]:
        for fact in facts_in_message(AIMessage("", tool_calls=[tc])):
            # a person plants a file or a short command that names something (`bd show spotter-dov.1`), not a
            # shell pipeline or a bare `ls -la`
            named = any(not w.startswith("-") for w in fact.value.split()[1:])
            if (fact.cls == "path" and len(fact.value) <= 120) or (
                    fact.cls == "command" and len(fact.value) <= 60 and named):
                out.append((fact.value, fact.cls))
    return out


def _tool_names(thread: Thread) -> set[str]:
    names = {str(t.get("name")) for t in thread.tools if isinstance(t, dict) and t.get("name")}
    for m in thread.messages:
        if isinstance(m, AIMessage):
            names.update(str(tc.get("name")) for tc in m.tool_calls if tc.get("name"))
    return names


def _order(c: Candidate) -> tuple[int, int, int, int, str]:
    return -c.rank[0], -c.rank[1], c.occurrences, c.position, c.text


def pick_needles(thread: Thread, k: int = 3) -> list[str]:
    """Up to `k` facts of `thread` a person would plant (see the module doc for the rule)."""
    recorded = thread.extra.get("needle") if isinstance(thread.extra, dict) else None
    picked: list[str] = []
    if isinstance(recorded, dict) and isinstance(recorded.get("text"), str) and recorded["text"].strip():
        picked.append(recorded["text"].strip())
    found = candidates(thread)
    if not found or len(picked) >= k:
        return picked[:k]
    corpus = "\n".join(searchable_text(m) for m in thread.messages).lower()
    counted = [Candidate(c.text, c.kind, c.source, c.position, corpus.count(c.text.lower())) for c in found]
    rare = [c for c in counted if c.occurrences <= MAX_OCCURRENCES]
    stated = sorted((c for c in rare if c.source != "action"), key=_order)
    worked_on = sorted((c for c in rare if c.source == "action"), key=_order)
    frequent = sorted((c for c in counted if c.occurrences > MAX_OCCURRENCES), key=_order)
    # what people, the agent and its tools stated comes first; the files and commands of the first calls only
    # when nothing was stated; facts stated everywhere only when there is nothing else
    ranked = stated or worked_on or frequent
    for c in ranked:
        low = c.text.lower()
        # a part of an already picked fact (HERON inside BLUE-HERON-7) adds nothing
        if any(low in p.lower() or p.lower() in low for p in picked):
            continue
        picked.append(c.text)
        if len(picked) == k:
            break
    return picked
