"""Cline's context management: de-duplicate file reads, then drop half or a quarter of the middle.

From cline/cline `src/core/context/context-management/` (`ContextManager.ts`, `context-window-utils.ts`)
and `src/core/prompts/responses.ts`:

- **When** (`shouldCompactContextWindow`, `getNewContextMessagesAndMetadata`): before a request, when
  the *previous* request's `tokensIn + tokensOut + cacheWrites + cacheReads` reaches `maxAllowedSize`:
  64k window − 27,000, 128k − 30,000, 200k − 40,000, any other `max(window − 40,000, 0.8 × window)`.
- **First** (`applyContextOptimizations`): every file read but the newest of each path (`read_file`
  results, `<final_file_content>` of write/replace results, `<file_content path=…>` mentions) becomes
  `[[NOTE] This file read has been removed to save space in the context window. Refer to the latest file
  read for the most up to date version of this file.]`; when that saves at least 30 % of the characters
  in context, nothing is truncated.
- **Else** (`getNextTruncationRange`): the first user/assistant pair is kept and, of the rest, half
  (`keep = "half"`) or three quarters (`"quarter"`, when the previous request was over twice the
  limit) is dropped, an even number of API messages ending on an assistant message; the first
  assistant message then reads the truncation notice (`contextTruncationNotice`).

Cline's history is Anthropic messages (user/assistant alternating); here an API message is an AI
message, or the run of messages between two AI messages (tool results and user text together).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from engine.base.errors import ConfigError
from engine.config.sections import CompactionConfig
from engine.policies.base import Compaction, Measure, PolicyContext
from engine.thread.model import stable_id
from engine.tokens.content import message_text

DUPLICATE_FILE_READ_NOTICE = ("[[NOTE] This file read has been removed to save space in the context window. "
                              "Refer to the latest file read for the most up to date version of this file.]")
TRUNCATION_NOTICE = ("[NOTE] Some previous conversation history with the user has been removed to maintain optimal "
                     "context window length. The initial user task and the most recent exchanges have been retained "
                     "for continuity, while intermediate conversation history has been removed. Please keep this in "
                     "mind as you continue assisting the user.")
SAVED_ENOUGH = 0.3  # charactersSavedPercentage >= 0.3: no truncation
READ_TOOLS = frozenset({"read_file"})
WRITE_TOOLS = frozenset({"write_to_file", "replace_in_file"})
_FINAL_CONTENT = re.compile(r"(<final_file_content path=\"[^\"]*\">)[\s\S]*?(</final_file_content>)")
_FILE_MENTION = re.compile(r"<file_content path=\"([^\"]*)\">([\s\S]*?)</file_content>")


# -- pure rules ---------------------------------------------------------------------------------------
def max_allowed_size(window_tokens: int) -> int:
    """`getContextWindowInfo(api).maxAllowedSize`."""
    if window_tokens == 64_000:
        return window_tokens - 27_000
    if window_tokens == 128_000:
        return window_tokens - 30_000
    if window_tokens == 200_000:
        return window_tokens - 40_000
    return int(max(window_tokens - 40_000, window_tokens * 0.8))


def keep_for(previous_total: int, allowed: int) -> Literal["half", "quarter"]:
    return "quarter" if previous_total / 2 > allowed else "half"


def api_messages(history: Sequence[BaseMessage]) -> list[list[int]]:
    """Positions grouped into Anthropic messages: each AI message alone, the rest between them together."""
    groups: list[list[int]] = []
    for i, m in enumerate(history):
        if isinstance(m, AIMessage) or not groups or isinstance(history[groups[-1][0]], AIMessage):
            groups.append([i])
        else:
            groups[-1].append(i)
    return groups


def truncation_range(n_messages: int, roles: Sequence[str], keep: Literal["none", "lastTwo", "half", "quarter"],
                     start_of_rest: int = 2) -> tuple[int, int]:
    """`getNextTruncationRange` over `n_messages` API messages (`roles[i]`: "user" or "assistant")."""
    if keep == "none":
        remove = max(n_messages - start_of_rest, 0)
    elif keep == "lastTwo":
        remove = max(n_messages - start_of_rest - 2, 0)
    elif keep == "half":
        remove = math.floor((n_messages - start_of_rest) / 4) * 2
    else:
        remove = math.floor((n_messages - start_of_rest) * 3 / 4 / 2) * 2
    end = start_of_rest + remove - 1
    if 0 <= end < n_messages and roles[end] != "assistant":
        end -= 1
    return 2, end


def _read_path(message: AIMessage, call_id: str) -> tuple[str, str] | None:
    for tc in message.tool_calls:
        if tc.get("id") == call_id:
            args = tc.get("args") or {}
            path = args.get("path") if isinstance(args, dict) else None
            return (str(tc.get("name")), str(path)) if isinstance(path, str) else None
    return None


def deduplicate_file_reads(history: Sequence[BaseMessage], start: int = 2) -> tuple[list[BaseMessage], int, int]:
    """All but the newest read of each file replaced by the notice; (messages, chars saved, chars in context)."""
    out = list(history)
    calls: dict[str, AIMessage] = {str(tc["id"]): m for m in out if isinstance(m, AIMessage) for tc in m.tool_calls
                                   if tc.get("id")}
    groups = api_messages(out)
    first_rest = groups[start][0] if len(groups) > start else len(out)
    # path -> [(position, text searched for, its replacement)]; "" searches the whole content
    reads: dict[str, list[tuple[int, str, str]]] = {}
    for i in range(first_rest, len(out)):
        m = out[i]
        text = message_text(m)
        if isinstance(m, ToolMessage) and m.tool_call_id in calls:
            found = _read_path(calls[m.tool_call_id], m.tool_call_id)
            if found is None:
                continue
            name, path = found
            if name in READ_TOOLS:
                reads.setdefault(path, []).append((i, "", DUPLICATE_FILE_READ_NOTICE))
            elif name in WRITE_TOOLS and (hit := _FINAL_CONTENT.search(text)):
                reads.setdefault(path, []).append(
                    (i, hit.group(0), f"{hit.group(1)} {DUPLICATE_FILE_READ_NOTICE} {hit.group(2)}"))
        elif isinstance(m, HumanMessage):
            for match in _FILE_MENTION.finditer(text):
                notice = f'<file_content path="{match.group(1)}">{DUPLICATE_FILE_READ_NOTICE}</file_content>'
                reads.setdefault(match.group(1), []).append((i, match.group(0), notice))
    saved = 0
    for occurrences in reads.values():
        for i, search, replacement in occurrences[:-1]:
            before = message_text(out[i])
            after = replacement if not search else before.replace(search, replacement, 1)
            saved += len(before) - len(after)
            out[i] = out[i].model_copy(update={"content": after})
    in_context = sum(len(message_text(out[i])) for g in groups[:2] + groups[start:] for i in g) + saved
    return out, saved, in_context


def truncate(history: Sequence[BaseMessage], keep: Literal["half", "quarter"], step: int) -> tuple[list[BaseMessage], int]:
    """Drop Cline's truncation range; the first assistant message becomes the notice. (messages, dropped)."""
    groups = api_messages(history)
    roles = ["assistant" if isinstance(history[g[0]], AIMessage) else "user" for g in groups]
    start, end = truncation_range(len(groups), roles, keep)
    if end < start:
        return list(history), 0
    dropped = {i for g in groups[start:end + 1] for i in g}
    out = [m for i, m in enumerate(history) if i not in dropped]
    if len(groups) > 1 and isinstance(history[groups[1][0]], AIMessage):
        first = history[groups[1][0]]
        if message_text(first) != TRUNCATION_NOTICE:
            notice = AIMessage(content=TRUNCATION_NOTICE, id=first.id or stable_id("cline-notice", step, TRUNCATION_NOTICE))
            out[out.index(first)] = notice
    return out, len(dropped)


