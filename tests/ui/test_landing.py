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


def test_the_landing_threads_unpriced_compactions_show_no_dollars(start, monkeypatch) -> None:  # noqa: ANN001
    """The landing sample's model has no price row: its compactions' money cells read "-" (unknown), never
    "$0.00" beside "unpriced" (the walk-through found "net $0.00" on Evals and Layers › Summaries)."""
    monkeypatch.setenv("CTXI_SAMPLES_DIR", str(ROOT / "sample_threads"))
    at = start()
    at.switch_page("pages/evals.py").run()
    [after] = [d.value for d in at.dataframe if "too long to summarize" in d.value.columns]
    assert list(after["net"]) == ["-", "-"] and list(after["paid back"]) == ["unpriced", "unpriced"]
    assert list(after["too long to summarize"]) == ["no", "no"]  # no empty cell
    at.switch_page("pages/layers.py").run()
    at.tabs[1].run()
    [table] = [d.value for d in at.dataframe if "summarizer call" in d.value.columns]
    for column in ("saved", "cache misses", "summarizer call", "net"):
        assert list(table[column]) == ["-", "-"], column
    assert list(table["paid back"]) == ["unpriced", "unpriced"]
    assert list(table["by"]) == ["summarization", "summarization"]  # in words, not "summarization.summarize"
    assert "simulated by this run (summarization)" in " ".join(m.value for m in at.markdown)
    at.switch_page("pages/evals.py").run()
    at.session_state["tab"] = "Stress mode"
    at.run()
    [stress] = [d.value for d in at.dataframe if "cache hit rate" in d.value.columns and "run" in d.value.columns]
    assert list(stress["dollars"]) == ["-", "-"]


def test_a_link_with_settings_but_no_preset_changes_what_the_thread_opens_on(start, monkeypatch) -> None:  # noqa: ANN001
    """`?summarization.keep=…` (or a bad setting) on the landing sample opened on deepagents, not on the stress
    settings the sample opens on."""
    monkeypatch.setenv("CTXI_SAMPLES_DIR", str(ROOT / "sample_threads"))
    at = start(**{"summarization.keep": "fraction:0.1"})
    config = at.session_state["config"]
    assert (config.preset, config.summarization.mode) == ("stress", "state")
    assert (config.summarization.keep.type, config.summarization.keep.value) == ("fraction", 0.1)
    bad = start(**{"summarization.trigger": "potato"})
    assert (bad.session_state["config"].preset, bad.session_state["config"].summarization.mode) == ("stress", "state")
    assert dict(bad.query_params)["preset"] == "stress"
