"""A sidebar edit re-runs the thread from the last step both configs agree on (ui/session.py hands the
cached Run of the same thread to `replay(previous=)`): the same Run as a full replay."""

from __future__ import annotations

import json

from engine.config.schema import preset
from engine.run.replay import replay
from engine.thread.synthetic import synthetic_thread
from ui import session


def _report(run: object) -> str:
    return json.dumps(run.to_report(include_views=False), sort_keys=True, default=str)  # type: ignore[attr-defined]


def test_a_sidebar_edit_resumes_from_the_cached_run_of_the_same_thread() -> None:
    session._RUNS.clear()
    thread = synthetic_thread(300, seed=5)
    # the stress preset's layers with a window nothing reaches, so the trigger alone decides when it fires
    quiet = preset("stress").with_overrides(["model.max_input_tokens=40000000",
                                             "filesystem.truncate_args.trigger=fraction:0.85",
                                             "summarization.trigger=none"])
    levels = replay(thread, quiet, summarizer="offline").checks["summarization"]
    base = quiet.with_overrides([f"summarization.trigger=tokens:{levels[250].tokens}"])
    first = session._replay_cached("test:resumed-edit#1", base, True, thread)
    # the edit: a trigger first crossed at step 200 (the runs agree before it)
    edited = base.with_overrides([f"summarization.trigger=tokens:{levels[200].tokens}"])
    again = session._replay_cached("test:resumed-edit#1", edited, True, thread)
    assert first.resumed_from is None and again.resumed_from == 192  # the last checkpoint (every 64) before 200
    assert _report(again) == _report(replay(thread, edited, summarizer="offline"))
    # another thread's (or version's) Run is never handed over
    other = session._replay_cached("test:resumed-edit#2", edited.with_overrides(["summarization.keep=messages:4"]),
                                   True, thread)
    assert other.resumed_from is None
    session._RUNS.clear()
