"""Caches a re-run leans on give exactly what computing afresh gives (issue 17: re-run speed).

- `ScaledCounter` answers trim_messages' prefix probes from one pass over the first list;
- `CachedDrop.span` re-uses one summary's projected span while the same messages come again;
- a counter counts each distinct tool schema once, and counts a list in one pass;
- `PrefixCounts` follows a growing list, and the filesystem layer's keep cutoff bisects its sums;
- the Deep Agents patch's ledger of open calls agrees with the full scan;
- `overridden` builds what `ModelRequest.override` builds;
- the offline summarizer's per-message readings give what reading fresh messages gives.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.messages.utils import trim_messages
from langchain_core.tools import tool

from engine.layers.approximate import PrefixCounts, RunningScaledCount, ScaledCounter, scaled_count
from engine.layers.summary_rules import CachedDrop, apply_event, drop_bound_reasoning, trim_for_summary
from engine.tokens.counters import ApproximateCounter, TiktokenCounter


def _thread() -> list[Any]:
    """Human turns, AI messages with usage from two providers part of the way, tool results."""
    out: list[Any] = []
    for i in range(40):
        out.append(HumanMessage(f"question {i} " + "words " * (i % 7), id=f"h{i}"))
        usage = {"input_tokens": 50 * i, "output_tokens": 9, "total_tokens": 50 * i + 9} if i % 3 else None
        provider = None if i == 0 else ("openai" if i < 30 else "anthropic")
        out.append(AIMessage(f"answer {i} " + "text " * (i % 5), id=f"a{i}", usage_metadata=usage,
                             response_metadata={"model_provider": provider} if provider else {},
                             tool_calls=[{"name": "read", "args": {"p": str(i)}, "id": f"c{i}"}]))
        out.append(ToolMessage("result " * (3 + i % 11), tool_call_id=f"c{i}", id=f"t{i}"))
    return out


def test_every_prefix_count_is_the_one_off_scaled_count() -> None:
    counter = ApproximateCounter()
    for messages in (_thread(), _thread()[:89], list(reversed(_thread())), _thread()[1:2], []):
        expected = [scaled_count(counter, messages[:k]) for k in range(len(messages) + 1)]
        assert RunningScaledCount(counter).prefix_counts(messages) == expected
        probe = ScaledCounter(counter)
        assert probe(messages) == expected[-1]
        # probes in any order, prefixes of the first list and other lists alike
        for k in (len(messages) // 2, min(1, len(messages)), len(messages), 0, len(messages) // 3):
            assert probe(messages[:k]) == expected[k]
        other = [HumanMessage("not a prefix", id="x"), *messages[:5]]
        assert probe(other) == scaled_count(counter, other)
        assert probe(messages[:4]) == expected[min(4, len(messages))]


def test_a_message_whose_content_was_reassigned_is_recounted() -> None:
    """trim_messages reassigns its partial copy's content between probes (DeerFlow's section trim)."""
    counter = ApproximateCounter()
    probe = ScaledCounter(counter)
    copy = HumanMessage("a" * 400, id="m")
    assert probe([copy]) == scaled_count(counter, [copy]) == 104  # 400 chars / 4 + 3 a message + 1 its role
    copy.content = "a" * 40
    counter.invalidate(copy)
    assert probe([copy]) == 14


def test_trimming_gives_what_a_fresh_count_per_probe_gives() -> None:
    counter = ApproximateCounter()
    messages = _thread()

    def fresh(ms: list[Any]) -> int:  # what the counter was before: a new scaled count per probe
        for m in ms:
            counter.invalidate(m)
        return scaled_count(counter, ms)

    for limit in (50, 400, 1000, 2500, 10_000):
        expected = trim_messages(list(messages), max_tokens=limit, token_counter=fresh, start_on="human",
                                 strategy="last", allow_partial=True, include_system=True)
        got = trim_for_summary(messages, limit, ScaledCounter(counter))
        assert [(m.id, m.content) for m in got] == [(m.id, m.content) for m in expected], limit


def test_a_summary_span_is_projected_once_and_again_when_it_changes() -> None:
    reasoning = [{"type": "reasoning", "id": "r1", "summary": []}, {"type": "text", "text": "said"}]
    messages = [HumanMessage("q", id="h"), AIMessage(reasoning, id="a1"), ToolMessage("r", tool_call_id="c", id="t"),
                AIMessage(list(reasoning), id="a2"), HumanMessage("next", id="h2")]
    summary = HumanMessage("summary", id="s")
    event = {"cutoff_index": 1, "summary_message": summary, "created_at_index": 4}
    drop = CachedDrop()
    first = apply_event(messages, event, drop)
    assert first == apply_event(messages, event, drop_bound_reasoning)
    again = apply_event([*messages, HumanMessage("more", id="h3")], event, drop)
    assert all(x is y for x, y in zip(first, again[:5], strict=True))  # the very same projected copies
    replaced = [*messages[:2], ToolMessage("other", tool_call_id="c", id="t"), *messages[3:]]
    assert apply_event(replaced, event, drop)[2] is replaced[2]  # a new object in the span: projected anew
    assert apply_event(replaced, event, drop) == apply_event(replaced, event, drop_bound_reasoning)


@tool
def read(path: str) -> str:
    """Read a file."""
    return path


def test_tool_schemas_are_counted_once_and_the_same() -> None:
    counter = TiktokenCounter("o200k_base")
    fresh = TiktokenCounter("o200k_base")
    tools: list[Any] = [read, {"name": "grep", "description": "search", "parameters": {"type": "object"}}]
    first = counter.count_tools(tools)
    assert first == fresh.count_text(_schema(tools[0])) + fresh.count_text(_schema(tools[1]))
    encoded: list[str] = []
    original = counter.count_text
    counter.count_text = lambda text: encoded.append(text) or original(text)  # type: ignore[method-assign]
    assert counter.count_tools(tools) == first and counter.count_tools(list(reversed(tools))) == first
    assert encoded == []  # known schemas are not encoded again
    tools[1]["description"] = "search the tree"  # a changed schema is a new text: counted anew
    assert counter.count_tools(tools) == fresh.count_tools(tools) and len(encoded) == 1


def _schema(t: Any) -> str:
    import json

    from engine.tokens.counters import tool_schema

    return json.dumps(tool_schema(t), ensure_ascii=False, sort_keys=True)


def test_a_list_is_counted_in_one_pass_with_the_same_total() -> None:
    messages = _thread()
    warm, cold = TiktokenCounter("o200k_base"), TiktokenCounter("o200k_base")
    expected = sum(cold.count_message(m) for m in messages)
    assert warm(messages[:10]) == sum(cold.count_message(m) for m in messages[:10])
    assert warm(messages) == expected  # a mix of cached and new messages, the new ones batched
    assert warm(messages) == expected and warm([messages[0], messages[0]]) == 2 * cold.count_message(messages[0])


def test_prefix_counts_follow_a_growing_list_and_start_over_when_it_changes() -> None:
    counter = TiktokenCounter("o200k_base")
    messages = _thread()
    sums = PrefixCounts(counter)

    def fresh(ms: list[Any]) -> list[int]:
        return [sum(counter.count_message(m) for m in ms[:k]) for k in range(len(ms) + 1)]

    for k in (0, 1, 5, 5, 30, 120):  # grows (and stays), then
        assert sums(messages[:k]) == fresh(messages[:k])
    other = [messages[0], HumanMessage("replaced", id="r"), *messages[2:9]]
    assert sums(other) == fresh(other)  # a replaced message: counted afresh
    assert sums(messages[:3]) == fresh(messages[:3])  # shorter: afresh
    assert sums([]) == [0] and sums.nonnegative


def test_the_bisected_keep_cutoff_is_the_walk_back() -> None:
    """`keep_cutoff_from_sums` on prefix sums = Deep Agents' walk back over the counts."""
    import random

    from engine.config.sizes import ContextSize
    from engine.layers.filesystem import keep_cutoff, keep_cutoff_from_sums

    rng = random.Random(7)
    keeps = [ContextSize(type="tokens", value=v) for v in (1, 5, 25, 30, 100, 1000)]
    keeps += [ContextSize(type="fraction", value=v) for v in (0.01, 0.1, 0.5)]
    keeps += [ContextSize(type="messages", value=v) for v in (1, 2, 9)]
    for trial in range(300):
        tokens = [rng.choice((0, 0, 1, 3, 10, 40, 200)) for _ in range(rng.randrange(0, 30))]
        sums = [0]
        for t in tokens:
            sums.append(sums[-1] + t)
        for keep in keeps:
            for window in (None, 0, 300, 5000):
                assert keep_cutoff_from_sums(sums, keep, window) == keep_cutoff(tokens, keep, window), (trial, keep, window)


