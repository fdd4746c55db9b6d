"""Issue 31: every token in a named category, in the provider's tokens; hand-made threads per rule.

The tokenizer fit on 0, 1, 2 and many recorded calls; the agent prompt re-measured after a compaction that
removed first-turn content; thinking kept or dropped by the model's rule (Claude before Opus 4.5 keeps the
last turn's, Codex's reasoning leaves at a user message typed mid-turn, Gemini never sends thoughts back);
Codex's tool-output truncation; the unexplained rest never negative, never piled onto one message.
"""

from __future__ import annotations

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from engine.config.schema import preset
from engine.recorded.calibration import (
    AGENT_PROMPT,
    FIRST_TURN,
    LOCAL_CAP,
    RESTORED,
    THINKING,
    UNEXPLAINED,
    calibrate,
)
from engine.recorded.codex_rules import recorded_output_tokens, truncate_text
from engine.run.replay import replay
from engine.thread.model import RecordedCompaction, RecordedUsage, Thread
from engine.tokens.counters import counter_for_thread
from engine.views.decisions import crossing_mismatches, decision_series, run_lines
from engine.views.step import view_entries


def usage(total: int, reasoning: int | None = None) -> RecordedUsage:
    return RecordedUsage(input_tokens=total, output_tokens=10, reasoning_tokens=reasoning)


def call(cid: str, name: str = "Read") -> dict[str, object]:
    return {"name": name, "args": {"file_path": f"/src/{cid}.py"}, "id": cid, "type": "tool_call"}


def code(k: int, lines: int = 40) -> str:
    return "".join(f"def f{k}_{i}(x):\n    return x * {i} + {k}\n" for i in range(lines))


def growing(model: str, calls: int, *, ratio: float, prompt: int = 20_000, fmt: str = "claude_code",
            extra: dict[int, int] | None = None) -> Thread:
    """A human prompt, then `calls` model calls each reading a file; call k recorded exactly `prompt` plus
    `ratio` times our count of what it was sent (plus `extra[k]` tokens the transcript does not hold)."""
    messages: list[BaseMessage] = [HumanMessage("Refactor the parser module", id="h0")]
    for k in range(calls):
        messages.append(AIMessage(f"Reading part {k}.", tool_calls=[call(f"c{k}")], id=f"a{k}"))
        messages.append(ToolMessage(code(k), tool_call_id=f"c{k}", name="Read", id=f"t{k}"))
    messages.append(AIMessage("Done.", id="final"))
    thread = Thread("t", messages, source_format=fmt, model=model, max_input_tokens=200_000)
    counter = counter_for_thread(thread)
    sent = 0.0
    for k in range(calls):
        body = messages[: 1 + 2 * k]
        sent = prompt + ratio * sum(counter.count_message(m) for m in body) + sum((extra or {}).get(j, 0)
                                                                                for j in range(k + 1))
        thread.usage[f"a{k}"] = usage(round(sent))
    return thread


def views(thread: Thread) -> list[tuple[int, int | None]]:
    run = replay(thread, preset("as-recorded"))
    return [(s.view_tokens, s.recorded_input_tokens) for s in run.steps if s.recorded_input_tokens]


# -- the fit ----------------------------------------------------------------------------------------
def test_a_fit_on_many_calls_is_the_providers_ratio_and_says_so() -> None:
    thread = growing("claude-opus-4-6", 12, ratio=1.25)
    cal = calibrate(thread, counter_for_thread(thread))
    assert cal is not None and cal.fit.fitted and cal.fit.calls == 11
    assert abs(cal.ratio - 1.25) < 0.005
    assert cal.fit.statement() == (f"Claude tokenizer ≈ {cal.ratio:.2f} × o200k_base on this session, "
                                   "fitted on 11 calls")
    assert all(v == r for v, r in views(thread))


