"""Claude Code's autocompact: when it fires and what the session continues from.

Claude Code is closed source; the rules below are its `services/compact/autoCompact.ts` and
`compact.ts` constants as published by studies of the shipped bundle (collected in
shared/reference/mechanisms.md §1 row 1, with claude-code issue #31806), checked against the two
sessions in shared/traces/claude-code: both ran claude-opus-4-6 in a 200k window and
auto-compacted with `preTokens` 170,251 and 167,117, i.e. at the first request over
200,000 − min(max output, 20,000) − 13,000 = 167,000.

- **When**: before a model call whose request reaches `effective window − 13,000`, where
  `effective window = window − min(max output tokens, 20,000)` (MAX_OUTPUT_TOKENS_FOR_SUMMARY, the
  room kept for the summary; AUTOCOMPACT_BUFFER_TOKENS = 13,000). CLAUDE_AUTOCOMPACT_PCT_OVERRIDE
  (a percentage of the effective window) can only lower it; here `compaction.trigger` plays that
  part (a fraction of the effective window, or a token count), capped at the default.
- **What follows**: the whole history is summarized (nothing of it is kept) into one user message
  that opens "This session is being continued from a previous conversation that ran out of
  context." (the text the recorded sessions hold), then Claude Code re-attaches the most recently
  read files (POST_COMPACT_MAX_FILES_TO_RESTORE = 5, POST_COMPACT_MAX_TOKENS_PER_FILE = 5,000,
  POST_COMPACT_TOKEN_BUDGET = 50,000) and the todo list.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from engine.base.errors import ConfigError
from engine.config.sections import CompactionConfig
from engine.policies.base import Measure, PolicyContext, default_measure
from engine.thread.kinds import mark
from engine.thread.model import stable_id
from engine.tokens.content import message_text

SUMMARY_OUTPUT_RESERVE_TOKENS = 20_000  # MAX_OUTPUT_TOKENS_FOR_SUMMARY
AUTOCOMPACT_BUFFER_TOKENS = 13_000
READ_TOOLS = frozenset({"Read", "read_file", "view"})
TODO_TOOLS = frozenset({"TodoWrite", "write_todos"})

CONTINUATION = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The summary below covers the earlier portion of the conversation.\n\n{summary}\n\n"
    "Please continue the conversation from where we left off without asking the user any further "
    "questions. Continue with the last task that you were asked to work on."
)
# The nine sections Claude Code's compact prompt asks for (services/compact/prompt.ts, as published).
SUMMARY_PROMPT = (
    "Your task is to create a detailed summary of the conversation so far, paying close attention to the "
    "user's explicit requests and your previous actions. Include: 1. Primary Request and Intent "
    "2. Key Technical Concepts 3. Files and Code Sections 4. Errors and fixes 5. Problem Solving "
    "6. All user messages 7. Pending Tasks 8. Current Work 9. Optional Next Step."
)


def autocompact_threshold(window_tokens: int, max_output_tokens: int | None, trigger: Any = None) -> int:
    """The request size at which Claude Code compacts (see the module docstring)."""
    reserve = min(max_output_tokens or SUMMARY_OUTPUT_RESERVE_TOKENS, SUMMARY_OUTPUT_RESERVE_TOKENS)
    effective = window_tokens - reserve
    default = effective - AUTOCOMPACT_BUFFER_TOKENS
    if trigger is None:
        return default
    if trigger.type == "fraction":
        return min(default, int(effective * float(trigger.value)))
    if trigger.type == "tokens":
        return min(default, int(trigger.value))
    raise ConfigError("Claude Code compacts on tokens: use fraction:F or tokens:N", key="compaction.trigger")


def _read_path(args: Any) -> str | None:
    if isinstance(args, dict):
        for key in ("file_path", "path", "filePath"):
            if isinstance(args.get(key), str):
                return str(args[key])
    return None


def restored_files(history: Sequence[BaseMessage], ctx: PolicyContext) -> list[HumanMessage]:
    """The most recently read files, each cut to its token cap, within the total budget."""
    cfg = ctx.config
    calls: dict[str, str] = {}
    for m in history:
        if isinstance(m, AIMessage):
            for tc in m.tool_calls:
                path = _read_path(tc.get("args"))
                if tc.get("name") in READ_TOOLS and path and tc.get("id"):
                    calls[str(tc["id"])] = path
    latest: dict[str, str] = {}  # path -> content, most recent read last
    for m in history:
        if isinstance(m, ToolMessage) and m.tool_call_id in calls and m.status != "error":
            path = calls[m.tool_call_id]
            latest.pop(path, None)
            latest[path] = message_text(m)
    out: list[HumanMessage] = []
    budget = cfg.restore_budget_tokens
    for path, content in reversed(list(latest.items())[-cfg.restore_files:] if cfg.restore_files else []):
        text = _clip_tokens(content, cfg.restore_file_tokens, ctx)
        cost = ctx.counter.count_text(text)
        if cost > budget:
            break
        budget -= cost
        body = f"Called the Read tool with the following input: {json.dumps({'file_path': path})}\n\n" \
               f"Result of calling the Read tool:\n{text}"
        out.append(mark(HumanMessage(content=body, id=stable_id("claude-code-file", ctx.step, path)),  # type: ignore[arg-type]
                        "reminder", restored_file=path))
    return out


def _clip_tokens(text: str, limit: int, ctx: PolicyContext) -> str:
    if ctx.counter.count_text(text) <= limit:
        return text
    lo, hi = 0, len(text)
    while lo < hi:  # the longest head that fits
        mid = (lo + hi + 1) // 2
        if ctx.counter.count_text(text[:mid]) <= limit:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo]


def todo_reminder(history: Sequence[BaseMessage], step: int) -> list[HumanMessage]:
    todos: Any = None
    for m in history:
        if isinstance(m, AIMessage):
            for tc in m.tool_calls:
                if tc.get("name") in TODO_TOOLS and isinstance((tc.get("args") or {}).get("todos"), list):
                    todos = tc["args"]["todos"]
    if not todos:
        return []
    text = ("<system-reminder>\nYour todo list after the compaction:\n"
            + json.dumps(todos, ensure_ascii=False) + "\n</system-reminder>")
    return [mark(HumanMessage(content=text, id=stable_id("claude-code-todos", step, text)), "reminder")]  # type: ignore[list-item]


class ClaudeCodePolicy:
    name = "claude-code"
    summary_prompt = SUMMARY_PROMPT

    def threshold_tokens(self, window_tokens: int, max_output_tokens: int | None, config: CompactionConfig,
                         *, thread: Any = None) -> int:
        return autocompact_threshold(window_tokens, max_output_tokens, config.trigger)

    def measure(self, history: Sequence[BaseMessage], ctx: PolicyContext) -> Measure:
        """The request against `window − min(max output, 20,000) − 13,000` (or the lower override)."""
        threshold = self.threshold_tokens(ctx.window_tokens, ctx.max_output_tokens, ctx.config)
        reserve = min(ctx.max_output_tokens or SUMMARY_OUTPUT_RESERVE_TOKENS, SUMMARY_OUTPUT_RESERVE_TOKENS)
        default = ctx.window_tokens - reserve - AUTOCOMPACT_BUFFER_TOKENS
        trigger = ctx.config.trigger
        if threshold == default:
            expression = f"{ctx.window_tokens:,} − {reserve:,} − {AUTOCOMPACT_BUFFER_TOKENS:,}"
        elif trigger is not None and trigger.type == "fraction":
            expression = f"{trigger.value} × ({ctx.window_tokens:,} − {reserve:,})"
        else:
            expression = f"{trigger}, below the default {default:,}"
        return default_measure(threshold, ctx, expression)

    def rebuild(self, history: Sequence[BaseMessage], ctx: PolicyContext) -> list[BaseMessage]:
        summary = ctx.summarize(history, self.summary_prompt)
        text = CONTINUATION.format(summary=summary)
        message = mark(HumanMessage(content=text, id=stable_id("claude-code-summary", ctx.step, text)), "summary")
        return [message, *restored_files(history, ctx), *todo_reminder(history, ctx.step)]


POLICY = ClaudeCodePolicy()
