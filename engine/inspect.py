"""What a thread holds and what each model call was sent: the `ctxi inspect` object (docs/inspect-json.md)."""

from __future__ import annotations

from collections import Counter
from itertools import accumulate
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage

from engine.kinds import mark
from engine.thread import RecordedCompaction, Thread
from engine.tokens import TokenCounter, breakdown_messages, counter_for_thread, prime_thread

SCHEMA = "context-inspector/inspect"
VERSION = 1
LARGEST = 5


def summary_message(compaction: RecordedCompaction) -> HumanMessage:
    """The recorded summary as the message the agent continued from (counted like one)."""
    return mark(HumanMessage(content=compaction.summary, id=compaction.message_id), "summary")  # type: ignore[return-value]


def step_contexts(thread: Thread, counter: TokenCounter | None = None) -> list[dict[str, Any]]:
    """One entry per AI message: the tokens of everything before it, from the last recorded compaction.

    Before any compaction that is every earlier message; after one it is the compaction's summary
    plus the messages since its `index`. `recorded_input_tokens` is the source's own count, or None.
    Without a counter, the thread's own (`counter_for_thread`: Claude threads get Anthropic framing).
    """
    counter = counter or counter_for_thread(thread)
    sizes = [counter.count_message(m) for m in thread.messages]
    before = [0, *accumulate(sizes)]  # before[i] = tokens of messages[:i]
    compactions = sorted(thread.compactions, key=lambda c: c.index)
    summary_tokens = [counter.count_message(summary_message(c)) for c in compactions]
    steps: list[dict[str, Any]] = []
    active = -1
    for i, message in enumerate(thread.messages):
        while active + 1 < len(compactions) and compactions[active + 1].index <= i:
            active += 1
        if not isinstance(message, AIMessage):
            continue
        if active >= 0:
            start = min(compactions[active].index, i)
            context = summary_tokens[active] + before[i] - before[start]
        else:
            context = before[i]
        usage = thread.usage.get(message.id) if message.id else None
        steps.append({
            "step": len(steps),
            "index": i,
            "message_id": message.id,
            "context_tokens": context,
            "recorded_input_tokens": usage.context_tokens if usage is not None else None,
        })
    return steps


def _final_context(thread: Thread, counter: TokenCounter) -> int:
    """Tokens a next call would be sent: the messages since the last compaction (plus its summary)."""
    if not thread.compactions:
        return counter(thread.messages)
    last = max(thread.compactions, key=lambda c: c.index)
    return counter.count_message(summary_message(last)) + counter(thread.messages[last.index:])


def _largest(thread: Thread, counter: TokenCounter) -> list[dict[str, Any]]:
    ranked = sorted(range(len(thread.messages)), key=lambda i: (-counter.count_message(thread.messages[i]), i))
    return [
        {"index": i, "id": thread.messages[i].id, "role": thread.messages[i].type,
         "tokens": counter.count_message(thread.messages[i])}
        for i in ranked[:LARGEST]
    ]


def _tool_calls(thread: Thread) -> dict[str, Any]:
    names = Counter(str(tc.get("name", "")) for tc in thread.tool_calls())
    return {"count": sum(names.values()), "by_name": dict(sorted(names.items(), key=lambda kv: (-kv[1], kv[0])))}


def inspect_thread(thread: Thread, counter: TokenCounter | None = None) -> dict[str, Any]:
    """The stable, JSON-ready description of a thread (documented in docs/inspect-json.md).

    Without a counter, the thread's own (`counter_for_thread`: Claude threads get Anthropic framing).
    """
    counter = counter or counter_for_thread(thread)
    prime_thread(counter, thread)
    steps = step_contexts(thread, counter)
    peak_step = max(steps, key=lambda s: (s["context_tokens"], -s["step"])) if steps else None
    final = _final_context(thread, counter)
    peak = max(final, peak_step["context_tokens"] if peak_step else 0)
    by_category = breakdown_messages(counter, thread.messages)
    return {
        "schema": SCHEMA,
        "version": VERSION,
        "format": thread.source_format,
        "thread_id": thread.thread_id,
        "title": thread.title,
        "model": thread.model,
        "max_input_tokens": thread.max_input_tokens,
        "messages": len(thread.messages),
        "by_role": dict(sorted(thread.by_role().items())),
        "tool_calls": _tool_calls(thread),
        "subagents": [
            {"tool_call_id": call_id, "thread_id": sub.thread_id, "messages": len(sub.messages),
             "tokens": counter(sub.messages)}
            for call_id, sub in thread.subagents.items()
        ],
        "recorded_compactions": [
            {"index": c.index, "trigger": c.trigger, "pre_tokens": c.pre_tokens,
             "summary_tokens": counter.count_message(summary_message(c))}
            for c in sorted(thread.compactions, key=lambda c: c.index)
        ],
        "tokens": {
            "counter": counter.name,
            "total": sum(by_category.values()),
            "peak": peak,
            "peak_step": peak_step["step"] if peak_step and peak_step["context_tokens"] >= final else None,
            "final_context": final,
            "by_category": {k: by_category[k] for k in sorted(by_category)},
        },
        "largest_messages": _largest(thread, counter),
        "steps": steps,
    }
