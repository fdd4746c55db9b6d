"""The dashboard's run cache is bounded by the bytes its Runs hold (engine.run.cache, engine.run.size)."""

from __future__ import annotations

import gc
import threading
import time
import tracemalloc
from collections.abc import Callable

import pytest

from engine.config.schema import preset
from engine.run.cache import RunCache
from engine.run.replay import replay
from engine.run.size import held_bytes
from engine.thread.synthetic import synthetic_thread
from engine.tokens.counters import TiktokenCounter, prime_thread


def test_cache_drops_least_recently_used_runs_past_the_budget() -> None:
    sizes = {"a": 40, "b": 30, "c": 50, "huge": 500}
    cache = RunCache(100, size=lambda run: sizes[run])
    cache.put(1, "a")
    cache.put(2, "b")
    assert (len(cache), cache.held_bytes) == (2, 70)
    assert cache.get(1) == "a"  # 1 is now the most recently used
    cache.put(3, "c")  # 120 > 100: the least recently used (2) goes
    assert (cache.get(2), cache.get(1), cache.get(3), cache.held_bytes) == (None, "a", "c", 90)
    cache.put(4, "huge")  # alone over the budget: kept, everything older dropped
    assert (len(cache), cache.get(4), cache.held_bytes) == (1, "huge", 500)
    made: list[str] = []
    assert cache.get_or_make(5, lambda: made.append("b") or "b") == "b"
    assert cache.get_or_make(5, lambda: made.append("again") or "x") == "b" and made == ["b"]
    assert (len(cache), cache.held_bytes) == (1, 30)
    cache.clear()
    assert (len(cache), cache.held_bytes) == (0, 0)
    with pytest.raises(ValueError):
        RunCache(-1)


def test_held_bytes_is_what_the_run_adds_beyond_its_thread() -> None:
    thread = synthetic_thread(120, seed=0)
    counter = TiktokenCounter("o200k_base")
    prime_thread(counter, thread)
    config = preset("stress")
    replay(thread, config, token_counter=counter)  # counts of the run's own messages cached
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        run = replay(thread, config, token_counter=counter)
        gc.collect()
        traced = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    estimate = held_bytes(run)
    # getsizeof misses allocator overhead and the few objects outside the gc's graph; the thread's
    # messages and texts, the counter and the config are left out (they are not the Run's)
    assert 0.5 * traced <= estimate <= 1.5 * traced, (estimate, traced)
    # what `shared` names is left out as well
    assert held_bytes(run, shared=[run.steps]) < estimate


def test_a_bigger_run_weighs_more() -> None:
    config = preset("stress")
    small, big = (replay(synthetic_thread(n, seed=0), config) for n in (30, 300))
    assert held_bytes(small) * 4 < held_bytes(big)


def test_a_deferred_run_is_sized_at_settle_and_at_most_max_pending_wait() -> None:
    """The dashboard stores a new Run unsized so its chart does not wait for the walk (ui/session.py);
    `settle` sizes it and enforces the budget, and a `put` past `max_pending` waiting sizes the oldest."""
    sized: list[str] = []
    sizes = {"a": 40, "b": 30, "c": 50}

    def size(run: str) -> int:
        sized.append(run)
        return sizes[run]

    cache = RunCache(100, size=size, max_pending=1)
    cache.put(1, "a", defer_size=True)
    assert (sized, len(cache), cache.get(1)) == ([], 1, "a")  # stored and served, not walked yet
    cache.settle()
    assert sized == ["a"]
    cache.put(2, "b", defer_size=True)
    cache.put(3, "c", defer_size=True)  # "b" is sized before "c" waits: only one Run ever waits
    assert sized == ["a", "b"]
    cache.settle()  # 40 + 30 + 50 > 100: the least recently used ("a") goes
    assert (sized, cache.get(1), cache.get(2), cache.get(3), cache.held_bytes) == (["a", "b", "c"], None, "b", "c", 80)
    cache.settle()
    assert sized == ["a", "b", "c"]  # nothing left to size
    cache.put(4, "a", defer_size=True)
    cache.clear()  # cleared before it was sized: it stays out
    cache.settle()
    assert (len(cache), cache.held_bytes, sized) == (0, 0, ["a", "b", "c"])
    cache.put(5, "a", defer_size=True)
    assert cache.held_bytes == 40  # asking for the total sizes what waits
    with pytest.raises(ValueError):
        RunCache(100, max_pending=-1)


