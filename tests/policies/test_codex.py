"""Codex CLI's rules (engine/policies/codex.py), mirroring codex-rs's own test cases where they exist."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from engine import preset, replay
from engine.config.sections import CompactionConfig
from engine.config.sizes import ContextSize
from engine.policies.codex import (
    NO_SUMMARY,
    POLICY,
    SUMMARY_PREFIX,
    approx_token_count,
    auto_compact_limit,
    model_window,
    selected_user_messages,
    summary_message,
    trim_to_fit,
    truncate_text,
)
from engine.thread.model import Thread
from tests.policies.helpers import COUNTER, call, context, session


def test_truncate_text_matches_codex_truncate_rs() -> None:
    # truncate.rs tests (the text after "Total output lines: N\n\n" in the formatted variants)
    long = "this is an example of a long output that should be truncated"
    assert truncate_text(long, 5) == "this is an…10 tokens truncated… truncated"
    assert truncate_text("example output", 1) == "ex…3 tokens truncated…ut"
    assert truncate_text("example output", 10) == "example output"
    assert truncate_text(long + "\nalso some other line", 10) == \
        "this is an example o…11 tokens truncated…also some other line"
    assert truncate_text("😀😀😀😀😀😀😀😀😀😀\nsecond line with text\n", 8) == "😀😀😀😀…8 tokens truncated… line with text\n"
    assert truncate_text("abcdef", 0) == "…2 tokens truncated…"
    assert approx_token_count("abcde") == 2 and approx_token_count("😀") == 1


def test_auto_compact_limit_is_ninety_percent_of_the_model_window_and_only_lowered() -> None:
    assert auto_compact_limit(272_000) == 244_800
    assert auto_compact_limit(272_000, ContextSize(type="tokens", value=100_000)) == 100_000
    assert auto_compact_limit(272_000, ContextSize(type="tokens", value=300_000)) == 244_800
    assert auto_compact_limit(200_000, ContextSize(type="fraction", value=0.5)) == 100_000
    # a rollout records the usable 95 %; other sources the model's own window
    assert model_window(258_400, "codex", {}) == 272_000
    assert model_window(258_400, "codex", {"window_source": "model table"}) == 258_400
    assert model_window(200_000, "claude_code", {}) == 200_000
    assert POLICY.threshold_tokens(258_400, None, CompactionConfig(), thread=Thread("t", [], source_format="codex")) \
        == 244_800


def test_recent_user_messages_fill_twenty_thousand_tokens_newest_first() -> None:
    big = "word " * 200  # 1,000 bytes: 250 tokens
    [cut] = selected_user_messages([HumanMessage(big, id="u")], 16, step=1)
    # build_token_limited_compacted_history_truncates_overlong_user_messages
    assert "tokens truncated" in str(cut.content) and big not in str(cut.content)
    msgs = [HumanMessage("first " * 10, id="u0"), HumanMessage("<environment_context>cwd</environment_context>", id="e"),
            summary_message("old summary", 0), HumanMessage("second", id="u1"), HumanMessage("third", id="u2")]
    kept = selected_user_messages(msgs, 3, step=1)
    # "third" (2 tokens) fits, "second" (2) does not and is cut to the 1 token left; nothing older
    assert [m.id for m in kept][1:] == ["u2"] and kept[0].content == "se…1 tokens truncated…nd"
    assert [m.id for m in selected_user_messages(msgs, 20_000, step=1)] == ["u0", "u1", "u2"]


def test_rebuild_is_initial_context_users_then_the_prefixed_summary() -> None:
    history = [SystemMessage("developer instructions", id="dev"),
               HumanMessage("# AGENTS.md instructions for /repo\n\nbe careful", id="agents"),
               *session(2, 2)]
    result = POLICY.rebuild(history, context())
    assert result.messages is not None
    ids = [m.id for m in result.messages]
    assert ids[:4] == ["dev", "agents", "h0", "h1"] and len(ids) == 5
    last = result.messages[-1]
    assert str(last.content).startswith(SUMMARY_PREFIX + "\n## SESSION INTENT")
    assert summary_message("", 1).content == NO_SUMMARY
    assert result.detail == {"trimmed_items": 0}


def test_an_overflowing_compaction_request_trims_the_oldest_items_first() -> None:
    history = session(1, 6, size=4_000)
    each = COUNTER(history[1:3])
    kept, trimmed = trim_to_fit(history, COUNTER(history) - each, COUNTER)
    # the user message goes first, then the first call together with its result
    assert trimmed == 2 and [m.id for m in kept][:2] == ["a0-1", "t0-1"]
    small = POLICY.rebuild(history, context(window=COUNTER(history)))
    assert small.detail["trimmed_items"] > 0 and "Trimmed" in small.detail["notice"]


def test_tool_output_is_recorded_truncated_at_twelve_thousand_tokens() -> None:
    big = "z" * 60_000
    out = POLICY.tool_result(ToolMessage(big, tool_call_id="c", id="t"), context())
    assert out.content == truncate_text(big, 12_000) and len(str(out.content).encode()) < 48_100
    small = ToolMessage("ok", tool_call_id="c", id="t")
    assert POLICY.tool_result(small, context()) is small
    cfg = CompactionConfig(policy="codex", tool_output_tokens=100)
    assert POLICY.tool_result(ToolMessage("q" * 1_000, tool_call_id="c", id="t"), context(cfg)).content == \
        truncate_text("q" * 1_000, 120)


def test_the_codex_preset_compacts_at_its_limit_and_truncates_results() -> None:
    msgs = [HumanMessage("refactor", id="h")]
    for k in range(12):
        msgs += [AIMessage("", tool_calls=[call(f"c{k}")], id=f"a{k}"),
                 ToolMessage("w " * (30_000 if k == 3 else 2_000), tool_call_id=f"c{k}", id=f"t{k}")]
    msgs.append(AIMessage("done", id="end"))
    thread = Thread("t", msgs, source_format="codex", max_input_tokens=19_000)  # model window 20,000
    run = replay(thread, preset("codex"))
    [compact] = [e for e in run.events if e.kind == "compact"]
    assert compact.payload["threshold_tokens"] == 18_000
    assert compact.payload["request_tokens"] >= 18_000
    before = run.steps[compact.step - 1]
    assert before.view_tokens < 18_000 + 5_000
    assert [m.id for m in run.steps[compact.step].view][:1] == ["h"]
    [truncated] = [e for e in run.events if e.kind == "truncate_result"]
    assert truncated.payload["tool_call_id"] == "c3" and truncated.tokens_after < truncated.tokens_before


def _rollout_compacting_on_earlier_reasoning() -> list[dict[str, object]]:
    """A CLI 0.104.0-alpha.1 / gpt-5.3-codex rollout shaped like the issue's: a 258,400 window (the usable
    95 % of 272,000), five turns, each a call with 48,000 characters of encrypted reasoning then an
    answer; recorded inputs below Codex's 244,800 limit at every call, 209,950 at turn 4's first call."""
    from tests.formats.test_codex import call as fcall
    from tests.formats.test_codex import ctx, item, meta, output, say, tokens, user

    rows: list[dict[str, object]] = [meta(cli_version="0.104.0-alpha.1", base_instructions={"text": "You are Codex."}),
                                     ctx("gpt-5.3-codex")]
    inputs = [100_000 + 12_000 * k for k in range(8)] + [209_950, 215_000, 225_000, 230_000]
    for turn in range(6):
        rows += [user(f"task {turn}"),
                 item(type="reasoning", summary=[{"type": "summary_text", "text": f"plan {turn}"}],
                      encrypted_content="g" * 48_000),
                 fcall(f"c{turn}", command=["make", str(turn)]),
                 tokens(inputs[2 * turn], 0, 300, 200, window=258_400),
                 output(f"c{turn}", f"ok {turn}"),
                 say(f"done {turn}"),
                 tokens(inputs[2 * turn + 1], 0, 50, window=258_400)]
    return rows


def test_codex_compacts_where_its_total_usage_counts_earlier_reasoning(tmp_path) -> None:
    # openai/codex history.rs get_total_token_usage: the request plus every encrypted reasoning item before
    # the last user turn, each ceil((len * 3 / 4 - 650) / 4) tokens: 4 x 8,838 = 35,352 at turn 4. The
    # request of 209,950 then reaches 245,302 >= 244,800, so Codex compacts there, where a rule on the
    # request alone (every request below 244,800) never would.
    from engine.formats import load_thread
    from tests.formats.test_codex import jsonl

    path = tmp_path / "rollout-2026-02-25T23-47-26-x.jsonl"
    path.write_bytes(jsonl(_rollout_compacting_on_earlier_reasoning()))
    thread = load_thread(path)
    assert thread.max_input_tokens == 258_400
    assert max(u.context_tokens or 0 for u in thread.usage.values()) == 230_000
    run = replay(thread, preset("codex"))
    compactions = [e for e in run.events if e.kind == "compact"]
    assert [e.step for e in compactions][:1] == [8]
    first = compactions[0].payload
    assert (first["threshold_tokens"], first["request_tokens"], first["decision_tokens"]) == (244_800, 209_950, 245_302)
    # the decision record (engine.thread.decisions) is on that same quantity: first reached where it fires
    decided = {d.step: d for d in run.decisions if d.layer == "compaction"}
    assert (decided[8].measured, decided[8].threshold, decided[8].fired, decided[8].series) == (
        245_302, 244_800, True, "total usage")
    assert (decided[7].measured, decided[7].fired) == (210_514, False)
