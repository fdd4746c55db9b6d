"""`paused_gc`: no cyclic collection inside, the previous state restored after, and what the block
kept handed to the oldest generation without a walk (engine/base/gcpause.py)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from engine.base.gcpause import paused_gc, promote_survivors


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


@pytest.fixture
def collecting() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def _in_generation(obj: object, generation: int) -> bool:
    return any(o is obj for o in gc.get_objects(generation=generation))


def test_collection_is_paused_inside_and_restored_after(collecting: None) -> None:
    with paused_gc():
        assert not gc.isenabled()
        with paused_gc():  # nested: still paused after the inner block
            pass
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()  # it was off before: it stays off
    finally:
        gc.enable()


def test_what_the_block_kept_is_in_the_oldest_generation_unwalked(collecting: None) -> None:
    gc.collect()
    with paused_gc():
        kept = [_Node() for _ in range(2000)]
        assert _in_generation(kept[0], 0)
    assert gc.get_count()[0] < 50  # no young collection is due over what the block built
    assert _in_generation(kept[0], 2) and _in_generation(kept, 2)
    assert not _in_generation(kept[0], 0) and not _in_generation(kept[0], 1)


def test_cycles_built_inside_are_still_freed_by_a_full_collection(collecting: None) -> None:
    gc.collect()
    with paused_gc():
        a, b = _Node(), _Node()
        a.other, b.other = b, a
        del a, b
    assert gc.collect() >= 2


def test_a_process_that_froze_objects_keeps_them_frozen(collecting: None) -> None:
    gc.collect()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        with paused_gc():
            fresh = [_Node() for _ in range(100)]
        promote_survivors()
        assert gc.get_freeze_count() == frozen  # not unfrozen
        assert _in_generation(fresh[0], 0)  # and nothing promoted
    finally:
        gc.unfreeze()


def test_a_replay_hands_its_steps_to_the_oldest_generation(collecting: None) -> None:
    # engine.run.replay pauses collection with paused_gc, so a Run's steps and views are not walked by
    # a young collection right after it (they live as long as the Run: the dashboard caches it)
    from engine.config.schema import preset
    from engine.run.replay import replay
    from engine.thread.synthetic import synthetic_thread
    from engine.tokens.counters import get_counter

    thread = synthetic_thread(30, seed=0)
    gc.collect()
    run = replay(thread, preset("stress"), token_counter=get_counter("approximate"))
    assert gc.isenabled()
    assert _in_generation(run.steps[-1], 2) and _in_generation(run.steps, 2)
