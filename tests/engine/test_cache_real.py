"""The cache model on the as-recorded view of real Claude Code sessions reproduces the recorded cache reads.

Per step after the first, the modelled `cache_read_input_tokens` must be within 5 % of the recorded
one (engine.cost.cache_run.reproduction: the prompt-prefix boundary is measured leave-one-out, so no step
is predicted from its own read). The steps the model misses are listed with what the recording shows
happened there, so a new miss fails the test instead of being averaged away.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import load_thread, preset, replay
from engine.cost.cache_run import reproduction
from engine.cost.run_cost import run_cost
from tests.conftest import trace_path

SESSIONS = ["4d5611e5-241a-462a-8d15-5122611a9569.jsonl", "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl",
            "subagent.jsonl", "tool_heavy.jsonl", "short.jsonl"]
# (session, step): why the model cannot know. Everything else must be within 5 %.
EXPLAINED_MISSES = {
    # a `<task-notification>` turn after the turn ended: the recorded read falls back to the system
    # prompt (21,478 / 21,496 tokens) 5-10 s after a full read: the agent changed its history prefix
    # in a way the transcript does not record.
    ("4d5611e5-241a-462a-8d15-5122611a9569.jsonl", 137),
    ("fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl", 43),
    # the previous call recorded 1,562 input tokens after its last breakpoint (four parallel tool
    # results; Claude Code marked an earlier block): the model marks the last block (5.3 % over)
    ("subagent.jsonl", 2),
    # after `/mcp` reconnected a server (a local command): the tool list changed; the recorded read is a
    # prefix shared with other sessions
    ("tool_heavy.jsonl", 2),
}


def _threads(name: str):
    thread = load_thread(trace_path("claude-code", name))
    yield name, thread
    for sub in thread.subagents.values():
        yield f"{name}/{sub.thread_id}", sub


@pytest.mark.parametrize("name", SESSIONS)
def test_modelled_reads_match_the_recorded_reads_within_5_percent(name: str) -> None:
    checked = 0
    for label, thread in _threads(name):
        run = replay(thread, preset("as-recorded"))
        rows = reproduction(run)
        misses = {(name, r["step"]) for r in rows if not r["ok"]} if label == name else \
            {(label, r["step"]) for r in rows if not r["ok"]}
        assert misses <= EXPLAINED_MISSES, [r for r in rows if not r["ok"]]
        checked += len(rows)
    if name != "short.jsonl":
        assert checked > 0


def test_the_main_sessions_reproduce_all_but_the_explained_steps() -> None:
    name = SESSIONS[0]
    run = replay(load_thread(trace_path("claude-code", name)), preset("as-recorded"))
    rows = reproduction(run)
    assert len(rows) == 138
    assert sum(r["ok"] for r in rows) == 137
    # the compaction step is predicted from the other break's read (leave-one-out): exactly the system prompt
    after = next(r for r in rows if r["step"] == 61)
    assert after["recorded_read"] == after["modelled_read"] == 21478
    # the two long pauses (4 h 11 min, 19 min) expire the 5-minute cache: nothing read, as recorded
    assert [(r["step"], r["modelled_read"], r["recorded_read"]) for r in rows if r["step"] in (18, 113)] == [
        (18, 0, 0), (113, 0, 0)]


def test_the_recorded_compaction_call_and_its_account() -> None:
    run = replay(load_thread(trace_path("claude-code", SESSIONS[0])), preset("as-recorded"))
    cost = run_cost(run)
    [call] = cost.summarizer_calls
    assert call.style == "fork" and call.recorded is not None
    # the fork reads what the previous call cached: as recorded (164,830), within our one-token framing
    assert call.recorded["cache_read"] == 164830 and call.cache is not None and call.cache.read == 164831
    [account] = cost.compactions
    assert account.step == 61 and account.paid_back_after is not None and account.paid_back_after <= 10
    assert cost.steps[61].cause == "compaction" and cost.steps[18].cause == "ttl"
    totals = cost.totals()
    assert totals["recorded_steps"] == 139
    # the modelled bill is within 5 % of the bill the recorded usage makes
    assert abs(totals["dollars"] - totals["recorded_dollars"]) / totals["recorded_dollars"] < 0.05


def test_traces_folder_layout_is_what_the_test_expects(traces_dir: Path) -> None:
    assert (traces_dir / "claude-code" / SESSIONS[0]).exists()
