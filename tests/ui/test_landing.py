"""The first screen a new user sees shows the layers at work (issue 35: the bundled landing thread on its
default preset showed no summarization at all, and Evals read n/a everywhere)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_landing_thread_opens_with_offloads_summaries_a_reminder_and_a_patch(start, monkeypatch) -> None:  # noqa: ANN001
    from ui import session

    monkeypatch.setenv("CTXI_SAMPLES_DIR", str(ROOT / "sample_threads"))
    at = start()
    assert at.session_state["thread_key"] == "sample:first-look"
    config = at.session_state["config"]
    assert (config.preset, config.summarization.mode) == ("stress", "state")  # its scenario's lesson settings
    run = session.run_for(at.session_state["thread_key"], config)
    kinds = {(e.layer, e.kind) for e in run.events}
    assert {("filesystem", "offload"), ("summarization", "summarize"), ("todo", "reminder"),
            ("dangling", "patch")} <= kinds
    assert run.summarizer_calls == 2
    tiles = {m.label: m.value for m in at.metric}
    assert tiles["Summarizer calls"] == "2"
    # the URL says what is shown: the preset and the one setting that differs from it
    assert dict(at.query_params)["preset"] == "stress"
    assert dict(at.query_params)["summarization.mode"] == "state"
    # the Evals page has compactions to score on the landing thread
    at.switch_page("pages/evals.py").run()
    assert {m.label: m.value for m in at.metric}["Compactions"] == "2"
