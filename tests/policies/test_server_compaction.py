"""Server-side compaction (engine/policies/server_compaction.py) and every preset on the real transcripts."""

from __future__ import annotations

import pytest

from engine import load_thread, preset, replay
from engine.base.errors import ConfigError
from engine.config.presets import AGENT_PRESETS
from engine.config.sections import CompactionConfig
from engine.config.sizes import ContextSize
from engine.policies.server_compaction import POLICIES, anthropic_trigger, openai_threshold
from engine.run.whatif import against_baseline, compaction_steps
from engine.thread.kinds import message_kind
from engine.thread.model import Thread
from tests.conftest import trace_path
from tests.policies.helpers import context, session

ANTHROPIC = POLICIES["anthropic-compaction"]
OPENAI = POLICIES["openai-compaction"]


def test_triggers_defaults_recorded_and_configured() -> None:
    assert anthropic_trigger(1_000_000, CompactionConfig()) == 150_000
    recorded = Thread("t", [], extra={"anthropic_compaction_threshold": 60_000})
    assert anthropic_trigger(1_000_000, CompactionConfig(), recorded) == 60_000
    with pytest.raises(ConfigError, match="at least 50,000"):
        anthropic_trigger(1_000_000, CompactionConfig(trigger=ContextSize(type="tokens", value=10_000)))
    assert openai_threshold(128_000, CompactionConfig()) == 115_200  # no documented default: Codex's 90 %
    assert openai_threshold(128_000, CompactionConfig(), Thread("t", [], extra={
        "openai_responses_compaction_threshold": 1_000})) == 1_000


def test_anthropic_compacts_the_request_that_crosses_openai_the_one_after() -> None:
    history = session(2, 2)
    assert ANTHROPIC.should_compact(history, context(request=150_001))
    assert not ANTHROPIC.should_compact(history, context(request=150_000))
    assert OPENAI.should_compact(history, context(window=100_000, request=10, previous=85_000, output=5_001))
    assert not OPENAI.should_compact(history, context(window=100_000, request=99_000, previous=None))
    result = ANTHROPIC.rebuild(history, context())
    assert result.kind == "server" and result.messages is not None and len(result.messages) == 1
    assert message_kind(result.messages[0]) == "summary"


# (trace folder, file, preset, recorded compaction steps, the preset's)
REAL = [
    ("anthropic-compaction", "test_anthropic_compaction_end_to_end.yaml", "anthropic-compaction", [0], [0]),
    ("anthropic-compaction", "test_anthropic_compaction_usage_with_cache.yaml", "anthropic-compaction", [0], [0]),
    ("openai-responses-compaction", "test_openai_responses_compact_stateful_mode.yaml", "openai-compaction", [3], [3]),
    # a client-side /responses/compact call (trigger "manual"): no threshold to reproduce
    ("openai-responses-compaction", "test_openai_responses_compact_messages.yaml", "openai-compaction", [2], []),
    # a hand-assembled schema fixture whose compactions ran at 16k tokens of a 258k window (manual)
    ("codex", "agent-sessions-codex-small.SYNTHETIC.jsonl", "codex", [4, 6, 7, 7, 7, 8], []),
    ("codex", "vibecodingtracker-codex.jsonl", "codex", [], []),
    ("gemini", "vibecodingtracker-session.jsonl", "gemini-cli", [], []),
    ("gemini", "vibecodingtracker-session-legacy-toolcalls.json", "gemini-cli", [], []),
    ("openhands", "basic.json", "openhands", [], []),
    ("openhands", "basic_interactions.json", "openhands", [], []),
]


@pytest.mark.parametrize(("folder", "name", "policy", "recorded", "expected"), REAL)
def test_each_preset_on_its_agents_real_transcripts(folder: str, name: str, policy: str, recorded: list[int],
                                                     expected: list[int]) -> None:
    thread = load_thread(trace_path(folder, name))
    baseline = replay(thread, preset("as-recorded"))
    run = replay(thread, preset(policy))
    assert compaction_steps(baseline) == recorded
    assert compaction_steps(run) == expected
    paired = [(a, b) for a, b in against_baseline(run, baseline).shifts if a is not None and b is not None]
    assert all(a == b for a, b in paired)  # where both compact, at the same step


def test_every_agent_preset_replays_every_real_trace_folder() -> None:
    names = [("claude-code", "tool_heavy.jsonl"), ("codex", "vibecodingtracker-codex.jsonl"),
             ("gemini", "vibecodingtracker-session.jsonl"), ("openhands", "basic.json")]
    for folder, name in names:
        thread = load_thread(trace_path(folder, name))
        for agent in AGENT_PRESETS:
            run = replay(thread, preset(agent))
            assert len(run.steps) == len(thread.ai_indices()), (folder, agent)
