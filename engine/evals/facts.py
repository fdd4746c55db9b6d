"""Pick distinctive facts (needles) from a thread when the user gives none.

A needle the thread records itself comes first (the needle scenario stores its planted codename
in `thread.extra["needle"]["text"]`). Then, deterministically: the candidates are codes
(BLUE-HERON-7, ERR_42), letter-digit identifiers (x9f3a2), long numbers (48213) and mid-sentence
capitalized or CamelCase names, taken from the early human messages and tool results (the first
quarter of the thread, at least 12 messages). Facts that occur more than 3 times in the whole
thread are skipped (they are everywhere). Facts a human message states beat facts from tool
results (a user's instruction is the classic needle); then codes beat identifiers beat numbers
beat names; then the rarest and the earliest win.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from langchain_core.messages import HumanMessage, ToolMessage

from engine.kinds import message_kind
from engine.thread import Thread
from engine.tokens import message_text

_PATTERNS: tuple[tuple[str, int, re.Pattern[str]], ...] = (
    ("code", 4, re.compile(r"\b[A-Z][A-Z0-9]*(?:[-_][A-Z0-9]+)+\b")),
    ("identifier", 3, re.compile(r"\b(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]{5,}\b")),
    ("number", 2, re.compile(r"(?<![\w.])\d{4,}(?:\.\d+)?(?![\w.])")),
    ("name", 1, re.compile(r"\b(?:[A-Z][a-z]+){2,}\b|(?<=[a-z,;:] )[A-Z][a-z]{3,}\b")),
)
MIN_EARLY_MESSAGES = 12
MAX_CANDIDATES = 60
SCAN_CHARS_PER_MESSAGE = 20_000  # planted facts sit near the start of what a message says
SCAN_CHARS_TOTAL = 300_000  # bounds the cost on huge threads; the scan stays deterministic
MAX_OCCURRENCES = 3  # in the whole thread; more and the fact is everywhere, so retention is trivial


@dataclass(frozen=True)
class Candidate:
    text: str
    kind: str
    weight: int
    position: int  # thread message index of the first occurrence
    occurrences: int = 0
    from_human: bool = False


def candidates(thread: Thread) -> list[Candidate]:
    """Candidate facts from the early human messages and tool results, in order of appearance."""
    early = max(MIN_EARLY_MESSAGES, len(thread.messages) // 4)
    seen: dict[str, Candidate] = {}
    budget = SCAN_CHARS_TOTAL
    for pos, m in enumerate(thread.messages[:early]):
        if not isinstance(m, (HumanMessage, ToolMessage)) or message_kind(m) != "original":
            continue
        text = message_text(m)[: min(SCAN_CHARS_PER_MESSAGE, budget)]
        budget -= len(text)
        for kind, weight, pattern in _PATTERNS:
            for match in pattern.finditer(text):
                word = match.group(0)
                key = word.lower()
                if key not in seen or seen[key].weight < weight:
                    old = seen.get(key)
                    seen[key] = Candidate(word, kind, weight, old.position if old else pos,
                                          from_human=(old.from_human if old else False) or isinstance(m, HumanMessage))
        if len(seen) >= MAX_CANDIDATES or budget <= 0:
            break
    return list(seen.values())


def pick_needles(thread: Thread, k: int = 3) -> list[str]:
    """Up to `k` distinctive facts of `thread` (see the module doc for the rule)."""
    recorded = thread.extra.get("needle") if isinstance(thread.extra, dict) else None
    picked: list[str] = []
    if isinstance(recorded, dict) and isinstance(recorded.get("text"), str) and recorded["text"].strip():
        picked.append(recorded["text"].strip())
    found = candidates(thread)
    if not found or len(picked) >= k:
        return picked[:k]
    corpus = "\n".join(message_text(m) for m in thread.messages).lower()
    counted = [Candidate(c.text, c.kind, c.weight, c.position, corpus.count(c.text.lower()), c.from_human)
               for c in found]
    rare = [c for c in counted if c.occurrences <= MAX_OCCURRENCES]
    ranked = sorted(rare, key=lambda c: (not c.from_human, -c.weight, c.occurrences, c.position, c.text))
    for c in ranked:
        low = c.text.lower()
        # a part of an already picked fact (HERON inside BLUE-HERON-7) adds nothing
        if any(low in p.lower() or p.lower() in low for p in picked):
            continue
        picked.append(c.text)
        if len(picked) == k:
            break
    return picked
