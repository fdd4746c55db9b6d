"""Stress mode on recorded threads: B is the recording agent's preset with its trigger lowered, not a copy of A.

The as-recorded run replays the agent's own compactions and runs no layer with a trigger, so lowering
"every trigger" used to leave B identical to A (same compactions, same peak) while the page claimed
otherwise. Real sessions from ../shared/traces (skipped when absent).
"""

from __future__ import annotations

import pytest

from engine.config.presets import default_preset_name
from engine.config.schema import preset
from engine.config.sizes import ContextSize
from engine.evals import compactions, stress_config
from engine.evals.stress import stress_plan
from engine.formats import load_thread
from engine.policies.server_compaction import ANTHROPIC_MIN_TRIGGER
from engine.run.replay import replay
from engine.thread.synthetic import synthetic_thread
from tests.conftest import trace_path

CLAUDE_SESSION = ("claude-code", "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl")


def test_b_of_a_recorded_claude_code_session_compacts_under_claude_codes_policy_at_a_quarter() -> None:
    thread = load_thread(trace_path(*CLAUDE_SESSION))
    a = replay(thread, preset("as-recorded"))
    assert [(c.step, c.source) for c in compactions(a)] == [(126, "recorded")]
    assert a.totals()["peak_view_tokens"] == 166_874
    plan = stress_plan(a.config, thread, 0.25, window_tokens=a.window_tokens)
    assert plan.agent_preset == "claude-code"
    assert plan.config == stress_config(preset("claude-code"), 0.25, window_tokens=200_000)
    assert plan.config.compaction.trigger == ContextSize(type="tokens", value=50_000)
    assert plan.describe() == (
        "stress mode at 25% of the 200,000-token window on the claude-code preset (the compaction policy of the "
        "agent that recorded this thread), replayed instead of its recorded compactions: the claude-code "
        "compaction trigger at 50,000 tokens")
    b = replay(thread, plan.config)
    assert [(c.step, c.source) for c in compactions(b)] == [
        (10, "simulated"), (29, "simulated"), (49, "simulated"), (66, "simulated"), (101, "simulated"),
        (127, "simulated"), (145, "simulated")]
    assert b.totals()["peak_view_tokens"] < 50_000 < a.totals()["peak_view_tokens"]
    # the same B as stress mode on the claude-code preset picked in the sidebar
    assert stress_plan(preset("claude-code"), thread, 0.25, window_tokens=a.window_tokens).config == plan.config


def test_b_of_a_recorded_codex_rollout_compacts_where_the_agent_never_did() -> None:
    thread = load_thread(trace_path("codex", "vibecodingtracker-codex.jsonl"))
    a = replay(thread, preset("as-recorded"))
    assert compactions(a) == []
    plan = stress_plan(a.config, thread, 0.10, window_tokens=a.window_tokens)
    assert plan.agent_preset == "codex"
    assert plan.lowered == ("the codex compaction trigger at 20,000 tokens",)
    assert [(c.step, c.source) for c in compactions(replay(thread, plan.config))] == [(16, "simulated")]


def test_a_recorded_thread_of_an_agent_without_a_preset_says_there_is_nothing_to_lower() -> None:
    thread = load_thread(trace_path("nilenso-context-viewer", "ask_github_gc.completions.json"))
    assert default_preset_name(thread) == "as-recorded"  # it recorded its usage
    plan = stress_plan(preset("as-recorded"), thread, 0.25)
    assert plan.config is None
    assert plan.describe() == plan.reason == (
        "Stress mode has no trigger to lower: the current settings (as-recorded) replay what the openai_chat agent "
        "recorded (its own compactions, if any), and no agent preset here models that agent's policy. Pick a "
        "preset with a trigger in the sidebar (e.g. deepagents or stress) to stress it on this thread.")


def test_settings_without_any_trigger_say_so() -> None:
    thread = synthetic_thread(5)
    plan = stress_plan(preset("deepagents").with_overrides(["order=[dangling]"]), thread, 0.2)
    assert plan.config is None
    assert "run no summarization, argument truncation or agent compaction" in plan.reason


@pytest.mark.parametrize("name", ["deepagents", "langchain", "deerflow", "deerflow-head", "stress"])
def test_presets_with_a_summarization_trigger_keep_their_stress_config(name: str) -> None:
    thread = synthetic_thread(5)
    config = preset(name)
    plan = stress_plan(config, thread, 0.2, window_tokens=100_000)
    assert plan.agent_preset is None and plan.base == f"the current settings ({name})"
    assert plan.config == stress_config(config, 0.2, window_tokens=100_000)
    assert plan.config.compaction == config.compaction  # no compaction layer runs: untouched
    assert plan.lowered[0] == "the summarization trigger at 20,000 tokens"


def test_anthropic_compaction_is_not_stressed_below_its_minimum() -> None:
    cfg = stress_config(preset("anthropic-compaction"), 0.10, window_tokens=200_000)
    assert cfg.compaction.trigger == ContextSize(type="tokens", value=ANTHROPIC_MIN_TRIGGER)
    plan = stress_plan(preset("anthropic-compaction"), synthetic_thread(5), 0.10, window_tokens=200_000)
    assert plan.lowered == ("the anthropic-compaction compaction trigger at 50,000 tokens (its minimum)",)


def test_the_cli_stresses_a_recorded_session_as_the_evals_page_does(capsys: pytest.CaptureFixture[str]) -> None:
    """`ctxi eval survival FILE --stress F` replays stress_plan's B (it replayed the recorded run unchanged)."""
    import json

    from engine.cli.ctxi import main

    path = str(trace_path(*CLAUDE_SESSION))
    assert main(["eval", "survival", path, "--stress", "0.25", "--json"]) == 0
    out = capsys.readouterr()
    doc = json.loads(out.out)
    assert [c["step"] for c in doc["compactions"]] == [10, 29, 49, 66, 101, 127, 145]
    assert "on the claude-code preset" in out.err
    # an agent no preset models: one line saying there is nothing to lower, exit 2
    other = str(trace_path("nilenso-context-viewer", "ask_github_gc.completions.json"))
    assert main(["eval", "cache", other, "--stress", "0.25"]) == 2
    assert "Stress mode has no trigger to lower" in capsys.readouterr().err
