"""A thread that records the memories its agent started with shows them when replayed alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.config.schema import preset
from engine.formats import load_thread
from engine.run.replay import replay
from engine.thread.synthetic import synthetic_thread

SAMPLE = Path(__file__).resolve().parents[2] / "sample_threads" / "memory-two-threads-2.json"


def test_recorded_memories_are_injected_without_a_workspace() -> None:
    thread = synthetic_thread(3, seed=1)
    thread.extra["memories_before"] = {"/memories/AGENTS.md": "The user prefers tabs. Codename OSPREY-12."}
    run = replay(thread, preset("deepagents").with_overrides(["memory.enabled=true"]))
    parts = run.steps[0].system.additional_kwargs["ctxi_parts"]
    memory = [p for p in parts if p["category"] == "memory"]
    assert memory and "Codename OSPREY-12." in memory[0]["text"]
    assert run.steps[0].view_by_category["memory"] > 0
    assert [e.kind for e in run.events if e.layer == "memory"][:1] == ["inject"]
    assert run.files.read("/memories/AGENTS.md") == "The user prefers tabs. Codename OSPREY-12."


def test_without_recorded_memories_nothing_is_injected() -> None:
    run = replay(synthetic_thread(3, seed=1), preset("deepagents").with_overrides(["memory.enabled=true"]))
    assert run.steps[0].view_by_category.get("memory", 0) == 0
    assert not [e for e in run.events if e.layer == "memory"]


def test_the_second_memory_sample_alone_sees_the_first_threads_memory() -> None:
    if not SAMPLE.exists():
        pytest.skip("sample library not built")
    thread = load_thread(SAMPLE)
    assert thread.extra.get("memories_before")
    run = replay(thread, preset("deepagents").with_overrides(["memory.enabled=true"]))
    assert any(e.layer == "memory" and e.kind == "inject" for e in run.events)
    assert run.steps[0].view_by_category.get("memory", 0) > 0
