"""replay() must record the same view at every step as the same layers inside a real create_agent."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import BaseMessage

from engine.config.schema import preset
from engine.formats import load_thread
from engine.run.parity import drive_with_create_agent
from engine.run.replay import replay
from engine.thread.kinds import message_kind
from engine.thread.model import Thread
from engine.thread.synthetic import synthetic_thread

SAMPLES = sorted((Path(__file__).resolve().parents[2] / "sample_threads").glob("*.json"))


def _shape(m: BaseMessage) -> tuple:
    calls = tuple((tc.get("id"), tc.get("name"), repr(sorted(tc.get("args", {}).items()))) for tc in getattr(m, "tool_calls", []) or [])
    return (m.type, m.id, repr(m.content), calls, m.name, message_kind(m), getattr(m, "tool_call_id", None))


def assert_same_views(thread: Thread, config_name: str, **overrides: str) -> int:
    config = preset(config_name).with_overrides([f"{k}={v}" for k, v in overrides.items()])
    observed = drive_with_create_agent(thread, config)
    run = replay(thread, config)
    assert len(observed) == len(run.steps)
    for step, (seen, rec) in enumerate(zip(observed, run.steps, strict=True)):
        assert [_shape(m) for m in seen.messages] == [_shape(m) for m in rec.view], f"view differs at step {step}"
        assert (seen.system.content if seen.system else None) == (rec.system.content if rec.system else None), step
    return len(run.steps)


@pytest.mark.parametrize("config_name", ["deepagents", "stress", "deerflow", "langchain"])
def test_synthetic_thread_views_match_create_agent(config_name: str) -> None:
    thread = synthetic_thread(160, seed=3, max_input_tokens=120_000)
    assert assert_same_views(thread, config_name) == len(thread.ai_indices())


def test_state_mode_summaries_match_create_agent() -> None:
    thread = synthetic_thread(120, seed=5, max_input_tokens=100_000)
    assert_same_views(thread, "stress", **{"summarization.mode": "state"})


@pytest.mark.parametrize("sample", SAMPLES, ids=[p.stem for p in SAMPLES])
def test_sample_thread_views_match_create_agent(sample: Path) -> None:
    thread = load_thread(sample)
    assert_same_views(thread, "stress")


def test_agent_tools_carry_the_thread_schemas() -> None:
    """The agent side's tools count as the thread's (a trigger on request tokens fires at the same step)."""
    from engine.run.parity import recorded_tools
    from engine.thread.synthetic import TOOLS
    from engine.tokens.counters import get_counter, tool_schema

    thread = synthetic_thread(10, seed=1)
    thread.messages[1].tool_calls.append({"name": "undeclared", "args": {}, "id": "x-1"})
    tools = recorded_tools(thread, {})
    assert [t.name for t in tools] == [t["name"] for t in TOOLS] + ["undeclared"]
    assert [tool_schema(t) for t in tools[:-1]] == [tool_schema(t) for t in TOOLS]
    assert get_counter().count_tools(tools[:-1]) == get_counter().count_tools(TOOLS)
