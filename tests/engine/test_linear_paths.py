"""O(1) paths of a long replay give what the full computation gives (issue 17: linear replay).

`RunningScaledCount` recognises the very list it saw last, only appended to since, without
comparing or copying it; every other list is compared with what was seen. Each count here is
checked against a fresh count of a copy of the same messages (the slow path: nothing seen).
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from engine.layers.approximate import PrefixCounts, RunningScaledCount
from engine.tokens.counters import ApproximateCounter, TiktokenCounter


def _messages(n: int, tag: str = "") -> list[BaseMessage]:
    """Human turns, AI messages reporting usage part of the way (the scaling reads them), tool results."""
    out: list[BaseMessage] = []
    for i in range(n):
        usage = {"input_tokens": 60 * i, "output_tokens": 9, "total_tokens": 60 * i + 9} if i % 3 else None
        out.append(HumanMessage(f"question {i}{tag} " + "words " * (i % 7), id=f"h{i}{tag}"))
        out.append(AIMessage(f"answer {i} " + "text " * (i % 5), id=f"a{i}{tag}", usage_metadata=usage,
                             response_metadata={"model_provider": "anthropic"},
                             tool_calls=[{"name": "read", "args": {"p": str(i)}, "id": f"c{i}{tag}"}]))
        out.append(ToolMessage("result " * (3 + i % 11), tool_call_id=f"c{i}{tag}", id=f"t{i}{tag}"))
    return out


class _Counting(ApproximateCounter):
    """LangChain's approximate counter, noting how many messages it was asked to count."""

    def __init__(self) -> None:
        super().__init__()
        self.counted = 0

    def count_message(self, message: BaseMessage) -> int:
        self.counted += 1
        return super().count_message(message)


def _fresh(counter: Any, messages: list[BaseMessage], **kwargs: Any) -> int:
    return RunningScaledCount(counter)(list(messages), **kwargs)


def _prefix_sums(counter: Any, messages: Any) -> list[int]:
    out = [0]
    for m in messages:
        out.append(out[-1] + counter.count_message(m))
    return out


def test_the_same_list_grown_counts_as_a_fresh_copy_and_costs_its_new_messages() -> None:
    for counter in (_Counting(), TiktokenCounter("o200k_base")):
        source = _messages(30)
        running = RunningScaledCount(counter)
        state: list[BaseMessage] = []
        for k, m in enumerate(source):
            state.append(m)
            kwargs = {"lead_tokens": 40, "lead_messages": 1} if k % 2 else {"scaled": k % 3 != 0}
            before = getattr(counter, "counted", 0)
            got = running(state, **kwargs)
            if isinstance(counter, _Counting):
                assert counter.counted - before == 1, k  # the new message only: the fast path took it
                assert running.src is state and running.seen == k + 1
            assert got == _fresh(counter, state, **kwargs), k
        # asked again with nothing appended: the same count, nothing recounted
        assert running(state) == _fresh(counter, state)


def test_other_lists_between_calls_on_the_same_list() -> None:
    """A request's view (another list) between two calls on the state, a fork, a replacement
    inside the part the fast path saw, a shortened list: each counted as a fresh copy would be."""
    counter = ApproximateCounter()
    source = _messages(40)
    running = RunningScaledCount(counter)
    state = list(source[:10])
    assert running(state) == _fresh(counter, state)
    state.extend(source[10:20])  # fast path: seen = 20, the copy still holds the first 10
    assert running(state) == _fresh(counter, state)
    view = [*state, *source[20:25]]  # another list extending it: compared (copy, then `src`)
    assert running(view) == _fresh(counter, view)
    assert running.src is view and running.seen == 25
    state.extend(source[20:30])
    assert running(state, lead_tokens=7, lead_messages=1) == _fresh(counter, state, lead_tokens=7, lead_messages=1)
    state.extend(source[30:35])
    assert running(state) == _fresh(counter, state)
    fork = list(state)  # the driver's fork: a copy with one message replaced, then appended to
    fork[27] = fork[27].model_copy(update={"content": "a much longer answer " * 20})
    assert running(fork) == _fresh(counter, fork)
    fork.append(source[35])
    assert running(fork) == _fresh(counter, fork)
    shorter = fork[:12]
    assert running(shorter) == _fresh(counter, shorter)
    tail = HumanMessage("stand-in", id="tail")
    assert running(fork, tail=tail) == _fresh(counter, fork, tail=tail)


def test_a_tuple_or_a_list_with_its_last_seen_message_replaced_is_compared() -> None:
    counter = ApproximateCounter()
    source = _messages(12)
    running = RunningScaledCount(counter)
    state = list(source[:20])
    assert running(state) == _fresh(counter, state)
    state[-1] = AIMessage("x" * 500, id="other", usage_metadata={"input_tokens": 1, "output_tokens": 1, "total_tokens": 9000},
                          response_metadata={"model_provider": "anthropic"})
    assert running(state) == _fresh(counter, state)  # not `_grown`: the last message seen is gone
    frozen = tuple(source)
    assert running(frozen) == _fresh(counter, list(frozen))
    assert running(frozen) == _fresh(counter, list(frozen))


