"""Gemini CLI's chat compression rules (engine/policies/gemini_cli.py)."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from engine import load_thread, preset, replay
from engine.config.sections import CompactionConfig
from engine.config.sizes import ContextSize
from engine.policies.gemini_cli import (
    ACKNOWLEDGEMENT,
    FAILED,
    POLICY,
    compression_threshold,
    contents,
    estimate_tokens,
    find_compress_split_point,
    state_snapshot,
    truncate_to_budget,
    truncated_output,
)
from engine.thread.kinds import message_kind
from tests.conftest import trace_path
from tests.policies.helpers import call, context, session


def text(role: str, n: int = 100) -> dict[str, Any]:
    return {"role": role, "parts": [{"text": "a" * n}]}


def test_estimate_is_a_quarter_token_per_ascii_character() -> None:
    assert (estimate_tokens("abc"), estimate_tokens("abcd"), estimate_tokens("é" * 10), estimate_tokens("日本")) == \
        (0, 1, 13, 2)


def test_split_point_keeps_the_newest_thirty_percent_at_a_user_turn() -> None:
    alternating = [text("user"), text("model")] * 5
    assert find_compress_split_point(alternating, 0.7) == 8  # the first user turn with 70 % before it
    tail_of_answers = [text("user"), text("model"), text("user"), *[text("model")] * 5]
    assert find_compress_split_point(tail_of_answers, 0.7) == 8  # ends on an answer: compress everything
    pending = [*tail_of_answers[:-1], {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]}]
    assert find_compress_split_point(pending, 0.7) == 2  # a pending call: the last user turn
    results = [text("user"), text("model"), {"role": "user", "parts": [{"functionResponse": {"name": "f"}}]},
               text("model"), text("user"), text("model")]
    assert find_compress_split_point(results, 0.5) == 4  # function responses are not split points


def test_history_maps_to_gemini_contents_with_results_grouped() -> None:
    msgs = [HumanMessage("go", id="h"), AIMessage("", tool_calls=[call("c0"), call("c1")], id="a"),
            ToolMessage("r0", tool_call_id="c0", name="read_file", id="t0"),
            ToolMessage("r1", tool_call_id="c1", name="read_file", id="t1"), AIMessage("done", id="f")]
    got = contents(msgs)
    assert [(c["role"], idx) for c, idx in got] == [("user", [0]), ("model", [1]), ("user", [2, 3]), ("model", [4])]
    assert got[1][0]["parts"] == [{"functionCall": {"name": "read_file", "args": {"path": "/c0"}}},
                                  {"functionCall": {"name": "read_file", "args": {"path": "/c1"}}}]


def test_old_tool_output_beyond_the_reverse_budget_is_truncated() -> None:
    assert truncated_output("0123456789" * 5, "f.txt", 10) == (
        "Output too large. Showing first 2 and last 8 characters. For full output see: f.txt\n01\n\n"
        "... [40 characters omitted] ...\n\n23456789")
    msgs = session(1, 4, size=120_000)  # 30,000 tokens each: the newest one fits the 50k budget
    out = truncate_to_budget(msgs)
    shortened = [m.id for m, o in zip(msgs, out, strict=True) if o is not m]
    assert shortened == ["t0-0", "t0-1", "t0-2"]
    assert str(out[2].content).startswith("Output too large. Showing first 8,000 and last 32,000 characters.")


def test_threshold_is_half_the_window_on_the_previous_prompt() -> None:
    assert compression_threshold(1_048_576) == 524_288
    assert compression_threshold(200_000, ContextSize(type="fraction", value=0.2)) == 40_000
    history = session(4, 2)
    assert not POLICY.should_compact(history, context(window=10_000, request=9_000, previous=None))
    assert POLICY.should_compact(history, context(window=10_000, request=100, previous=5_000))
    assert not POLICY.should_compact(history, context(window=10_000, request=9_000, previous=4_999))


def test_rebuild_is_snapshot_acknowledgement_then_the_kept_tail() -> None:
    history = session(6, 2)
    result = POLICY.rebuild(history, context(window=100_000, previous=50_000))
    assert result.messages is not None and result.detail["status"] == "COMPRESSED"
    first, ack, *kept = result.messages
    assert message_kind(first) == "summary" and str(first.content).startswith("<state_snapshot>\n    <overall_goal>")
    assert isinstance(ack, AIMessage) and ack.content == ACKNOWLEDGEMENT
    assert kept[0].id == "h5" and kept == history[history.index(kept[0]):]  # 4 of 6 turns is 67 %, under 70 %: split at the sixth


def test_a_summary_that_grows_the_context_is_rejected_then_only_truncation() -> None:
    history = session(6, 2)
    memory: dict[str, Any] = {}
    rejected = POLICY.rebuild(history, context(window=100_000, previous=10, memory=memory))
    assert rejected.messages is None and rejected.detail["status"] == "COMPRESSION_FAILED_INFLATED_TOKEN_COUNT"
    assert memory == {FAILED: True}
    again = POLICY.rebuild(history, context(window=100_000, previous=50_000, memory=memory))
    assert again.messages is None and again.rejected is None  # nothing to truncate: a silent no-op
    big = session(1, 4, size=120_000)
    truncated = POLICY.rebuild(big, context(window=1_000_000, previous=200_000, memory=memory))
    assert truncated.kind == "trim" and truncated.detail["status"] == "CONTENT_TRUNCATED"


def test_state_snapshot_carries_the_offline_sections() -> None:
    snap = state_snapshot("## SESSION INTENT\n- fix it\n\n## SUMMARY\nNone\n\n## ARTIFACTS\n- `a.py` — read\n\n"
                          "## NEXT STEPS\n- [ ] test")
    assert snap.splitlines()[:3] == ["<state_snapshot>", "    <overall_goal>", "        - fix it"]
    assert "<file_system_state>\n        - `a.py` — read" in snap and snap.endswith("</state_snapshot>")
    assert state_snapshot("<state_snapshot>x</state_snapshot>") == "<state_snapshot>x</state_snapshot>"


def test_on_a_real_gemini_session_a_lowered_threshold_compresses_at_a_user_turn() -> None:
    thread = load_thread(trace_path("gemini", "vibecodingtracker-session.jsonl"))
    assert replay(thread, preset("gemini-cli")).events == []  # 41k tokens in a 1M window: never
    run = replay(thread, preset("gemini-cli").with_overrides(["compaction.trigger=tokens:20000"]))
    [event] = [e for e in run.events if e.layer == "compaction"]
    assert (event.step, event.kind, event.payload["status"]) == (4, "compact", "COMPRESSED")
    view = run.steps[4].view
    assert message_kind(view[0]) == "summary" and view[1].content == ACKNOWLEDGEMENT
    assert isinstance(CompactionConfig(policy="gemini-cli").policy, str)


def test_a_second_compression_keeps_what_the_first_snapshot_held() -> None:
    from engine.policies.gemini_cli import snapshot_sections

    snap = state_snapshot("## SESSION INTENT\n- fix it\n\n## SUMMARY\n- read a.py\n\n## ARTIFACTS\n- `a.py` — read\n\n"
                          "## NEXT STEPS\n- [ ] test")
    assert snapshot_sections(snap) == ("## SESSION INTENT\n- fix it\n\n## SUMMARY\n- read a.py\n\n"
                                       "## ARTIFACTS\n- `a.py` — read\n\n## NEXT STEPS\n- [ ] test")
    thread = load_thread(trace_path("codex", "vibecodingtracker-codex.jsonl"))
    run = replay(thread, preset("gemini-cli").with_overrides(["compaction.trigger=tokens:15000"]))
    events = [e for e in run.events if e.layer == "compaction" and e.kind == "compact"]
    # compacting on every call from step 10 on is flagged once, at the streak's first step (engine/run/thrash.py)
    assert [e.step for e in run.events if e.kind == "thrashing"] == [10]
    # one long turn: from step 11 on the split point is the turn after the snapshot, so Gemini CLI
    # compresses its own snapshot again at every call; what the first one held stays in every later one
    assert [e.step for e in events] == list(range(10, 19))
    goal = events[0].payload["summary"].split("</overall_goal>")[0]
    assert "<environment_context>" in goal
    assert all(e.payload["summary"].split("</overall_goal>")[0] == goal for e in events)