def test_a_fit_is_robust_to_calls_that_carried_hidden_content() -> None:
    # two calls sent a 2,000-token reminder the transcript does not hold: the median does not move
    thread = growing("claude-opus-4-6", 12, ratio=1.25, extra={4: 2_000, 8: 2_000})
    cal = calibrate(thread, counter_for_thread(thread))
    assert cal is not None and abs(cal.ratio - 1.25) < 0.005
    # what the ratio cannot explain is carried, as unexplained, by the messages those calls sent first
    counter = counter_for_thread(thread)
    a3, t3 = thread.messages[7], thread.messages[8]
    ours = counter.count_message(a3) + counter.count_message(t3)
    step = cal.steps[4]
    assert step.growth > LOCAL_CAP * cal.ratio * ours  # 2,000 more than a tokenizer explains
    assert step.unexplained == step.growth - round(LOCAL_CAP * cal.ratio * ours) > 0
    assert cal.hidden_of(a3).get(UNEXPLAINED, 0) + cal.hidden_of(t3).get(UNEXPLAINED, 0) == step.unexplained
    assert all(v == r for v, r in views(thread))


def test_one_recorded_call_fits_nothing() -> None:
    cal = calibrate(thread := growing("claude-opus-4-6", 1, ratio=1.25), counter_for_thread(thread))
    assert cal is not None and not cal.fit.fitted and cal.ratio == 1.0
    assert cal.fit.statement() == ("Counts in o200k_base tokens: Claude tokenizer not fitted "
                                   "(no growth between two recorded calls to fit it on)")


def test_two_recorded_calls_fit_on_their_one_growth_when_it_is_a_tokenizer() -> None:
    cal = calibrate(thread := growing("claude-opus-4-6", 2, ratio=1.25), counter_for_thread(thread))
    assert cal is not None and cal.fit.fitted and cal.fit.calls == 1 and abs(cal.ratio - 1.25) < 0.005
    # three times our count in one interval is content the transcript lacks, not a tokenizer
    cal = calibrate(thread := growing("claude-opus-4-6", 2, ratio=3.0), counter_for_thread(thread))
    assert cal is not None and not cal.fit.fitted and cal.ratio == 1.0
    assert cal.fit.reason == "3.00 from 1 interval is outside 0.7–1.5: content the transcript lacks, not a tokenizer"


def test_every_category_is_in_the_providers_tokens() -> None:
    thread = growing("claude-opus-4-6", 12, ratio=1.25)
    run = replay(thread, preset("as-recorded"))
    counter = counter_for_thread(thread)
    t0 = thread.messages[2]
    # a tool result is drawn as what the provider charged for it, not as our count
    entry = next(e for e in view_entries(run.steps[5], run.counter) if e.id == "t0")
    assert abs(entry.tokens - 1.25 * counter.count_message(t0)) <= 1


# -- the agent prompt and the first turn ------------------------------------------------------------------
def compaction_thread() -> tuple[Thread, int, int]:
    """Ten calls over a 15,000-token prompt; the first prompt also carried 5,000 tokens of CLAUDE.md the JSONL
    lacks; a recorded compaction before call 8 leaves the summary (plus nothing re-attached)."""
    thread = growing("claude-opus-4-6", 10, ratio=1.0, prompt=20_000)
    summary = "Summary: the parser's first half is refactored; next, the lexer."
    thread.compactions = [RecordedCompaction(index=2 * 8 + 1, trigger="auto", pre_tokens=30_000, summary=summary,
                                             message_id="sum")]
    counter = counter_for_thread(thread)
    count = counter.count_message(HumanMessage(summary, id="sum"))
    thread.usage["a8"] = usage(15_000 + count)
    thread.usage["a9"] = usage(15_000 + count + sum(counter.count_message(m) for m in thread.messages[17:19]))
    return thread, 15_000, 5_000


