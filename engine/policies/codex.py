"""Codex CLI's auto-compaction: when it fires, what the session continues from, how it records tool output.

From openai/codex (`codex-rs/`), read in the versions the search index holds:

- **When** (`protocol/src/openai_models.rs`, `ModelInfo::auto_compact_token_limit`): at
  `context_window * 9 / 10` (integer division) of the model's raw window; a configured
  `model_auto_compact_token_limit` only lowers it (`min`). A rollout's `model_context_window` is the
  *usable* window, `effective_context_window_percent` = 95 % of the model's (258,400 = 272,000 × 0.95),
  so for a Codex thread the model's window is recovered as `usable × 100 / 95` (the limit stays on the
  raw window: 244,800, openai/codex issue #40095). Compaction runs, before a turn and mid-turn after a
  response that needs a follow-up, when `total_usage_tokens >= auto_compact_limit`, where
  `Session::get_total_token_usage` (`core/src/context_manager/history.rs` `get_total_token_usage`) is
  the last response's `total_tokens` (input + output) plus the items recorded after it (bytes / 4) —
  the request about to be sent — **plus**, unless the server said its usage included reasoning, every
  encrypted reasoning item before the last user turn, estimated from its length
  (`get_non_last_reasoning_items_tokens`, PR #7113, 2025-11): items the provider no longer bills, so
  Codex compacts below 90 % of the recorded input in a long session (`reasoning_estimate_tokens`).
- **What follows** (`core/src/compact.rs`): `build_compacted_history` = the initial context (what
  precedes the first user turn: developer and AGENTS.md instructions, the environment context) + the
  newest user messages (not injected context, not earlier summaries) up to
  `COMPACT_USER_MESSAGE_MAX_TOKENS` = 20,000 tokens (`approx_token_count`: bytes / 4, rounded up; the
  message that does not fit is cut with `truncate_text`) + one user message `SUMMARY_PREFIX + "\\n" +
  summary` (`templates/compact/summary_prefix.md`); "(no summary available)" when empty.
- **Trim and retry** (`run_compact_task_inner`): when the compaction request itself overflows the
  window (`ContextWindowExceeded`), the oldest history item (with its call or output) is removed
  and the request retried, "Trimmed N older conversation item(s) before compacting so the prompt fits
  the model context window."; only the summarizer's input is trimmed.
- **Tool output** (`core/src/context_manager/history.rs` `process_item`, `core/src/truncate.rs`): every
  function output is recorded through `truncate_text` with the model's `truncation_policy`
  (`{mode: tokens, limit: 10000}` for the Codex models) times 1.2: head and tail within
  4 × 12,000 bytes around `…N tokens truncated…`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from engine.base.errors import ConfigError
from engine.config.sections import CompactionConfig
from engine.policies.base import Compaction, Measure, PolicyContext, default_measure

# Codex's tool-output truncation is also how its as-recorded requests are rebuilt (engine.recorded.history)
from engine.recorded.codex_rules import (
    APPROX_BYTES_PER_TOKEN,
    SERIALIZATION_BUDGET,
    TOOL_OUTPUT_TOKENS,
    approx_token_count,
    truncate_text,
)
from engine.thread.kinds import mark
from engine.thread.model import stable_id
from engine.tokens.content import message_text

SUMMARY_PREFIX = (
    "Another language model started to solve this problem and produced a summary of its thinking process. "
    "You also have access to the state of the tools that were used by that language model. Use this to build "
    "on the work that has already been done and avoid duplicating work. Here is the summary produced by the "
    "other language model, use the information in this summary to  assist with your own analysis:"
)
NO_SUMMARY = "(no summary available)"
COMPACT_USER_MESSAGE_MAX_TOKENS = 20_000
USABLE_WINDOW_PERCENT = 95  # default_effective_context_window_percent
TOTAL_USAGE = "total usage"  # the decision series: get_total_token_usage
REASONING_OVERHEAD_BYTES = 650  # estimate_reasoning_length: the encrypted envelope's share
# User messages Codex injects as context, not typed by the user (contextual_user_message.rs).
CONTEXT_PREFIXES = ("<environment_context>", "<user_instructions>", "# agents.md instructions for", "<instructions>",
                    "<skill>", "<skills_instructions>", "<user_shell_command>", "<turn_aborted>",
                    "<subagent_notification>")
# templates/compact/prompt.md (abridged): the handoff summary the compaction turn asks for.
SUMMARY_PROMPT = (
    "You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary for another LLM that will "
    "resume the task. Include: current progress and key decisions made, important context, constraints, or user "
    "preferences, what remains to be done (clear next steps), any critical data, examples, or references needed "
    "to continue."
)


# -- pure rules ---------------------------------------------------------------------------------------
def model_window(window_tokens: int, source_format: str | None, extra: dict[str, Any]) -> int:
    """The model's own window: a Codex rollout records the usable 95 % of it (see the module docstring)."""
    if source_format == "codex" and "window_source" not in extra:
        return window_tokens * 100 // USABLE_WINDOW_PERCENT
    return window_tokens


