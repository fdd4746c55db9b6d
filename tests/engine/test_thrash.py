"""A policy that compacts call after call is flagged: one warning event at the first step of the streak
(issue 35: gemini-cli compacted on 33 consecutive steps of a long Claude Code session, unflagged)."""

from __future__ import annotations

from engine.config.schema import preset
from engine.run.replay import replay
from engine.run.thrash import KIND, MIN_STREAK, flag_thrashing
from engine.thread.events import Event
from engine.tokens.counters import get_counter
from tests.conftest import trace_path
from tests.ui.builders import build_thread

COUNTER = get_counter("approximate")


def _steps(n: int, compacting: set[int], layer: str = "compaction", kind: str = "compact"):  # noqa: ANN202
    run = replay(build_thread(n, result_words=40), preset("stress"), token_counter=COUNTER, layers=[])
    for k in compacting:
        run.steps[k].events.append(Event(layer, kind, k))
    return run.steps


def test_three_or_more_consecutive_compactions_are_flagged_once_at_the_first() -> None:
    steps = _steps(12, {1, 2, 4, 5, 6, 7, 10})
    [event] = flag_thrashing(steps)
    assert (event.layer, event.kind, event.step, event.severity) == ("compaction", KIND, 4, "warning")
    assert event.payload == {"first_step": 4, "last_step": 7, "steps": 4}
    assert event.message.startswith("compaction compacted on 4 consecutive steps (4-7): what is left after each")
    assert [e.kind for e in steps[4].events] == ["compact", KIND]
    assert flag_thrashing(steps) == [event] and [e.kind for e in steps[4].events] == ["compact", KIND]  # idempotent
    assert MIN_STREAK == 3


def test_the_sources_own_recorded_compactions_are_not_a_policy_of_ours() -> None:
    assert flag_thrashing(_steps(8, {1, 2, 3, 4}, layer="recorded", kind="compaction")) == []


def test_a_real_session_summarized_on_every_call_is_flagged() -> None:
    from engine.formats import load_thread

    thread = load_thread(trace_path("claude-code", "4d5611e5-241a-462a-8d15-5122611a9569.jsonl"))
    run = replay(thread, preset("deerflow"))
    warnings = [(e.step, e.payload["last_step"]) for e in run.events if e.kind == KIND]
    streaks = []
    compacting = [s.index for s in run.steps if any(e.layer == "summarization" and e.kind == "summarize"
                                                    for e in s.events)]
    start = prev = None
    for k in [*compacting, None]:
        if k is not None and prev is not None and k == prev + 1:
            prev = k
            continue
        if start is not None and prev - start + 1 >= MIN_STREAK:
            streaks.append((start, prev))
        start = prev = k
    assert warnings == streaks and len(warnings) >= 1
