"""Issue 11, linear inspect: 1M tiny messages took 174 s / 2.1 GB because every step summed its whole
history afresh (O(steps x messages)). engine.recorded.viewsums keeps running sums instead; these tests check
that they equal the per-step sums exactly (thinking rule, compactions, edits) and count the work
(operation counts, never wall time).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from engine.formats import list_threads, load_thread
from engine.recorded.history import recorded_history
from engine.recorded.inspect import step_contexts
from engine.recorded.viewsums import RunningViewSum
from engine.thread.model import RecordedCompaction, RecordedEdit, Thread
from engine.tokens.counters import ApproximateCounter, TiktokenCounter
from tests.conftest import TRACES


def naive_totals(thread: Thread, weigh) -> list[int]:  # type: ignore[no-untyped-def]
    history = recorded_history(thread)
    return [sum(weigh(m) for m in history.provider_view(v.messages)) for v in history.views()]


def running_totals(thread: Thread, weigh) -> list[int]:  # type: ignore[no-untyped-def]
    history = recorded_history(thread)
    running = RunningViewSum(history, weigh)
    return [running.total(v) for v in history.views()]


def thinking_ai(i: int, *, tool: bool = False) -> AIMessage:
    content = [{"type": "thinking", "thinking": f"let me think about step {i} " * 5, "signature": "s"},
               {"type": "text", "text": f"answer {i}"}]
    calls = [{"name": "read", "args": {"path": f"/f{i}"}, "id": f"c{i}"}] if tool else []
    return AIMessage(content=content, id=f"a{i}", tool_calls=calls)


def hand_made(model: str) -> Thread:
    """Three turns with thinking and tool calls, a recorded compaction and two recorded edits."""
    msgs: list[BaseMessage] = [SystemMessage("You are terse.", id="sys")]
    for turn in range(3):
        msgs.append(HumanMessage(f"task {turn}", id=f"h{turn}"))
        for k in range(4):
            i = turn * 10 + k
            msgs.append(thinking_ai(i, tool=True))
            msgs.append(ToolMessage(f"contents of f{i} " * 20, tool_call_id=f"c{i}", id=f"t{i}"))
        msgs.append(thinking_ai(turn * 10 + 9))
    compaction_at = 16
    replacement = [HumanMessage("summary of the first turn", id="summary"), *msgs[compaction_at - 2:compaction_at]]
    return Thread(
        thread_id="t", messages=msgs, model=model,
        compactions=[RecordedCompaction(index=compaction_at, summary="summary of the first turn",
                                        replacement=replacement)],
        edits=[RecordedEdit(index=22, kind="clear_tool_results", tool_call_ids=["c10", "c11"], placeholder="[cleared]"),
               RecordedEdit(index=26, kind="clear_thinking", message_ids=["a20", "a21"])],
    )


@pytest.mark.parametrize("model", ["claude-sonnet-4-20250514", "claude-opus-4-6", "gpt-4o"])
def test_running_sums_equal_per_step_sums_on_a_hand_made_thread(model: str) -> None:
    thread = hand_made(model)
    counter = TiktokenCounter()
    naive = naive_totals(thread, counter.count_message)
    assert len(naive) == 15
    assert running_totals(thread, counter.count_message) == naive
    # and the two rules differ on this thread, so the check above covers the thinking rule
    if model.startswith("claude-sonnet-4"):
        assert naive != naive_totals(Thread(**{**thread.__dict__, "model": "gpt-4o"}), counter.count_message)


def real_threads() -> list[Path]:
    return sorted(p for folder in ("claude-code", "anthropic-compaction", "codex")
                  for p in (TRACES / folder).rglob("*.json*") if p.is_file()) if TRACES.is_dir() else []


@pytest.mark.parametrize("path", real_threads(), ids=lambda p: str(p.relative_to(TRACES)))
def test_running_sums_equal_per_step_sums_on_real_threads(path: Path) -> None:
    counter = ApproximateCounter()  # the sums, not the tokenizer, are under test: the fast counter
    for ref in list_threads(path)[:3]:
        thread = load_thread(path, thread_id=ref.thread_id)
        assert running_totals(thread, counter.count_message) == naive_totals(thread, counter.count_message)


class CountingCounter(ApproximateCounter):
    """Counts the count_message calls the inspect makes."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def count_message(self, message: BaseMessage) -> int:
        self.calls += 1
        return super().count_message(message)


def tiny_thread(n: int, model: str) -> Thread:
    msgs: list[BaseMessage] = []
    for i in range(n // 2):
        msgs.append(HumanMessage(f"q{i}", id=f"h{i}"))
        msgs.append(thinking_ai(i) if i % 2 else AIMessage(f"a{i}", id=f"a{i}"))
    return Thread(thread_id="tiny", messages=msgs, model=model)


@pytest.mark.parametrize("model", ["gpt-4o", "claude-sonnet-4-20250514"])
def test_step_contexts_weigh_each_message_a_bounded_number_of_times(model: str) -> None:
    # n/2 steps over histories up to n long: the per-step sum made n^2/4 calls (10,000 here at n=200,
    # 1,000,000 at n=2,000); the running sums make at most 2 per message, whatever n
    for n in (200, 2000):
        counter = CountingCounter()
        steps = step_contexts(tiny_thread(n, model), counter)
        assert len(steps) == n // 2
        assert counter.calls <= 2 * n, (n, counter.calls)
