"""The Timeline's "Summarizer calls" tile counts the source agent's recorded compaction calls too.

An as-recorded run calls no summarizer of ours, yet the Layers page prices the model call the agent made
to write its summary: the tile read 0 beside it. It now counts the calls engine.cost.run_cost prices.
"""

from __future__ import annotations

import pytest

from engine import load_thread, preset, replay
from engine.config.presets import default_preset_name
from engine.cost.run_cost import run_cost
from engine.views.timeline import SummarizerCalls, recorded_compaction_calls, summarizer_calls
from tests.conftest import SAMPLES, trace_path

CLAUDE = ("claude-code", "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl")
# every shared trace whose source recorded a compaction (summaries, server-side compactions, none at step 0)
RECORDED = [CLAUDE, ("claude-code", "4d5611e5-241a-462a-8d15-5122611a9569.jsonl"),
            ("codex", "agent-sessions-codex-small.SYNTHETIC.jsonl"),
            ("anthropic-compaction", "test_anthropic_compaction_end_to_end.yaml"),
            ("openai-responses-compaction", "test_openai_responses_compact_messages.yaml"),
            ("openai-responses-compaction", "test_openai_responses_compact_stateful_mode.yaml")]


def test_a_recorded_claude_code_compaction_is_one_call_by_the_agent() -> None:
    thread = load_thread(trace_path(*CLAUDE))
    run = replay(thread, preset("as-recorded"))
    calls = summarizer_calls(run)
    assert calls == SummarizerCalls(ours=0, ours_name="none", recorded=1)
    assert calls.total == 1
    assert calls.whose == "by the agent (recorded)"
    assert calls.help == ("1 recorded compaction call by the source agent (the model call it made to write its "
                          "summary, priced on the Layers page, Summaries tab, and in the Cost section); "
                          "no summarizer of ours ran")
    # the call the Layers page prices (its compactions table's "summarizer call"), at the same step
    [priced] = [c for c in run_cost(run).summarizer_calls if c.layer == "recorded"]
    assert (priced.step, priced.recorded_bill is not None) == (126, True)
    assert recorded_compaction_calls(run) == [126]


@pytest.mark.parametrize("parts", RECORDED, ids=[p[1].split(".")[0] for p in RECORDED])
def test_the_count_is_the_calls_the_cost_model_prices(parts: tuple[str, str]) -> None:
    thread = load_thread(trace_path(*parts))
    run = replay(thread, preset(default_preset_name(thread)))
    assert "recorded" in run.config.order
    priced = [c.step for c in run_cost(run).summarizer_calls if c.layer == "recorded"]
    assert recorded_compaction_calls(run) == priced
    assert summarizer_calls(run).total == run.summarizer_calls + len(priced)


@pytest.mark.parametrize(("name", "ours"), [("deepagents", 0), ("stress", 2)])
def test_a_what_if_counts_our_summarizer_as_before(name: str, ours: int) -> None:
    run = replay(load_thread(SAMPLES / "first-look.json"), preset(name))
    calls = summarizer_calls(run)
    assert calls == SummarizerCalls(ours=ours, ours_name="offline", recorded=0)
    assert (calls.total, calls.whose, calls.help) == (run.summarizer_calls, None, "summarizer: offline")


def test_a_run_with_both_says_whose_is_whose() -> None:
    calls = SummarizerCalls(ours=2, ours_name="offline", recorded=1)
    assert (calls.total, calls.whose) == (3, "1 by the agent, 2 ours")
    assert calls.help == ("1 recorded compaction call by the source agent (the model call it made to write its "
                          "summary, priced on the Layers page, Summaries tab, and in the Cost section); "
                          "2 calls of our summarizer (offline)")
    assert "to write each summary" in SummarizerCalls(ours=0, ours_name="none", recorded=6).help