# -- the policy ---------------------------------------------------------------------------------------
class ClinePolicy:
    name = "cline"
    summary_prompt = ""

    def threshold_tokens(self, window_tokens: int, max_output_tokens: int | None, config: CompactionConfig,
                         *, thread: Any = None) -> int:
        if config.trigger is None:
            return max_allowed_size(window_tokens)
        if config.trigger.type == "tokens":
            return int(config.trigger.value)
        if config.trigger.type == "fraction":
            return int(window_tokens * float(config.trigger.value))
        raise ConfigError("Cline truncates on tokens: use tokens:N or fraction:F", key="compaction.trigger")

    def should_compact(self, history: Sequence[BaseMessage], ctx: PolicyContext) -> bool:
        if ctx.previous_request_tokens is None:
            return False
        total = ctx.previous_request_tokens + (ctx.previous_output_tokens or 0)
        return total >= self.threshold_tokens(ctx.window_tokens, ctx.max_output_tokens, ctx.config)

    def measure(self, history: Sequence[BaseMessage], ctx: PolicyContext) -> Measure:
        """The previous request plus its answer (tokensIn + tokensOut + cache) against `maxAllowedSize`."""
        threshold = self.threshold_tokens(ctx.window_tokens, ctx.max_output_tokens, ctx.config)
        total = (None if ctx.previous_request_tokens is None
                 else ctx.previous_request_tokens + (ctx.previous_output_tokens or 0))
        expression = (f"maxAllowedSize of a {ctx.window_tokens:,} window" if ctx.config.trigger is None
                      else str(ctx.config.trigger))
        return Measure(total, threshold, quantity="the previous request and its answer",
                       series="previous request + output", expression=expression)

    def rebuild(self, history: Sequence[BaseMessage], ctx: PolicyContext) -> Compaction:
        allowed = self.threshold_tokens(ctx.window_tokens, ctx.max_output_tokens, ctx.config)
        total = (ctx.previous_request_tokens or 0) + (ctx.previous_output_tokens or 0)
        keep = keep_for(total, allowed)
        deduped, saved, in_context = deduplicate_file_reads(history)
        fraction = saved / in_context if in_context else 0.0
        detail: dict[str, Any] = {"keep": keep, "deduplicated_chars": saved, "saved_fraction": round(fraction, 4)}
        if saved and fraction >= SAVED_ENOUGH:
            return Compaction(deduped, kind="trim", detail={**detail, "truncated": False})
        out, dropped = truncate(deduped, keep, ctx.step)
        if dropped == 0 and not saved:
            return Compaction(None, rejected="nothing to drop after the first exchange", detail=detail)
        return Compaction(out, kind="trim", detail={**detail, "truncated": dropped > 0, "dropped_messages": dropped})


POLICY = ClinePolicy()
