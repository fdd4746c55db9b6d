"""The Timeline's "Summarizer calls" tile and the Layers page agree on a recorded session: the tile read 0
(only our summarizer's calls) while the Layers page priced the agent's own compaction call."""

from __future__ import annotations

from pathlib import Path

from engine.cost.run_cost import run_cost
from engine.cost.views import dollars
from tests.conftest import trace_path
from ui import session

ROOT = Path(__file__).resolve().parents[2]


def tile(at):  # noqa: ANN001, ANN201
    [metric] = [m for m in at.metric if m.label == "Summarizer calls"]
    return metric


def test_a_recorded_compaction_is_counted_as_the_agents_call_and_agrees_with_layers(start, monkeypatch) -> None:  # noqa: ANN001
    path = trace_path("claude-code", "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl")
    monkeypatch.setenv("CTXI_OPEN", str(path))  # what `ctxi ui FILE` sets
    at = start()
    assert at.session_state["config"].preset == "as-recorded"
    metric = tile(at)
    assert (metric.value, metric.delta) == ("1", "by the agent (recorded)")
    assert metric.help.startswith("1 recorded compaction call by the source agent")
    assert metric.help.endswith("no summarizer of ours ran")
    # the Layers page prices that one call: one compaction row, its summarizer call at the recorded price
    run = session.run_for(at.session_state["thread_key"], at.session_state["config"])
    [call] = [c for c in run_cost(run).summarizer_calls if c.layer == "recorded"]
    at.switch_page("pages/layers.py").run()
    assert not at.exception
    [compactions] = [d.value for d in at.dataframe if "summarizer call" in d.value.columns]
    assert list(compactions["summarizer call"]) == [dollars(call.dollars)]
    assert len(compactions) == int(metric.value)


def test_a_what_if_on_the_bundled_sample_counts_our_summarizer_as_before(start, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("CTXI_SAMPLES_DIR", str(ROOT / "sample_threads"))
    at = start(preset="deepagents")
    assert (at.session_state["thread_key"], at.session_state["config"].preset) == ("sample:first-look", "deepagents")
    metric = tile(at)
    assert (metric.value, metric.delta, metric.help) == ("0", "", "summarizer: offline")
    at.selectbox(key="sb_preset").set_value("stress").run()
    assert not at.exception
    metric = tile(at)
    assert (metric.value, metric.delta, metric.help) == ("2", "", "summarizer: offline")


def test_compare_sessions_says_a_recorded_sessions_summarizer_call_is_the_agents(start, monkeypatch) -> None:  # noqa: ANN001
    import re

    path = trace_path("claude-code", "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl")
    monkeypatch.setenv("CTXI_OPEN", str(path))
    at = start()
    at.switch_page("pages/compare.py").run()
    assert not at.exception, at.exception
    facts = next(d.value for d in at.dataframe if "format" in list(d.value.iloc[:, 0]))
    row = facts[facts.iloc[:, 0] == "summarizer calls"]
    assert re.sub(r"\\(.)", r"\1", str(row.iloc[0, 1])) == "1 (recorded, by the agent)"
