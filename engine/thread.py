"""The one thread model every importer produces: LangChain messages plus recorded metadata."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, cast

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage


def stable_id(prefix: str, position: int | str, content: Any) -> str:
    """A deterministic message id from the source's position and content (never random)."""
    digest = hashlib.sha1(repr(content).encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{prefix}-{position}-{digest}"


@dataclass
class RecordedUsage:
    """Token usage the source recorded for one model call (one AI message)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None

    @property
    def context_tokens(self) -> int | None:
        """What the model was sent: input plus cache creation plus cache read (Claude Code's rule)."""
        parts = [self.input_tokens, self.cache_creation_input_tokens, self.cache_read_input_tokens]
        if all(p is None for p in parts):
            return None
        return sum(p or 0 for p in parts)

    def to_dict(self) -> dict[str, int | None]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RecordedUsage:
        return cls(**{k: d.get(k) for k in cls.__dataclass_fields__})


@dataclass
class RecordedCompaction:
    """A compaction the source agent performed (e.g. Claude Code's compact_boundary).

    `index` is the position in `Thread.messages` of the first message after the compaction:
    messages before it are what the agent dropped, `summary` is what replaced them.
    """

    index: int
    trigger: str | None = None
    pre_tokens: int | None = None
    summary: str = ""
    message_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "trigger": self.trigger,
            "pre_tokens": self.pre_tokens,
            "summary": self.summary,
            "message_id": self.message_id,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RecordedCompaction:
        fields: dict[str, Any] = {k: d.get(k) for k in cls.__dataclass_fields__ if k in d}
        return cls(**fields)


@dataclass
class Thread:
    """A raw agent transcript: messages in order, plus what the source recorded about it."""

    thread_id: str
    messages: list[BaseMessage]
    source_format: str = "native"
    model: str | None = None
    max_input_tokens: int | None = None
    system_prompt: str | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)
    todos: list[dict[str, Any]] = field(default_factory=list)
    subagents: dict[str, Thread] = field(default_factory=dict)
    usage: dict[str, RecordedUsage] = field(default_factory=dict)
    compactions: list[RecordedCompaction] = field(default_factory=list)
    title: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    # -- derived views -------------------------------------------------------------------
    def ai_indices(self) -> list[int]:
        """Positions of the AI messages: step k is the k-th of them."""
        return [i for i, m in enumerate(self.messages) if isinstance(m, AIMessage)]

    def tool_calls(self) -> list[dict[str, Any]]:
        # ToolCall is a TypedDict: the very dicts, typed as the plain dicts callers expect
        return [cast(dict[str, Any], tc) for m in self.messages if isinstance(m, AIMessage) for tc in m.tool_calls]

    def by_role(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for m in self.messages:
            counts[m.type] = counts.get(m.type, 0) + 1
        return counts

    def tool_results(self) -> dict[str, ToolMessage]:
        return {m.tool_call_id: m for m in self.messages if isinstance(m, ToolMessage)}
