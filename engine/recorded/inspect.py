"""What a thread holds and what each model call was sent: the `ctxi inspect` object (docs/inspect-json.md)."""

from __future__ import annotations

import heapq
from collections import Counter
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage

from engine.base.gcpause import paused_gc
from engine.recorded.calibration import CalibratedCounter, Calibration, system_tokens, thread_calibration
from engine.recorded.history import recorded_history
from engine.recorded.viewsums import RunningViewSum
from engine.thread.kinds import mark
from engine.thread.model import RecordedCompaction, Thread, load_warnings
from engine.tokens.counters import TokenCounter, breakdown_messages, counter_for_thread, prime_thread

SCHEMA = "context-inspector/inspect"
VERSION = 1
LARGEST = 5


def summary_message(compaction: RecordedCompaction) -> HumanMessage:
    """The recorded summary as the message the agent continued from (counted like one)."""
    return mark(HumanMessage(content=compaction.summary, id=compaction.message_id), "summary")  # type: ignore[return-value]


def replacement_messages(compaction: RecordedCompaction) -> list[BaseMessage]:
    """What the agent sent in place of the history before `compaction.index`: its recorded
    replacement (summary plus what it kept), or the summary alone as a human message."""
    if compaction.replacement is not None:
        return list(compaction.replacement)
    return [summary_message(compaction)]


def cleared_savings(thread: Thread, counter: TokenCounter) -> list[tuple[int, int, int]]:
    """What each recorded microcompaction took out: (its index, the cleared message's index, tokens saved).

    A recorded edit that clears tool results (Claude Code's `microcompact_boundary`, Anthropic's
    `clear_tool_uses`) keeps the history but replaces the content of the listed old tool results
    with a short placeholder, so from its `index` on each of them costs what the placeholder costs.
    """
    records = [e for e in thread.edits if e.kind == "clear_tool_results"]
    by_call = {m.tool_call_id: (i, m) for i, m in enumerate(thread.messages) if isinstance(m, ToolMessage)}
    savings: list[tuple[int, int, int]] = []
    for record in records:
        placeholder = record.placeholder
        for call_id in record.tool_call_ids:
            i, old = by_call.get(call_id, (None, None))
            if i is None or old is None or i >= record.index:
                continue
            stub = ToolMessage(content=placeholder, tool_call_id=call_id, name=old.name, status=old.status)
            savings.append((record.index, i, counter.count_message(old) - counter.count_message(stub)))
    return savings


def step_contexts(thread: Thread, counter: TokenCounter | None = None) -> list[dict[str, Any]]:
    """One entry per AI message: what it was sent, by our count and as recorded.

    The request is walked the way the source agent built it (engine.recorded.history): after a recorded
    compaction, its replacement (summary and what was kept) plus the messages since its `index`;
    tool results a recorded edit cleared cost their placeholder; the provider's thinking rule.
    `context_tokens` is our count of the prompt, tools and history; `recorded_input_tokens` the
    source's own count, or None. Where the thread recorded its usage (engine.recorded.calibration),
    `calibrated_tokens` is the request in the provider's tokens (the fitted ratio, each message's measured
    cost), `agent_prompt_tokens` the agent's own prompt in it and `hidden_tokens` what its messages carry
    beyond their text (first-turn context, what a compaction re-attached, the unexplained rest);
    `calibrated_tokens` equals the recorded input. Without a counter, the thread's own
    (`counter_for_thread`: Claude threads get Anthropic framing).
    """
    counter = counter or counter_for_thread(thread)
    return _step_contexts(thread, counter, thread_calibration(thread, counter))


def _step_contexts(thread: Thread, counter: TokenCounter, calibration: Calibration | None) -> list[dict[str, Any]]:
    history = recorded_history(thread)
    base = system_tokens(counter, thread, history)
    steps: list[dict[str, Any]] = []
    # running sums over each step's history (engine.recorded.viewsums): linear, where a sum per step was quadratic
    counted = RunningViewSum(history, counter.count_message)
    provider = hidden = None
    if calibration is not None:
        calibrated = CalibratedCounter(counter, calibration)
        provider = RunningViewSum(history, calibrated.count_message)
        hidden = RunningViewSum(history, lambda m: sum(calibration.hidden_of(m).values()))
        base_provider = round(calibration.ratio * base)
    for view in history.views():
        context = base + counted.total(view)
        usage = thread.usage.get(view.response.id) if view.response.id else None
        prompt = calibration.prompt_at(view.step) if calibration is not None else 0
        steps.append({
            "step": view.step,
            "index": view.message_index,
            "message_id": view.response.id,
            "context_tokens": context,
            "recorded_input_tokens": usage.context_tokens if usage is not None else None,
            "agent_prompt_tokens": prompt,
            "hidden_tokens": hidden.total(view) if hidden is not None else 0,
            "calibrated_tokens": base_provider + prompt + provider.total(view) if provider is not None else None,
        })
    return steps


def _final_context(thread: Thread, counter: TokenCounter) -> int:
    """Tokens a next call would be sent: prompt, tools and the history after the last message, by our count."""
    history = recorded_history(thread)
    return system_tokens(counter, thread, history) + counter(history.provider_view(history.final_history()))


def _microcompactions(thread: Thread, savings: list[tuple[int, int, int]]) -> list[dict[str, Any]]:
    saved_at: Counter[int] = Counter()
    for at, _, saved in savings:
        saved_at[at] += saved
    return [
        {"index": r.index, "trigger": r.trigger, "pre_tokens": r.pre_tokens,
         "tokens_saved": r.tokens_saved, "cleared": len(r.tool_call_ids),
         "counted_saving": saved_at[r.index]}
        for r in sorted(thread.edits, key=lambda r: r.index) if r.kind == "clear_tool_results"
    ]


def _largest(thread: Thread, counter: TokenCounter) -> list[dict[str, Any]]:
    # the LARGEST first in one pass (a full sort held a key per message: 1M keys for 1M messages)
    messages = thread.messages
    ranked = heapq.nsmallest(LARGEST, range(len(messages)), key=lambda i: (-counter.count_message(messages[i]), i))
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
    Linear in the thread's length: the cyclic GC is paused while it counts (engine.base.gcpause).
    """
    with paused_gc():
        return _inspect_thread(thread, counter)


def _inspect_thread(thread: Thread, counter: TokenCounter | None) -> dict[str, Any]:
    counter = counter or counter_for_thread(thread)
    prime_thread(counter, thread)
    savings = cleared_savings(thread, counter)
    calibration = thread_calibration(thread, counter)
    steps = _step_contexts(thread, counter, calibration)
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
        "recorded_microcompactions": _microcompactions(thread, savings),
        "skipped_records": dict(thread.extra.get("skipped_records") or {}),
        "warnings": load_warnings(thread),
        # a compaction's own summarizer call (Claude Code's agent-acompact-*): whose session it compacted
        "compaction_call_of": thread.extra.get("compaction_call_of"),
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
