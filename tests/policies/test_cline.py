"""Cline's context management rules (engine/policies/cline.py)."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from engine import load_thread, preset, replay
from engine.policies.cline import (
    DUPLICATE_FILE_READ_NOTICE,
    POLICY,
    TRUNCATION_NOTICE,
    api_messages,
    deduplicate_file_reads,
    keep_for,
    max_allowed_size,
    truncate,
    truncation_range,
)
from engine.run.whatif import compaction_steps
from tests.conftest import trace_path
from tests.policies.helpers import call, context, session


def test_max_allowed_size_by_window() -> None:
    assert [max_allowed_size(w) for w in (64_000, 128_000, 200_000, 1_000_000, 32_000)] == \
        [37_000, 98_000, 160_000, 960_000, 25_600]
    assert (keep_for(100_000, 98_000), keep_for(200_000, 98_000)) == ("half", "quarter")


def test_truncation_range_keeps_the_first_pair_and_drops_pairs() -> None:
    roles = ["user", "assistant"] * 5
    assert truncation_range(10, roles, "half") == (2, 5)  # floor(8 / 4) * 2 = 4 messages
    assert truncation_range(10, roles, "quarter") == (2, 7)  # floor(8 * 3 / 4 / 2) * 2 = 6
    assert truncation_range(11, [*roles, "user"], "half") == (2, 5)
    assert truncation_range(10, roles, "none") == (2, 9) and truncation_range(10, roles, "lastTwo") == (2, 7)


def test_api_messages_alternate_and_truncation_writes_the_notice() -> None:
    history = session(3, 2)
    groups = api_messages(history)
    assert len(groups) == 18 and all(len(g) == 1 for g in groups)
    out, dropped = truncate(history, "half", step=1)
    assert dropped == 8 and [m.id for m in out][:3] == ["h0", "a0-0", "t1-1"]
    notice = out[1]
    assert isinstance(notice, AIMessage) and notice.content == TRUNCATION_NOTICE and not notice.tool_calls
    again, _ = truncate(out, "half", step=2)
    assert again[1] is notice  # the notice is written once


def reads() -> list:
    return [HumanMessage("task", id="h"),
            AIMessage("", tool_calls=[call("c0")], id="a0"), ToolMessage("x" * 1000, tool_call_id="c0", id="t0"),
            AIMessage("", tool_calls=[call("c1")], id="a1"), ToolMessage("x" * 1000, tool_call_id="c1", id="t1"),
            AIMessage("", tool_calls=[call("c2", path="/c1")], id="a2"), ToolMessage("x" * 1000, tool_call_id="c2", id="t2"),
            AIMessage("", tool_calls=[call("c3", path="/c1")], id="a3"), ToolMessage("x" * 1000, tool_call_id="c3", id="t3")]


def test_duplicate_file_reads_keep_only_the_newest() -> None:
    out, saved, total = deduplicate_file_reads(reads())
    assert [m.content for m in out if isinstance(m, ToolMessage)] == \
        ["x" * 1000, DUPLICATE_FILE_READ_NOTICE, DUPLICATE_FILE_READ_NOTICE, "x" * 1000]
    assert (saved, total) == (2 * (1000 - len(DUPLICATE_FILE_READ_NOTICE)), 4004)
    mention = HumanMessage('<file_content path="a.py">old</file_content> and <file_content path="b.py">b</file_content>',
                           id="m0")
    later = HumanMessage('<file_content path="a.py">new</file_content>', id="m1")
    out, _, _ = deduplicate_file_reads([HumanMessage("t", id="h"), AIMessage("ok", id="a"), mention,
                                        AIMessage("ok", id="b"), later])
    assert out[2].content == (f'<file_content path="a.py">{DUPLICATE_FILE_READ_NOTICE}</file_content> and '
                              '<file_content path="b.py">b</file_content>')


def test_dedup_saving_thirty_percent_skips_truncation() -> None:
    result = POLICY.rebuild(reads(), context(window=128_000, previous=100_000, output=0))
    assert result.kind == "trim" and result.detail["truncated"] is False
    assert result.detail["saved_fraction"] >= 0.3
    plain = POLICY.rebuild(session(3, 2), context(window=128_000, previous=100_000, output=0))
    assert plain.detail["truncated"] is True and plain.detail["dropped_messages"] == 8


def test_the_trigger_is_the_previous_request_with_its_output() -> None:
    history = session(2, 2)
    assert POLICY.should_compact(history, context(window=128_000, previous=90_000, output=8_000))
    assert not POLICY.should_compact(history, context(window=128_000, previous=90_000, output=7_999))
    assert not POLICY.should_compact(history, context(window=128_000, previous=None))


def test_on_a_real_codex_session_a_lowered_limit_truncates_in_halves() -> None:
    thread = load_thread(trace_path("codex", "vibecodingtracker-codex.jsonl"))
    assert compaction_steps(replay(thread, preset("cline"))) == []
    run = replay(thread, preset("cline").with_overrides(["compaction.trigger=tokens:15000"]))
    events = [e for e in run.events if e.layer == "compaction"]
    assert [(e.step, e.kind, e.payload["keep"]) for e in events] == [(10, "trim", "half"), (17, "trim", "half")]
    assert compaction_steps(run) == [10, 17]
    # the first API message is the environment context and the prompt together; then the notice
    first_ai = next(m for m in run.steps[10].view if isinstance(m, AIMessage))
    assert first_ai.content == TRUNCATION_NOTICE and first_ai.id == thread.messages[2].id
