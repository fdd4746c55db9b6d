"""trim_for_summary's fast path (trim_whole_messages) against LangChain's own trim_messages call.

LangChain's SummarizationMiddleware trims with `trim_messages(messages, max_tokens=...,
token_counter=..., start_on="human", strategy="last", allow_partial=True, include_system=True)`
(langchain 1.5.2, `_trim_messages_for_summary`). The fast path answers without trim_messages when no
partial message can be part of the result; it must give the very same list whenever it answers.
"""

from __future__ import annotations

import random
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately, trim_messages

from engine.layers.approximate import ScaledCounter
from engine.layers.summary_rules import trim_for_summary, trim_whole_messages
from engine.tokens.counters import ApproximateCounter


def _random_messages(rng: random.Random, n: int) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    if rng.random() < 0.3:
        out.append(SystemMessage("system " * rng.randint(0, 80), id="sys"))
    for i in range(n):
        kind = rng.choice(("human", "ai", "ai", "tool", "tool"))
        words = "word " * rng.randint(0, 400) + "\n".join("line" for _ in range(rng.randint(0, 5)))
        if kind == "human":
            content: Any = words if rng.random() < 0.8 else [{"type": "text", "text": words}, {"type": "text", "text": "b"}]
            out.append(HumanMessage(content, id=f"h{i}"))
        elif kind == "ai":
            usage = ({"input_tokens": 40 * i, "output_tokens": 5, "total_tokens": 40 * i + 5}
                     if rng.random() < 0.5 else None)
            content = words if rng.random() < 0.85 else [{"type": "text", "text": words}]
            out.append(AIMessage(content, id=f"a{i}", usage_metadata=usage,
                                 response_metadata={"model_provider": "openai"}))
        else:
            out.append(ToolMessage(words, tool_call_id=f"c{i}", id=f"t{i}"))
    return out


def _key(messages: list[BaseMessage]) -> list[tuple[Any, ...]]:
    return [(type(m).__name__, m.id, m.content) for m in messages]


def _langchain(messages: list[BaseMessage], limit: int, counter: Any) -> list[BaseMessage]:
    return trim_messages(list(messages), max_tokens=limit, token_counter=counter, start_on="human",
                         strategy="last", allow_partial=True, include_system=True)


def test_the_fast_path_gives_trim_messages_result_whenever_it_answers() -> None:
    rng = random.Random(7)
    answered = declined = 0
    for case in range(400):
        messages = _random_messages(rng, rng.randint(0, 30))
        for limit in (0, 5, 60, 300, 1000, 4000, 100_000):
            expected = _langchain(messages, limit, count_tokens_approximately)
            got = trim_whole_messages(messages, limit, count_tokens_approximately)
            if got is None:
                declined += 1
                continue
            answered += 1
            assert _key(got) == _key(expected), (case, limit)
            # the same objects, not copies (LangChain hands on the state's own messages)
            assert all(a is b for a, b in zip(got, expected, strict=True)), (case, limit)
    # both branches are exercised, so a fast path that always declined would fail here
    assert answered > 1000 and declined > 100, (answered, declined)


def test_trim_for_summary_equals_langchain_with_the_scaled_counter() -> None:
    rng = random.Random(11)
    counter = ApproximateCounter()
    floored = 0
    for case in range(300):
        messages = _random_messages(rng, rng.randint(1, 60))
        for limit in (10, 200, 1500, 4000):
            # LangChain's trigger counter: the approximate count, usage-scaled
            expected = _langchain(messages, limit, lambda ms: count_tokens_approximately(
                ms, use_usage_metadata_scaling=True))
            got = trim_for_summary(messages, limit, ScaledCounter(counter))
            assert _key(got) == _key(expected), (case, limit)
            # with the per-message floor the layer passes: the same list, with fewer counts
            calls: list[int] = []
            scaled = ScaledCounter(counter)

            def probe(ms: Any, _scaled: Any = scaled, _calls: list[int] = calls) -> int:
                _calls.append(len(ms))
                return int(_scaled(ms))

            with_floor = trim_whole_messages(messages, limit, probe, counter.count_message)
            without = trim_whole_messages(messages, limit, ScaledCounter(counter))
            assert (None if with_floor is None else _key(with_floor)) == (None if without is None else _key(without))
            if with_floor is not None:
                assert _key(with_floor) == _key(expected), (case, limit)
                floored += max(calls, default=0) < len(messages) - isinstance(messages[0], SystemMessage)
            got_floor = trim_for_summary(messages, limit, ScaledCounter(counter), floor=counter.count_message)
            assert _key(got_floor) == _key(expected), (case, limit)
    assert floored > 100, floored  # the floor did spare counting the whole list in many cases


def test_a_human_message_cut_in_part_still_goes_through_trim_messages() -> None:
    # the newest human message does not fit whole: LangChain keeps a partial copy of its last lines
    messages: list[BaseMessage] = [HumanMessage("old", id="h0"), AIMessage("a", id="a0"),
                                   HumanMessage("\n".join(f"line {i}" for i in range(400)), id="h1")]
    assert trim_whole_messages(messages, 100, count_tokens_approximately) is None
    got = trim_for_summary(messages, 100, count_tokens_approximately)
    expected = _langchain(messages, 100, count_tokens_approximately)
    assert _key(got) == _key(expected)
    assert got[0].id == "h1" and got[0].content != messages[2].content  # a partial copy
