"""The one thread model every importer produces: LangChain messages plus recorded metadata."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, cast

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage, messages_from_dict, messages_to_dict

TITLE_CHARS = 80  # a picker/sidebar line


def title_line(text: str, limit: int = TITLE_CHARS) -> str:
    """A title from free text: its first non-blank line, cut at a word boundary with an ellipsis.

    Cutting at a fixed character count left titles like "... to see the issue details and b".
    """
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    if len(line) <= limit:
        return line
    cut = line[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:  # a long unbroken token (a path, a URL) is cut where it stands
        cut = cut[:space]
    return cut.rstrip(" ,.;:-") + "…"


def stable_id(prefix: str, position: int | str, content: Any) -> str:
    """A deterministic message id from the source's position and content (never random)."""
    digest = hashlib.sha1(repr(content).encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{prefix}-{position}-{digest}"


@dataclass
class RecordedUsage:
    """Token usage the source recorded for one model call (one AI message).

    Anthropic's semantics, whatever the source: `input_tokens` is the input that was neither read
    from nor written to the prompt cache, so `input + cache_creation + cache_read` is everything the
    call was sent. Importers of sources whose input count already includes cached tokens (OpenAI's
    `prompt_tokens`/`input_tokens` with `cached_tokens`, LangChain's `usage_metadata`) split the
    cached part out, so `context_tokens` is always the whole request.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    # Anthropic's cache_creation split by TTL (ephemeral_5m / ephemeral_1h input tokens), when recorded.
    cache_creation_5m_tokens: int | None = None
    cache_creation_1h_tokens: int | None = None
    # The part of output_tokens spent on reasoning (OpenAI reasoning_tokens, Gemini thoughts), when recorded.
    reasoning_tokens: int | None = None
    # When the call was made, as the source recorded it (ISO 8601), and the model that answered it.
    timestamp: str | None = None
    model: str | None = None
    # The provider's own diagnosis of a prompt-cache miss, where recorded (Claude Code 2.1.251+ writes
    # Anthropic's `message.diagnostics`): "none" (compared, no divergence, or a first call), "pending" (the
    # comparison had not finished), or the reason's type (`messages_changed`, `tools_changed`,
    # `system_changed`, `model_changed`, `previous_message_not_found`, `unavailable`), with its
    # `cache_missed_input_tokens` estimate for the `*_changed` types. None: not recorded.
    cache_miss_reason: str | None = None
    cache_missed_input_tokens: int | None = None

    @property
    def context_tokens(self) -> int | None:
        """What the model was sent: input plus cache creation plus cache read (Claude Code's rule)."""
        parts = [self.input_tokens, self.cache_creation_input_tokens, self.cache_read_input_tokens]
        if all(p is None for p in parts):
            return None
        return sum(p or 0 for p in parts)

    def to_dict(self) -> dict[str, int | str | None]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RecordedUsage:
        return cls(**{k: d.get(k) for k in cls.__dataclass_fields__})


@dataclass
class RecordedCompaction:
    """A compaction the source agent performed (Claude Code's compact_boundary, Codex's `compacted`, ...).

    `index` is the position in `Thread.messages` of the first message after the compaction. From
    there on the agent sent `replacement` followed by `messages[index:]`: `replacement` is the
    history that replaced `messages[:index]` — the summary, and whatever the agent kept or rebuilt
    (Codex's initial context and recent user messages, OpenHands' first events, Gemini's
    acknowledgement). When it is None the replacement is the summary alone, sent as a human message
    (Claude Code's "This session is being continued..."). Messages the agent kept from before the
    cut appear in `replacement` with their original ids.
    """

    index: int
    trigger: str | None = None
    pre_tokens: int | None = None
    summary: str = ""
    message_id: str | None = None
    # What the source says the context was after the compaction, when it records it.
    post_tokens: int | None = None
    replacement: list[BaseMessage] | None = None
    # "summary" (an LLM wrote a summary), "trim" (old messages dropped, no summary: Cline's
    # deleted range, Codex's trim-and-retry) or "server" (a provider compacted server-side).
    kind: str = "summary"
    # The record it came from, e.g. "claude_code:compact_boundary", "codex:compacted".
    source: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "trigger": self.trigger,
            "pre_tokens": self.pre_tokens,
            "summary": self.summary,
            "message_id": self.message_id,
            "post_tokens": self.post_tokens,
            "replacement": messages_to_dict(self.replacement) if self.replacement is not None else None,
            "kind": self.kind,
            "source": self.source,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RecordedCompaction:
        fields: dict[str, Any] = {k: d.get(k) for k in cls.__dataclass_fields__ if k in d}
        if fields.get("replacement") is not None:
            fields["replacement"] = messages_from_dict(fields["replacement"])
        if fields.get("kind") is None:
            fields.pop("kind", None)
        return cls(**fields)


@dataclass
class RecordedEdit:
    """A context edit the source recorded: old content cleared in place, the history otherwise kept.

    Claude Code's `microcompact_boundary`, Anthropic's `context_management.applied_edits`
    (`clear_tool_uses_20250919`, `clear_thinking_20251015`), Inspect's `CompactionEvent(type="edit")`.
    From message `index` on, the results of the tool calls in `tool_call_ids` are sent as
    `placeholder` (and, with `clear_inputs`, those calls' arguments are emptied); a
    `clear_thinking` edit drops the thinking blocks of the AI messages in `message_ids`.
    """

    index: int
    kind: str = "clear_tool_results"  # or "clear_thinking"
    tool_call_ids: list[str] = field(default_factory=list)
    message_ids: list[str] = field(default_factory=list)
    placeholder: str = ""
    clear_inputs: bool = False
    trigger: str | None = None
    pre_tokens: int | None = None
    tokens_saved: int | None = None
    message_id: str | None = None
    source: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RecordedEdit:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})


# `Thread.extra` key of the one-line notes an importer leaves about what it repaired or could not take as
# written (a lone surrogate replaced, a rewind to an unknown message): shown on the Threads page, in
# `ctxi inspect` and its JSON (`warnings`).
LOAD_WARNINGS = "load_warnings"


def add_load_warning(thread: Thread, text: str) -> None:
    """Note one line about how the thread was read (see LOAD_WARNINGS)."""
    thread.extra.setdefault(LOAD_WARNINGS, []).append(text)


def load_warnings(thread: Thread) -> list[str]:
    value = thread.extra.get(LOAD_WARNINGS)
    return [str(w) for w in value] if isinstance(value, list) else []


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
    edits: list[RecordedEdit] = field(default_factory=list)
    # message id -> when the source recorded it (ISO 8601), where it does (prompt-cache TTLs,
    # time-based microcompaction)
    timestamps: dict[str, str] = field(default_factory=dict)
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
