"""How the offline summarizer reads one message: cue words, sentences, first lines, earlier summaries.

The readings depend only on a message's content, so each is computed once per message object
(engine.thread.message_memo) and reused on every re-run of the thread and by every later summary that
reads the message again (engine.summarizers.offline `OfflineSummarizer` puts them together).
"""

from __future__ import annotations

import re

from langchain_core.messages import BaseMessage

from engine.thread.message_memo import MessageMemo
from engine.tokens.content import message_text

# Sentences that state an outcome or a choice; extractive summaries keep these.
_CONCLUSION = re.compile(
    r"\b(found|fixed|fix|decided|decision|conclu\w*|because|root cause|the (issue|problem|bug|cause)|"
    r"works|working|passe[sd]|fail(s|ed)?|confirm\w*|done|complet\w*|implement\w*|created|updated|"
    r"added|removed|chose|instead|therefore|result\w*|turns out|so the|succeed\w*|verified)\b",
    re.IGNORECASE,
)
_PLAN = re.compile(r"\b(next|i will|i'll|let me|then|plan|need to|remaining|todo|going to|should)\b", re.IGNORECASE)
# A result reports a failure when its first line says so (not when "error" appears somewhere in it).
_ERROR = re.compile(r"^\W*(error|exception|traceback|fatal|failed|failure|task failed|permission denied)\b",
                    re.IGNORECASE)
# Announcements of the next action are plans, not facts ("Let me read the file.").
_ANNOUNCEMENT = re.compile(r"^(now,? |ok(ay)?,? |first,? |next,? )?(let me|let's|i'll|i will|i need to|i'm going to)\b",
                           re.IGNORECASE)
# Text a harness injected as a user turn (Claude Code hooks and slash commands), not a user request.
_INJECTED = re.compile(r"^\s*<(system-reminder|command-name|command-message|command-args|local-command-stdout|"
                       r"local-command-caveat|user-prompt-submit-hook)\b")
_TAG = re.compile(r"</?[a-z][a-z0-9_-]*>")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_SECTION_HEAD = re.compile(r"^##\s+(SESSION INTENT|SUMMARY|ARTIFACTS|NEXT STEPS)\s*$")


def clip(text: str, limit: int) -> str:
    """One line of at most `limit` characters (whitespace collapsed)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(" ".join(text.split())) if s.strip()]


def first_line(text: str) -> str:
    return next((ln.strip() for ln in text.splitlines() if ln.strip()), "")


# -- what the offline summarizer reads from one message, once per message object (engine.thread.message_memo)
MEMO = MessageMemo()


def _text(m: BaseMessage) -> str:
    return MEMO.get(m, "text", message_text)


def human_fact(m: BaseMessage) -> tuple[bool, str | None]:
    """(injected by a harness, the fact line): a failure a hook reported, or what the user asked."""
    text = _text(m)
    if _INJECTED.match(text):
        plain = _TAG.sub(" ", text)
        # a hook reporting a failure is an outcome
        return True, (f"- Reported: {clip(plain, 200)}" if re.search(r"\bERROR\b|\berror:", plain) else None)
    return False, (f"- User asked: {clip(text, 240)}" if text.strip() else None)


def intent_line(m: BaseMessage) -> str | None:
    text = _text(m).strip()
    return f"- {clip(text, 400)}" if text and not _INJECTED.match(text) else None


def ai_facts(m: BaseMessage) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the conclusions stated, the first sentence): fact lines of an AI message's text."""
    said = sentences(_text(m))
    picked = [s for s in said if _CONCLUSION.search(s) and not _ANNOUNCEMENT.match(s)][:2]
    return tuple(f"- {clip(s, 240)}" for s in picked), tuple(f"- {clip(s, 240)}" for s in said[:1])


def plan_lines(m: BaseMessage) -> tuple[str, ...]:
    return tuple(f"- [ ] {clip(s, 240)}" for s in [s for s in sentences(_text(m)) if _PLAN.search(s)][:2])


def has_text(m: BaseMessage) -> bool:
    return bool(_text(m).strip())


def result_head(m: BaseMessage) -> tuple[str, bool, str, str]:
    """(the first line, whether it reports a failure, clipped to 200 and to 240 characters)."""
    head = first_line(_text(m))
    return head, bool(_ERROR.search(head)), clip(head, 200), clip(head, 240)


def earlier_sections(m: BaseMessage) -> dict[str, list[str]]:
    return prior_sections(_text(m))


def prior_sections(text: str) -> dict[str, list[str]]:
    """The checklist lines of each section of an earlier summary (so a summary of a summary keeps them)."""
    out: dict[str, list[str]] = {}
    current: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        head = _SECTION_HEAD.match(line) if line.startswith("##") else None  # the pattern starts with ##
        if head:
            current = head.group(1)
            out.setdefault(current, [])
        elif current and line.startswith("- "):
            out[current].append(line)
    return out


__all__ = ["MEMO", "ai_facts", "clip", "first_line", "has_text", "human_fact", "intent_line", "plan_lines", "earlier_sections",
           "prior_sections", "result_head", "sentences"]
