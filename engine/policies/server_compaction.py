"""Providers' server-side compaction: Anthropic's `compact_20260112` and OpenAI's Responses `compaction`.

Both replace the whole earlier conversation by one compaction item the provider writes; the client
keeps sending it, followed by what came after. They differ in *when*:

- **Anthropic** (platform.claude.com/docs/en/build-with-claude/compaction, beta `compact-2026-01-12`):
  `context_management.edits[{type: compact_20260112, trigger: {type: input_tokens, value}}]`, default
  150,000, at least 50,000. When the prompt of a request exceeds it, the API summarizes before it
  answers: the response opens with a `compaction` block and the model answers from it (recorded in
  shared/traces/anthropic-compaction: a 55,196-token request over a 50,000 trigger was answered from
  the summary at 220 input tokens). So the compaction applies to the request that crosses.
- **OpenAI** (developers.openai.com/api/docs/guides/compaction): `context_management:
  [{type: compaction, compact_threshold}]`; "when the rendered token count crosses the configured
  threshold, the server runs server-side compaction" and "the response stream includes the encrypted
  compaction item", which the next request carries instead of the items before it. The rendered count
  includes what the response generated (recorded in shared/traces/openai-responses-compaction: a
  request of 847 tokens that produced 1,179 crossed 1,000, and the next request started from the
  compaction item). So it decides on the previous request plus its output. The API documents no
  default threshold: the thread's recorded `compact_threshold` is used when it has one, else 90 % of
  the window (Codex's auto-compact limit, at which Codex asks OpenAI to compact).

The compaction item is opaque (OpenAI encrypts it); offline it is the offline summary.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage

from engine.base.errors import ConfigError
from engine.config.sections import CompactionConfig
from engine.policies.base import Compaction, Measure, PolicyContext
from engine.thread.kinds import mark
from engine.thread.model import stable_id

ANTHROPIC_DEFAULT_TRIGGER = 150_000
ANTHROPIC_MIN_TRIGGER = 50_000
# The default summarization instructions of the compaction docs (abridged).
SUMMARY_PROMPT = ("You have written a partial transcript for the initial task above. Please write a summary of the "
                  "transcript. The purpose of this summary is to provide continuity so you can continue to make "
                  "progress towards solving the task in a future context, where the raw history above may not be "
                  "accessible and will be replaced with this summary.")


def recorded_threshold(thread: Any, provider: str) -> int | None:
    """The threshold the thread's own requests asked the provider for (VCR cassettes record it)."""
    value = (getattr(thread, "extra", None) or {}).get(f"{provider}_compaction_threshold")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _configured(config: CompactionConfig, window_tokens: int) -> int | None:
    trigger = config.trigger
    if trigger is None:
        return None
    if trigger.type == "tokens":
        return int(trigger.value)
    if trigger.type == "fraction":
        return int(window_tokens * float(trigger.value))
    raise ConfigError("server compaction triggers on tokens: use tokens:N or fraction:F", key="compaction.trigger")


def anthropic_trigger(window_tokens: int, config: CompactionConfig, thread: Any = None) -> int:
    value = _configured(config, window_tokens) or recorded_threshold(thread, "anthropic") or ANTHROPIC_DEFAULT_TRIGGER
    if value < ANTHROPIC_MIN_TRIGGER:
        raise ConfigError(f"Anthropic's compaction trigger is at least {ANTHROPIC_MIN_TRIGGER:,} input tokens, "
                          f"got {value:,}", key="compaction.trigger")
    return value


def openai_threshold(window_tokens: int, config: CompactionConfig, thread: Any = None) -> int:
    return _configured(config, window_tokens) or recorded_threshold(thread, "openai_responses") or window_tokens * 9 // 10


def compaction_item(history: Sequence[BaseMessage], ctx: PolicyContext, provider: str) -> Compaction:
    summary = ctx.summarize(history, SUMMARY_PROMPT)
    message = mark(HumanMessage(content=summary, id=stable_id(f"{provider}-compaction", ctx.step, summary)), "summary")
    return Compaction([message], kind="server", summary=summary, detail={"provider": provider})


class AnthropicCompactionPolicy:
    name = "anthropic-compaction"
    summary_prompt = SUMMARY_PROMPT

    def threshold_tokens(self, window_tokens: int, max_output_tokens: int | None, config: CompactionConfig,
                         *, thread: Any = None) -> int:
        return anthropic_trigger(window_tokens, config, thread)

    def should_compact(self, history: Sequence[BaseMessage], ctx: PolicyContext) -> bool:
        thread = _thread_of(ctx)
        return ctx.request_tokens > anthropic_trigger(ctx.window_tokens, ctx.config, thread)

    def measure(self, history: Sequence[BaseMessage], ctx: PolicyContext) -> Measure:
        """The request's input tokens against the trigger, exceeded (`>`)."""
        threshold = anthropic_trigger(ctx.window_tokens, ctx.config, _thread_of(ctx))
        return Measure(ctx.request_tokens, threshold, op=">", expression="trigger input_tokens")

    def rebuild(self, history: Sequence[BaseMessage], ctx: PolicyContext) -> Compaction:
        return compaction_item(history, ctx, "anthropic")


class OpenAICompactionPolicy:
    name = "openai-compaction"
    summary_prompt = SUMMARY_PROMPT

    def threshold_tokens(self, window_tokens: int, max_output_tokens: int | None, config: CompactionConfig,
                         *, thread: Any = None) -> int:
        return openai_threshold(window_tokens, config, thread)

    def should_compact(self, history: Sequence[BaseMessage], ctx: PolicyContext) -> bool:
        if ctx.previous_request_tokens is None:
            return False
        rendered = ctx.previous_request_tokens + (ctx.previous_output_tokens or 0)
        return rendered > openai_threshold(ctx.window_tokens, ctx.config, _thread_of(ctx))

    def measure(self, history: Sequence[BaseMessage], ctx: PolicyContext) -> Measure:
        """The previous response's rendered tokens (its input and output) against `compact_threshold`."""
        threshold = openai_threshold(ctx.window_tokens, ctx.config, _thread_of(ctx))
        total = (None if ctx.previous_request_tokens is None
                 else ctx.previous_request_tokens + (ctx.previous_output_tokens or 0))
        return Measure(total, threshold, quantity="the previous request and its answer", op=">",
                       series="previous request + output", expression="compact_threshold")

    def rebuild(self, history: Sequence[BaseMessage], ctx: PolicyContext) -> Compaction:
        return compaction_item(history, ctx, "openai")


class _Recorded:
    """What `recorded_threshold` reads from a PolicyContext (the thread's extra fields)."""

    def __init__(self, extra: dict[str, Any]) -> None:
        self.extra = extra


def _thread_of(ctx: PolicyContext) -> _Recorded:
    return _Recorded(ctx.thread_extra)


POLICIES = {"anthropic-compaction": AnthropicCompactionPolicy(), "openai-compaction": OpenAICompactionPolicy()}
