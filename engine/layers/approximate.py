"""The counts the frameworks decide with: LangChain's approximate counter, scaled by reported usage.

LangChain's `SummarizationMiddleware` (and so Deep Agents' and DeerFlow's, which build on it)
counts with `count_tokens_approximately` unless given another counter (langchain 1.5.2,
`libs/langchain_v1/langchain/agents/middleware/summarization.py::_get_approximate_token_counter`):
4 characters per token, 3.3 for a model whose `_llm_type` starts with `anthropic-chat`, and
`use_usage_metadata_scaling=True` for every count that decides a trigger. The cutoff search uses
the same counter without scaling (`_partial_token_counter`).

Scaling (`libs/core/langchain_core/messages/utils.py::count_tokens_approximately`): with more than
one message, every AI message reporting one `model_provider` (a `None` before the first non-None
one is skipped) and some AI message carrying an integer `usage_metadata["total_tokens"]`, the count
is multiplied by `clamp(last_total / approx_up_to_that_message, 1.0, 1.25)`, then rounded up. The
tools' tokens (and a system message) count from the start, so they are part of the denominator.

`RunningScaledCount` keeps that state incrementally while a list only grows, so a step costs its
new messages: the very list object seen last, longer now, costs O(1) to recognise (replay hands
layers the state's own list and only appends to it; it forks the list before replacing anything);
any other list is compared with the messages seen, element by element.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from itertools import islice
from typing import Any, ClassVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from engine.tokens.counters import ApproximateCounter, TokenCounter, _CachedCounter

_content = operator.attrgetter("content")
ANTHROPIC_CHARS_PER_TOKEN = 3.3  # LangChain's choice for anthropic-chat models
MAX_USAGE_SCALE = 1.25
# LangChain's concrete classes that are not AIMessage: a message of one of these exact types is no AI
# message, known without ABCMeta's __instancecheck__ (~0.2 us for a negative isinstance on a pydantic model)
NOT_AI_TYPES = frozenset({ToolMessage, HumanMessage, SystemMessage})


def scales_with_usage(counter: Any) -> bool:
    """LangChain scales only its own approximate counter; a custom counter is used as it is."""
    return isinstance(counter, ApproximateCounter)


class RunningScaledCount:
    """`counter([*lead, *messages], tools=...)` with LangChain's usage scaling, kept incrementally.

    `lead_tokens` (the system message and the tools, counted before the messages) is passed per
    call; the per-message part is re-used while `messages` extends the list seen last time.
    """

    # how a checkpoint keeps each run-time attribute (engine/layers/checkpoint.py): `src` is a list
    # only appended to below `seen` (the driver's state, a projection, a view copied before a write)
    checkpoint_kinds: ClassVar[dict[str, str]] = {
        "prev": "value", "src": "value", "seen": "value", "last": "value", "total": "value", "provider": "value",
        "invalid": "value", "last_usage": "value", "total_at_last_usage": "value"}

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self.scaling = scales_with_usage(counter)
        # a counter of ours that is not scaled: its count of a list is the sum of its messages' counts
        # (`_CachedCounter.__call__` without tools), so the new messages are summed here directly
        self.additive = not self.scaling and type(counter).__call__ is _CachedCounter.__call__
        self._reset()

    def _reset(self) -> None:
        # The messages the totals cover: `prev` (copied at the last call that had to compare), then
        # `src[len(prev):seen]` for the calls that handed over `src` again, grown (see `_grown`).
        self.prev: tuple[BaseMessage, ...] = ()
        self.src: Sequence[BaseMessage] | None = None
        self.seen = 0
        self.last: BaseMessage | None = None
        self.total = 0
        self.provider: str | None = None
        self.invalid = False
        self.last_usage: int | None = None
        self.total_at_last_usage = 0

    def _extend(self, messages: Sequence[BaseMessage]) -> None:
        if not self.scaling:  # any counter, called on lists as it expects (a custom one need not add up)
            self.total += self.counter(messages)
            return
        count = self.counter.count_message
        for m in messages:
            self.total += count(m)
            if isinstance(m, AIMessage):
                self._note_ai(m)

    def _note_ai(self, m: AIMessage) -> None:
        """An AI message's provider and reported usage, which the scaling reads (after counting `m`)."""
        provider = m.response_metadata.get("model_provider")
        if self.provider is None:
            self.provider = provider
        elif provider != self.provider:
            self.invalid = True
        usage = m.usage_metadata
        if usage and isinstance(total := usage.get("total_tokens"), int):
            self.last_usage = total
            self.total_at_last_usage = self.total

    def __call__(self, messages: Sequence[BaseMessage], *, lead_tokens: int = 0, lead_messages: int = 0,
                 tail: BaseMessage | None = None, scaled: bool = True) -> int:
        """The count of `lead_messages` leading messages worth `lead_tokens`, then `messages`, then
        `tail` (a message after the last AI message, e.g. DeerFlow's summary stand-in)."""
        n = self.seen
        if not self._grown(messages, n):
            # identity, element by element, at C speed (map stops at the shorter: the seen part)
            same = n and len(messages) >= n and all(map(operator.is_, self.prev, messages))
            k = len(self.prev)
            if same and n > k:  # the part seen by the O(1) path, still in `src`
                same = all(map(operator.is_, islice(self.src, k, n), islice(messages, k, n)))  # type: ignore[arg-type]
            if not same:
                self._reset()
                n = 0
            self.prev = tuple(messages)
        size = len(messages)
        if size > n:
            if self.additive and size - n <= 64:  # the counter's own sum, inline (more: its batch path)
                count, total = self.counter.count_message, self.total
                for i in range(n, size):
                    total += count(messages[i])
                self.total = total
            elif self.scaling:  # _extend(messages[n:]), inline: this runs at every model call
                count, total = self.counter.count_message, self.total
                for i in range(n, size):
                    m = messages[i]
                    total += count(m)
                    if type(m) not in NOT_AI_TYPES and isinstance(m, AIMessage):
                        self.total = total  # _note_ai reads the total up to and including `m`
                        self._note_ai(m)
                self.total = total
            else:
                self._extend(messages[n:])
        self.src, self.seen = messages, size
        self.last = messages[size - 1] if size else None
        total = lead_tokens + self.total + (self.counter([tail]) if tail is not None else 0)
        return self._scaled(total, size + lead_messages + (tail is not None), lead_tokens, scaled)

    def _grown(self, messages: Sequence[BaseMessage], n: int) -> bool:
        """O(1): `messages` is the very list object of the last call, holding at least as many messages,
        the last one seen still in its place. A list handed over again is one only appended to since
        (the replay driver's state: it forks the list before any replacement, and layers override
        the request's messages, never mutate them), so its first `n` are the messages counted."""
        return (messages is self.src and type(messages) is list and len(messages) >= n
                and (not n or messages[n - 1] is self.last))

    def _scaled(self, total: int, n_messages: int, lead_tokens: int, scaled: bool) -> int:
        if not (scaled and self.scaling) or n_messages <= 1 or self.invalid:
            return total
        if self.provider is None or self.last_usage is None:
            return total
        approx = lead_tokens + self.total_at_last_usage
        if approx <= 0:
            return total
        return math.ceil(total * min(MAX_USAGE_SCALE, max(1.0, self.last_usage / approx)))

    def prefix_counts(self, messages: Sequence[BaseMessage]) -> list[int]:
        """`[self(messages[:k]) for k in range(len(messages) + 1)]` from fresh state, in one pass."""
        self._reset()
        out = [0]
        if not self.scaling:
            raise ValueError("prefix_counts needs LangChain's approximate counter (its counts add up)")
        count, scaled, append = self.counter.count_message, self._scaled, out.append
        for k, m in enumerate(messages, 1):
            # _extend for one message, inline: this runs once per message of every trimmed list
            self.total += count(m)
            if isinstance(m, AIMessage):
                self._note_ai(m)
            append(scaled(self.total, k, 0, True))
        self.prev = tuple(messages)
        self.src, self.seen = messages, len(messages)
        self.last = messages[-1] if messages else None
        return out


