"""Per-call paths of the `plain` bench's summarization layer give what the plain computation gives.

- `RunningScaledCount` extends its running total inline, several messages at a time, the usage
  scaling reading the total up to each AI message that reports usage (LangChain's
  `count_tokens_approximately`, langchain-core 1.8 `messages/utils.py`: the scale is the last
  reported total over the count up to that message);
- `IdCheck` checks only the new messages of a grown list, and assigns ids as `ensure_ids` on the
  whole list does;
- `summary_id` reads the summary markers and ids of the messages at C speed, the same id as a
  message-by-message walk.
"""

from __future__ import annotations

import math
import random
import re
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from engine.layers.approximate import RunningScaledCount, scaled_count
from engine.layers.summary_rules import IdCheck, ensure_ids, summary_id
from engine.thread.kinds import message_kind
from engine.thread.model import stable_id
from engine.tokens.counters import ApproximateCounter


def _message(rng: random.Random, i: int, with_id: bool = True) -> BaseMessage:
    kind = rng.choice(("human", "ai", "ai", "tool"))
    text = "word " * rng.randint(0, 60)
    mid = f"m{i}" if with_id else None
    if kind == "human":
        return HumanMessage(text, id=mid)
    if kind == "ai":
        usage = ({"input_tokens": 30 * i + rng.randint(0, 400), "output_tokens": 5,
                  "total_tokens": 30 * i + rng.randint(0, 900)} if rng.random() < 0.6 else None)
        provider = rng.choice(("openai", "openai", "openai", None, "anthropic")) if rng.random() < 0.2 else "openai"
        return AIMessage(text, id=mid, usage_metadata=usage,
                         response_metadata={"model_provider": provider} if provider else {})
    return ToolMessage(text, tool_call_id=f"c{i}", id=mid)


def test_a_list_grown_by_batches_counts_as_a_fresh_copy() -> None:
    """Batches of 1-6 messages (AI messages with and without usage anywhere in a batch) appended to
    the same list between calls: each count equals a one-off scaled count of a copy."""
    rng = random.Random(3)
    counter = ApproximateCounter()
    for case in range(60):
        running = RunningScaledCount(counter)
        state: list[BaseMessage] = []
        for step in range(25):
            state.extend(_message(rng, 100 * case + 10 * step + j) for j in range(rng.randint(1, 6)))
            kwargs: dict[str, Any] = {"lead_tokens": 70, "lead_messages": 1} if step % 3 == 0 else {}
            got = running(state, **kwargs)
            assert got == RunningScaledCount(counter)(list(state), **kwargs), (case, step)
            if not kwargs:
                assert got == scaled_count(counter, list(state))
            assert running.src is state and running.seen == len(state)  # the grown path took it


def test_the_running_scale_reads_the_total_up_to_the_last_reporting_ai_message() -> None:
    """One batch whose reporting AI message is not its last message: the scale's denominator is the
    count up to that message (counted alone here), not the batch's total."""
    counter = ApproximateCounter()
    head = [HumanMessage("question " * 40, id="h0")]
    ai = AIMessage("answer " * 10, id="a0", usage_metadata={"input_tokens": 150, "output_tokens": 10,
                                                            "total_tokens": 160},
                   response_metadata={"model_provider": "openai"})
    tail = [ToolMessage("result " * 300, tool_call_id="c0", id="t0"), HumanMessage("more " * 50, id="h1")]
    running = RunningScaledCount(counter)
    state = list(head)
    running(state)
    state.extend([ai, *tail])
    got = running(state)
    upto = sum(counter.count_message(m) for m in [*head, ai])
    total = upto + sum(counter.count_message(m) for m in tail)
    assert got == math.ceil(total * min(1.25, max(1.0, 160 / upto)))
    assert got == scaled_count(counter, list(state))


def _reference_summary_id(to_summarize: list[BaseMessage], text: str) -> str:
    """The message-by-message walk summary_id replaced."""
    depth = 0
    for m in to_summarize:
        if m.additional_kwargs and message_kind(m) == "summary":
            found = re.match(r"summary-(\d+)-", m.id or "")
            depth = max(depth, int(found.group(1)) if found else 1)
    return stable_id("summary", depth + 1, ([m.id for m in to_summarize], text))


def test_summary_ids_equal_the_message_by_message_walk() -> None:
    rng = random.Random(11)
    made = 0
    for case in range(300):
        messages = [_message(rng, i) for i in range(rng.randint(0, 12))]
        for m in messages:
            r = rng.random()
            if r < 0.15:  # an earlier summary, its depth in its id (or not)
                m.additional_kwargs["lc_source"] = "summarization"
                m.id = rng.choice((f"summary-{rng.randint(1, 9)}-abc", "summary-x", None, "other"))
            elif r < 0.3:  # kwargs that are not a summary marker
                m.additional_kwargs["ctxi_kind"] = rng.choice(("stub", "original", "patch"))
        text = rng.choice(("", "Summary", "a summary\nof it"))
        got = summary_id(messages, text)
        assert got == _reference_summary_id(messages, text), case
        made += got.startswith("summary-1-") is False
    assert made > 20  # deeper chains were exercised


def test_id_check_assigns_the_ids_ensure_ids_assigns() -> None:
    """A list grown between calls, some new messages without ids (anywhere in the batch, the last
    one too), a replaced list: the same ids as `ensure_ids` on a copy of the whole list."""
    rng = random.Random(5)
    for case in range(80):
        check = IdCheck()
        state: list[BaseMessage] = []
        reference: list[BaseMessage] = []
        for step in range(12):
            batch = [_message(rng, 50 * step + j, with_id=rng.random() < 0.7) for j in range(rng.randint(1, 4))]
            state.extend(batch)
            reference.extend(m.model_copy() for m in batch)
            if rng.random() < 0.1:  # replaced by a new list (a summary's update)
                state, reference = list(state[-3:]), list(reference[-3:])
            check(state)
            ensure_ids(reference)
            assert [m.id for m in state] == [m.id for m in reference], (case, step)
            assert None not in [m.id for m in state]