def _views(run: Any) -> list[Any]:
    return [[(m.id, m.content, getattr(m, "tool_calls", None), m.additional_kwargs) for m in s.view] for s in run.steps]


def test_a_replay_gives_the_same_report_and_views_with_the_o1_paths_disabled(monkeypatch: Any) -> None:
    """The stress preset on a synthetic thread (argument truncation on consecutive steps, forks of the
    state): with `RunningScaledCount`'s same-list path and the filesystem layer's growing view list
    (fast) and without them (every list compared, every truncated view a fresh copy of the state)."""
    from engine.config.schema import preset
    from engine.layers.filesystem import FilesystemLayer
    from engine.layers.summary_rules import Projection, apply_event
    from engine.run.replay import replay
    from engine.thread.synthetic import synthetic_thread

    thread = synthetic_thread(1000, seed=0)
    taken = {"grown": 0, "view": 0, "restored": 0, "projected": 0}
    grown, view_list, project = RunningScaledCount._grown, FilesystemLayer._view_list, Projection.__call__

    def counting_project(self: Any, messages: Any, event: Any, drop: Any = None) -> Any:
        before = self.out
        out = project(self, messages, event, drop)
        taken["projected"] += out is before and bool(event)
        return out

    def counting_grown(self: Any, messages: Any, n: int) -> bool:
        hit = grown(self, messages, n)
        taken["grown"] += hit
        return hit

    def counting_view_list(self: Any, messages: Any, cut: Any, low: int = 0) -> Any:
        before = self._last_view
        out = view_list(self, messages, cut, low)
        taken["view"] += before is not None and out is before[4]
        # the same list, with calls a new summary's cutoff passed put back in place
        taken["restored"] += before is not None and out is before[4] and any(i < low for i in before[3])
        return out

    monkeypatch.setattr(RunningScaledCount, "_grown", counting_grown)
    monkeypatch.setattr(FilesystemLayer, "_view_list", counting_view_list)
    monkeypatch.setattr(Projection, "__call__", counting_project)
    fast = replay(thread, preset("stress"), token_counter=TiktokenCounter("o200k_base"))
    assert taken["grown"] > 0 and taken["view"] > 0 and taken["restored"] > 0  # the fast paths were taken
    assert taken["projected"] > 500  # the summary's projection extended in place, step after step

    monkeypatch.setattr(RunningScaledCount, "_grown", lambda self, messages, n: False)
    monkeypatch.setattr(FilesystemLayer, "_view_list", lambda self, messages, cut, low=0: list(messages))
    monkeypatch.setattr(Projection, "__call__", lambda self, messages, event, drop=None: apply_event(messages, event, drop))
    monkeypatch.setattr(PrefixCounts, "__call__", lambda self, messages: _prefix_sums(self.counter, messages))
    slow = replay(thread, preset("stress"), token_counter=TiktokenCounter("o200k_base"))
    assert fast.to_report() == slow.to_report()
    assert _views(fast) == _views(slow)
    assert sum(1 for s in fast.steps for e in s.events if e.kind.endswith("truncate_args")) > 2


def test_the_truncated_view_list_grows_only_while_no_held_message_is_newly_cut_or_restored() -> None:
    from engine.layers.filesystem import FilesystemLayer

    layer = FilesystemLayer()
    source = _messages(10)
    copies = {i: m.model_copy(update={"content": "cut"}) for i, m in enumerate(source)}
    handed: list[tuple[list[BaseMessage], list[BaseMessage]]] = []

    def view(state: list[BaseMessage], cut: list[int]) -> list[BaseMessage]:
        out = layer._view_list(state, cut)
        for i in cut:  # as truncated_view does
            out[i] = copies[i]
        assert out == [copies[i] if i in cut else m for i, m in enumerate(state)], cut
        handed.append((out, list(out)))
        return out

    state = list(source[:12])
    first = view(state, [2, 5])
    assert first is not state
    state.extend(source[12:15])
    assert view(state, [2, 5, 13]) is first  # 13 is new here: the same list, appended to
    for cut in ([2, 5, 13, 8], [5, 13], [2, 13]):  # 8 newly cut, 2 or 5 restored: a fresh copy
        before = view(state, [2, 5, 13])
        state.append(source[len(state)])
        assert view(state, cut) is not before, cut
    state.append(source[len(state)])
    last = handed[-1][0]
    assert view(state, [2, 13]) is last
    assert view(list(state), [2, 13]) is not last  # a fork of the state: another list
    for out, then in handed:  # what was handed over is never rewritten, only appended to
        assert out[:len(then)] == then


