"""Goal drift: after a compaction, is the session intent (the first human request) still there?

At every step from the first compaction on, the intent is
- `kept` when the first human message (same id, or a non-summary view message containing its
  text) is still in the view;
- `summary` when a summary in the view has an intent section (LangChain's `## SESSION INTENT`, or
  Claude Code's `Primary Request and Intent`) that covers at least 60 % of the intent's content
  words, or quotes word for word a sentence of the request that carries at least 3 content words
  (Claude Code's compaction prompt asks for "all of the user's explicit requests"; a summary that
  quotes the goal sentence and leaves out the how-to steps, e.g. `User asked to "Work on bead
  spotter-a0y"` for "Work on bead spotter-a0y. Run bd show … to see the issue details …", has kept
  the intent although most of its words are gone). In the as-recorded run, the source agent's own
  summary is such a view message;
- `missing` otherwise: the step is flagged.
Steps whose view holds LangChain's "Previous conversation was too long to summarize." placeholder
are flagged as well (`placeholder`). `score` is the fraction of checked steps not missing.
Like needle retention, drift reads only this run's views and compactions (engine/evals/compactions.py).

The session intent is what a person asked for: the first human message a person typed, not one
the harness injected (`engine.evals.facts.typed_by_person`: Claude Code's meta and tagged messages,
a SWE-agent demonstration).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage

from engine.evals.compactions import TOO_LONG_PLACEHOLDER, compactions
from engine.evals.facts import typed_by_person
from engine.run.run import Run
from engine.thread.kinds import message_kind
from engine.thread.model import Thread
from engine.tokens.content import message_text

KEPT, SUMMARY, MISSING, BEFORE = "kept", "summary", "missing", "before"
INTENT_OVERLAP = 0.6
QUOTE_MIN_WORDS = 3  # a quoted sentence this rich names a goal ("Work on bead X"), not a filler ("Thanks.")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_HEADER = re.compile(r"^\s*(?:#{1,6}\s+|\d+\.\s+|\*\*)?(.+?)(?:\*\*)?\s*:?\s*$")
_INTENT_TITLES = ("session intent", "primary request and intent")
_WORD = re.compile(r"[a-z0-9][a-z0-9_\-./]*[a-z0-9]|[a-z0-9]")
_STOPWORDS = frozenset(
    "the and for with that this from into your you are was were will would can could should have has had "
    "not but all any our out use using please make sure then also them they its it's about what which when "
    "there their here some more most such than too very just only each other".split()
)


@dataclass
class DriftCheck:
    """The intent right after one compaction."""

    step: int
    source: str
    status: str
    placeholder: bool
    has_intent_section: bool
    overlap: float
    quoted: bool = False  # the intent section quotes a sentence of the request word for word

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "source": self.source, "status": self.status, "placeholder": self.placeholder,
                "has_intent_section": self.has_intent_section, "overlap": self.overlap, "quoted": self.quoted}


@dataclass
class DriftReport:
    intent: str | None
    intent_id: str | None
    statuses: list[str]  # per step: before / kept / summary / missing
    checks: list[DriftCheck] = field(default_factory=list)
    placeholder_steps: list[int] = field(default_factory=list)

    @property
    def flagged_steps(self) -> list[int]:
        return [i for i, s in enumerate(self.statuses) if s == MISSING]

    @property
    def score(self) -> float | None:
        checked = [s for s in self.statuses if s != BEFORE]
        if not checked or self.intent is None:
            return None
        return round(sum(s != MISSING for s in checked) / len(checked), 4)

    def to_dict(self, *, per_step: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "intent": self.intent,
            "intent_id": self.intent_id,
            "score": self.score,
            "checks": [c.to_dict() for c in self.checks],
            "flagged_steps": self.flagged_steps,
            "placeholder_steps": self.placeholder_steps,
        }
        if per_step:
            out["statuses"] = self.statuses
        return out


def session_intent(thread: Thread) -> HumanMessage | None:
    """The first human message a person typed: what the session was asked to do."""
    for m in thread.messages:
        if isinstance(m, HumanMessage) and typed_by_person(m):
            return m
    return None


def content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) >= 3 and w not in _STOPWORDS}


def intent_section(summary: str) -> str | None:
    """The body of a summary's intent section, or None when it has none."""
    lines = summary.splitlines()
    body: list[str] | None = None
    for line in lines:
        head = _header_title(line)
        if head is not None:
            if body is not None:
                break
            if any(t in head for t in _INTENT_TITLES):
                body = []
                continue
        if body is not None:
            body.append(line)
    return None if body is None else "\n".join(body).strip()


def _header_title(line: str) -> str | None:
    stripped = line.strip()
    if not stripped or not (stripped.startswith("#") or re.match(r"^\d+\.\s", stripped) or stripped.startswith("**")):
        return None
    m = _HEADER.match(stripped)
    return m.group(1).strip().lower() if m else None


