"""Lessons as data: every lesson runs end to end and its "try this" changes what it says it changes."""

from __future__ import annotations

import pytest

from engine.base.errors import ConfigError
from engine.lessons.catalog import LESSONS, check_answer, default_choices, lesson, lesson_config, run_lesson

# lesson -> (a choice to try, watched events with the default settings, with the choice)
EFFECTS = {
    "overview": ({"model.max_input_tokens": "30000"}, 2, 3),
    "filesystem": ({"filesystem.tool_result_token_limit": "null"}, 4, 0),
    "subagents": ({"subagents.max_concurrent": "1"}, 8, 4),
    "summarization": ({"summarization.trigger": "fraction:0.25"}, 2, 16),
    "todo": ({"todo.enabled": "false"}, 8, 0),
    "dangling": ({"dangling.enabled": "false"}, 1, 0),
    "memory": ({"memory.enabled": "false"}, 1, 0),
    # Deep Agents counts ~4 characters a token, its own tools included: clearing (keep 3) leaves 4 summaries of 7
    "context-editing": ({"context_editing.enabled": "false"}, 4, 7),
    # Claude Code compacts the coding session twice, Cline trims it twice, OpenHands condenses it once
    "coding-agents": ({"compaction.policy": "openhands"}, 2, 1),
}


def test_an_overview_and_one_lesson_per_layer() -> None:
    assert [x.id for x in LESSONS] == list(EFFECTS)
    assert {x.layer for x in LESSONS} == {None, "filesystem", "subagents", "summarization", "todo", "dangling", "memory",
                                          "context_editing", "compaction"}
    for item in LESSONS:
        assert item.points and item.try_this and 0 <= item.check.answer < len(item.check.options)
        for control in item.try_this:
            assert control.default in control.options
            for value in control.options:  # every offered value is a valid config
                lesson_config(item, {control.key: value})


@pytest.mark.parametrize("lesson_id", list(EFFECTS))
def test_each_lesson_end_to_end(lesson_id: str) -> None:
    item = lesson(lesson_id)
    choice, before, after = EFFECTS[lesson_id]
    outcome = run_lesson(item, choice)
    assert outcome.watched == (before, after)
    key, value = next(iter(choice.items()))
    assert outcome.changed() == {key: (default_choices(item)[key], value)}
    assert check_answer(item, item.check.answer) and not check_answer(item, (item.check.answer + 1) % 3)


def test_default_choices_replay_once() -> None:
    outcome = run_lesson("summarization")
    assert outcome.tried is outcome.baseline and outcome.changed() == {}


def test_unknown_lesson_and_unoffered_settings() -> None:
    with pytest.raises(ConfigError, match="unknown lesson 'nope'"):
        lesson("nope")
    with pytest.raises(ConfigError, match="does not offer"):
        lesson_config(lesson("todo"), {"summarization.keep": "messages:3"})
    with pytest.raises(ConfigError, match="is not offered"):
        lesson_config(lesson("todo"), {"todo.enabled": "maybe"})


def test_context_editing_lesson_clears_instead_of_summarizing() -> None:
    outcome = run_lesson("context-editing")
    events = {(e.layer, e.kind) for e in outcome.baseline.events}
    assert ("context_editing", "clear") in events
    assert [e.step for e in outcome.baseline.events if e.kind == "summarize"] == [29, 54, 55, 79]
    off = run_lesson("context-editing", {"context_editing.enabled": "false"}).tried
    assert [e.step for e in off.events if e.kind == "summarize"] == [4, 7, 29, 34, 54, 55, 79]
    # keeping 20 results instead of 3 lets the view reach the trigger as often as without clearing;
    # keeping 1 leaves two summaries
    assert run_lesson("context-editing", {"context_editing.keep": "20"}).watched == (4, 7)
    assert run_lesson("context-editing", {"context_editing.keep": "1"}).watched == (4, 2)


def test_coding_agents_lesson_compacts_where_each_policy_says() -> None:
    where = {}
    for name in ("claude-code", "codex", "gemini-cli", "cline", "openhands"):
        run = run_lesson("coding-agents", {"compaction.policy": name}).tried
        where[name] = [(e.step, e.kind) for e in run.events if e.layer == "compaction"]
    assert where == {
        "claude-code": [(29, "compact"), (52, "compact")],  # 64,000 - 20,000 - 13,000 = 31,000
        "codex": [(55, "compact")],  # 90 % of 64,000
        "gemini-cli": [(32, "compact"), (56, "compact")],  # the previous prompt past 32,000
        "cline": [(36, "trim"), (59, "trim")],  # maxAllowedSize 64k - 27k = 37,000; no summary
        "openhands": [(60, "compact")],  # more than 120 events
    }