def test_a_new_summary_cutoff_puts_the_calls_below_it_back_in_the_same_list() -> None:
    """Calls cut last time that a new summary's cutoff (`low`) passed get their originals back in the
    list handed over last time (no copy of the state); the content is always a fresh copy's."""
    from engine.layers.filesystem import FilesystemLayer

    layer = FilesystemLayer()
    source = _messages(10)
    copies = {i: m.model_copy(update={"content": "cut"}) for i, m in enumerate(source)}

    def view(state: list[BaseMessage], cut: list[int], low: int) -> list[BaseMessage]:
        out = layer._view_list(state, cut, low)
        for i in cut:  # as truncated_view does
            out[i] = copies[i]
        assert out == [copies[i] if i in cut else m for i, m in enumerate(state)], (cut, low)
        return out

    state = list(source[:12])
    first = view(state, [2, 5], 0)
    state.extend(source[12:15])
    assert view(state, [5, 13], 4) is first  # 2 is below the new cutoff: back in place, 13 is new
    assert first[2] is source[2]
    state.append(source[len(state)])
    assert view(state, [13, 15], 10) is first  # 5 too
    assert first[5] is source[5]
    state.append(source[len(state)])
    assert view(state, [13, 15], 10) is first  # nothing passed: appended to
    state.append(source[len(state)])
    again = view(state, [14, 15], 14)  # 13 below the cutoff, but 14 (held) newly cut: a fresh copy
    assert again is not first and again[13] is source[13]
    state.append(source[len(state)])
    assert view(state, [15], 15) is again  # 14 passed
    state.append(source[len(state)])
    fresh = view(state, [16], 15)  # 15 no longer cut but not below the cutoff: a fresh copy
    assert fresh is not again and fresh[15] is source[15]


def test_prefix_counts_of_the_same_list_grown_and_of_other_lists_equal_a_fresh_sum() -> None:
    """`PrefixCounts` takes the list it saw last, grown, without comparing it (the O(1) rule of
    `RunningScaledCount._grown`); a copy, a tuple, a fork with a message replaced, a shorter list
    are compared with what it covers, and counted afresh where they differ."""
    counter = _Counting()
    source = _messages(20)
    sums = PrefixCounts(counter)
    state = list(source[:10])
    assert sums(state) == _prefix_sums(counter, state)
    for m in source[10:30]:
        state.append(m)
        before = counter.counted
        assert sums(state) == _prefix_sums(counter, state)
        assert counter.counted - before == 1 + len(state)  # its new message, then the fresh sum's
    assert sums(state) == _prefix_sums(counter, state)  # again, nothing appended
    copy = tuple(state[:25])  # shorter, another object: compared, then counted afresh
    assert sums(copy) == _prefix_sums(counter, copy)
    view = [*state, *source[30:35]]  # another list extending what was seen: compared (copy, then `src`)
    assert sums(view) == _prefix_sums(counter, view)
    state.extend(source[30:40])
    assert sums(state) == _prefix_sums(counter, state)
    fork = list(state)
    fork[3] = fork[3].model_copy(update={"content": "a much longer question " * 30})
    assert sums(fork) == _prefix_sums(counter, fork)
    fork.append(source[40])
    assert sums(fork) == _prefix_sums(counter, fork)


def test_an_unscaled_counter_of_ours_is_summed_inline_and_any_other_counter_is_asked() -> None:
    """With no usage scaling, `RunningScaledCount` sums the new messages' counts itself when the
    counter's list count is that sum (ours: `_CachedCounter.__call__`); a counter with its own
    `__call__` (need not add up) gets the new messages as a list, as before."""
    tiktoken = TiktokenCounter("o200k_base")
    running = RunningScaledCount(tiktoken)
    assert running.additive and not running.scaling
    state: list[BaseMessage] = []
    for m in _messages(30):
        state.append(m)
        assert running(state, lead_tokens=11, lead_messages=1) == tiktoken(state) + 11
    many = _messages(40, tag="b")  # more than 64 new at once: the counter's own batch path
    assert running(many) == tiktoken(many)

    class Flat:
        """Counts every list as its length times 10, plus one: not a sum of message counts."""

        def __call__(self, messages: Any, **kwargs: Any) -> int:
            return 10 * len(list(messages)) + 1

        def count_message(self, message: BaseMessage) -> int:
            raise AssertionError("a counter with its own __call__ is asked for lists")

    flat = RunningScaledCount(Flat())  # type: ignore[arg-type]
    assert not flat.additive
    state = list(_messages(3))
    assert flat(state) == 10 * len(state) + 1
    state.extend(_messages(2, tag="c"))
    assert flat(state) == 10 * 9 + 1 + 10 * 6 + 1  # the first call's list, then the new part's