class PrefixCounts:
    """`[0, c(m0), c(m0)+c(m1), ...]`, the prefix sums of `counter.count_message` (unscaled) over a
    list, kept incrementally while the list only grows (the same objects, checked by identity), so a
    walk back from the newest message (a keep cutoff) is a bisection instead of a count per message.
    The list object of the last call handed over again, grown (`RunningScaledCount._grown`'s rule),
    is extended without comparing its first messages again."""

    checkpoint_kinds: ClassVar[dict[str, str]] = {
        "prev": "value", "src": "value", "seen": "value", "last": "value", "sums": "grow", "nonnegative": "value"}

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        # the messages the sums cover: `prev` (copied at the last call that had to compare), then
        # `src[len(prev):seen]` for the calls that handed over `src` again, grown
        self.prev: tuple[BaseMessage, ...] = ()
        self.src: Sequence[BaseMessage] | None = None
        self.seen = 0
        self.last: BaseMessage | None = None
        self.sums: list[int] = [0]
        self.nonnegative = True  # every count >= 0, so the sums never decrease

    def __call__(self, messages: Sequence[BaseMessage]) -> list[int]:
        n = self.seen
        if not (messages is self.src and type(messages) is list and len(messages) >= n
                and (not n or messages[n - 1] is self.last)):
            k = len(self.prev)
            same = n and len(messages) >= n and all(map(operator.is_, self.prev, messages))
            if same and n > k:  # the part seen by the O(1) path, still in `src`
                same = all(map(operator.is_, islice(self.src, k, n), islice(messages, k, n)))  # type: ignore[arg-type]
            if not same:
                self.sums, self.nonnegative, n = [0], True, 0
            self.prev = tuple(messages)
        size = len(messages)
        if size > n:
            count, sums = self.counter.count_message, self.sums
            total = sums[-1]
            for i in range(n, size):
                c = count(messages[i])
                self.nonnegative = self.nonnegative and c >= 0
                total += c
                sums.append(total)
        self.src, self.seen = messages, size
        self.last = messages[size - 1] if size else None
        return self.sums