def test_a_compaction_that_removed_first_turn_content_measures_the_prompt_again() -> None:
    """Issue 31: step 0 recorded 50,999 and the request right after a compaction was 36,541 while the
    unrecorded prompt alone was kept at 50,839: +39 %, and a negative residual at every later step."""
    thread, prompt, first_turn = compaction_thread()
    cal = calibrate(thread, counter_for_thread(thread))
    assert cal is not None
    assert (cal.prompt_tokens, cal.first_turn_tokens) == (prompt, first_turn)
    assert cal.prompt_source == "the first recorded call after the compaction at step 8"
    run = replay(thread, preset("as-recorded"))
    assert all(s.view_tokens == s.recorded_input_tokens for s in run.steps if s.recorded_input_tokens)
    before, after = run.steps[3], run.steps[8]
    assert (before.view_by_category[AGENT_PROMPT], before.view_by_category[FIRST_TURN]) == (prompt, first_turn)
    assert after.view_by_category[AGENT_PROMPT] == prompt and FIRST_TURN not in after.view_by_category
    assert min(v for s in run.steps for v in s.view_by_category.values()) >= 0


def test_a_what_if_that_summarizes_the_first_turn_away_drops_its_context() -> None:
    thread, prompt, first_turn = compaction_thread()
    thread.compactions = []
    whatif = replay(thread, preset("claude-code").with_overrides(["compaction.trigger=tokens:21000"]))
    fired = [d.step for d in whatif.decisions if d.fired]
    assert fired and FIRST_TURN not in whatif.steps[fired[0]].view_by_category


def test_the_unrecorded_prompt_comes_from_the_anthropic_cache_prefix() -> None:
    thread = growing("claude-opus-4-6", 6, ratio=1.0, prompt=26_000)
    # later calls read 21,000 from the cache: where Claude Code's system prompt (and tools) end
    for k in range(1, 6):
        total = thread.usage[f"a{k}"].input_tokens or 0
        thread.usage[f"a{k}"] = RecordedUsage(input_tokens=3, cache_read_input_tokens=21_000,
                                              cache_creation_input_tokens=total - 21_003)
    cal = calibrate(thread, counter_for_thread(thread))
    assert cal is not None
    assert (cal.prompt_tokens, cal.first_turn_tokens, cal.prompt_source) == (21_000, 5_000, "the prompt cache's prefix")


def test_a_summary_shows_its_own_tokens_and_what_the_agent_reattached_apart() -> None:
    """Issue 31: a compaction summary shown as 17,527 tokens where the summary is 4,159."""
    thread, prompt, _ = compaction_thread()
    counter = counter_for_thread(thread)
    summary = counter.count_message(HumanMessage(thread.compactions[0].summary, id="sum"))
    thread.usage["a8"] = usage(prompt + summary + 13_000)  # Claude Code re-attached files and CLAUDE.md
    thread.usage["a9"] = usage(prompt + summary + 13_000 + sum(counter.count_message(m) for m in thread.messages[17:19]))
    # the cache says where the prompt ends (else 20,000 of prompt and 8,000 re-attached would fit as well)
    for k in range(1, 10):
        total = thread.usage[f"a{k}"].input_tokens or 0
        thread.usage[f"a{k}"] = RecordedUsage(input_tokens=3, cache_read_input_tokens=prompt,
                                              cache_creation_input_tokens=total - prompt - 3)
    run = replay(thread, preset("as-recorded"))
    entry = next(e for e in view_entries(run.steps[8], run.counter) if e.id == "sum")
    assert (entry.tokens, entry.hidden_by) == (summary, ((RESTORED, 13_000),))
    assert run.steps[8].view_tokens == run.steps[8].recorded_input_tokens