def auto_compact_limit(model_window_tokens: int, trigger: Any = None) -> int:
    """`auto_compact_token_limit`: 90 % of the model's window, lowered (never raised) by the trigger."""
    limit = model_window_tokens * 9 // 10
    if trigger is None:
        return limit
    if trigger.type == "tokens":
        return min(limit, int(trigger.value))
    if trigger.type == "fraction":
        return min(limit, int(model_window_tokens * float(trigger.value)))
    raise ConfigError("Codex compacts on tokens: use tokens:N or fraction:F", key="compaction.trigger")


def is_contextual(message: BaseMessage) -> bool:
    return isinstance(message, HumanMessage) and (
        bool(message.additional_kwargs.get("codex_context"))
        or message_text(message).lstrip().lower().startswith(CONTEXT_PREFIXES))


def is_user_turn(message: BaseMessage) -> bool:
    """A prompt the user typed: not injected context, not a reminder or summary of ours."""
    return isinstance(message, HumanMessage) and not is_contextual(message) \
        and message.additional_kwargs.get("ctxi_kind") in (None, "original") \
        and not message.additional_kwargs.get("codex_agent_message")


def is_summary(message: BaseMessage) -> bool:
    return isinstance(message, HumanMessage) and message_text(message).startswith(SUMMARY_PREFIX + "\n")


def selected_user_messages(history: Sequence[BaseMessage], budget: int, step: int) -> list[HumanMessage]:
    """The newest user messages within `budget` tokens, oldest first (`build_compacted_history_with_limit`)."""
    users = [m for m in history if is_user_turn(m) and not is_summary(m)]
    out: list[HumanMessage] = []
    remaining = budget
    for m in reversed(users):
        if remaining == 0:
            break
        text = message_text(m)
        tokens = approx_token_count(text)
        if tokens <= remaining:
            # Codex rebuilds the item from its text; a text-only message is the same message
            out.append(m if isinstance(m, HumanMessage) and m.content == text
                       else HumanMessage(content=text, id=stable_id("codex-user", step, text)))
            remaining -= tokens
        else:
            cut = truncate_text(text, remaining)
            out.append(HumanMessage(content=cut, id=stable_id("codex-user", step, cut)))
            break
    out.reverse()
    return out


def initial_context(history: Sequence[BaseMessage]) -> list[BaseMessage]:
    """What precedes the first user turn (instructions, environment): Codex builds it again."""
    for i, m in enumerate(history):
        if is_user_turn(m):
            return list(history[:i])
    return [m for m in history if not isinstance(m, (AIMessage, ToolMessage))]


def trim_to_fit(history: Sequence[BaseMessage], limit_tokens: int, count: Any) -> tuple[list[BaseMessage], int]:
    """Drop the oldest item (and its call or outputs) until `count(history) <= limit_tokens`."""
    items = list(history)
    trimmed = 0
    while len(items) > 1 and count(items) > limit_tokens:
        first = items.pop(0)
        trimmed += 1
        if isinstance(first, AIMessage) and first.tool_calls:
            ids = {tc.get("id") for tc in first.tool_calls}
            items = [m for m in items if not (isinstance(m, ToolMessage) and m.tool_call_id in ids)]
    return items, trimmed


def is_turn_boundary(message: BaseMessage) -> bool:
    """`is_user_turn_boundary` (context_manager/history.rs): a user message that is not injected context
    (a compaction's summary message is one)."""
    return isinstance(message, HumanMessage) and not is_contextual(message)