def test_a_deferred_put_leaves_the_runs_already_waiting_to_the_settle() -> None:
    """Two sidebar edits within the timer's delay: the second edit's `put` sized the first's Run on its
    request path (~0.07 s for a 2,000-step Run). It now only stores its own; `settle` sizes both, oldest
    first, and enforces the budget."""
    sized: list[str] = []
    sizes = {"a": 40, "b": 30, "c": 50}

    def size(run: str) -> int:
        sized.append(run)
        return sizes[run]

    cache = RunCache(100, size=size)  # DEFAULT_MAX_PENDING (4) may wait
    cache.put(1, "a", defer_size=True)
    cache.put(2, "b", defer_size=True)
    cache.put(3, "c", defer_size=True)
    assert sized == [] and list(cache._pending) == [1, 2, 3]  # none walked on a put
    assert [cache.get(k) for k in (1, 2, 3)] == ["a", "b", "c"]  # all served meanwhile
    cache.settle()  # 40 + 30 + 50 > 100: the least recently used ("a") goes
    assert sized == ["a", "b", "c"] and cache._pending == {}
    assert (cache.get(1), cache.get(2), cache.get(3), cache.held_bytes) == (None, "b", "c", 80)


def test_past_max_pending_a_put_sizes_the_oldest_waiting_run_itself() -> None:
    """The timer may never fire (or keep being replaced by edits): the unsized Runs, 0 bytes to the
    budget until sized, stay at most `max_pending`."""
    sized: list[str] = []
    sizes = {"a": 40, "b": 30, "c": 50, "d": 20, "e": 10}

    def size(run: str) -> int:
        sized.append(run)
        return sizes[run]

    cache = RunCache(100, size=size, max_pending=3)
    cache.put(1, "c", defer_size=True)
    cache.put(2, "d", defer_size=True)
    cache.put(3, "e", defer_size=True)
    cache.put(2, "b", defer_size=True)  # re-stored: waits as the newest
    assert sized == [] and list(cache._pending) == [1, 3, 2]
    cache.put(4, "a", defer_size=True)  # a 4th would wait: the oldest ("c") is sized, in this thread
    assert sized == ["c"] and list(cache._pending) == [3, 2, 4]
    cache.settle()  # c 50 + e 10 + b 30 + a 40 > 100: the least recently used ("c") goes
    assert sized == ["c", "e", "b", "a"]
    assert [k for k in (1, 2, 3, 4) if k in cache] == [2, 3, 4] and cache.held_bytes == 80
    assert RunCache(0, size=size, max_pending=0).put(1, "e", defer_size=True) == "e"
    assert sized[-1] == "e"  # none may wait: sized at once