def intent_overlap(intent: str, text: str) -> float:
    """Fraction of the intent's content words present in `text` (1.0 when the intent is inside it)."""
    words = content_words(intent)
    if _squash(intent) in _squash(text):
        return 1.0
    if not words:
        return 0.0
    return round(len(words & content_words(text)) / len(words), 4)


def quotes_request(intent: str, text: str) -> bool:
    """Whether `text` holds, word for word, a sentence of `intent` with >= QUOTE_MIN_WORDS content words."""
    squashed = _squash(text)
    for sentence in _SENTENCE_END.split(intent):
        sentence = sentence.strip().rstrip(".!?;:,").strip()
        if len(content_words(sentence)) >= QUOTE_MIN_WORDS and _squash(sentence) in squashed:
            return True
    return False


def _squash(text: str) -> str:
    return " ".join(text.lower().split())


def _summary_status(intent: str, texts: Iterable[str],
                    cache: dict[str, tuple[bool, float | None, bool]]) -> tuple[bool, bool, float, bool, bool]:
    """(represented, has_section, best overlap, placeholder, quoted) over the summaries given."""
    has_section = represented = placeholder = quoted = False
    best = 0.0
    for text in texts:
        if text not in cache:  # a summary stays in the view for many steps: read it once
            section = intent_section(text)
            cache[text] = (TOO_LONG_PLACEHOLDER in text,
                           None if section is None else intent_overlap(intent, section),
                           section is not None and quotes_request(intent, section))
        is_placeholder, score, quotes = cache[text]
        placeholder = placeholder or is_placeholder
        if score is None:
            continue
        has_section = True
        best = max(best, score)
        quoted = quoted or quotes
        represented = represented or score >= INTENT_OVERLAP or quotes
    return represented, has_section, best, placeholder, quoted


def goal_drift(run: Run) -> DriftReport:
    """Whether the session intent survives every compaction of `run`, step by step."""
    intent_msg = session_intent(run.thread)
    comps = compactions(run)
    if intent_msg is None:
        return DriftReport(None, None, [BEFORE] * len(run.steps))
    intent = message_text(intent_msg).strip()
    squashed = _squash(intent)
    first = comps[0].step if comps else len(run.steps)
    statuses: list[str] = []
    placeholders: list[int] = []
    per_step: dict[int, tuple[str, bool, bool, float, bool]] = {}
    seen: dict[int, tuple[BaseMessage, bool, bool]] = {}  # per message object: (it, is summary, is the intent)
    read: dict[str, tuple[bool, float | None, bool]] = {}
    prev: Sequence[BaseMessage] = ()
    view_summaries: list[str] = []
    view_kept = False
    for s in run.steps:
        if s.index < first:
            statuses.append(BEFORE)
            continue
        view = s.view
        if not (prev and len(view) >= len(prev) and all(map(operator.is_, prev, view))):
            view_summaries, view_kept, prev = [], False, ()  # not an extension of the previous view
        for m in view[len(prev):]:  # most views only append to the previous one
            hit = seen.get(id(m))
            if hit is None or hit[0] is not m:
                is_summary = message_kind(m) == "summary"
                hit = seen[id(m)] = (m, is_summary, not is_summary and _is_intent(m, intent_msg, squashed))
            if hit[1]:
                view_summaries.append(message_text(m))
            view_kept = view_kept or hit[2]
        prev = view
        represented, has_section, overlap, placeholder, quoted = _summary_status(intent, view_summaries, read)
        status = KEPT if view_kept else SUMMARY if represented else MISSING
        statuses.append(status)
        if placeholder:
            placeholders.append(s.index)
        per_step[s.index] = (status, placeholder, has_section, overlap, quoted)
    checks = []
    for c in comps:
        status, placeholder, has_section, overlap, quoted = per_step.get(c.step, (MISSING, c.placeholder, False, 0.0, False))
        checks.append(DriftCheck(c.step, c.source, status, placeholder or c.placeholder, has_section, overlap, quoted))
    return DriftReport(intent, intent_msg.id, statuses, checks, placeholders)


def _is_intent(m: BaseMessage, intent_msg: HumanMessage, squashed: str) -> bool:
    if intent_msg.id is not None and m.id == intent_msg.id:
        return True
    return isinstance(m, HumanMessage) and squashed in _squash(message_text(m))


def step_ranges(steps: list[int]) -> str:
    """`[1, 2, 3, 7]` -> `"1-3, 7"`: flagged steps in a line a person can read."""
    out: list[list[int]] = []
    for s in sorted(steps):
        if out and s == out[-1][1] + 1:
            out[-1][1] = s
        else:
            out.append([s, s])
    return ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in out)
