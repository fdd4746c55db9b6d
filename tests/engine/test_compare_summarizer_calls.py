"""Config › Compare's delta table and the Compare sessions cell count the source agent's recorded compaction calls.

An as-recorded run calls no summarizer of ours, yet the agent called its model to write each summary (the
Timeline's tile counts it: engine.views.timeline.summarizer_calls); the compare row read 0 beside it.
"""

from __future__ import annotations

from typing import Any

from engine import load_thread, preset, replay
from engine.config.loading import load_config
from engine.views.compare import compare_runs, summarizer_calls_text
from tests.conftest import SAMPLES, trace_path

CLAUDE = ("claude-code", "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl")  # compacted once, at step 126
CODEX = ("codex", "agent-sessions-codex-small.SYNTHETIC.jsonl")  # six recorded compactions
BOTH = ["order=[recorded, summarization]", "summarization.enabled=true", "summarization.trigger=messages:5"]


def _rows(rows: list[dict[str, Any]]) -> dict[str, tuple[Any, Any, Any]]:
    return {r["metric"]: (r["A"], r["B"], r["B − A"]) for r in rows}


def test_a_recorded_run_counts_the_agents_call_and_says_whose() -> None:
    recorded = replay(load_thread(trace_path(*CLAUDE)), preset("as-recorded"))
    whatif = replay(load_thread(SAMPLES / "first-look.json"), preset("stress"))
    rows = compare_runs(recorded, whatif)
    assert [r["metric"] for r in rows][-5:] == [
        "warnings", "summarizer calls", "summarizer calls: by the agent (recorded)", "summarizer calls: ours",
        "files written"]
    got = _rows(rows)
    assert got["summarizer calls"] == (1, 2, 1)
    assert got["summarizer calls: by the agent (recorded)"] == (1, 0, -1)
    assert got["summarizer calls: ours"] == (0, 2, 2)
    assert summarizer_calls_text(recorded) == "1 (recorded, by the agent)"


def test_a_run_with_both_says_whose_is_whose() -> None:
    thread = load_thread(trace_path(*CODEX))
    both = replay(thread, load_config(None, preset_name="as-recorded", overrides=BOTH, thread=thread))
    assert summarizer_calls_text(both) == "7 (6 recorded, by the agent; 1 ours)"
    got = _rows(compare_runs(both, replay(thread, preset("as-recorded"))))
    assert (got["summarizer calls"], got["summarizer calls: by the agent (recorded)"],
            got["summarizer calls: ours"]) == ((7, 6, -1), (6, 6, 0), (1, 0, -1))


def test_what_ifs_count_our_summarizer_as_before() -> None:
    thread = load_thread(SAMPLES / "first-look.json")
    a, b = replay(thread, preset("deepagents")), replay(thread, preset("stress"))
    rows = compare_runs(a, b)
    assert [r["metric"] for r in rows][-3:] == ["warnings", "summarizer calls", "files written"]
    assert _rows(rows)["summarizer calls"] == (0, 2, 2) == (a.summarizer_calls, b.summarizer_calls, 2)
    assert (summarizer_calls_text(a), summarizer_calls_text(b)) == ("0", "2")