def _wait_for(condition: Callable[[], bool], timeout_s: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def test_settle_later_sizes_on_a_timer_thread_after_the_delay_and_one_timer_waits_at_most() -> None:
    """The dashboard sizes a new Run a moment after its page ran (ui/session.py settle_runs), on a
    timer thread, so the walk does not compete with the browser drawing the page."""
    sized: list[tuple[str, str]] = []

    def size(run: str) -> int:
        sized.append((run, threading.current_thread().name))
        return 40

    cache = RunCache(100, size=size)
    cache.settle_later(0.0)  # nothing waits: no timer
    assert cache._timer is None
    cache.put(1, "a", defer_size=True)
    cache.settle_later(30.0)
    first = cache._timer
    cache.settle_later(0.05)  # replaces the timer still waiting
    assert first is not None and first.finished.is_set()  # cancelled
    assert sized == []  # not sized in the caller's thread, nor at once
    assert _wait_for(lambda: bool(sized))
    assert sized[0][0] == "a" and sized[0][1] != threading.current_thread().name
    assert _wait_for(lambda: cache.held_bytes == 40) and len(sized) == 1
    # a second edit before the timer fires does not size the waiting Run: its timer sizes both
    cache.put(2, "b", defer_size=True)
    cache.settle_later(0.2)
    cache.put(3, "c", defer_size=True)
    cache.settle_later(0.05)
    assert [r for r, _ in sized] == ["a"]
    assert _wait_for(lambda: [r for r, _ in sized] == ["a", "b", "c"])
    assert threading.current_thread().name not in {t for _, t in sized}  # all on the timer's thread
    time.sleep(0.3)
    assert [r for r, _ in sized] == ["a", "b", "c"]
    assert cache.held_bytes == 80  # 3 x 40 > 100: the least recently used ("a") went on the timer's thread
    assert 1 not in cache and 2 in cache and 3 in cache


def test_held_bytes_waits_for_a_sizing_under_way_on_the_timer_thread() -> None:
    """The timer's settle takes the pending Run, then walks it: a held_bytes asked meanwhile waited for
    nothing and read the Run at 0 bytes (CI's run of tests/ui/test_app.py saw `assert 0 > 0`)."""
    walking, release = threading.Event(), threading.Event()

    def size(run: str) -> int:
        walking.set()
        assert release.wait(5)
        return 40

    cache = RunCache(100, size=size)
    cache.put(1, "a", defer_size=True)
    cache.settle_later(0.0)
    assert walking.wait(5) and cache._pending == {}  # taken by the timer, still being walked
    seen: list[int] = []
    reader = threading.Thread(target=lambda: seen.append(cache.held_bytes))
    reader.start()
    reader.join(0.2)
    assert reader.is_alive() and seen == []  # it waits for the walk ...
    release.set()
    reader.join(5)
    assert seen == [40]  # ... and reads the size it found


def test_a_put_does_not_wait_for_a_sizing_under_way_on_the_timer_thread() -> None:
    """An edit while the timer walks the previous edit's Run: its `put` waited for that walk (it settled
    first); it now stores its Run at once, and a later settle sizes it."""
    walking, release = threading.Event(), threading.Event()
    sized: list[str] = []

    def size(run: str) -> int:
        if run == "a":
            walking.set()
            assert release.wait(5)
        sized.append(run)
        return 60

    cache = RunCache(100, size=size)
    cache.put(1, "a", defer_size=True)
    cache.settle_later(0.0)
    assert walking.wait(5)  # the timer walks "a"
    writer = threading.Thread(target=lambda: cache.put(2, "b", defer_size=True))
    writer.start()
    writer.join(1)
    stored_at_once, sized_then = not writer.is_alive(), list(sized)
    release.set()
    writer.join(5)
    assert stored_at_once and sized_then == []  # stored while "a" was still being walked, not sized
    assert cache.held_bytes == 60 and sized == ["a", "b"]  # 60 + 60 > 100: "a" went
    assert 1 not in cache and cache.get(2) == "b"


def test_latest_is_the_most_recently_used_run_whose_key_matches() -> None:
    """The dashboard's re-run after a sidebar edit resumes from the last Run of the same thread (ui/session.py)."""
    cache = RunCache(1000, size=lambda run: 1)
    cache.put(("t1", "a"), "run-t1-a")
    cache.put(("t2", "a"), "run-t2-a")
    cache.put(("t1", "b"), "run-t1-b")
    same_thread = lambda key: key[0] == "t1"  # noqa: E731
    assert cache.latest(same_thread) == "run-t1-b"
    cache.get(("t1", "a"))  # now the most recently used of t1
    assert cache.latest(same_thread) == "run-t1-a"
    assert cache.latest(lambda key: key[0] == "t3") is None
    assert [cache.get(k) for k in (("t2", "a"),)] == ["run-t2-a"]  # latest() left the order alone


def test_a_runs_checkpoints_are_counted_in_what_it_holds() -> None:
    """The checkpoints a Run keeps for later re-runs (engine/run/resume.py) are part of its size, so the
    cache's budget bounds them; dropping them gives that memory back."""
    run = replay(synthetic_thread(300, seed=0), preset("stress"))
    assert run.checkpoints
    with_checkpoints = held_bytes(run)
    run.drop_checkpoints()
    assert run.checkpoints is None and run.live is None
    assert held_bytes(run) < with_checkpoints