def test_the_open_call_ledger_agrees_with_the_full_patch_scan() -> None:
    """Deep Agents' before_agent patch runs only when some call in the state has no result."""
    from langchain_core.messages import InvalidToolCall

    from engine.layers.dangling import _OpenCallLedger, deepagents_patched_state

    ledger = _OpenCallLedger()
    state: list[Any] = []
    steps: list[Any] = [
        HumanMessage("q", id="h"),
        AIMessage("", id="a1", tool_calls=[{"name": "read", "args": {}, "id": "c1"}]),
        ToolMessage("r", tool_call_id="c1", id="t1"),
        AIMessage("", id="a2", tool_calls=[{"name": "read", "args": {}, "id": "c2"}, {"name": "ls", "args": {}, "id": None}]),
        HumanMessage("interrupt", id="h2"),
        ToolMessage("late", tool_call_id="c2", id="t2"),
        AIMessage("", id="a3", invalid_tool_calls=[InvalidToolCall(name="x", args="{", id="bad", error=None, type="invalid_tool_call")]),
        ToolMessage("answers the invalid call", tool_call_id="bad", id="t3"),
    ]
    for m in steps:
        state.append(m)  # the same list, grown
        assert ledger.any_open(state) == (deepagents_patched_state(state) is not None), m.id
    rewritten = [steps[0], steps[1], steps[3]]  # a new list without the results
    assert ledger.any_open(rewritten) and deepagents_patched_state(rewritten) is not None
    assert not ledger.any_open(steps[:1]) and deepagents_patched_state(steps[:1]) is None


