"""The needle scenario (sample_threads/needle.json): exact retention classes under each preset."""

from __future__ import annotations

from itertools import groupby

import pytest

from engine.config.schema import preset
from engine.evals import goal_drift, needle_retention, pick_needles
from engine.formats import load_thread
from engine.run.replay import replay
from tests.conftest import SAMPLES

CODENAME = "MERLIN-88"


@pytest.fixture(scope="module")
def needle_sample():
    path = SAMPLES / "needle.json"
    if not path.is_file():
        pytest.skip("sample_threads/needle.json is not generated yet")
    return load_thread(path)


def runs(values: list[str]) -> list[tuple[str, int]]:
    return [(k, len(list(g))) for k, g in groupby(values)]


def test_the_recorded_codename_is_picked_first(needle_sample) -> None:
    assert needle_sample.extra["needle"]["text"] == CODENAME
    assert pick_needles(needle_sample, k=1) == [CODENAME]


def test_deerflow_summarizes_the_codename_away(needle_sample) -> None:
    run = replay(needle_sample, preset("deerflow"))
    report = needle_retention(run, [CODENAME])
    assert len(run.steps) == 60
    assert [c.step for c in report.compactions][:5] == [10, 11, 12, 13, 14]
    # kept verbatim until the first summary, carried by four summaries, then lost to the
    # "too long to summarize" placeholder at step 14; the last step sees the agent's own answer again
    assert runs(report.classes[CODENAME]) == [("in_view", 10), ("in_summary", 4), ("lost", 45), ("in_view", 1)]
    assert report.score == 0.1 and report.recovery_score == 0.1
    drift = goal_drift(run)
    assert runs(drift.statuses) == [("before", 10), ("summary", 4), ("missing", 46)]
    assert drift.placeholder_steps[:2] == [14, 15]


def test_deepagents_keeps_it_in_view(needle_sample) -> None:
    report = needle_retention(replay(needle_sample, preset("deepagents")), [CODENAME])
    assert report.compactions == [] and report.classes[CODENAME] == ["in_view"] * 60 and report.score == 1.0


def test_stress_compacts_once_and_the_summary_carries_it(needle_sample) -> None:
    report = needle_retention(replay(needle_sample, preset("stress")), [CODENAME])
    assert [c.step for c in report.compactions] == [48]
    assert runs(report.classes[CODENAME]) == [("in_view", 48), ("in_summary", 11), ("in_view", 1)]
    assert report.score == 1.0
