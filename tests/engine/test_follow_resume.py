"""A followed session's replay goes on from the previous run: the same Run as a replay of the grown thread.

A session that is followed grows by lines; its new Thread shares the earlier messages (the same
objects) with the one before. `replay(grown, config, previous=run)` takes the previous run's ended
driver over when the thread only grew (nothing replayed again), or resumes from its last checkpoint
before the first message that changed (the last reply rewritten as it streamed). Each thread in the
samples and ../shared/traces is cut at several points and grown back, under every preset.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage

from engine.config.presets import PRESETS
from engine.config.schema import preset
from engine.formats import load_thread
from engine.layers.checkpoint import VERIFY_ENV
from engine.run import driver
from engine.run.replay import replay
from engine.thread.model import Thread
from engine.thread.synthetic import synthetic_thread
from tests.engine.test_resume import _thread_files, report_of


@pytest.fixture(autouse=True)
def _dense_checkpoints(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(driver, "CHECKPOINT_EVERY", 2)
    monkeypatch.setenv(VERIFY_ENV, "1")


def prefix(thread: Thread, n: int) -> Thread:
    """`thread` as a follower saw it after its first `n` messages: the same objects, a new Thread."""
    return dataclasses.replace(thread, messages=thread.messages[:n],
                               compactions=[c for c in thread.compactions if c.index <= n],
                               edits=[e for e in thread.edits if e.index <= n])


def rewritten_last(thread: Thread, n: int) -> Thread:
    """The first `n` messages with the last AI message among them a copy: a reply still streaming."""
    cut = prefix(thread, n)
    last = max((i for i, m in enumerate(cut.messages) if isinstance(m, AIMessage)), default=None)
    if last is not None:
        messages = list(cut.messages)
        messages[last] = messages[last].model_copy(update={"content": f"{messages[last].content} (streaming)"})
        cut = dataclasses.replace(cut, messages=messages)
    return cut


def _cuts(thread: Thread) -> list[int]:
    n = len(thread.messages)
    return sorted({max(1, n // 3), max(1, (2 * n) // 3), max(1, n - 2)})


def check_follow(thread: Thread) -> tuple[int, int]:
    """Every preset: grown in two appends (the ended driver taken over), and from a rewritten reply
    (a checkpoint); returns (cases, taken over)."""
    cases = taken = 0
    for name in PRESETS:
        config = preset(name)
        # each replay of a follow gets a Thread object of its own, as a follower makes one per update
        full = report_of(replay(dataclasses.replace(thread), config))
        first, second = _cuts(thread)[0], _cuts(thread)[-1]
        run = replay(prefix(thread, first), config)
        run = replay(prefix(thread, second), config, previous=run)
        taken += run.live is not None and run.resumed_from is not None
        grown = replay(dataclasses.replace(thread), config, previous=run)
        assert report_of(grown) == full, f"{thread.thread_id} {name}: grown at {first} and {second}"
        streaming = replay(rewritten_last(thread, second), config)
        again = replay(dataclasses.replace(thread), config, previous=streaming)
        assert report_of(again) == full, f"{thread.thread_id} {name}: the reply before {second} rewritten"
        cases += 2
    return cases, taken


@pytest.mark.parametrize("path", _thread_files(), ids=lambda p: p.name)
def test_a_grown_thread_replays_as_a_full_replay(path: Path) -> None:
    thread = load_thread(path)
    if len(thread.messages) < 4:
        pytest.skip("too short to cut")
    cases, _ = check_follow(thread)
    assert cases == 2 * len(PRESETS)


def test_a_grown_synthetic_thread_is_continued_not_replayed() -> None:
    thread = synthetic_thread(60, seed=11)
    cases, taken = check_follow(thread)
    assert taken == len(PRESETS), "every preset's run of the prefix goes on from where it ended"
    # and the continuation replays only the new part
    run = replay(prefix(thread, 40), preset("stress"))
    ended = len(run.steps)
    grown = replay(dataclasses.replace(thread), preset("stress"), previous=run)
    assert grown.resumed_from == ended and run.live is None  # taken once
    assert [s.index for s in grown.steps] == list(range(len(grown.steps)))


def test_the_followers_word_on_what_changed_is_used_and_checked() -> None:
    """`changed_from` (the follower's parse rebuilt nothing before it) spares comparing every message;
    a word that disagrees with the threads' ends is not taken (a full replay, the same Run)."""
    thread = synthetic_thread(40, seed=12)
    config = preset("stress")
    full = report_of(replay(dataclasses.replace(thread), config))
    cut = len(thread.messages) - 6
    run = replay(prefix(thread, cut), config)
    grown = replay(dataclasses.replace(thread), config, previous=run, changed_from=cut)
    assert grown.resumed_from == len(run.steps) and report_of(grown) == full
    before = prefix(thread, cut)
    before.messages[0] = before.messages[0].model_copy()  # the follower rebuilt the first message after all
    run = replay(before, config)
    wrong = replay(dataclasses.replace(thread), config, previous=run, changed_from=cut)
    assert wrong.resumed_from is None and report_of(wrong) == full