# -- thinking by the model's rule ---------------------------------------------------------------------------
def thinking_thread(model: str, hidden: int) -> Thread:
    """Turn 1: a call that thinks and reads, a call that thinks and answers; turn 2: a new prompt. The
    provider charged `hidden` tokens of thinking the transcript's summarized thinking does not show."""
    think = {"type": "thinking", "thinking": "Let me look at the lexer first. " * 20, "signature": "sig"}
    messages: list[BaseMessage] = [
        HumanMessage("first task", id="h0"),
        AIMessage([think, {"type": "text", "text": "Reading."}], tool_calls=[call("c0")], id="a0"),
        ToolMessage(code(0), tool_call_id="c0", name="Read", id="t0"),
        AIMessage([think, {"type": "text", "text": "Done."}], id="a1"),
        HumanMessage("second task", id="h1"),
        AIMessage("ok", id="a2"),
    ]
    thread = Thread("think", messages, source_format="claude_code", model=model, max_input_tokens=200_000)
    c = counter_for_thread(thread)
    n = {m.id: c.count_message(m) for m in messages}
    stripped = {m.id: c.count_message(AIMessage("Reading." if m.id == "a0" else "Done.", id=m.id,
                                                tool_calls=m.tool_calls)) for m in messages[1:4:2]}
    thread.usage = {"a0": usage(10_000 + n["h0"]),
                    "a1": usage(10_000 + n["h0"] + n["a0"] + hidden + n["t0"]),
                    "a2": usage(10_000 + n["h0"] + stripped["a0"] + n["t0"] + stripped["a1"] + n["h1"])}
    return thread


def test_last_turn_only_thinking_leaves_with_its_hidden_tokens() -> None:
    """Issue 31: Sonnet 4.5 drops earlier turns' thinking; the residual those messages carried stayed (+19.8 %)."""
    thread = thinking_thread("claude-sonnet-4-5-20250929", hidden=3_000)
    run = replay(thread, preset("as-recorded"))
    assert [s.view_tokens for s in run.steps] == [s.recorded_input_tokens for s in run.steps]
    assert run.steps[1].view_by_category[THINKING] > 3_000  # its text and what the provider charged beyond it
    assert THINKING not in run.steps[2].view_by_category  # the new turn: the first turn's thinking is gone
    assert UNEXPLAINED not in run.steps[2].view_by_category


def test_a_model_that_keeps_every_turns_thinking_keeps_it() -> None:
    thread = thinking_thread("claude-opus-4-6", hidden=3_000)
    kept = replay(thread, preset("as-recorded"))
    assert kept.steps[2].view_by_category[THINKING] > 0  # recorded as the older model's: the view says so
    forced = replay(thinking_thread("claude-opus-4-6", hidden=3_000),
                    preset("as-recorded").with_overrides(["model.thinking=last_turn"]))
    assert THINKING not in forced.steps[2].view_by_category


def test_gemini_never_sends_its_thoughts_back() -> None:
    thought = {"type": "reasoning", "reasoning": "**Planning**\nI will read the file. " * 10}
    messages: list[BaseMessage] = [HumanMessage("go", id="h0"),
                                   AIMessage([thought, {"type": "text", "text": "Reading."}], tool_calls=[call("c0")],
                                             id="a0"),
                                   ToolMessage(code(0), tool_call_id="c0", name="read_file", id="t0"),
                                   AIMessage("done", id="a1")]
    thread = Thread("g", messages, source_format="gemini_cli", model="gemini-3-flash-preview")
    run = replay(thread, preset("deepagents"))
    assert all(THINKING not in s.view_by_category for s in run.steps)
    assert "Planning" not in str(run.steps[1].view[1].content)


