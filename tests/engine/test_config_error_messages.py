"""A config's error messages, as the Config page's upload showed them in the walk-through: every invalid
setting named (pydantic gives them all; only the first was said), a binary file said plainly (not the
parser's 'control characters are not allowed in "<unicode string>", position 0')."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, Field, ValidationError

from engine.base.errors import ConfigError
from engine.config.loading import load_config
from engine.config.safe_yaml import InvalidYaml, is_binary, load_yaml, yaml_text
from engine.config.schema import EngineConfig, preset
from engine.config.validation import MAX_LISTED, InvalidConfig, config_error

THREE_BAD = ("version: 1\nsummarization:\n  trigger: banana:12\n  keep: messages:-3\n"
             "model:\n  max_input_tokens: -100\n")


def test_every_invalid_setting_is_named_once_with_its_value() -> None:
    with pytest.raises(InvalidConfig) as err:
        EngineConfig.from_yaml(THREE_BAD, source="invalid.yaml")
    problems = dict(err.value.problems)
    assert list(problems) == ["model.max_input_tokens", "summarization.trigger", "summarization.keep"]
    assert problems["model.max_input_tokens"] == "must be a whole number from 1 to 500,000,000, got -100"
    # the type is a part of the text "banana:12": the setting named is the one the file wrote
    assert problems["summarization.trigger"] == "the type should be 'messages', 'tokens' or 'fraction' (got 'banana:12')"
    assert problems["summarization.keep"] == "messages thresholds must be greater than 0, got -3. (as written: 'messages:-3')"
    assert err.value.key == "model.max_input_tokens"  # the form marks the first one's field
    text = str(err.value)
    assert text.startswith("3 settings are not valid: model.max_input_tokens: ")
    assert all(f"{key}: " in text for key in problems) and "invalid.yaml" not in text


def test_one_invalid_setting_reads_as_before() -> None:
    with pytest.raises(ConfigError) as err:
        preset("deepagents").with_overrides(["summarization.keep=messages:-5"])
    assert str(err.value).startswith("summarization.keep: messages thresholds must be greater than 0, got -5.")
    assert err.value.key == "summarization.keep"


def test_a_union_refusing_one_value_twice_is_one_problem() -> None:
    """`value: int | float` refuses "abc" as an integer and as a number: one setting, said once."""
    with pytest.raises(InvalidConfig) as err:
        EngineConfig.from_yaml("summarization:\n  keep: {type: tokens, value: abc}\n")
    assert err.value.problems == [("summarization.keep.value", "must be a number, got 'abc'")]


def test_many_invalid_settings_are_listed_up_to_a_cap() -> None:
    text = "".join(f"wrong{i}: 1\n" for i in range(MAX_LISTED + 4))
    with pytest.raises(InvalidConfig) as err:
        EngineConfig.from_yaml(text)
    assert [k for k, _ in err.value.problems] == [f"wrong{i}" for i in range(MAX_LISTED)]
    assert err.value.more == 4
    assert str(err.value).startswith(f"{MAX_LISTED + 4} settings are not valid: wrong0: unknown key")
    assert str(err.value).endswith("; and 4 more")


def test_a_yaml_error_names_the_source_once() -> None:
    with pytest.raises(InvalidYaml) as err:
        EngineConfig.from_yaml("version: 1\nsummarization: [trigger: tokens:8000\n  keep: {messages: 6\n\t- bad\n",
                               source="broken.yaml")
    assert err.value.key == "broken.yaml"
    assert str(err.value).count("broken.yaml") == 1


@pytest.mark.parametrize(("data", "message"), [
    (b"\x00\x01\x02binary\xff\xfe",
     "a binary file, not a text YAML file: a control character (0x00) at byte 0 (line 1)"),
    (b"a: 1\nb: \xff\xfe", "not a text YAML file: a byte that is not UTF-8 (0xff) at byte 8 (line 2)"),
    ("a: 1\nb: café\x07".encode(), "not a text YAML file: a control character (0x07) at byte 13 (line 2)"),
])
def test_a_binary_file_is_said_to_be_no_text_file_with_where(data: bytes, message: str) -> None:
    with pytest.raises(InvalidYaml) as err:
        yaml_text(data, source="binary.yaml")
    assert str(err.value) == f"binary.yaml: {message}"


def test_text_files_pass_as_text() -> None:
    assert yaml_text("café: 1\n".encode(), source="f.yaml") == "café: 1\n"
    assert yaml_text(b"\xef\xbb\xbfa: 1\n", source="f.yaml") == "\ufeffa: 1\n"  # a BOM: YAML reads it


def test_a_control_character_in_text_names_its_line_not_the_parser() -> None:
    with pytest.raises(InvalidYaml) as err:
        load_yaml("a: 1\nb: x\x07y\n", source="YAML editor")
    assert str(err.value) == "YAML editor: not YAML text: a control character (0x07) at line 2, column 5"
    assert "unicode string" not in str(err.value)


# -- a binary file is said to be one (a .png or .zip picked by mistake) --------------------------------------------

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10"  # a PNG's signature and first chunk header
ZIP = b"PK\x03\x04\x14\x00\x00\x00\x08\x00"  # a ZIP's local file header


@pytest.mark.parametrize(("data", "message"), [
    (PNG, "a binary file, not a text YAML file: a byte that is not UTF-8 (0x89) at byte 0 (line 1)"),
    (ZIP, "a binary file, not a text YAML file: a control character (0x03) at byte 2 (line 1)"),
    (b"a: 1\nb: 2\n\x00\x00", "a binary file, not a text YAML file: a control character (0x00) at byte 10 (line 3)"),
    # text that is not UTF-8 (Latin-1's é) or has one stray control character is not called binary
    (b"a: caf\xe9\n", "not a text YAML file: a byte that is not UTF-8 (0xe9) at byte 6 (line 1)"),
    (b"a: 1\nb: \x07\n", "not a text YAML file: a control character (0x07) at byte 8 (line 2)"),
    # UTF-16 text (Windows' "Unicode") is full of NULs but is not binary either
    ("a: 1\n".encode("utf-16"), "not a text YAML file: a byte that is not UTF-8 (0xff) at byte 0 (line 1)"),
])
def test_a_binary_upload_says_binary_and_where(data: bytes, message: str) -> None:
    with pytest.raises(InvalidYaml) as err:
        yaml_text(data, source="picked.yaml")
    assert str(err.value) == f"picked.yaml: {message}"


def test_binary_is_judged_by_the_first_8000_bytes() -> None:
    assert is_binary(b"a: 1\n" * 1599 + b"\x00") and not is_binary(b"a: 1\n" * 1600 + b"\x00")
    assert not is_binary(b"a: caf\xe9\n") and not is_binary(b"")


def test_the_cli_says_a_config_file_is_binary(tmp_path: Path) -> None:
    path = tmp_path / "logo.yaml"
    path.write_bytes(PNG)
    with pytest.raises(InvalidYaml) as err:
        load_config(str(path))
    assert str(err.value) == f"{path}: a binary file, not a text YAML file: a byte that is not UTF-8 (0x89) at byte 0 (line 1)"
    path.write_bytes(b"a: caf\xe9\n")  # text in another encoding keeps the reader's own words
    with pytest.raises(ConfigError, match=r"config file is not UTF-8 text \(invalid byte at offset 6\)"):
        load_config(str(path))


# -- a number, a choice or a text of the wrong kind reads as what the setting allows ------------------------------

@pytest.mark.parametrize(("written", "message"), [
    ("-5", "must be a whole number from 1 to 500,000,000, got -5"),
    ("0", "must be a whole number from 1 to 500,000,000, got 0"),
    ("abc", "must be a whole number from 1 to 500,000,000, got 'abc'"),
    ("'200,000'", "must be a whole number from 1 to 500,000,000, got '200,000'"),
    ("1.5", "must be a whole number from 1 to 500,000,000, got 1.5"),
    (".inf", "must be a whole number from 1 to 500,000,000, got inf"),
    ("[1, 2]", "must be a whole number from 1 to 500,000,000, got [1, 2]"),
    ("{tokens: 5}", "must be a whole number from 1 to 500,000,000, got {'tokens': 5}"),
    pytest.param("'" + "9" * 5000 + "'", f"must be a whole number from 1 to 500,000,000, got '{'9' * 5000}'",
                 id="5000-digit text"),  # pydantic: "exceeded maximum size"
])
def test_a_bad_window_names_what_is_allowed(written: str, message: str) -> None:
    with pytest.raises(InvalidConfig) as err:
        EngineConfig.from_yaml(f"model:\n  max_input_tokens: {written}\n", source="c.yaml")
    assert err.value.problems == [("model.max_input_tokens", message)]
    assert str(err.value) == f"model.max_input_tokens: {message}"
    assert "Input should" not in str(err.value) and "unable to parse" not in str(err.value)


@pytest.mark.parametrize(("setting", "written", "message"), [
    ("max_output_tokens", "-1", "must be a whole number from 0 to 500,000,000, got -1"),
    ("max_output_tokens", "lots", "must be a whole number from 0 to 500,000,000, got 'lots'"),
    ("thinking", "some", "must be 'auto', 'all', 'last_turn' or 'none', got 'some'"),
    ("name", "[gpt-4o]", "must be text, got ['gpt-4o']"),
    ("provider", "{a: 1}", "must be text, got {'a': 1}"),
])
def test_every_model_setting_names_what_is_allowed(setting: str, written: str, message: str) -> None:
    with pytest.raises(InvalidConfig) as err:
        EngineConfig.from_yaml(f"model:\n  {setting}: {written}\n")
    assert err.value.problems == [(f"model.{setting}", message)]


@pytest.mark.parametrize(("assignment", "message"), [
    ("model.max_input_tokens=abc", "model.max_input_tokens: must be a whole number from 1 to 500,000,000, got 'abc'"),
    ("subagents.max_total=0", "subagents.max_total: must be a whole number from 1 to 50, got 0"),
    ("context_editing.idle_minutes=0", "context_editing.idle_minutes: must be a number greater than 0, got 0"),
    ("recorded.enabled=maybe", "recorded.enabled: must be true or false, got 'maybe'"),
    ("order=[summarization, 5]", "order.1: must be text, got 5"),
])
def test_other_settings_read_the_same_way(assignment: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        preset("deepagents").with_overrides([assignment])
    assert str(err.value) == message


def test_a_list_item_names_its_own_rule() -> None:
    with pytest.raises(InvalidConfig) as err:
        EngineConfig.from_yaml("cost:\n  prices:\n    - {prefix: x, input: -1, output: 1}\n")
    assert err.value.problems == [("cost.prices.0.input", "must be a number of 0 or more, got -1")]


class _Bounded(BaseModel):
    window: int | None = Field(default=None, gt=0, le=100_000_000)
    share: float = Field(default=0.5, gt=0, le=1)
    below: int = Field(default=0, lt=10)


@pytest.mark.parametrize(("doc", "message"), [
    ({"window": 10**23}, "window: must be a whole number from 1 to 100,000,000, got 100000000000000000000000"),
    ({"window": "many"}, "window: must be a whole number from 1 to 100,000,000, got 'many'"),
    ({"share": 1.5}, "share: must be a number greater than 0 and at most 1, got 1.5"),
    ({"below": 10}, "below: must be a whole number less than 10, got 10"),
])
def test_bounds_are_said_as_the_schema_gives_them(doc: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError) as caught:
        _Bounded.model_validate(doc)
    assert str(config_error(caught.value, doc, "doc", _Bounded)) == message


@pytest.mark.parametrize(("value", "said"), [
    (True, "model.max_input_tokens: must be a whole number, not true or false"),
    (10**23, "model.max_input_tokens: must be a whole number from 1 to 500,000,000, got 100000000000000000000000"),
])
def test_a_window_too_big_for_the_sidebar_or_a_bool_is_refused(value: object, said: str) -> None:
    # a window past 2^53 - 1 made the sidebar's number box raise on every page; true was read as 1 token
    from engine.config.schema import EngineConfig
    from engine.config.validation import InvalidConfig

    with pytest.raises(InvalidConfig) as raised:
        EngineConfig.from_dict({"model": {"max_input_tokens": value}})
    assert said in str(raised.value)


# -- a size, a section or a list given a value of another kind says what it takes (not pydantic's "Input should
# be a valid dictionary or instance of ContextSize"); tests/engine/test_config_every_field_worded.py walks them all

@pytest.mark.parametrize(("written", "message"), [
    ("summarization:\n  keep: -5\n",
     "summarization.keep: must be a size like 'messages:20', 'tokens:4000' or 'fraction:0.1', got -5"),
    ("summarization:\n  keep: tokens:abc\n",
     "summarization.keep: tokens thresholds must be numbers, got 'abc'. (as written: 'tokens:abc')"),
    ("summarization:\n  trigger: {all: []}\n",
     "summarization.trigger.all: must be a list of sizes like 'tokens:4000', with at least 1 item, got []"),
    ("context_editing:\n  keep_thinking_turns: lots\n",
     "context_editing.keep_thinking_turns: must be a whole number of 0 or more, or 'all', got 'lots'"),
    ("compaction:\n  summarizer: gpt-4o\n",
     "compaction.summarizer: must be 'offline' or 'provider:model' (e.g. 'openai:gpt-4o-mini'), got 'gpt-4o'"),
    ("memory: [AGENTS.md]\n", "memory: must be a mapping of settings (known here: enabled, sources, facts, "
                              "max_injection_tokens, workspace), got ['AGENTS.md']"),
])
def test_a_value_of_another_kind_says_what_the_setting_takes(written: str, message: str) -> None:
    with pytest.raises(InvalidConfig) as err:
        EngineConfig.from_yaml(written)
    assert str(err.value) == message


@pytest.mark.parametrize(("section", "key", "said"), [
    ("subagents", "max_total", "subagents.max_total: must be a whole number, not true or false"),
    ("summarization", "trim_tokens_to_summarize",
     "summarization.trim_tokens_to_summarize: must be a whole number, not true or false"),
    ("model", "max_output_tokens", "model.max_output_tokens: must be a whole number, not true or false"),
])
def test_true_is_not_a_number(section: str, key: str, said: str) -> None:
    # pydantic reads true as 1: `max_total: true` was one sub-agent, taken silently
    with pytest.raises(InvalidConfig) as raised:
        EngineConfig.from_dict({section: {key: True}})
    assert said in str(raised.value)


def test_a_switch_still_takes_true_and_false() -> None:
    config = EngineConfig.from_dict({"todo": {"enabled": False}, "recorded": {"enabled": True}})
    assert (config.todo.enabled, config.recorded.enabled) == (False, True)