def test_overridden_requests_equal_what_override_builds() -> None:
    from langchain.agents.middleware import ModelRequest
    from langchain_core.messages import SystemMessage

    from engine.layers.request_copy import overridden

    base = ModelRequest(model=None, messages=[HumanMessage("a", id="a")], system_message=SystemMessage("s"),  # type: ignore[arg-type]
                        tools=[read], state={"messages": []}, runtime=None)
    changes: list[dict[str, Any]] = [
        {"messages": [HumanMessage("b", id="b")]},
        {"system_message": SystemMessage("t")},
        {"system_message": None, "messages": []},
        {"tools": None}, {"state": None}, {"model_settings": None},  # normalized by __init__: override itself
        {"system_prompt": "p"},
    ]
    for change in changes:
        got, expected = overridden(base, **change), base.override(**change)
        assert got == expected and got is not base
        for field in {"tools", "state", "runtime", "model"} - change.keys():  # the same objects, as replace passes them
            assert getattr(got, field) is getattr(expected, field) is getattr(base, field), field
    assert base.messages[0].id == "a"  # the original is untouched


def test_offline_summaries_read_from_memos_equal_summaries_of_fresh_messages() -> None:
    """Per-message readings (calls, earlier summaries' artifacts) give the text a first read gives,
    and a message whose tool calls are reassigned is read again."""
    from engine.summarizers.offline import OfflineSummarizer

    def messages() -> list[Any]:
        out: list[Any] = [HumanMessage("Fix the parser, then update the docs.", id="h")]
        for i in range(6):
            out.append(AIMessage(f"I fixed case {i} because it failed.", id=f"a{i}", tool_calls=[
                {"name": "edit_file", "args": {"file_path": f"src/p{i % 3}.py"}, "id": f"c{i}"},
                {"name": "write_todos", "args": {"todos": [{"content": f"step {i}", "status": "pending"}]}, "id": f"d{i}"}]))
            out.append(ToolMessage("Error: boom" if i == 2 else "ok", tool_call_id=f"c{i}", id=f"t{i}"))
        return out

    summarizer = OfflineSummarizer()
    first = summarizer.summarize(messages())
    summary = HumanMessage(f"Here is a summary of the conversation to date:\n\n{first}", id="s",
                           additional_kwargs={"lc_source": "summarization"})
    kept = messages()
    chained = [summary, *kept]
    assert summarizer.summarize(chained) == summarizer.summarize(chained)  # read again from the memos
    fresh_summary = HumanMessage(summary.content, id="s", additional_kwargs={"lc_source": "summarization"})
    assert summarizer.summarize(chained) == summarizer.summarize([fresh_summary, *messages()])
    ai = kept[1]
    before = summarizer.summarize(kept)
    ai.tool_calls = [{"name": "read_file", "args": {"file_path": "other.md"}, "id": "c0", "type": "tool_call"}]
    after = summarizer.summarize(kept)
    copy = [AIMessage(ai.content, id="a0", tool_calls=ai.tool_calls) if m is ai else m for m in kept]
    assert after == summarizer.summarize(copy) and "other.md" in after and after != before