def reasoning_estimate_tokens(history: Sequence[BaseMessage]) -> int:
    """`get_non_last_reasoning_items_tokens`: every encrypted reasoning item before the last user-turn
    boundary, estimated from its length (`estimate_reasoning_length`: len × 3 / 4 − 650, at least 0;
    then bytes / 4, rounded up). The server drops those items from the input it bills, but Codex adds
    them to its usage when the response did not say reasoning was included (openai/codex #7113, #9402;
    a rollout does not record that header, so they are counted, as Codex does without it)."""
    last = max((i for i, m in enumerate(history) if is_turn_boundary(m)), default=-1)
    total = 0
    for m in history[:max(last, 0)]:
        if isinstance(m, AIMessage):
            for chars in m.additional_kwargs.get("codex_encrypted_reasoning_chars") or ():
                if isinstance(chars, int) and chars > 0:
                    total += -(-max(0, chars * 3 // 4 - REASONING_OVERHEAD_BYTES) // APPROX_BYTES_PER_TOKEN)
    return total


def summary_message(summary: str, step: int) -> HumanMessage:
    text = f"{SUMMARY_PREFIX}\n{summary}" if summary else NO_SUMMARY
    return mark(HumanMessage(content=text, id=stable_id("codex-summary", step, text)), "summary")  # type: ignore[return-value]


# -- the policy ---------------------------------------------------------------------------------------
class CodexPolicy:
    name = "codex"
    summary_prompt = SUMMARY_PROMPT

    def threshold_tokens(self, window_tokens: int, max_output_tokens: int | None, config: CompactionConfig,
                         *, thread: Any = None) -> int:
        window = model_window(window_tokens, getattr(thread, "source_format", None), getattr(thread, "extra", {}))
        return auto_compact_limit(window, config.trigger)

    def decision_tokens(self, history: Sequence[BaseMessage], ctx: PolicyContext) -> int:
        """What Codex compares with its limit: `get_total_token_usage` — the last response's tokens and
        the items recorded since (the request about to be sent) plus the earlier turns' encrypted
        reasoning (`reasoning_estimate_tokens`)."""
        return ctx.request_tokens + reasoning_estimate_tokens(history)

    def should_compact(self, history: Sequence[BaseMessage], ctx: PolicyContext) -> bool:
        window = model_window(ctx.window_tokens, ctx.source_format, ctx.thread_extra)
        return self.decision_tokens(history, ctx) >= auto_compact_limit(window, ctx.config.trigger)

    def measure(self, history: Sequence[BaseMessage], ctx: PolicyContext) -> Measure:
        """Codex's total usage (the request, plus earlier turns' encrypted reasoning on a Codex rollout)
        against 90 % of the model's window (of which a rollout records the usable 95 %)."""
        window = model_window(ctx.window_tokens, ctx.source_format, ctx.thread_extra)
        threshold = auto_compact_limit(window, ctx.config.trigger)
        trigger = ctx.config.trigger
        expression = (f"90% of {window:,}" if threshold == window * 9 // 10
                      else f"{trigger.value} × {window:,}" if trigger is not None and trigger.type == "fraction"
                      else f"{trigger}, below 90% of {window:,}")
        reasoning = reasoning_estimate_tokens(history)
        if not reasoning and ctx.source_format != "codex":
            return default_measure(threshold, ctx, expression)
        return Measure(ctx.request_tokens + reasoning, threshold, expression=expression, series=TOTAL_USAGE,
                       quantity="Codex's total usage (the request and earlier turns' encrypted reasoning)")

    def rebuild(self, history: Sequence[BaseMessage], ctx: PolicyContext) -> Compaction:
        window = model_window(ctx.window_tokens, ctx.source_format, ctx.thread_extra)
        prompt_cost = ctx.counter.count_text(self.summary_prompt)
        for_summary, trimmed = trim_to_fit(history, window - ctx.prompt_tokens - prompt_cost, ctx.counter)
        summary = ctx.summarize(for_summary, self.summary_prompt)
        budget = COMPACT_USER_MESSAGE_MAX_TOKENS
        if ctx.config.keep is not None:
            if ctx.config.keep.type != "tokens":
                raise ConfigError("Codex keeps recent user messages by tokens: use tokens:N", key="compaction.keep")
            budget = int(ctx.config.keep.value)
        rebuilt = [*initial_context(history), *selected_user_messages(history, budget, ctx.step),
                   summary_message(summary, ctx.step)]
        return Compaction(rebuilt, summary=summary, detail={
            "trimmed_items": trimmed,
            **({"notice": f"Trimmed {trimmed} older conversation item(s) before compacting so the prompt fits "
                          "the model context window."} if trimmed else {})})

    def tool_result(self, message: ToolMessage, ctx: PolicyContext) -> ToolMessage:
        limit = int((ctx.config.tool_output_tokens or TOOL_OUTPUT_TOKENS) * SERIALIZATION_BUDGET)
        if not isinstance(message.content, str):
            return message
        cut = truncate_text(message.content, limit)
        return message if cut == message.content else message.model_copy(update={"content": cut})


POLICY = CodexPolicy()
