"""Every setting of `EngineConfig`, given a value of the wrong kind, is refused in the project's words: the
message names the setting and says what it allows, never pydantic's own ("Input should be a valid
dictionary or instance of ContextSize", "Field required", "Tuple should have at least 1 item").

The walk covers every field of every section and of every list item (a memory fact, a price row, a skill,
a middleware), so a setting added later is checked without a line here."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from engine.base.errors import ConfigError
from engine.config.schema import EngineConfig
from engine.config.sections import MemoryFact, MiddlewareSpec, PriceOverride, SkillConfig
from engine.config.sizes import AllOf, ContextSize
from engine.config.validation import InvalidConfig, _leaf_types

# pydantic's own wording, as its messages read (https://docs.pydantic.dev/latest/errors/validation_errors/)
PYDANTIC_PHRASES = ("Input should", "valid dictionary", "instance of", "Value error", "Field required",
                    "Extra inputs", "Tuple should", "List should", "Dictionary should", "unable to parse",
                    "after validation", "[type=", "errors.pydantic.dev", "validation error", "Assertion failed",
                    "fractional part", "should have at least", "should have at most", "String should")

BAD_VALUES: tuple[Any, ...] = ("abc", "", [1, 2], ["x"], {"a": 1}, {}, -5, 0, 1.5, True, False, 10**23, None)
SIZE_VALUES: tuple[Any, ...] = (-5, 5, 0.5, 0, "tokens:abc", "messages:", "tokens", "banana:12", "fraction:2",
                                "tokens:0", "messages:1.5", "", None, {"type": "tokens"}, {"tokens": 5},
                                {"type": "tokens", "value": "x"}, {"type": "tokens", "value": 5, "x": 1},
                                ["tokens"], ["tokens", 1, 2], [1, 2], "all")
TRIGGER_VALUES: tuple[Any, ...] = ({"all": []}, {"all": "x"}, {"all": ["tokens:5", -1]}, [{"all": [{"type": "tokens"}]}],
                                   "tokens:5&banana:3", {"messages": 5, "x": 1}, [-5, "tokens:5"])

# a valid item of each list of mappings: the walk sets one field of it at a time
ITEMS: dict[type[BaseModel], dict[str, Any]] = {
    MemoryFact: {"content": "x"},
    PriceOverride: {"prefix": "gpt", "input": 1, "output": 2},
    SkillConfig: {"name": "s", "description": "d"},
    MiddlewareSpec: {"use": "pkg.mod:Cls"},
}


def _settings(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every setting under `model` as (dotted path, annotation), list items as `path.0.field`."""
    for name, field in model.model_fields.items():
        path = (*prefix, name)
        yield path, field.annotation
        for t in _leaf_types(field.annotation):
            if not (isinstance(t, type) and issubclass(t, BaseModel)) or t in (ContextSize, AllOf):
                continue
            yield from _settings(t, (*path, "0") if t in ITEMS else path)


