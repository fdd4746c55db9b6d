"""Exports to the coding agents: the exact keys and values, and what each agent cannot take (the frameworks'
exports are proven by running them: tests/differential/test_exports.py)."""

from __future__ import annotations

import json
import math
import tomllib

import pytest

from engine.base.errors import ConfigError
from engine.cli.ctxi import main
from engine.config.schema import preset
from engine.config.sizes import ContextSize
from engine.policies.claude_code import autocompact_threshold
from engine.sessions.export import TARGETS, export_config


def files(config: object, target: str) -> dict[str, str]:
    return {f.where: f.text for f in export_config(config, target).files}  # type: ignore[arg-type]


def test_claude_code_takes_a_percentage_of_its_effective_window() -> None:
    config = preset("claude-code").with_overrides(["compaction.trigger=fraction:0.6"])
    out = export_config(config, "claude-code")
    got = {f.where: f.text for f in out.files}
    assert got["shell, before starting claude"] == "export CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=60\n"
    assert json.loads(got["~/.claude/settings.json"]) == {"env": {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "60"}}
    assert "60 % of the effective window 180,000 = 108,000 tokens" in out.carried[0]
    assert any("summarizes the whole history" in line for line in out.not_carried)


def test_a_token_trigger_becomes_the_percentage_claude_code_turns_back_into_no_more_tokens() -> None:
    config = preset("deepagents").with_overrides(["summarization.trigger=tokens:120000"])
    (pct,) = [json.loads(t)["env"]["CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"] for w, t in files(config, "claude-code").items()
              if w.endswith("settings.json")]
    assert pct == "66.66"
    # Claude Code's own rule (engine/policies/claude_code.py) applied to the exported value
    at = autocompact_threshold(200_000, None, ContextSize(type="fraction", value=float(pct) / 100))
    assert at == math.floor(180_000 * 0.6666) == 119_988 and at <= 120_000


def test_claude_code_cannot_compact_later_than_its_default() -> None:
    config = preset("claude-code").with_overrides(["compaction.trigger=tokens:190000"])
    out = export_config(config, "claude-code")
    assert out.files == []
    assert "Claude Code already compacts at 167,000" in out.not_carried[0]
    off = export_config(preset("langchain"), "claude-code")  # no trigger at all
    assert {f.text for f in off.files} == {"export DISABLE_AUTO_COMPACT=1\n", '{\n  "autoCompactEnabled": false\n}'}


def test_codex_gemini_and_openhands_keys() -> None:
    codex = files(preset("codex").with_overrides(["compaction.trigger=tokens:150000", "model.max_input_tokens=272000",
                                                  "compaction.tool_output_tokens=6000"]), "codex")
    assert tomllib.loads(codex["~/.codex/config.toml"]) == {"model_auto_compact_token_limit": 150000,
                                                            "model_context_window": 272000,
                                                            "tool_output_token_limit": 6000}
    gemini = files(preset("gemini-cli").with_overrides(["compaction.trigger=fraction:0.3"]), "gemini-cli")
    assert json.loads(gemini["~/.gemini/settings.json"]) == {"model": {"compressionThreshold": 0.3}}
    openhands = files(preset("openhands").with_overrides(["compaction.trigger=messages:80", "compaction.keep_first=2"]),
                      "openhands")
    assert tomllib.loads(openhands["config.toml (OpenHands V0 / CLI)"]) == {
        "condenser": {"type": "llm", "llm_config": "condenser", "keep_first": 2, "max_size": 80}}
    assert "LLMSummarizingCondenser(llm=llm.model_copy(update={\"usage_id\": \"condenser\"}), max_size=80, keep_first=2)" \
        in openhands["Python (OpenHands SDK)"]


def test_every_target_cites_its_sources_and_unknown_targets_are_one_line() -> None:
    for target in TARGETS:
        assert export_config(preset("deepagents"), target).sources
    with pytest.raises(ConfigError, match="unknown target 'cursor'"):
        export_config(preset("deepagents"), "cursor")


def test_ctxi_export_config(capsys: pytest.CaptureFixture[str], tmp_path: object) -> None:
    assert main(["export-config", "--for", "gemini-cli", "--preset", "gemini-cli", "--set",
                 "compaction.trigger=fraction:0.4", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["target"] == "gemini-cli" and json.loads(doc["files"][0]["text"]) == {"model": {"compressionThreshold": 0.4}}
    assert main(["export-config", "--for", "deerflow", "--preset", "deerflow",
                 "--set", "summarization.trigger=tokens:1000&messages:5"]) == 2
    assert "DeerFlow's config takes thresholds" in capsys.readouterr().err