# -- Codex ------------------------------------------------------------------------------------------------
def codex_thread() -> tuple[Thread, list[int]]:
    """One Codex turn: two calls that reason (opaque, 2,000 and 1,500 reasoning tokens) and run a command, then
    the user types a follow-up while the turn runs, and a last call answers."""
    messages: list[BaseMessage] = [
        HumanMessage("<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>", id="env",
                     additional_kwargs={"codex_context": True}),
        HumanMessage("Fix the failing test", id="h0"),
        AIMessage("", tool_calls=[call("c0", "shell")], id="a0", additional_kwargs={"codex_encrypted_reasoning": 1}),
        ToolMessage(code(0), tool_call_id="c0", name="shell", id="t0"),
        AIMessage("", tool_calls=[call("c1", "shell")], id="a1", additional_kwargs={"codex_encrypted_reasoning": 1}),
        ToolMessage(code(1), tool_call_id="c1", name="shell", id="t1"),
        HumanMessage("also keep the old API", id="h1"),  # typed mid-turn: Codex records it as pending input
        AIMessage("Done, and the old API stays.", id="a2"),
    ]
    thread = Thread("codex", messages, source_format="codex", model="gpt-5-codex", max_input_tokens=258_400)
    c = counter_for_thread(thread)
    n = {m.id: c.count_message(m) for m in messages}
    stripped = {k: c.count_message(AIMessage("", tool_calls=messages[i].tool_calls, id=k))
                for k, i in (("a0", 2), ("a1", 4))}
    base = 9_000 + n["env"] + n["h0"]
    recorded = [base, base + n["a0"] + 2_000 + n["t0"],
                base + n["a0"] + 2_000 + n["t0"] + n["a1"] + 1_500 + n["t1"]]
    recorded.append(base + stripped["a0"] + n["t0"] + stripped["a1"] + n["t1"] + n["h1"])
    thread.usage = {"a0": usage(recorded[0], 2_000), "a1": usage(recorded[1], 1_500), "a2": usage(recorded[2], 0)}
    thread.usage["a2"] = usage(recorded[3], 0)
    return thread, recorded


def test_codex_reasoning_leaves_the_request_at_a_user_message_typed_mid_turn() -> None:
    """Issue 31: a Codex rollout's recorded input fell inside a turn with no compaction (23,414 -> 19,603)."""
    thread, recorded = codex_thread()
    # recorded[2] is what a2 would have been sent without the follow-up; a2 was sent recorded[3]
    assert recorded[3] < recorded[2]
    run = replay(thread, preset("as-recorded"))
    assert [s.view_tokens for s in run.steps] == [recorded[0], recorded[1], recorded[3]]
    assert run.steps[1].view_by_category[THINKING] == 2_000  # a0's reasoning, within the turn
    assert THINKING not in run.steps[2].view_by_category  # gone after the follow-up
    # the environment context is the agent's own context, not a turn boundary, and is named
    assert run.steps[0].view_by_category["reminders"] > 0


def test_codex_sends_a_long_tool_output_cut_as_it_records_it() -> None:
    big = "line of output from the test run\n" * 6_000  # ~200 kB: over 12,000 tokens by bytes / 4
    messages: list[BaseMessage] = [HumanMessage("run the tests", id="h0"),
                                   AIMessage("", tool_calls=[call("c0", "shell")], id="a0"),
                                   ToolMessage(big, tool_call_id="c0", name="shell", id="t0"),
                                   AIMessage("They pass.", id="a1")]
    thread = Thread("cut", messages, source_format="codex", model="gpt-5-codex")
    c = counter_for_thread(thread)
    cut = truncate_text(big, recorded_output_tokens())
    assert len(cut) < len(big) and "tokens truncated" in cut
    sent = c.count_message(ToolMessage(cut, tool_call_id="c0", name="shell", id="t0"))
    thread.usage = {"a0": usage(5_000 + c.count_message(messages[0])),
                    "a1": usage(5_000 + c.count_message(messages[0]) + c.count_message(messages[1]) + sent)}
    run = replay(thread, preset("as-recorded"))
    assert [s.view_tokens for s in run.steps] == [u.input_tokens for u in thread.usage.values()]
    [result] = [m for m in run.steps[1].view if isinstance(m, ToolMessage)]
    assert result.content == cut and result.additional_kwargs["ctxi_kind"] == "truncated"
    assert run.steps[1].raw_tokens > run.steps[1].view_tokens + 20_000  # the rollout kept the raw output


