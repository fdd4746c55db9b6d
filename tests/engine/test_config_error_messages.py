"""A config's error messages, as the Config page's upload showed them in the walk-through: every invalid
setting named (pydantic gives them all; only the first was said), a binary file said plainly (not the
parser's 'control characters are not allowed in "<unicode string>", position 0')."""

from __future__ import annotations

import pytest

from engine.base.errors import ConfigError
from engine.config.safe_yaml import InvalidYaml, load_yaml, yaml_text
from engine.config.schema import EngineConfig, preset
from engine.config.validation import MAX_LISTED, InvalidConfig

THREE_BAD = ("version: 1\nsummarization:\n  trigger: banana:12\n  keep: messages:-3\n"
             "model:\n  max_input_tokens: -100\n")


def test_every_invalid_setting_is_named_once_with_its_value() -> None:
    with pytest.raises(InvalidConfig) as err:
        EngineConfig.from_yaml(THREE_BAD, source="invalid.yaml")
    problems = dict(err.value.problems)
    assert list(problems) == ["model.max_input_tokens", "summarization.trigger", "summarization.keep"]
    assert problems["model.max_input_tokens"] == "Input should be greater than 0 (got -100)"
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
    assert err.value.problems == [("summarization.keep.value",
                                   "Input should be a valid integer, unable to parse string as an integer (got 'abc')")]


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
    (b"\x00\x01\x02binary\xff\xfe", "not a text YAML file: a control character (0x00) at byte 0 (line 1)"),
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
