"""Message kinds: what a message in a view *is* (original, or something a layer made)."""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

# Layers mark the messages they create or rewrite with this additional_kwargs key, so a view
# can be read back without guessing from text. LangChain's own summary marker is honoured too.
KIND_KEY = "ctxi_kind"
# A system message's parts: [{"part", "category", "text"}], set by the prompt layers (input context, memory).
PARTS_KEY = "ctxi_parts"

Kind = Literal["original", "stub", "summary", "reminder", "patch", "truncated", "memory"]
KINDS: tuple[str, ...] = ("original", "stub", "summary", "reminder", "patch", "truncated", "memory")

# Token categories, in display order. `tools` are the tool schemas sent with each request; `thinking`
# is an AI message's thinking or reasoning (engine.tokens.counters). Five categories are tokens the
# provider recorded that the transcript does not show (engine.recorded.calibration): the agent's own
# prompt and tool schemas (`agent_prompt`), what step 0 held beyond it in the first turn
# (`first_turn_context`), what an agent re-attached with a recorded compaction (`restored_context`),
# and the small remainder the measured growth does not explain (`unexplained`, never negative).
CATEGORIES: tuple[str, ...] = (
    "system",
    "tools",
    "agent_prompt",
    "first_turn_context",
    "memory",
    "human",
    "ai",
    "thinking",
    "tool_calls",
    "tool_results",
    "stubs",
    "summary",
    "restored_context",
    "reminders",
    "patches",
    "unexplained",
)
# The categories of tokens the transcript does not show (measured from the recorded input).
UNRECORDED_CATEGORIES: frozenset[str] = frozenset({"agent_prompt", "first_turn_context", "restored_context",
                                                   "unexplained"})

# Context an agent adds to a request as a user message: where the source records it, its category.
# Claude Code `attachment` records (engine.formats.claude_code_session): memory files and skill listings
# are memory, the rest (deferred tools, MCP instructions, hook output, reminders) reminders. Codex's
# contextual user fragments (codex-rs/core/src/context/contextual_user_message.rs): AGENTS.md / user
# instructions and skills are memory, the environment context, shell output and notes reminders.
MEMORY_ATTACHMENTS = frozenset({"nested_memory", "skill_listing", "invoked_skills", "memory"})
# ... and what the user put in the prompt (a queued prompt, a mentioned file or folder, an IDE selection)
USER_ATTACHMENTS = frozenset({"queued_command", "file", "directory", "selected_lines_in_ide", "edited_text_file"})
_MEMORY_PREFIXES = ("# agents.md instructions for", "<user_instructions>", "<instructions>", "<skill>",
                    "<skills_instructions>")

_REMINDER_NAMES = frozenset({"todo_reminder", "todo_completion_reminder"})


def mark(message: BaseMessage, kind: Kind, **details: Any) -> BaseMessage:
    """Return `message` with its kind recorded in additional_kwargs (mutates and returns it)."""
    message.additional_kwargs[KIND_KEY] = kind
    for key, value in details.items():
        message.additional_kwargs[f"ctxi_{key}"] = value
    return message


def message_kind(message: BaseMessage) -> str:
    """The kind of a message, from its marker, LangChain's summary marker or a reminder name."""
    kwargs = message.additional_kwargs
    marked = kwargs.get(KIND_KEY)
    if isinstance(marked, str) and marked in KINDS:
        return marked
    if kwargs.get("lc_source") == "summarization" or kwargs.get("durable_context_data"):
        return "summary"
    # LangChain's ContextEditingMiddleware marks a cleared result in its response_metadata
    editing = message.response_metadata.get("context_editing")
    if isinstance(message, ToolMessage) and isinstance(editing, dict) and editing.get("cleared"):
        return "stub"
    if isinstance(message, HumanMessage) and message.name in _REMINDER_NAMES:
        return "reminder"
    return "original"


def text_category(message: BaseMessage) -> str:
    """The category a message's text (content) counts toward."""
    kind = message_kind(message)
    if kind == "summary":
        return "summary"
    if kind == "reminder":
        return "reminders"
    if kind == "memory":
        return "memory"
    if isinstance(message, ToolMessage):
        if kind == "stub":
            return "stubs"
        if kind == "patch":
            return "patches"
        return "tool_results"
    if isinstance(message, AIMessage):
        return "ai"
    if isinstance(message, SystemMessage):
        return "system"
    return _context_category(message) or "human"


def _context_category(message: BaseMessage) -> str | None:
    """memory or reminders for context the agent injected as a user message (see MEMORY_ATTACHMENTS)."""
    kwargs = message.additional_kwargs
    attachment = kwargs.get("claude_code_attachment")
    if isinstance(attachment, str) and attachment not in USER_ATTACHMENTS:
        return "memory" if attachment in MEMORY_ATTACHMENTS else "reminders"
    if kwargs.get("claude_code_meta"):
        return "reminders"
    if kwargs.get("codex_context"):
        content = message.content
        text = content if isinstance(content, str) else next(
            (b.get("text", "") for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)), "") \
            if isinstance(content, list) else ""
        return "memory" if text.lstrip().lower().startswith(_MEMORY_PREFIXES) else "reminders"
    return None
