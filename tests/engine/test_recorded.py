"""The as-recorded baseline: recorded compactions and edits, calibrated counts, the thinking rule,
model windows, and what-ifs compared with it (engine.recorded.history, engine.recorded.calibration, engine.run.whatif)."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from engine import load_thread, preset, replay
from engine.config.presets import default_preset_name
from engine.policies.claude_code import autocompact_threshold
from engine.recorded.calibration import AGENT_PROMPT, LOCAL_CAP, UNEXPLAINED, calibrate
from engine.recorded.history import RecordedHistory, keeps_all_thinking
from engine.run.whatif import against_baseline, compaction_steps
from engine.thread.model import RecordedCompaction, RecordedEdit, RecordedUsage, Thread
from engine.tokens.counters import get_counter
from engine.tokens.windows import model_limits, model_window
from tests.conftest import TRACES, trace_path

COUNTER = get_counter()


def call(cid: str, name: str = "Read", **args: object) -> dict[str, object]:
    return {"name": name, "args": args or {"file_path": f"/{cid}.py"}, "id": cid, "type": "tool_call"}


def usage(total: int, read: int = 0) -> RecordedUsage:
    # split like a Claude Code record: what the previous call sent read from the cache, the rest written
    read = min(read, total - 3)
    return RecordedUsage(input_tokens=3, cache_creation_input_tokens=total - 3 - read, cache_read_input_tokens=read)


def coding_thread(recorded: list[int], *, compactions: list[RecordedCompaction] | None = None,
                  edits: list[RecordedEdit] | None = None, model: str = "claude-opus-4-6") -> Thread:
    """human, then len(recorded) calls, each reading a file; call k recorded `recorded[k]` input tokens."""
    messages: list[BaseMessage] = [HumanMessage("Refactor the parser", id="h0")]
    used = {}
    for k, total in enumerate(recorded):
        ai = AIMessage("", tool_calls=[call(f"c{k}")], id=f"a{k}")
        messages.append(ai)
        used[ai.id] = usage(total, recorded[k - 1] if k else 0)
        messages.append(ToolMessage(f"line {k}\n" * (50 + 10 * k), tool_call_id=f"c{k}", name="Read", id=f"t{k}"))
    messages.append(AIMessage("done", id="final"))
    return Thread("t", messages, source_format="claude_code", model=model, max_input_tokens=200_000,
                  usage=used, compactions=compactions or [], edits=edits or [])


# -- recorded compactions and edits ------------------------------------------------------------------
def test_after_a_recorded_compaction_the_view_is_the_summary_plus_what_followed() -> None:
    c = RecordedCompaction(index=5, trigger="auto", pre_tokens=900, summary="SUMMARY: parser half done", message_id="s1")
    thread = coding_thread([30_000, 31_000, 32_000, 8_000, 9_000], compactions=[c])
    run = replay(thread, preset("as-recorded"))
    # index 5 is the third call (a2): it was sent the summary alone, the fourth the summary and what followed
    before, at, after = run.steps[1], run.steps[2], run.steps[3]
    assert [m.id for m in before.view] == ["h0", "a0", "t0"]
    assert [m.id for m in at.view] == ["s1"]  # never the full history
    assert [m.id for m in after.view] == ["s1", "a2", "t2"]
    assert at.view[0].content == "SUMMARY: parser half done"
    assert at.view_by_category["summary"] > 0
    [event] = [e for e in run.events if e.layer == "recorded"]
    assert (event.kind, event.step, event.payload["trigger"], event.payload["pre_tokens"]) == ("compaction", 2, "auto", 900)
    assert event.payload["removed_ids"] == ["h0", "a0", "t0", "a1", "t1"]
    assert event.payload["kept_ids"] == []


def test_a_recorded_replacement_keeps_the_messages_the_agent_kept_by_id() -> None:
    thread = coding_thread([30_000, 31_000, 32_000])
    first = thread.messages[0]
    c = RecordedCompaction(index=4, summary="S", replacement=[first, HumanMessage("S", id="sum")])
    thread.compactions = [c]
    run = replay(thread, preset("as-recorded"))
    assert [m.id for m in run.steps[2].view] == ["h0", "sum", "t1"]
    assert run.steps[2].view[0] is first


def test_a_recorded_edit_clears_old_tool_results_from_its_index_on() -> None:
    edit = RecordedEdit(index=5, tool_call_ids=["c0", "c1"], placeholder="[Old tool result content cleared]")
    thread = coding_thread([30_000, 31_000, 29_000, 30_000], edits=[edit])
    run = replay(thread, preset("as-recorded"))
    assert run.steps[1].view[2].content.startswith("line 0")
    cleared = run.steps[2].view
    assert [m.content for m in cleared if isinstance(m, ToolMessage)][:2] == ["[Old tool result content cleared]"] * 2
    assert [m.id for m in cleared] == ["h0", "a0", "t0", "a1", "t1"]
    [event] = [e for e in run.events if e.kind == "edit"]
    assert (event.step, event.payload["cleared_ids"]) == (2, ["t0", "t1"])
    assert event.tokens_after < event.tokens_before


# -- calibration ---------------------------------------------------------------------------------------
def test_calibrated_view_equals_the_recorded_input_at_every_recorded_step() -> None:
    thread = coding_thread([26_000, 27_500, 29_900, 30_100, 34_000])
    run = replay(thread, preset("as-recorded"))
    assert [s.view_tokens for s in run.steps[:5]] == [26_000, 27_500, 29_900, 30_100, 34_000]
    assert run.recorded_deviation() == 0
    first = run.steps[0]
    # the first call's gap is the agent's own prompt and tools, sent with every request
    assert first.view_by_category[AGENT_PROMPT] == 26_000 - COUNTER.count_message(thread.messages[0]) - 0
    assert all(s.view_by_category[AGENT_PROMPT] == first.view_by_category[AGENT_PROMPT] for s in run.steps)


def test_a_residual_belongs_to_the_messages_that_brought_it() -> None:
    thread = coding_thread([26_000, 27_500, 29_900])
    cal = calibrate(thread, COUNTER)
    assert cal is not None
    # two intervals of a few hundred tokens are too little to fit a tokenizer on: ratio 1
    assert not cal.fit.fitted and cal.ratio == 1.0 and cal.fit.reason == "2 growth intervals of 482 tokens is too little to fit on"
    a0, t0 = thread.messages[1], thread.messages[2]
    counted = COUNTER.count_message(a0) + COUNTER.count_message(t0)
    # each message costs up to LOCAL_CAP times its count; the rest is unexplained, carried by them
    unexplained = 27_500 - 26_000 - round(LOCAL_CAP * counted)
    assert cal.hidden_of(a0)[UNEXPLAINED] + cal.hidden_of(t0)[UNEXPLAINED] == unexplained
    assert cal.hidden_of(t0)[UNEXPLAINED] > cal.hidden_of(a0)[UNEXPLAINED]
    assert cal.totals[id(a0)] + cal.totals[id(t0)] == 1_500  # shared by counted tokens, adding up exactly
    assert [f.growth for f in cal.steps] == [26_000 - cal.prompt_tokens, 1_500, 2_400]


def test_a_what_if_that_drops_a_message_drops_its_hidden_tokens() -> None:
    thread = coding_thread([26_000, 40_000, 41_000, 42_000])  # t0 brought ~14k tokens we cannot see
    baseline = replay(thread, preset("as-recorded"))
    cal = baseline.calibration
    t0 = thread.messages[2]
    assert sum(cal.hidden_of(t0).values()) > 10_000
    # a compaction at 35k tokens drops t0, and with it its hidden tokens
    whatif = replay(thread, preset("claude-code").with_overrides(["compaction.trigger=tokens:35000"]))
    assert compaction_steps(whatif) == [1]  # step 1 was sent 40,000: over the trigger, so it compacts first
    after = whatif.steps[1]
    assert t0 not in list(after.view)
    assert after.view_tokens < 26_000 + 5_000


def test_threads_without_recorded_usage_are_estimates() -> None:
    thread = coding_thread([30_000])
    thread.usage = {}
    run = replay(thread, preset("as-recorded"))
    assert run.calibration is None and run.totals()["calibrated"] is False
    assert run.to_report(include_views=False)["steps"][0]["counts"] == "estimated"
    assert AGENT_PROMPT not in run.steps[0].view_by_category
    assert default_preset_name(thread) == "deepagents"
    assert default_preset_name(coding_thread([30_000])) == "as-recorded"


def test_nothing_of_ours_is_added_to_an_imported_thread() -> None:
    thread = coding_thread([26_000, 27_000])
    for name in ("as-recorded", "deepagents"):
        run = replay(thread, preset(name))
        assert run.steps[0].system is None, name  # no generic system prompt: the agent's is measured
        assert "system" not in run.steps[0].view_by_category, name
    assert not [e for e in replay(thread, preset("as-recorded")).events if e.layer == "input_context"]


# -- the provider's thinking rule ----------------------------------------------------------------------
def thinking_thread(model: str) -> Thread:
    think = [{"type": "thinking", "thinking": "long deliberation " * 200, "signature": "x"},
             {"type": "text", "text": "Reading it."}]
    messages: list[BaseMessage] = [
        HumanMessage("first task", id="h0"),
        AIMessage(think, tool_calls=[call("c0")], id="a0"),
        ToolMessage("content", tool_call_id="c0", name="Read", id="t0"),
        AIMessage([*think[:1], {"type": "text", "text": "Done."}], id="a1"),
        HumanMessage("second task", id="h1"),
        AIMessage("ok", id="a2"),
    ]
    return Thread("think", messages, source_format="claude_code", model=model, max_input_tokens=200_000)


def test_models_before_opus_4_5_see_only_the_current_turns_thinking() -> None:
    assert keeps_all_thinking("claude-opus-4-6") and keeps_all_thinking("claude-opus-4-5-20251101")
    assert not keeps_all_thinking("claude-sonnet-4-5-20250929") and not keeps_all_thinking("claude-haiku-4-5")
    assert keeps_all_thinking("gpt-4o")  # no rule for other providers: the transcript as recorded
    old = replay(thinking_thread("claude-sonnet-4-5-20250929"), preset("as-recorded"))
    new = replay(thinking_thread("claude-opus-4-6"), preset("as-recorded"))
    # within the first turn, the tool loop's thinking is kept by both
    assert old.steps[1].view_tokens == new.steps[1].view_tokens
    # once the second turn starts, the older model no longer sees the first turn's thinking
    stripped = old.steps[2].view
    assert all("thinking" not in str(m.content) for m in stripped if isinstance(m, AIMessage))
    assert old.steps[2].view_tokens < new.steps[2].view_tokens - 1_000
    forced = replay(thinking_thread("claude-opus-4-6"), preset("as-recorded").with_overrides(["model.thinking=last_turn"]))
    assert forced.steps[2].view_tokens == old.steps[2].view_tokens


def test_the_history_rewrites_are_made_once() -> None:
    thread = thinking_thread("claude-sonnet-4-5")
    history = RecordedHistory(thread)
    first = history.provider_view(thread.messages[:5])
    again = history.provider_view(thread.messages[:6])
    assert first[1] is again[1] and first[1] is not thread.messages[1]


# -- windows ---------------------------------------------------------------------------------------------
def test_model_windows_come_from_the_table() -> None:
    assert model_window("gpt-4o-2024-08-06") == 128_000
    assert model_window("openai:gpt-4o-mini") == 128_000
    assert model_window("claude-sonnet-4-5-20250929") == 200_000
    assert model_window("claude-opus-4-6") == 1_000_000
    assert model_window("claude-opus-4-6", agent="claude_code") == 200_000
    assert model_window("claude-opus-4-6[1m]", agent="claude_code") == 1_000_000
    assert model_window("gemini-2.5-pro") == 1_048_576
    assert model_window("not-a-model") is None and model_window(None) is None
    assert model_limits("claude-opus-4-1-20250805").max_output_tokens == 32_000
    # open models the shared traces name (Inspect's ollama/gemma3, any-agent's mistral-small-latest)
    assert model_window("ollama/gemma3") == 128_000 and model_window("gemma3:1b") == 32_000
    assert model_window("google/gemma-3-27b-it") == 128_000 and model_window("gemma-3-1b-it") == 32_000
    assert model_window("mistral/mistral-small-latest") == 128_000
    assert model_window("mistral-small-2402") == 32_000 and model_window("mistral-small-2506") == 128_000


def test_a_default_window_is_never_silent(tmp_path: Path) -> None:
    def chat(model: str | None) -> Thread:
        path = tmp_path / "chat.json"
        head = f'"model": "{model}", ' if model else ""
        path.write_text('{' + head + '"messages": [{"role": "user", "content": "hi"},'
                        ' {"role": "assistant", "content": "hello"}]}', encoding="utf-8")
        return load_thread(path)

    table, unknown, unnamed = chat("gpt-4o-mini"), chat("acme-llm-7"), chat(None)
    assert preset("langchain").window_origin(table) == \
        "the model table's window for gpt-4o-mini (engine/data/models.yaml)"
    run = replay(unknown)
    assert run.window_tokens == 200_000
    assert run.totals()["window_origin"].startswith("a default: acme-llm-7 is not in the model table")
    assert preset("langchain").window_origin(unnamed).startswith("a default: the thread names no model")
    recorded = Thread(thread_id="t", messages=[HumanMessage("hi", id="h")], max_input_tokens=50_000)
    assert preset("langchain").window_origin(recorded) == "recorded in the thread"
    configured = preset("langchain").with_overrides(["model.max_input_tokens=64000"])
    assert configured.window_origin(recorded) == "set in the settings (model.max_input_tokens)"


def test_an_imported_thread_gets_its_models_window(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text('{"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"},'
                    ' {"role": "assistant", "content": "hello"}]}', encoding="utf-8")
    thread = load_thread(path)
    assert (thread.max_input_tokens, thread.extra.get("window_source")) == (128_000, "model table")
    assert replay(thread).window_tokens == 128_000


# -- Claude Code's policy --------------------------------------------------------------------------------
def test_claude_code_threshold_is_the_effective_window_minus_its_buffer() -> None:
    assert autocompact_threshold(200_000, 64_000) == 167_000
    assert autocompact_threshold(200_000, 8_192) == 200_000 - 8_192 - 13_000
    assert autocompact_threshold(1_000_000, 128_000) == 967_000
    pct = preset("claude-code").with_overrides(["compaction.trigger=fraction:0.5"]).compaction.trigger
    assert autocompact_threshold(200_000, 64_000, pct) == 90_000  # a percentage of the effective window
    higher = preset("claude-code").with_overrides(["compaction.trigger=tokens:190000"]).compaction.trigger
    assert autocompact_threshold(200_000, 64_000, higher) == 167_000  # the override can only lower it


def test_claude_code_rebuilds_from_a_summary_and_the_recent_files() -> None:
    thread = coding_thread([26_000, 100_000, 170_000, 30_000])
    run = replay(thread, preset("claude-code"))
    assert compaction_steps(run) == [2]
    view = run.steps[2].view
    assert view[0].content.startswith("This session is being continued from a previous conversation")
    restored = [m for m in view if m.additional_kwargs.get("ctxi_restored_file")]
    assert [m.additional_kwargs["ctxi_restored_file"] for m in restored] == ["/c1.py", "/c0.py"]
    assert run.steps[2].view_tokens < 40_000


CLAUDE_SESSIONS = ["4d5611e5-241a-462a-8d15-5122611a9569", "fa812bfe-b295-4cca-9c2f-fdf01028cb46"]
CLAUDE_FILES = [*(f"{s}.jsonl" for s in CLAUDE_SESSIONS), "short.jsonl", "subagent.jsonl", "tool_heavy.jsonl",
                *(str(p.relative_to(TRACES / "claude-code")) for s in CLAUDE_SESSIONS
                  for p in sorted((TRACES / "claude-code" / s / "subagents").glob("*.jsonl"))
                  if (TRACES / "claude-code" / s).is_dir())]


@pytest.mark.parametrize("name", CLAUDE_FILES)
def test_as_recorded_matches_recorded_input_on_real_claude_code_sessions(name: str) -> None:
    thread = load_thread(trace_path("claude-code", name))
    run = replay(thread, preset("as-recorded"))
    recorded = [s for s in run.steps if s.recorded_input_tokens]
    assert recorded
    for s in recorded:  # within 3 % at every step with recorded usage, before and after compactions
        assert abs(s.view_tokens - s.recorded_input_tokens) <= 0.03 * s.recorded_input_tokens, (name, s.index)
    assert run.peak_view_tokens() == max(s.recorded_input_tokens for s in recorded)


@pytest.mark.parametrize("session", CLAUDE_SESSIONS)
def test_claude_code_preset_compacts_where_the_session_did(session: str) -> None:
    thread = load_thread(trace_path("claude-code", f"{session}.jsonl"))
    baseline = replay(thread, preset("as-recorded"))
    whatif = replay(thread, preset("claude-code"))
    [recorded] = compaction_steps(baseline)
    assert abs(compaction_steps(whatif)[0] - recorded) <= 3
    comparison = against_baseline(whatif, baseline)
    assert comparison.baseline_compactions == [recorded]
    lower = against_baseline(replay(thread, preset("claude-code").with_overrides(["compaction.trigger=fraction:0.6"])),
                             baseline)
    assert lower.compactions[0] < recorded and lower.peak_tokens < baseline.peak_view_tokens()
    assert lower.headline.startswith(f"With these settings you would have compacted {recorded - lower.compactions[0]} steps earlier")


def test_the_unrecorded_categories_are_in_the_replay_report() -> None:
    thread = coding_thread([26_000, 27_500])
    report = replay(thread, preset("as-recorded")).to_report(include_views=False)
    step = report["steps"][1]
    assert (step["view_tokens"], step["recorded_input_tokens"], step["counts"]) == (27_500, 27_500, "calibrated")
    assert step["view_by_category"][AGENT_PROMPT] == report["totals"]["agent_prompt_tokens"]
    assert step["view_by_category"][UNEXPLAINED] == report["totals"]["unexplained_tokens"] > 0
    assert sum(step["view_by_category"].values()) == 27_500
    assert report["totals"]["recorded_max_deviation"] == 0
    assert report["calibration"]["fit"]["fitted"] is False


def test_a_system_prompt_in_the_thread_is_counted_not_measured() -> None:
    thread = coding_thread([26_000, 27_000])
    thread.messages.insert(0, SystemMessage("You are Claude Code.", id="sys"))
    run = replay(thread, preset("as-recorded"))
    system = run.steps[0].view_by_category["system"]
    assert system == COUNTER.count_message(SystemMessage("You are Claude Code.", id="system"))
    assert run.steps[0].view_tokens == 26_000


def test_a_claude_code_session_past_200k_ran_the_1m_window(tmp_path: Path) -> None:
    import json

    def rec(kind: str, uuid: str, parent: str | None, message: dict[str, object]) -> dict[str, object]:
        return {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s1", "isSidechain": False,
                "timestamp": "2026-01-01T00:00:00Z", "message": message}

    def session(total: int) -> Path:
        lines = [rec("user", "u1", None, {"role": "user", "content": "go"}),
                 rec("assistant", "a1", "u1", {"id": "m1", "role": "assistant", "model": "claude-opus-4-6",
                                               "content": [{"type": "text", "text": "ok"}],
                                               "usage": {"input_tokens": 3, "cache_read_input_tokens": total - 3,
                                                         "output_tokens": 1}})]
        path = tmp_path / f"s{total}.jsonl"
        path.write_text("\n".join(json.dumps(r) for r in lines), encoding="utf-8")
        return path

    assert load_thread(session(150_000)).max_input_tokens == 200_000
    big = load_thread(session(420_000))
    assert big.max_input_tokens == 1_000_000
    assert "above Claude Code's default 200,000" in big.extra["window_source"]


def test_an_overcounted_prompt_lowers_our_tool_count_instead_of_going_negative() -> None:
    thread = coding_thread([30_000, 31_000])
    thread.tools = [{"name": f"tool{k}", "description": "does a thing " * 40, "parameters": {"type": "object"}}
                    for k in range(20)]
    counted_tools = COUNTER.count_tools(thread.tools)
    first = COUNTER.count_message(thread.messages[0])
    billed = first + counted_tools // 2  # the provider billed half of what we count for the schemas
    thread.usage["a0"] = usage(billed)
    run = replay(thread, preset("as-recorded"))
    step = run.steps[0]
    assert step.view_tokens == billed
    assert step.view_by_category["tools"] == counted_tools - (counted_tools - counted_tools // 2)
    assert AGENT_PROMPT not in step.view_by_category
    assert run.calibration.prompt_tokens == -(counted_tools - counted_tools // 2)
