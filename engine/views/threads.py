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
