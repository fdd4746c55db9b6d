"""Facts about a thread for the Threads and Compare sessions pages.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.thread.model import Thread


# -- threads ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class ThreadFacts:
    thread_id: str
    title: str | None
    source_format: str
    model: str | None
    messages: int
    steps: int
    by_role: dict[str, int] = field(default_factory=dict)
    tools: int = 0
    subagents: int = 0
    recorded_compactions: int = 0
    recorded_usage: int = 0


def thread_facts(thread: Thread) -> ThreadFacts:
    return ThreadFacts(thread.thread_id, thread.title, thread.source_format, thread.model, len(thread.messages),
                       len(thread.ai_indices()), thread.by_role(), len(thread.tools), len(thread.subagents),
                       len(thread.compactions), len(thread.usage))


def load_notes(thread: Thread | None) -> list[str]:
    """What the file held that the thread does not show, one line each: a last line cut in the middle (the
    session was still being written, or the copy was cut), records repeated (a file holding several copies
    of one session opens as one copy). Issue 35: a cut Claude Code session opened as 62 steps, and a 69 MB
    file holding 25 copies as one, without a word."""
    if thread is None:
        return []
    notes = []
    extra = thread.extra or {}
    line = extra.get("unfinished_last_line")
    if isinstance(line, int):
        notes.append(f"The file ends in the middle of line {line:,} (the session was still being written, or the "
                     "copy was cut): that line is left out, the thread ends with the line before it.")
    duplicates = (extra.get("skipped_records") or {}).get("duplicate")
    unique = extra.get("unique_records")
    if isinstance(duplicates, int) and duplicates > 0:
        if isinstance(unique, int) and unique > 0 and duplicates >= unique:
            copies = round((duplicates + unique) / unique)
            notes.append(f"The file holds the same session about {copies:,} times ({duplicates + unique:,} records, "
                         f"{unique:,} distinct): it is shown once.")
        else:
            notes.append(f"The file repeats {duplicates:,} record(s) it already held (same id): each is shown once.")
    return notes
