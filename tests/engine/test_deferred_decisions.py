"""A trigger check that did not fire has its decision record made at the end of the run (engine.thread.decisions
`defer`/`resolve`, the layer's `decisions_for`): the records equal those made one by one, as before."""

from __future__ import annotations

import pytest

from engine.config.schema import preset
from engine.formats import load_thread
from engine.run.replay import replay
from engine.thread import decisions
from engine.thread.synthetic import synthetic_thread
from tests.conftest import SAMPLES, trace_path


def _both(thread, config, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN001, ANN202
    deferred = replay(thread, config).decisions
    with monkeypatch.context() as m:
        m.setattr(decisions, "defer", lambda *a, **k: False)  # every record made at its check
        eager = replay(thread, config).decisions
    return deferred, eager


@pytest.mark.parametrize("name", ["stress", "deepagents", "langchain", "deerflow"])
def test_deferred_records_equal_the_records_made_one_by_one(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    deferred, eager = _both(synthetic_thread(300, seed=1), preset(name), monkeypatch)
    assert None not in deferred
    assert deferred == eager


@pytest.mark.parametrize("path", [("claude-code", "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"), None])
def test_on_a_real_session_and_the_bundled_sample(path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    thread = load_thread(trace_path(*path)) if path else load_thread(SAMPLES / "first-look.json")
    for name in ("stress", "claude-code"):
        deferred, eager = _both(thread, preset(name), monkeypatch)
        assert deferred and None not in deferred
        assert deferred == eager
