"""The same arguments give a byte-identical thread; different seeds give different ones."""

from __future__ import annotations

import pytest

from engine.formats import load_thread
from engine.formats.native import dumps
from engine.scenarios import generate, scenario_names
from tests.scenarios.conftest import TEST_STEPS, generated


@pytest.mark.parametrize("name", scenario_names())
def test_regeneration_is_byte_identical(name: str) -> None:
    steps = min(TEST_STEPS[name], 10)
    first = dumps(generate(name, steps=steps, seed=3))
    assert dumps(generate(name, steps=steps, seed=3)) == first
    assert "uuid" not in first


def test_ids_are_stable_and_unique() -> None:
    thread = generated("research-report").thread
    ids = [m.id for m in thread.messages]
    assert len(set(ids)) == len(ids)
    assert ids[:3] == [thread.messages[0].id, "ai-0", "tool-call-0-0"]
    sub_id = sorted(thread.subagents)[0]
    sub = thread.subagents[sub_id]
    assert sub.thread_id == f"task-{sub_id}"
    assert sub.messages[1].id == f"{sub_id}-ai-0"


def test_seeds_change_the_thread() -> None:
    a = generate("needle", steps=10, seed=0)
    b = generate("needle", steps=10, seed=1)
    assert a.extra["needle"]["text"] != b.extra["needle"]["text"]
    assert dumps(generate("code-analysis", steps=12, seed=0)) != dumps(generate("code-analysis", steps=12, seed=5))


def test_thread_metadata(tmp_path) -> None:  # noqa: ANN001
    thread = generated("code-analysis").thread
    assert thread.model == "scenario:code-analysis"
    assert thread.usage == {}
    assert thread.system_prompt and thread.system_prompt.startswith("You are a software engineering agent")
    assert [t["name"] for t in thread.tools] == ["ls", "read_file", "write_file", "edit_file", "grep", "glob",
                                                 "write_todos", "web_search", "execute", "task"]
    assert thread.extra["scenario"] == {"name": "code-analysis", "steps": 14, "seed": 0, "preset": "deepagents",
                                        "outcome": "done", "layers": ["filesystem"], "lesson_preset": "deepagents"}
    path = tmp_path / "t.json"
    path.write_text(dumps(thread), encoding="utf-8")
    assert dumps(load_thread(str(path))) == dumps(thread)