def _document(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    """A config document with `value` at `path`; a list item is a valid item with that one field set."""
    node: Any = value
    for i in range(len(path) - 1, -1, -1):
        part = path[i]
        if part == "0":
            continue
        if i + 1 < len(path) and path[i + 1] == "0":  # `path[i]` is a list: its one item holds `node`
            item_model = _item_model(path[: i + 1])
            node = [{**ITEMS[item_model], **node}]
        node = {part: node}
    return node


def _item_model(path: tuple[str, ...]) -> type[BaseModel]:
    model: type[BaseModel] = EngineConfig
    for part in path:
        if part == "0":
            continue
        leaves = [t for t in _leaf_types(model.model_fields[part].annotation) if isinstance(t, type)
                  and issubclass(t, BaseModel)]
        model = leaves[0]
    return model


def _cases() -> Iterator[Any]:
    for path, annotation in _settings(EngineConfig):
        leaves = _leaf_types(annotation)
        values = list(BAD_VALUES)
        if ContextSize in leaves:
            values += SIZE_VALUES
        if AllOf in leaves:
            values += TRIGGER_VALUES
        key = ".".join(path)
        for value in values:
            yield pytest.param(path, value, id=f"{key}={value!r}"[:120])


def test_the_walk_reaches_every_section_and_list_item() -> None:
    paths = {".".join(p) for p, _ in _settings(EngineConfig)}
    assert {"summarization.keep", "context_editing.keep_thinking_turns", "filesystem.truncate_args.keep",
            "memory.facts.0.confidence", "cost.prices.0.input", "input_context.skills.0.name",
            "middleware.0.kwargs"} <= paths
    assert len(paths) > 100


@pytest.mark.parametrize(("path", "value"), list(_cases()))
def test_a_bad_value_is_refused_in_our_words_naming_the_key(path: tuple[str, ...], value: Any) -> None:
    key = ".".join(path)
    try:
        EngineConfig.from_dict(_document(path, value))
    except ConfigError as err:
        text = str(err)
        said = [p for p in PYDANTIC_PHRASES if p in text]
        assert not said, f"{key}={value!r}: {text}"
        problems = err.problems if isinstance(err, InvalidConfig) else [(err.key, text)]
        for problem_key, message in problems:
            assert problem_key == key or str(problem_key).startswith(f"{key}."), f"{key}={value!r}: {text}"
            assert message and not message.startswith(("Input", "Value", "Field")), f"{key}={value!r}: {text}"
    # a value the setting takes (null for an optional one, "abc" for a text) is no error to word


# -- the cases pydantic used to word, as they read now --------------------------------------------------------

SIZE = "must be a size like 'messages:20', 'tokens:4000' or 'fraction:0.1'"
TRIGGER = ("must be a size like 'tokens:30000', several separated by commas (any fires), an AND clause like "
           "'tokens:30000&messages:50', or null")


@pytest.mark.parametrize(("doc", "problems"), [
    ({"summarization": {"keep": -5}}, [("summarization.keep", f"{SIZE}, got -5")]),
    ({"summarization": {"keep": None}}, [("summarization.keep", f"{SIZE}, got None")]),
    ({"summarization": {"keep": {"tokens": 5}}}, [("summarization.keep", f"{SIZE}, got {{'tokens': 5}}")]),
    ({"summarization": {"keep": {"type": "tokens"}}}, [("summarization.keep", f"{SIZE}, got {{'type': 'tokens'}}")]),
    ({"summarization": {"keep": [1, 2]}}, [("summarization.keep", f"{SIZE}, got [1, 2]")]),
    ({"summarization": {"keep": "tokens:abc"}},
     [("summarization.keep", "tokens thresholds must be numbers, got 'abc'. (as written: 'tokens:abc')")]),
    ({"filesystem": {"truncate_args": {"trigger": 0.5}}}, [("filesystem.truncate_args.trigger", f"{SIZE}, got 0.5")]),
    ({"compaction": {"keep": 3}}, [("compaction.keep", f"{SIZE}, got 3")]),
    ({"context_editing": {"trigger": 5000}},
     [("context_editing.trigger", "must be a size like 'tokens:4000' or 'fraction:0.1', got 5000")]),
    ({"summarization": {"trigger": 5000}}, [("summarization.trigger", f"{TRIGGER}, got 5000")]),
    ({"summarization": {"trigger": {"all": []}}},
     [("summarization.trigger.all", "must be a list of sizes like 'tokens:4000', with at least 1 item, got []")]),
    ({"context_editing": {"keep_thinking_turns": "abc"}},
     [("context_editing.keep_thinking_turns", "must be a whole number of 0 or more, or 'all', got 'abc'")]),
    ({"context_editing": {"keep_thinking_turns": -1}},
     [("context_editing.keep_thinking_turns", "must be a whole number of 0 or more, or 'all', got -1")]),
    ({"context_editing": {"keep_thinking_turns": 1.5}},
     [("context_editing.keep_thinking_turns", "must be a whole number of 0 or more, or 'all', got 1.5")]),
    ({"context_editing": {"clear_tool_inputs": [1, 2]}},
     [("context_editing.clear_tool_inputs", "must be true or false, or a list of text values, got [1, 2]")]),
    ({"order": "summarization"}, [("order", "must be a list of text values, got 'summarization'")]),
    ({"todo": "on"}, [("todo", "must be a mapping of settings (known here: enabled, style, system_prompt, tool), "
                               "got 'on'")]),
    ({"memory": {"facts": ["likes tea"]}},
     [("memory.facts.0", "must be a mapping with content (and optionally category, confidence), got 'likes tea'")]),
    ({"memory": {"facts": [{"category": "x"}]}}, [("memory.facts.0.content", "is missing; it must be text")]),
    ({"cost": {"prices": {"gpt": {"input": 1}}}},
     [("cost.prices.0.output", "is missing; it must be a number of 0 or more")]),
    ({"cost": {"prices": [{"prefix": "", "input": 1, "output": 1}]}},
     [("cost.prices.0.prefix", "must be text, with at least 1 character, got ''")]),
    ({"middleware": [{"use": "pkg.mod:Cls", "kwargs": [1]}]}, [("middleware.0.kwargs", "must be a mapping, got [1]")]),
    ({"summarization": {"summarizer": "gpt"}},
     [("summarization.summarizer", "must be 'offline' or 'provider:model' (e.g. 'openai:gpt-4o-mini'), got 'gpt'")]),
])
def test_what_pydantic_worded_reads_as_what_is_allowed(doc: dict[str, Any], problems: list[tuple[str, str]]) -> None:
    with pytest.raises(InvalidConfig) as err:
        EngineConfig.from_dict(doc)
    assert err.value.problems == problems


def test_a_bare_number_for_keep_from_the_command_line() -> None:
    from engine.config.schema import preset

    with pytest.raises(ConfigError) as err:
        preset("deepagents").with_overrides(["summarization.keep=-5"])
    assert str(err.value) == f"summarization.keep: {SIZE}, got -5"
