"""What a compaction policy is: the context it decides in, the rules it implements, what it returns.

A policy says when its agent compacts and what history the agent continues from:

- `threshold_tokens(window, max_output, config, thread=)`: the request size at which it compacts, as tokens
  (drawn on the timeline), or None when its trigger is not a token level (OpenHands counts events);
- `should_compact(history, ctx)` (optional): the decision itself; the default is "the request about
  to be sent reaches `threshold_tokens`". Gemini CLI and Cline decide on the *previous* request's
  recorded size, OpenHands on the number of events;
- `rebuild(history, ctx)`: the new history, as a list of messages or a `Compaction` (a summary or a
  trim, or a rejection: Gemini CLI keeps the history when the summary would make it larger);
- `tool_result(message, ctx)` (optional): how the agent records a tool result in its history
  (Codex truncates it to its `truncation_policy`);
- `measure(history, ctx)` (optional): what the agent compares with its threshold, as a `Measure`, so the
  decision record (engine.thread.decisions) and the chart's line are on that quantity; the default is the
  request about to be sent (`ctx.request_tokens`) against `threshold_tokens`, reached at `>=`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from langchain_core.messages import BaseMessage

from engine.config.sections import CompactionConfig
from engine.tokens.counters import TokenCounter


@dataclass(frozen=True)
class PolicyContext:
    """What a policy may read when it decides and rebuilds."""

    window_tokens: int
    max_output_tokens: int | None
    counter: TokenCounter
    config: CompactionConfig
    step: int
    summarize: Callable[[Sequence[BaseMessage], str], str]  # (messages, prompt) -> summary text
    # the request about to be sent (prompt, tools and history) and what the model was sent and
    # answered at the previous call (None before the first)
    request_tokens: int = 0
    previous_request_tokens: int | None = None
    previous_output_tokens: int | None = None
    prompt_tokens: int = 0  # the prompt and tool schemas every request carries
    offline: bool = True  # the summarizer is the offline one: the policy fills its own summary shape
    # state a policy keeps across the calls of one run (Gemini CLI remembers a failed compression)
    memory: dict[str, Any] = field(default_factory=dict)
    # the thread's source format and extra fields (Codex reports a usable window, not the model's)
    source_format: str | None = None
    thread_extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Measure:
    """What a policy compares with its threshold at one call (see the module docstring)."""

    measured: int | None
    threshold: int | None
    quantity: str = "the request (provider tokens, its prompt included)"
    unit: str = "tokens"  # tokens | events
    op: str = ">="
    series: str = "view"  # "view" when `measured` is the request the chart draws, else a name for its own curve
    expression: str = ""  # how the threshold is made, in numbers ("200,000 − 20,000 − 13,000")


def default_measure(threshold: int | None, ctx: PolicyContext, expression: str = "") -> Measure:
    """The request about to be sent, against `threshold`, reached at `>=`."""
    return Measure(ctx.request_tokens, threshold, expression=expression)


@dataclass
class Compaction:
    """What a policy's rebuild did. `messages` None: nothing changed (`rejected` says why; None: a
    silent no-op, e.g. nothing lies before Gemini CLI's split point)."""

    messages: list[BaseMessage] | None
    kind: Literal["summary", "trim", "server"] = "summary"
    summary: str = ""
    rejected: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)


class CompactionPolicy(Protocol):
    name: str
    summary_prompt: str

    def threshold_tokens(self, window_tokens: int, max_output_tokens: int | None, config: CompactionConfig,
                         *, thread: Any = None) -> int | None:
        """The request size (tokens) at or above which the agent compacts, or None (not a token level);
        `thread` (when known) lets a policy read what its agent recorded (Codex's usable window)."""
        ...

    def rebuild(self, history: Sequence[BaseMessage], ctx: PolicyContext) -> list[BaseMessage] | Compaction:
        """The history the agent continues from after compacting `history`."""
        ...
