"""Lessons as data: every lesson runs end to end and its "try this" changes what it says it changes."""

from __future__ import annotations

import pytest

from engine.errors import ConfigError
from engine.lessons import LESSONS, check_answer, default_choices, lesson, lesson_config, run_lesson

# lesson -> (a choice to try, watched events with the default settings, with the choice)
EFFECTS = {
    "overview": ({"model.max_input_tokens": "30000"}, 1, 2),
    "filesystem": ({"filesystem.tool_result_token_limit": "null"}, 4, 0),
    "subagents": ({"subagents.max_concurrent": "1"}, 8, 4),
    "summarization": ({"summarization.trigger": "fraction:0.25"}, 1, 9),
    "todo": ({"todo.enabled": "false"}, 6, 0),
    "dangling": ({"dangling.enabled": "false"}, 2, 0),
    "memory": ({"memory.enabled": "false"}, 1, 0),
}


def test_an_overview_and_one_lesson_per_layer() -> None:
    assert [x.id for x in LESSONS] == list(EFFECTS)
    assert {x.layer for x in LESSONS} == {None, "filesystem", "subagents", "summarization", "todo", "dangling", "memory"}
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
