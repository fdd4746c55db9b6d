"""The agent's own prompt, as far as a transcript lets us name it.

The request of every call starts with the agent's system prompt and tool schemas. Most transcripts
record neither (Claude Code, Codex's tool schemas, Gemini CLI, Cline): the calibration measures how
many tokens they take (engine.recorded.calibration), and this module says what they are made of,
per format. What the transcript does record of the agent's context is not part of this remainder:
it is in the messages, in its own category (engine.kinds.text_category): Claude Code's attachments
(CLAUDE.md and nested memory, skill listings, deferred tools, MCP instructions, reminders), Codex's
AGENTS.md / user instructions and environment context, Cline's environment details.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from langchain_core.messages import AIMessage

from engine.thread.model import Thread

MAX_NAMED = 12  # tool names listed in the label; the rest are counted

# What each agent sends before the messages that its transcript does not record, in its own words.
_REMAINDER = {
    "claude_code": "Claude Code's system prompt and tool schemas",
    "codex": "Codex's tool schemas",
    "gemini_cli": "Gemini CLI's system prompt and tool declarations",
    "cline": "Cline's system prompt (its tool definitions are part of it)",
    "openhands": "OpenHands' system prompt and tool schemas",
}


@dataclass(frozen=True)
class AgentPrompt:
    """The unrecorded prompt of one thread: how big, what it holds, how it was measured."""

    tokens: int
    label: str  # the named remainder, e.g. "Claude Code's system prompt and tool schemas"
    measured_from: str  # "the prompt cache's prefix", "the first recorded call", ...
    tools: tuple[str, ...] = ()  # the agent's own tools the transcript shows it used
    mcp_tools: tuple[str, ...] = ()  # MCP tools (Claude Code's mcp__server__tool names)
    recorded_system: bool = False  # the transcript records the system prompt (then it is not in here)
    notes: tuple[str, ...] = field(default_factory=tuple)

    def describe(self) -> str:
        """One line: the remainder and what the transcript lets us name of it."""
        parts = [f"{self.label}: {self.tokens:,} tokens, measured from {self.measured_from}"]
        if self.tools:
            shown = ", ".join(self.tools[:MAX_NAMED]) + (f" and {len(self.tools) - MAX_NAMED} more"
                                                         if len(self.tools) > MAX_NAMED else "")
            parts.append(f"schemas of {len(self.tools)} tool{'s' if len(self.tools) > 1 else ''} it used ({shown})")
        if self.mcp_tools:
            servers = sorted({t.split("__")[1] for t in self.mcp_tools if t.count("__") >= 2})
            parts.append(f"{len(self.mcp_tools)} MCP tool{'s' if len(self.mcp_tools) > 1 else ''}"
                         + (f" from {', '.join(servers)}" if servers else ""))
        return "; ".join(parts + list(self.notes))

    def to_dict(self) -> dict[str, object]:
        return {"tokens": self.tokens, "label": self.label, "measured_from": self.measured_from,
                "tools": list(self.tools), "mcp_tools": list(self.mcp_tools),
                "recorded_system": self.recorded_system, "notes": list(self.notes), "text": self.describe()}


def _used_tools(thread: Thread) -> tuple[list[str], list[str]]:
    names: dict[str, None] = {}
    for m in thread.messages:
        if isinstance(m, AIMessage):
            for tc in m.tool_calls:
                name = tc.get("name")
                if isinstance(name, str) and name:
                    names[name] = None
    builtin = [n for n in names if not n.startswith("mcp__")]
    mcp = [n for n in names if n.startswith("mcp__")]
    return builtin, mcp


def agent_prompt(thread: Thread, tokens: int, measured_from: str) -> AgentPrompt:
    """What the unrecorded prompt of `thread` holds, named per format (see the module docstring)."""
    recorded_system = bool(thread.system_prompt)
    label = _REMAINDER.get(thread.source_format, "the agent's prompt and tool schemas (not in the transcript)")
    if thread.source_format == "codex" and not recorded_system:
        label = "Codex's base instructions and tool schemas"
    elif recorded_system and thread.source_format not in ("codex",):
        label = "the agent's tool schemas and what else it sends beyond the recorded prompt"
    builtin, mcp = _used_tools(thread)
    notes: list[str] = []
    if tokens < 0:
        notes.append("negative: the provider counted the recorded prompt and tools smaller than we do")
    return AgentPrompt(tokens=tokens, label=label, measured_from=measured_from, tools=tuple(builtin),
                       mcp_tools=tuple(mcp), recorded_system=recorded_system, notes=tuple(notes))
