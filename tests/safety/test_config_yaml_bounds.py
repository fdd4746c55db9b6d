"""A config YAML is read in bounded time and memory: alias bombs, deep nesting and surrogates are one line.

The red-team findings (#38.2, #39.2, #39.3): a 500-byte config whose middleware kwargs hold a 9x9 alias
chain aborted the process ("memory allocation of 896 bytes failed"); 5,000 nested `[` (flow) or
mappings (block) were "internal error: RecursionError", from a file, the Config page and a link value;
a link's `"\\ud800"` put a lone surrogate into the config and broke the URL on every page.
"""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

from engine.base.errors import ConfigError
from engine.config.loading import load_config
from engine.config.safe_yaml import MAX_DEPTH, check_document, load_yaml
from engine.config.schema import EngineConfig, preset
from engine.config.settings import config_from_params, url_params

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_threads" / "needle.json"


def alias_bomb() -> str:
    """9 levels of 9 aliases each (9**9 = 387 million values once expanded) in 500 bytes."""
    lines = ["preset: langchain", "middleware:", "  - use: tests.layers.test_user_middleware:KeepRecentResults",
             "    kwargs:", '      a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 9):
        prev, name = chr(96 + i), chr(97 + i)
        lines.append(f"      {name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def deep_block(levels: int) -> str:
    return "preset: stress\nmemory:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, levels + 1)) + "  " * (levels + 1) + "x\n"


def deep_flow(levels: int) -> str:
    return "preset: stress\nmemory: {facts: " + "[" * levels + "]" * levels + "}\n"


@pytest.mark.parametrize("text,message", [
    (alias_bomb(), "bomb.yaml: line 10: YAML aliases expand the config beyond 100,000 values (alias *e)"),
    (deep_flow(5000), "bomb.yaml: line 2: YAML nested more than 100 levels deep (a config is a few levels deep)"),
    (deep_block(500), f"bomb.yaml: line {MAX_DEPTH + 2}: YAML nested more than 100 levels deep (a config is a few "
                      "levels deep)"),
    ("preset: stress\nmemory: &m {facts: [*m]}\n",
     "bomb.yaml: line 2: the alias *m refers to a value that contains it (a recursive structure)"),
    ("x: !!python/object/apply:os.system ['touch /tmp/ctxi-yaml-tag']\n",
     "bomb.yaml: line 1: refused: could not determine a constructor for the tag "
     "'tag:yaml.org,2002:python/object/apply:os.system' (only plain YAML is read, never Python tags)"),
    ('preset: stress\ninput_context: {custom_prompt: "\\ud800"}\n',
     "bomb.yaml: invalid YAML at line 2, column 35: found invalid Unicode character escape code"),
])
def test_a_hostile_config_file_is_one_line_naming_file_line_and_rule(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(str(path))
    assert str(err.value) == message.replace("bomb.yaml", str(path))


def test_the_alias_bomb_from_the_cli_ends_in_one_line_within_a_memory_limit(tmp_path: Path) -> None:
    """The process used to abort at a 6 GB limit; at 2 GB of address space it now says one line."""
    path = tmp_path / "bomb.yaml"
    path.write_text(alias_bomb(), encoding="utf-8")

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3))

    proc = subprocess.run([sys.executable, "-m", "engine.cli", "replay", str(SAMPLE), "--config", str(path)],
                          capture_output=True, text=True, timeout=300, preexec_fn=limit, cwd=ROOT)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == (f"ctxi replay: error: {path}: line 10: YAML aliases expand the config beyond 100,000 "
                           "values (alias *e)\n")


def test_aliases_that_stay_small_still_load() -> None:
    text = ("preset: stress\nsummarization:\n  keep: &keep fraction:0.1\n"
            "filesystem:\n  truncate_args:\n    keep: *keep\n    tools: &tools [write_file, edit_file]\n"
            "context_editing:\n  exclude_tools: *tools\n")
    cfg = EngineConfig.from_yaml(text)
    assert (str(cfg.summarization.keep), str(cfg.filesystem.truncate_args.keep)) == ("fraction:0.1", "fraction:0.1")
    assert cfg.context_editing.exclude_tools == ("write_file", "edit_file")


def test_a_plain_document_of_many_values_is_within_the_budget() -> None:
    """The budget counts values after expansion; a plain document has at most one value per byte."""
    text = "a:\n" + "".join(f"  - [{i}, {i}, {i}]\n" for i in range(60_000))
    assert len(load_yaml(text, source="big.yaml")["a"]) == 60_000


@pytest.mark.parametrize("assignment,message", [
    ("summarization.trigger=" + "[" * 800, "summarization.trigger: line 1: YAML nested more than 100 levels deep "
                                            "(a config is a few levels deep)"),
    ('input_context.custom_prompt="\\ud800"', "input_context.custom_prompt: invalid YAML at line 1, column 4: found "
                                               "invalid Unicode character escape code"),
])
def test_set_values_are_bounded_too(assignment: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        preset("stress").with_overrides([assignment])
    assert str(err.value) == message


def test_text_that_is_not_yaml_is_still_taken_as_text() -> None:
    cfg = preset("stress").with_overrides(["input_context.custom_prompt=[IMPORTANT] be brief"])
    assert cfg.input_context.custom_prompt == "[IMPORTANT] be brief"


@pytest.mark.parametrize("key,value", [
    ("input_context.custom_prompt", '"\\ud800"'),
    ("summarization.summary_prompt", '"a\\udfff b"'),
    ("memory.facts", '[{content: "\\ud800"}]'),
    ("summarization.trigger", "[" * 800),
])
def test_a_link_value_that_is_no_text_is_one_notice_and_dropped(key: str, value: str) -> None:
    config, errors = config_from_params({"preset": "stress", key: value, "summarization.keep": "messages:7"})
    assert config == preset("stress").with_overrides(["summarization.keep=messages:7"])
    assert len(errors) == 1 and errors[0].startswith(f"{key}: ")
    params = url_params(config)
    assert key not in params
    for text in params.values():
        text.encode("utf-8")  # what st.query_params does with it


def test_a_document_built_in_python_is_checked_for_depth_and_surrogates() -> None:
    deep: list = []
    node = deep
    for _ in range(5000):
        node.append([])
        node = node[0]
    with pytest.raises(ConfigError) as err:
        EngineConfig.from_dict({"memory": {"facts": deep}}, source="form")
    assert str(err.value).startswith("memory.facts.0.0.0.") and str(err.value).endswith(
        ": nested more than 100 levels deep (a config is a few levels deep)")
    with pytest.raises(ConfigError) as err:
        EngineConfig.from_dict({"input_context": {"custom_prompt": "ok \ud800 no"}}, source="form")
    assert str(err.value) == ("input_context.custom_prompt: holds a UTF-16 surrogate (\\ud800 at character 3), "
                              "which is not text")
    with pytest.raises(ConfigError) as err:  # a well-formed pair is still two surrogates in a Python str
        check_document({"memory": {"facts": [{"content": "\ud83d\ude00"}]}}, source="x")
    assert str(err.value) == ("memory.facts.0.content: holds a UTF-16 surrogate (\\ud83d at character 0), "
                              "which is not text")
    assert check_document({"memory": {"facts": [{"content": "😀 fine"}]}}, source="x") is None


def test_a_value_written_to_the_url_is_bounded() -> None:
    """`setting_text` re-reads a text value to see whether it can go into the URL unquoted."""
    prompt = "[" * 3000
    config = preset("stress").model_copy(update={
        "input_context": preset("stress").input_context.model_copy(update={"custom_prompt": prompt})})
    params = url_params(config)
    assert params["input_context.custom_prompt"] == '"' + prompt + '"'
