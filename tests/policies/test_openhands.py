"""OpenHands' LLMSummarizingCondenser rules (engine/policies/openhands.py)."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from engine import load_thread, preset, replay
from engine.base.errors import ConfigError
from engine.config.sections import CompactionConfig
from engine.config.sizes import ContextSize
from engine.policies.openhands import POLICY, events_of, forgotten, limits, view_size
from engine.run.whatif import compaction_steps
from engine.thread.kinds import message_kind
from tests.conftest import trace_path
from tests.policies.helpers import call, context


def test_events_are_tool_calls_messages_and_the_system_prompt() -> None:
    assert events_of(AIMessage("", tool_calls=[call("a"), call("b"), call("c")], id="x")) == 3
    assert events_of(AIMessage("hi", id="y")) == 1 and events_of(HumanMessage("u", id="z")) == 1
    assert view_size([HumanMessage("u", id="z")]) == 2
    assert limits(CompactionConfig()) == (120, None, 4)
    assert limits(CompactionConfig(trigger=ContextSize(type="messages", value=40), keep_first=2)) == (40, None, 2)
    with pytest.raises(ConfigError, match="keep_first must be less than max_size // 2"):
        limits(CompactionConfig(trigger=ContextSize(type="messages", value=10), keep_first=4))


def test_head_of_four_events_and_tail_of_fifty_five() -> None:
    history = [HumanMessage(f"m{i}", id=f"m{i}") for i in range(130)]
    assert view_size(history) == 131 and POLICY.should_compact(history, context())
    assert not POLICY.should_compact(history[:119], context())  # 120 events: not more than max_size
    gone = forgotten(history, 120, 4)
    assert sorted(gone) == list(range(3, 75))  # the system prompt and 3 messages kept; the last 55
    result = POLICY.rebuild(history, context())
    assert result.messages is not None
    assert [m.id for m in result.messages[:3]] == ["m0", "m1", "m2"] and message_kind(result.messages[3]) == "summary"
    assert view_size(result.messages) == 60 and str(result.messages[3].content).startswith("USER_CONTEXT:")


def test_an_llm_response_and_its_observations_are_forgotten_together() -> None:
    history = [HumanMessage("task", id="h"), HumanMessage("more", id="h2"),
               AIMessage("", tool_calls=[call("c0"), call("c1"), call("c2")], id="a"),  # events 3, 4, 5
               ToolMessage("r0", tool_call_id="c0", id="t0"), ToolMessage("r1", tool_call_id="c1", id="t1"),
               ToolMessage("r2", tool_call_id="c2", id="t2"),
               *[HumanMessage(f"m{i}", id=f"m{i}") for i in range(60)]]
    gone = forgotten(history, 120, 4)  # events [4, 67): the batch starts at event 3 but ends in it
    assert {2, 3, 4, 5} <= gone and 1 not in gone


def test_on_a_real_codex_session_fewer_events_condense_repeatedly() -> None:
    thread = load_thread(trace_path("codex", "vibecodingtracker-codex.jsonl"))
    assert compaction_steps(replay(thread, preset("openhands"))) == []
    run = replay(thread, preset("openhands").with_overrides(["compaction.trigger=messages:12"]))
    assert compaction_steps(run) == [5, 10, 14, 18]
    for step in compaction_steps(run):
        view = run.steps[step].view
        assert view_size(list(view)) <= 12 and any(message_kind(m) == "summary" for m in view)


def test_a_later_condensation_keeps_the_previous_summary() -> None:
    from engine.policies.openhands import openhands_summary, summary_sections

    text = openhands_summary("## SESSION INTENT\n- ship it\n\n## SUMMARY\n- wrote a.py\n\n## NEXT STEPS\n- [ ] test")
    assert summary_sections(text) == ("## SESSION INTENT\n- ship it\n\n## SUMMARY\n- wrote a.py\n\n"
                                      "## NEXT STEPS\n- [ ] test\n\n## ARTIFACTS\nNone")
    history = [HumanMessage("task", id="h0"), HumanMessage("more", id="h1"), HumanMessage("again", id="h2"),
               HumanMessage(text, id="s", additional_kwargs={"ctxi_kind": "summary"}),
               *[HumanMessage(f"m{i}", id=f"m{i}") for i in range(70)]]
    result = POLICY.rebuild(history, context())
    assert result.messages is not None and "- wrote a.py" in result.summary and "- ship it" in result.summary
