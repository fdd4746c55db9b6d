from __future__ import annotations

import pytest

from engine.base.errors import ConfigError
from engine.config.loading import load_config
from engine.config.presets import PRESETS
from engine.config.schema import EngineConfig, preset
from engine.config.sizes import AllOf, ContextSize

DEERFLOW_CONFIG = """
config_version: 34
models:
  - name: gpt-4o
    use: langchain_openai:ChatOpenAI
sandbox:
  use: deerflow.sandbox.local:LocalSandboxProvider
summarization:
  enabled: true
  model_name: null
  trigger:
    - type: tokens
      value: 32000
  keep:
    type: messages
    value: 10
  trim_tokens_to_summarize: 15564
  summary_prompt: null
  skill_file_read_tool_names: [read_file, read, view, cat]
memory:
  enabled: true
  injection_enabled: true
  max_injection_tokens: 1500
"""


@pytest.mark.parametrize("name", PRESETS)
def test_presets_round_trip_through_yaml_exactly(name: str) -> None:
    cfg = preset(name)
    assert EngineConfig.from_yaml(cfg.to_yaml()) == cfg
    assert EngineConfig.from_yaml(cfg.to_yaml()).to_yaml() == cfg.to_yaml()


def test_preset_values_follow_the_references() -> None:
    lc = preset("langchain")
    assert lc.summarization.trigger is None and lc.summarization.keep == ContextSize(type="messages", value=20)
    assert lc.summarization.trim_tokens_to_summarize == 4000 and lc.order == ("summarization",)
    df = preset("deerflow")
    assert df.summarization.trigger == (ContextSize(type="tokens", value=15564),)
    assert df.summarization.keep == ContextSize(type="messages", value=10)
    assert df.summarization.trim_tokens_to_summarize == 15564 and df.subagents.max_concurrent == 3
    da = preset("deepagents")
    assert da.summarization.mode == "view" and da.summarization.trim_tokens_to_summarize is None
    assert da.summarization.trigger == (ContextSize(type="fraction", value=0.85),)
    assert da.filesystem.tool_result_token_limit == 20000 and da.filesystem.truncate_args.max_length == 2000
    st = preset("stress")
    assert st.summarization.trigger == (ContextSize(type="fraction", value=0.25),)


def test_deerflow_config_yaml_loads_as_is() -> None:
    cfg = EngineConfig.from_yaml(DEERFLOW_CONFIG)
    assert cfg.preset == "deerflow-head"  # HEAD's files carry config_version
    assert cfg.summarization.trigger == (ContextSize(type="tokens", value=32000),)
    assert cfg.summarization.keep == ContextSize(type="messages", value=10)
    assert cfg.summarization.skill_file_read_tool_names == ("read_file", "read", "view", "cat")
    assert cfg.memory.max_injection_tokens == 1500


def test_a_v2_0_m0_config_yaml_loads_on_its_preset_and_null_trim_is_langchains_4000() -> None:
    doc = ("models:\n  - name: gpt\nsummarization:\n  enabled: true\n  trigger: [{type: tokens, value: 15564}]\n"
           "  keep: {type: messages, value: 10}\n  trim_tokens_to_summarize: null\n")
    cfg = EngineConfig.from_yaml(doc)
    assert cfg.preset == "deerflow" and cfg.dangling.style == "deerflow" and cfg.todo.style == "deerflow"
    # DeerFlow passes trim only when set, so LangChain's default applies
    assert cfg.summarization.trim_tokens_to_summarize == 4000


def test_trigger_forms() -> None:
    cfg = EngineConfig.from_yaml("summarization:\n  trigger: {type: tokens, value: 100}\n")
    assert cfg.summarization.trigger == (ContextSize(type="tokens", value=100),)
    cfg = EngineConfig.from_yaml("summarization:\n  trigger: [{tokens: 100, messages: 3}, {type: fraction, value: 0.5}]\n")
    assert cfg.summarization.trigger == (
        AllOf(all=(ContextSize(type="tokens", value=100), ContextSize(type="messages", value=3))),
        ContextSize(type="fraction", value=0.5),
    )
    assert EngineConfig.from_yaml(cfg.to_yaml()) == cfg
    assert EngineConfig.from_yaml("summarization: {trigger: null}").summarization.trigger is None


def test_set_overrides() -> None:
    cfg = preset("deepagents").with_overrides([
        "summarization.trigger=tokens:30000,messages:50", "summarization.keep=messages:20",
        "summarization.mode=state", "model.max_input_tokens=128000", "tokens.counter=approximate",
        "filesystem.enabled=false", "summarization.trigger=tokens:30000&messages:50",
    ])
    assert cfg.summarization.trigger == (AllOf(all=(ContextSize(type="tokens", value=30000), ContextSize(type="messages", value=50))),)
    assert cfg.summarization.keep == ContextSize(type="messages", value=20)
    assert cfg.model.max_input_tokens == 128000 and cfg.tokens.counter == "approximate"
    assert cfg.filesystem.enabled is False and cfg.summarization.mode == "state"


@pytest.mark.parametrize(("assignment", "message"), [
    ("summarization.trigger=fraction:1.5", "summarization.trigger: Fractional values must be between 0 and 1, got 1.5."),
    ("summarization.trigger=fraction:0", "summarization.trigger: Fractional values must be between 0 and 1, got 0.0."),
    ("summarization.keep=tokens:0", "summarization.keep: tokens thresholds must be greater than 0, got 0."),
    ("summarization.keep=messages:-5", "summarization.keep: messages thresholds must be greater than 0, got -5."),
    ("summarization.keep=pages:5", "summarization.keep"),
    ("summarization.mode=stream", "summarization.mode: must be 'state' or 'view', got 'stream'"),
    ("summarization.tirgger=tokens:5", "summarization.tirgger: unknown key"),
    ("model.max_input_tokens=-1", "model.max_input_tokens: must be a whole number from 1 to 500,000,000, got -1"),
    ("subagents.max_concurrent=9", "subagents.max_concurrent: must be a whole number from 1 to 4, got 9"),
    ("nonsense", "--set: expected KEY=VALUE"),
])
def test_bad_values_name_key_value_and_rule(assignment: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        preset("deepagents").with_overrides([assignment])
    assert str(err.value).startswith(message)


def test_yaml_errors_name_the_line() -> None:
    with pytest.raises(ConfigError, match="invalid YAML at line 3, column 1"):
        EngineConfig.from_yaml("summarization:\n  trigger: [unclosed\n")
    with pytest.raises(ConfigError, match="summarization.keep.value"):
        EngineConfig.from_yaml("summarization:\n  keep: {type: tokens, value: abc}\n")
    with pytest.raises(ConfigError, match="unknown preset 'nope'"):
        EngineConfig.from_yaml("preset: nope\n")


def test_load_config_rules(tmp_path) -> None:
    assert load_config().preset == "deepagents"
    p = tmp_path / "c.yaml"
    p.write_text(preset("stress").to_yaml())
    assert load_config(str(p), overrides=["summarization.keep=messages:4"]).summarization.keep.value == 4
    with pytest.raises(ConfigError, match="give --config or --preset"):
        load_config(str(p), preset_name="langchain")
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_config(str(tmp_path / "missing.yaml"))


def test_config_is_hashable_for_caching() -> None:
    assert hash(preset("stress")) == hash(preset("stress"))
    assert preset("stress").diff(preset("stress").with_overrides(["summarization.keep=messages:3"])) == {
        "summarization.keep": ({"type": "fraction", "value": 0.05}, {"type": "messages", "value": 3})}
