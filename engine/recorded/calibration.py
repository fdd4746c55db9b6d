"""Calibrated counts: what the provider billed, laid onto the messages that introduced it.

A transcript does not hold everything its agent sent: the system prompt and tool schemas are
missing (Claude Code, Codex, most logs), summarized thinking stands for longer thinking, hook output
and reminders are injected into requests, and the provider's tokenizer is not ours. Where the
source recorded the input of each call, the difference is measured instead of guessed:

- **unrecorded prompt** (`unrecorded_prompt`): the first recorded call's input minus our count of
  the history it was sent (the agent's own system prompt and tools). It is sent with every request.
- **unrecorded in message** (`unrecorded`): at each later recorded call, the input not explained by
  the unrecorded prompt and the calibrated cost of the history already seen, spread over the
  messages that are new in this request in proportion to their counted tokens (a message's share
  is never below minus its own count). Right after a recorded compaction it all goes to the
  compaction's replacement (the summary and what the agent re-attached with it). Those tokens belong to the messages, so a what-if replay
  that drops a message drops its hidden tokens too.

The views walked are the as-recorded ones (engine.recorded.history: recorded compactions and edits, the
provider's thinking rule), so on the as-recorded run every step with recorded usage costs exactly
its recorded input. Messages the replay's layers create (summaries, stubs) are counted by our
tokenizer alone: their hidden share is unknown, and they are labelled as estimates.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage, SystemMessage

from engine.recorded.history import RecordedHistory, recorded_history
from engine.thread.model import Thread
from engine.tokens.counters import TokenCounter, prime_thread

UNRECORDED_PROMPT = "unrecorded_prompt"
UNRECORDED = "unrecorded"


@dataclass
class StepFit:
    """One recorded call as the calibration saw it (for reports and tests)."""

    step: int
    message_index: int
    recorded: int
    counted: int  # our count of the recorded view, before this step's residual
    residual: int  # recorded - unrecorded prompt - calibrated history; spread over `new`
    new: int  # how many messages were new in this request


@dataclass
class Calibration:
    """Per-message hidden tokens and the unrecorded prompt of one thread (and its sub-agents)."""

    prompt_tokens: int
    hidden: dict[int, int]  # id(message object) -> unrecorded tokens it introduced
    fits: list[StepFit] = field(default_factory=list)
    subagent_prompt_tokens: dict[str, int] = field(default_factory=dict)
    # The message objects keyed in `hidden`, kept alive so their ids stay theirs.
    _keep: list[BaseMessage] = field(default_factory=list, repr=False)

    def hidden_of(self, message: BaseMessage) -> int:
        return self.hidden.get(id(message), 0)

    @property
    def unrecorded_in_messages(self) -> int:
        return sum(self.hidden.values())


def system_tokens(counter: TokenCounter, thread: Thread, history: RecordedHistory) -> int:
    """What the recorded prompt and tool schemas cost, the way the replay sends them."""
    start = history.body_start()
    prompt = thread.system_prompt
    if prompt is None and start:
        prompt = "\n\n".join(str(m.content) for m in thread.messages[:start])
    total = counter.count_message(SystemMessage(content=prompt, id="system")) if prompt else 0
    return total + (counter.count_tools(thread.tools) if thread.tools else 0)


def _fit(thread: Thread, counter: TokenCounter, hidden: dict[int, int], keep: list[BaseMessage]) -> tuple[int, list[StepFit]] | None:
    """Walk the recorded views of one thread, filling `hidden`; the unrecorded prompt and the fits."""
    history = recorded_history(thread)
    base = system_tokens(counter, thread, history)
    prompt: int | None = None
    fits: list[StepFit] = []
    seen: set[int] = set()
    for view in history.views():
        usage = thread.usage.get(view.response.id or "")
        recorded = usage.context_tokens if usage is not None else None
        if not recorded:
            continue
        messages = history.provider_view(view.messages)
        counted = base
        new: list[BaseMessage] = []
        for m in messages:
            counted += counter.count_message(m) + hidden.get(id(m), 0)
            if id(m) not in seen:
                new.append(m)
        if prompt is None:
            # The first recorded call: what we cannot see of it is the agent's own prompt and tools.
            # Negative when our count of the prompt and tool schemas the thread does hold is above
            # what the provider billed for them (providers render tool schemas their own way).
            prompt = recorded - counted
            residual = 0
            if prompt < -base:  # more than the prompt and tools could account for: the messages carry the rest
                residual, prompt = prompt + base, -base
        else:
            residual = recorded - prompt - counted
        fits.append(StepFit(view.step, view.message_index, recorded, counted, residual, len(new)))
        # Right after a recorded compaction, what the request holds beyond our count is what the
        # compaction put in (re-attached files, memory, the plan): it belongs to its replacement,
        # not to the messages that followed, so a what-if without that compaction does not carry it.
        made = {id(m) for c in view.compactions for m in history.replacement(c)}
        owners = [m for m in new if id(m) in made] or new
        _spread(residual, owners, counter, hidden)
        for m in new:
            seen.add(id(m))
            keep.append(m)
    if prompt is None:
        return None
    return prompt, fits


def _spread(residual: int, new: Sequence[BaseMessage], counter: TokenCounter, hidden: dict[int, int]) -> None:
    """Share `residual` over the new messages by counted tokens (largest remainder, deterministic)."""
    if not new or residual == 0:
        return
    weights = [max(1, counter.count_message(m)) for m in new]
    total = sum(weights)
    shares = [residual * w // total for w in weights]
    # hand out what floor division left, largest weights first, so the shares add up exactly
    left = residual - sum(shares)
    for k in sorted(range(len(new)), key=lambda k: (-weights[k], k))[: abs(left)]:
        shares[k] += 1 if left > 0 else -1
    for m, share in zip(new, shares, strict=True):
        share = max(share, -counter.count_message(m))
        if share:
            hidden[id(m)] = hidden.get(id(m), 0) + share


def calibrate(thread: Thread, counter: TokenCounter) -> Calibration | None:
    """The calibration of `thread` for `counter`, or None when no call recorded its input."""
    if not thread.usage and not any(sub.usage for sub in thread.subagents.values()):
        return None  # nothing recorded: no walk over the views (a followed session's update costs its new lines)
    prime_thread(counter, thread)
    hidden: dict[int, int] = {}
    keep: list[BaseMessage] = []
    main = _fit(thread, counter, hidden, keep)
    subs: dict[str, int] = {}
    for call_id, sub in thread.subagents.items():
        fitted = _fit(sub, counter, hidden, keep)
        if fitted is not None:
            subs[call_id] = fitted[0]
    if main is None and not subs:
        return None
    prompt, fits = main if main is not None else (0, [])
    return Calibration(prompt_tokens=prompt, hidden=hidden, fits=fits, subagent_prompt_tokens=subs, _keep=keep)


_cache: dict[tuple[int, str, str], tuple[weakref.ref[Thread], Calibration | None]] = {}
_cache_lock = threading.Lock()


def thread_calibration(thread: Thread, counter: TokenCounter) -> Calibration | None:
    """`calibrate` once per (thread object, counter): every replay of a thread shares it."""
    key = (id(thread), counter.name, str(getattr(counter, "framing", "")))
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None and hit[0]() is thread:
            return hit[1]
    result = calibrate(thread, counter)

    def _drop(_ref: weakref.ref[Thread], key: tuple[int, str, str] = key) -> None:
        # no lock here: a weakref callback may run inside a locked section (a GC pass), and a dict
        # pop is atomic; at interpreter exit the module globals may already be gone
        entries = _cache
        if entries is not None:
            entry = entries.get(key)
            if entry is not None and entry[0] is _ref:
                entries.pop(key, None)

    with _cache_lock:
        _cache[key] = (weakref.ref(thread, _drop), result)
    return result


class CalibratedCounter:
    """A token counter whose recorded messages also carry their unrecorded tokens (category `unrecorded`).

    Everything else (texts, tool schemas, messages the layers make) is the base counter's.
    """

    def __init__(self, base: TokenCounter, calibration: Calibration) -> None:
        self.base = base
        self.calibration = calibration
        self.name = base.name
        self.framing = getattr(base, "framing", None)
        self._hidden = calibration.hidden

    def count_text(self, text: str) -> int:
        return self.base.count_text(text)

    def breakdown(self, message: BaseMessage) -> Mapping[str, int]:
        extra = self._hidden.get(id(message))
        out = self.base.breakdown(message)
        if not extra:
            return out
        return {**out, UNRECORDED: extra}

    def count_message(self, message: BaseMessage) -> int:
        return self.base.count_message(message) + self._hidden.get(id(message), 0)

    def count_tools(self, tools: Sequence[Any]) -> int:
        return self.base.count_tools(tools)

    def prime(self, messages: Iterable[BaseMessage]) -> None:
        prime = getattr(self.base, "prime", None)
        if prime is not None:
            prime(messages)

    def invalidate(self, message: BaseMessage) -> None:
        invalidate = getattr(self.base, "invalidate", None)
        if invalidate is not None:
            invalidate(message)

    def __call__(self, messages: Iterable[BaseMessage], **kwargs: Any) -> int:
        messages = list(messages)
        total = self.base(messages, **kwargs)
        return total + sum(self._hidden.get(id(m), 0) for m in messages)
