"""The `context_editing` layer and its rules: LangChain, Anthropic, Inspect, OpenCode, Claude Code."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from engine import load_thread, preset, replay
from engine.base.errors import ConfigError
from engine.config.schema import EngineConfig
from engine.config.sections import ContextEditingConfig
from engine.layers.base import LayerContext
from engine.layers.context_editing import ContextEditingLayer, idle_minutes
from engine.layers.context_editing_rules import (
    CLEARED_PLACEHOLDER,
    INSPECT_PLACEHOLDER,
    clear_thinking,
    clear_tool_uses_anthropic,
    clear_tool_uses_inspect,
    clear_tool_uses_langchain,
    cleared_result,
    microcompact_claude_code,
    prune_opencode,
    settings_for,
)
from engine.run.whatif import compaction_steps
from engine.thread.kinds import message_kind
from engine.thread.model import Thread
from engine.tokens.counters import ApproximateCounter
from tests.conftest import trace_path

COUNT = ApproximateCounter()


def call(cid: str, name: str = "read_file", **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args or {"path": f"/{cid}"}, "id": cid, "type": "tool_call"}


def loop(n: int, *, size: int = 400, names: tuple[str, ...] = ("read_file",)) -> list[BaseMessage]:
    """A human turn, then n AI messages each making one call, each answered with `size` chars."""
    msgs: list[BaseMessage] = [HumanMessage("fix the parser", id="h0")]
    for k in range(n):
        name = names[k % len(names)]
        msgs.append(AIMessage("", tool_calls=[call(f"c{k}", name)], id=f"a{k}"))
        msgs.append(ToolMessage("x" * size, tool_call_id=f"c{k}", name=name, id=f"t{k}"))
    return msgs


def cleared(messages: list[BaseMessage]) -> list[str]:
    return [str(m.id) for m in messages if isinstance(m, ToolMessage)
            and m.response_metadata.get("context_editing", {}).get("cleared")]


# -- LangChain ----------------------------------------------------------------------------------------
def test_langchain_trigger_is_strict() -> None:
    msgs = loop(5)
    total = COUNT(msgs)
    assert clear_tool_uses_langchain(msgs, count=COUNT, trigger=total).cleared_call_ids == []
    edit = clear_tool_uses_langchain(msgs, count=COUNT, trigger=total - 1)
    assert edit.cleared_call_ids == ["c0", "c1"]  # all but the last 3
    assert cleared(edit.messages) == ["t0", "t1"]
    first = edit.messages[2]
    assert (first.content, first.artifact, first.response_metadata["context_editing"]) == (
        "[cleared]", None, {"cleared": True, "strategy": "clear_tool_uses"})
    assert message_kind(first) == "stub"
    assert msgs[2].content == "x" * 400 and msgs[2] is not first  # the input is never mutated
    assert edit.messages[6] is msgs[6]  # untouched messages are the same objects


def test_langchain_keep_counts_every_result_and_exclusion_comes_after() -> None:
    msgs = loop(5, names=("read_file", "memory"))
    edit = clear_tool_uses_langchain(msgs, count=COUNT, trigger=1, keep=2, exclude_tools=("memory",))
    # candidates are t0..t2 (the last two results are kept whatever their tool); t1 is a memory result
    assert edit.cleared_call_ids == ["c0", "c2"]


def test_langchain_clear_at_least_stops_once_enough_was_reclaimed() -> None:
    msgs = loop(6)
    assert isinstance(msgs[2], ToolMessage)
    saved_one = COUNT.count_message(msgs[2]) - COUNT.count_message(cleared_result(msgs[2], "[cleared]", "x"))
    edit = clear_tool_uses_langchain(msgs, count=COUNT, trigger=1, keep=1, clear_at_least=saved_one + 1)
    assert edit.cleared_call_ids == ["c0", "c1"]


def test_langchain_clear_tool_inputs_records_the_ids() -> None:
    msgs = loop(3)
    edit = clear_tool_uses_langchain(msgs, count=COUNT, trigger=1, keep=1, clear_tool_inputs=True)
    ai = edit.messages[1]
    assert isinstance(ai, AIMessage)
    assert ai.tool_calls[0]["args"] == {}
    assert ai.response_metadata["context_editing"] == {"cleared_tool_inputs": ["c0"]}
    assert isinstance(msgs[1], AIMessage) and msgs[1].tool_calls[0]["args"] == {"path": "/c0"}


def test_langchain_skips_results_the_nearest_ai_message_does_not_own() -> None:
    msgs: list[BaseMessage] = [HumanMessage("go", id="h"), AIMessage("", tool_calls=[call("c0")], id="a0"),
                               AIMessage("thinking aloud", id="a1"),
                               ToolMessage("y" * 300, tool_call_id="c0", name="read_file", id="t0"),
                               AIMessage("", tool_calls=[call("c1")], id="a2"),
                               ToolMessage("y" * 300, tool_call_id="c1", name="read_file", id="t1")]
    assert clear_tool_uses_langchain(msgs, count=COUNT, trigger=1, keep=0).cleared_call_ids == ["c1"]


# -- Anthropic ------------------------------------------------------------------------------------------
def test_anthropic_clear_at_least_is_all_or_nothing() -> None:
    msgs = loop(5)
    assert isinstance(msgs[2], ToolMessage)
    one = COUNT.count_message(msgs[2]) - COUNT.count_message(cleared_result(msgs[2], "[cleared]", "x"))
    ok = clear_tool_uses_anthropic(msgs, input_tokens=10**6, count=COUNT, trigger=100, keep=3, clear_at_least=2 * one)
    assert ok.cleared_call_ids == ["c0", "c1"]
    short = clear_tool_uses_anthropic(msgs, input_tokens=10**6, count=COUNT, trigger=100, keep=3,
                                      clear_at_least=2 * one + 1)
    assert short.cleared_call_ids == [] and short.messages == msgs
    assert clear_tool_uses_anthropic(msgs, input_tokens=100, count=COUNT, trigger=100).cleared_call_ids == []


def test_anthropic_excluded_tools_do_not_count_toward_keep_and_inputs_by_name() -> None:
    msgs = loop(5, names=("read_file", "memory"))
    edit = clear_tool_uses_anthropic(msgs, input_tokens=10**6, count=COUNT, trigger=1, keep=1,
                                     exclude_tools=("memory",), clear_tool_inputs=("read_file",))
    assert edit.cleared_call_ids == ["c0", "c2"] and edit.cleared_input_ids == ["c0", "c2"]


def thinking_turns() -> list[BaseMessage]:
    think = [{"type": "thinking", "thinking": "hmm " * 50, "signature": "s"}, {"type": "text", "text": "ok"}]
    return [HumanMessage("one", id="h0"), AIMessage(list(think), tool_calls=[call("c0")], id="a0"),
            ToolMessage("r", tool_call_id="c0", id="t0"), AIMessage(list(think), id="a1"),
            HumanMessage("two", id="h1"), AIMessage(list(think), id="a2"),
            HumanMessage("three", id="h2"), AIMessage(list(think), id="a3")]


def test_clear_thinking_counts_assistant_turns_or_messages() -> None:
    msgs = thinking_turns()
    assert clear_thinking(msgs, keep=1).cleared_thinking_ids == ["a0", "a1", "a2"]
    assert clear_thinking(msgs, keep=2).cleared_thinking_ids == ["a0", "a1"]  # turn one has two messages
    assert clear_thinking(msgs, keep=3, per_message=True).cleared_thinking_ids == ["a0"]  # Inspect's count
    assert clear_thinking(msgs, keep="all").cleared_thinking_ids == []


# -- Inspect ------------------------------------------------------------------------------------------
def test_inspect_excludes_first_then_keeps_and_can_remove_the_pair() -> None:
    msgs = loop(5, names=("read_file", "memory"))
    edit = clear_tool_uses_inspect(msgs, keep_tool_uses=1, exclude_tools=("memory",))
    assert edit.cleared_call_ids == ["c0", "c2"]
    assert edit.messages[2].content == INSPECT_PLACEHOLDER
    removed = clear_tool_uses_inspect(msgs, keep_tool_uses=1, keep_tool_inputs=False, exclude_tools=("memory",))
    assert [m.id for m in removed.messages] == ["h0", "a0", "a1", "t1", "a2", "a3", "t3", "a4", "t4"]
    a0 = removed.messages[1]
    assert isinstance(a0, AIMessage) and a0.tool_calls == []
    assert a0.content == [{"type": "text", "text": "[Tool call: read_file (parameters and results removed from history)]"}]
    assert clear_tool_uses_inspect(loop(3), keep_tool_uses=3).cleared_call_ids == []


# -- OpenCode -------------------------------------------------------------------------------------------
def turns(sizes: list[int]) -> list[BaseMessage]:
    """One user turn per result size (chars), each: human, AI call, result, AI answer."""
    msgs: list[BaseMessage] = []
    for k, size in enumerate(sizes):
        msgs += [HumanMessage(f"task {k}", id=f"h{k}"), AIMessage("", tool_calls=[call(f"c{k}")], id=f"a{k}"),
                 ToolMessage("z" * size, tool_call_id=f"c{k}", name="read_file", id=f"t{k}"),
                 AIMessage("done", id=f"f{k}")]
    return msgs


def test_opencode_protects_40k_tokens_and_the_last_two_turns() -> None:
    # 4 chars a token: 100k-char results are 25k tokens each; the last two turns are never looked at
    msgs = turns([100_000] * 6)
    edit = prune_opencode(msgs)
    # walking back from t3: 25k, then t2 takes it to 50k > 40k, so t2, t1 and t0 are marked (75k > 20k)
    assert edit.cleared_call_ids == ["c0", "c1", "c2"]
    assert edit.messages[2].content == CLEARED_PLACEHOLDER
    assert prune_opencode(edit.messages).cleared_call_ids == []  # it stops at what it already pruned
    # what would be freed must exceed 20k tokens: t2 20k, t1 40k (not over), t0 marked with 20k (not over 20k)
    assert prune_opencode(turns([80_000, 80_000, 80_000, 4_000, 4_000])).cleared_call_ids == []


def test_opencode_skips_protected_tools() -> None:
    renamed = [m.model_copy(update={"name": "skill"}) if m.id == "t2" else m for m in turns([100_000] * 6)]
    assert prune_opencode(renamed).cleared_call_ids == ["c0", "c1"]  # t3 25k, t1 50k: t1 and t0 marked


def test_opencode_style_prunes_the_finished_turns_when_a_new_one_starts() -> None:
    thread = Thread("t", [*turns([100_000] * 6), HumanMessage("next", id="hn"), AIMessage("ok", id="end")],
                    max_input_tokens=1_000_000)
    run = replay(thread, editing("opencode"))
    events = [e for e in run.events if e.layer == "context_editing"]
    # each new turn prunes what fell behind the protected 40k (turn 4: t0; turn 5: t1; the new turn: t2)
    assert [(e.step, e.payload["tool_call_ids"]) for e in events] == [(8, ["c0"]), (10, ["c1"]), (12, ["c2"])]


# -- Claude Code --------------------------------------------------------------------------------------
def test_microcompact_keeps_the_last_five_compactable_results() -> None:
    msgs = loop(8, names=("Read", "Bash", "TodoWrite", "Grep"))
    edit = microcompact_claude_code(msgs)
    # compactable: c0 c1 c3 c4 c5 c7 (TodoWrite is not); the last five are kept
    assert edit.cleared_call_ids == ["c0"]
    assert edit.messages[2].content == "[Old tool result content cleared]"
    assert microcompact_claude_code(edit.messages).cleared_call_ids == []


def test_idle_gap_is_measured_from_the_last_assistant_message() -> None:
    msgs = loop(1) + [HumanMessage("back", id="h1")]
    stamps = {"a0": "2026-01-01T10:00:00Z", "t0": "2026-01-01T10:00:02Z", "h1": "2026-01-01T11:30:00.000Z"}
    assert idle_minutes(msgs, stamps) == 90.0
    assert idle_minutes(msgs[:-1], stamps) == pytest.approx(2 / 60)
    assert idle_minutes(msgs, {}) is None


def test_style_defaults_fill_what_the_config_leaves_null() -> None:
    lc = settings_for(ContextEditingConfig())
    assert (lc.trigger, lc.keep, lc.clear_at_least, lc.placeholder) == (("tokens", 100_000), 3, 0, "[cleared]")
    cc = settings_for(ContextEditingConfig(style="claude-code"))
    assert (cc.trigger, cc.idle_minutes, cc.keep, cc.placeholder) == (None, 60.0, 5, CLEARED_PLACEHOLDER)
    oc = settings_for(ContextEditingConfig(style="opencode", keep_tokens=1000))
    assert (oc.keep_tokens, oc.clear_at_least, oc.exclude_tools) == (1000, 20_000, ("skill",))
    ins = settings_for(ContextEditingConfig(style="inspect"))
    assert (ins.trigger, ins.placeholder, ins.keep_thinking_turns) == (("fraction", 0.9), INSPECT_PLACEHOLDER, 1)
    with pytest.raises(ConfigError, match="triggers on tokens"):
        EngineConfig().with_overrides(["context_editing.trigger=messages:10"])


# -- the layer in a replay ----------------------------------------------------------------------------
def editing(style: str, *sets: str) -> EngineConfig:
    return preset("langchain").with_overrides(["order=[context_editing]", f"context_editing.style={style}",
                                               "tokens.counter=approximate", *sets])


def test_request_only_styles_leave_the_state_and_report_each_clearing_once() -> None:
    thread = Thread("t", [*loop(8, size=2000), AIMessage("done", id="end")], max_input_tokens=100_000)
    run = replay(thread, editing("langchain", "context_editing.trigger=tokens:2000"))
    events = [e for e in run.events if e.layer == "context_editing"]
    assert [(e.step, e.payload["newly_cleared"]) for e in events] == [
        (4, ["c0"]), (5, ["c1"]), (6, ["c2"]), (7, ["c3"]), (8, ["c4"])]
    last = run.steps[-1]
    assert cleared(list(last.view)) == ["t0", "t1", "t2", "t3", "t4"]
    assert cleared(list(last.state)) == []  # state mode untouched
    assert events[0].payload["cleared_ids"] == ["t0"] and events[0].tokens_after < events[0].tokens_before
    # the same cleared copy is sent at every later step
    assert run.steps[6].view[2] is run.steps[8].view[2]


def test_state_styles_edit_the_history_once() -> None:
    thread = Thread("t", [*loop(8, size=2000, names=("Read",)), HumanMessage("later", id="h1"),
                          AIMessage("ok", id="end")], max_input_tokens=100_000,
                    timestamps={"a7": "2026-01-01T10:00:00Z", "h1": "2026-01-01T12:00:00Z"})
    run = replay(thread, editing("claude-code"))
    [event] = [e for e in run.events if e.layer == "context_editing"]
    assert (event.step, event.payload["tool_call_ids"], event.payload["idle_minutes"]) == (8, ["c0", "c1", "c2"], 120.0)
    assert cleared(list(run.steps[8].state)) == ["t0", "t1", "t2"]


def test_claude_code_preset_ships_microcompact_off_and_it_fires_after_the_long_gap() -> None:
    cfg = preset("claude-code")
    assert cfg.order == ("context_editing", "compaction") and cfg.context_editing.enabled is False
    thread = load_thread(trace_path("claude-code", "4d5611e5-241a-462a-8d15-5122611a9569.jsonl"))
    on = replay(thread, cfg.with_overrides(["context_editing.enabled=true"]))
    [mc] = [e for e in on.events if e.layer == "context_editing"]
    # a 251-minute pause before step 18: the results of all but the 5 newest compactable calls go
    compactable = [tc["id"] for m in thread.messages[:41] if isinstance(m, AIMessage) for tc in m.tool_calls
                   if tc["name"] in ("Read", "Bash", "Grep", "Glob", "WebSearch", "WebFetch", "Edit", "Write")]
    assert (mc.step, round(mc.payload["idle_minutes"]), mc.payload["tool_call_ids"]) == (18, 251, compactable[:-5])
    assert len(compactable) == 21
    assert mc.tokens_before - mc.tokens_after > 30_000
    # the session itself (Claude Code 2.1.39) did not microcompact: its compaction came at step 61,
    # which the preset (microcompact off) reproduces; with it on the compaction would come at step 96
    # (the cleared results' placeholders count in the provider's tokens: the session's fitted ratio, 1.12)
    assert compaction_steps(on)[0] == 96
    assert not thread.edits


def test_inside_create_agent_the_langchain_style_deep_copies_like_langchain() -> None:
    layer = ContextEditingLayer(LayerContext(counter=COUNT), trigger="tokens:1", keep=0)
    msgs = loop(2)

    class Request:
        messages = msgs
        system_message = None
        tools: list[Any] = []

        def override(self, **kw: Any) -> Any:
            return kw["messages"]

    sent = layer._prepare(Request())  # type: ignore[arg-type]
    assert all(a is not b for a, b in zip(sent, msgs, strict=True))  # a deep copy, as ContextEditingMiddleware
    assert cleared(sent) == ["t0", "t1"] and cleared(msgs) == []