# -- never negative -----------------------------------------------------------------------------------------
def test_a_request_smaller_than_its_text_is_said_not_hidden_in_a_negative_category() -> None:
    """Issue 31: a negative "unrecorded in messages" reached the Step table as "−641 / −0.1 %"."""
    thread = growing("claude-opus-4-6", 6, ratio=1.0)
    thread.usage["a4"] = usage((thread.usage["a3"].input_tokens or 0) - 2_000)  # shrank with ~700 tokens of text new
    run = replay(thread, preset("as-recorded"))
    cal = run.calibration
    assert min(v for s in run.steps for v in s.view_by_category.values()) >= 0
    assert min(n for values in cal.values.values() for n in values.values()) >= 0
    assert cal.steps[4].shortfall > 0 and run.steps[4].view_tokens > run.steps[4].recorded_input_tokens
    assert cal.note() is not None and cal.note().startswith("At step 4 the recorded input is")
    # the next call absorbs it: the view meets the recorded input again
    assert run.steps[5].view_tokens == run.steps[5].recorded_input_tokens


# -- decisions and lines --------------------------------------------------------------------------------------
def test_a_policy_records_what_it_measured_against_what_and_why() -> None:
    thread = growing("claude-opus-4-6", 12, ratio=1.0, prompt=20_000)
    run = replay(thread, preset("claude-code").with_overrides(["compaction.trigger=tokens:23000"]))
    [first] = [d for d in run.decisions if d.fired][:1]
    before = run.decisions_at(first.step - 1)[0]
    assert (before.measured is not None and before.measured < 23_000 <= (first.measured or 0))
    assert first.text() == (f"claude-code compaction: the request (provider tokens, its prompt included) "
                            f"{first.measured:,} ≥ tokens:23000, below the default 167,000 = 23,000? yes → fired")
    report = run.to_report(include_views=False)
    [decision] = report["steps"][first.step]["decisions"]
    assert (decision["measured"], decision["threshold"], decision["reached"], decision["fired"]) == (
        first.measured, 23_000, True, True)
    series = decision_series(run)
    assert crossing_mismatches(series) == []
    [line] = [li for li in run_lines(run) if li.role == "trigger"]
    assert line.tokens == 23_000 and line.series == "view"


def test_a_clause_that_fires_below_the_drawn_line_says_why() -> None:
    thread = growing("claude-opus-4-6", 12, ratio=1.0, prompt=20_000)
    config = preset("deepagents").with_overrides(["summarization.trigger=fraction:0.9,messages:9",
                                                 "summarization.keep=messages:2"])
    run = replay(thread, config)
    fired = [d for d in run.decisions if d.fired]
    assert fired and fired[0].reached is False and fired[0].reason == "the clause messages:9 fired"
    assert crossing_mismatches(decision_series(run)) == []
    # a log that fires below its line and says nothing is what the check catches
    from dataclasses import replace

    run.decisions[:] = [replace(d, reason="") for d in run.decisions]
    run.derived.clear()
    assert crossing_mismatches(decision_series(run)) == [
        f"view summarization trigger: first reaches its line at step None, first fires at step {fired[0].step}, "
        "and no decision says why"]


def test_deep_agents_decides_on_the_request_the_recorded_agent_sent() -> None:
    """Issue 31: the framework presets decided over the transcript's messages only: the line at 0.85 was
    crossed on the chart and nothing fired; the agent's own prompt is part of the request Deep Agents counts."""
    thread = growing("claude-opus-4-6", 6, ratio=1.0, prompt=20_000)
    with_prompt = replay(thread, preset("deepagents"))
    without = replay(thread, preset("deepagents").with_overrides(["tokens.calibrate=false"]))
    gap = with_prompt.decisions[0].measured - without.decisions[0].measured  # type: ignore[operator]
    # the 20,000 provider tokens of prompt, in Deep Agents' chars/4 by the thread's own ratio of the two counts
    assert 20_000 * 0.5 < gap < 20_000 * 1.5
    assert "agent prompt included" in with_prompt.decisions[0].quantity