def scaled_count(counter: TokenCounter, messages: Sequence[BaseMessage]) -> int:
    """One-off scaled count of `messages` (for trimming, where the lists are new each call)."""
    return RunningScaledCount(counter)(messages)


class ScaledCounter:
    """`counter` as LangChain's trigger counter: each call's list counted with usage scaling.

    LangChain's `trim_messages` binary-searches the longest prefix of one (reversed) list that fits
    (langchain_core/messages/utils.py `_first_max_tokens`): every prefix's count is read from one pass
    over the first list it was given, instead of a pass per probe; any other list is counted anew.
    """

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self._base: tuple[BaseMessage, ...] = ()
        self._contents: tuple[Any, ...] = ()
        self._prefix: list[int] = [0]  # the count of []

    def __call__(self, messages: Sequence[BaseMessage], **kwargs: Any) -> int:
        messages = list(messages)
        if not scales_with_usage(self.counter):  # a custom counter's lists need not add up
            return scaled_count(self.counter, messages)
        n, base = len(messages), self._base
        # the same objects with the same contents (identity, at C speed): trim_messages reassigns a
        # copy's content in place while it searches a partial fit, and that copy must be recounted
        if (n <= len(base) and all(map(operator.is_, messages, base))
                and all(map(operator.is_, map(_content, messages), self._contents))):
            return self._prefix[n]
        if n < len(base):  # e.g. trim's partial copy of one message: not a prefix
            return scaled_count(self.counter, messages)
        self._base, self._contents = tuple(messages), tuple(map(_content, messages))
        self._prefix = RunningScaledCount(self.counter).prefix_counts(messages)
        return self._prefix[n]

    def invalidate(self, message: BaseMessage) -> None:
        invalidate = getattr(self.counter, "invalidate", None)
        if invalidate is not None:
            invalidate(message)


__all__ = [
    "ANTHROPIC_CHARS_PER_TOKEN", "MAX_USAGE_SCALE", "NOT_AI_TYPES", "PrefixCounts", "RunningScaledCount", "ScaledCounter", "scaled_count",
    "scales_with_usage",
]
