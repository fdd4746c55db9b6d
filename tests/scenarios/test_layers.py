"""Each scenario's thread makes the layers it claims act, asserted through `replay` events."""

from __future__ import annotations

from collections import Counter

import pytest
from langchain_core.messages import AIMessage, ToolMessage

from engine.config.schema import preset
from engine.run.replay import replay
from engine.scenarios import get_scenario, scenario_names
from engine.tokens.counters import get_counter
from engine.workspace.workspace import Workspace
from tests.scenarios.conftest import generated


def kinds(run) -> Counter[str]:  # noqa: ANN001
    return Counter(f"{e.layer}.{e.kind}" for e in run.events)


@pytest.mark.parametrize("name", scenario_names())
def test_every_scenario_claims_layers_that_exist(name: str) -> None:
    scenario = get_scenario(name)
    assert scenario.layers
    assert set(scenario.layers) <= {"filesystem", "subagents", "summarization", "todo", "dangling", "memory"}
    assert scenario.teaches and scenario.title


def test_code_analysis_offloads_large_dumps_and_the_agent_reads_the_saved_file() -> None:
    thread = generated("code-analysis").thread
    run = replay(thread, preset("deepagents"))
    offloads = [e for e in run.events if e.layer == "filesystem" and e.kind == "offload"]
    assert len(offloads) >= 1
    # the offloaded results are the `cat` dumps of the large generated files
    results = thread.tool_results()
    calls = {tc["id"]: tc for tc in thread.tool_calls()}
    for e in offloads:
        call = calls[e.payload["tool_call_id"]] if "tool_call_id" in e.payload else None
        if call is not None:
            assert call["name"] == "execute" and call["args"]["command"].startswith("cat ")
    big = [r for r in results.values() if len(str(r.content)) > 80_000]
    assert len(big) == len(offloads)
    # the live agent saw the stub and paged through /large_tool_results/
    paged = [tc for tc in thread.tool_calls() if tc["name"] == "read_file"
             and tc["args"]["file_path"].startswith("/large_tool_results/")]
    assert paged
    assert run.files.exists(paged[0]["args"]["file_path"])


def test_research_report_clamps_parallel_tasks_and_isolates_subagents() -> None:
    result = generated("research-report")
    thread = result.thread
    first_fan_out = next(m for m in thread.messages if isinstance(m, AIMessage)
                         and sum(tc["name"] == "task" for tc in m.tool_calls) > 3)
    task_ids = [tc["id"] for tc in first_fan_out.tool_calls if tc["name"] == "task"]
    assert len(task_ids) == 6
    # live, DeerFlow's clamp kept the first 3: only they ran and have transcripts
    ran = [i for i in task_ids if i in thread.tool_results()]
    assert ran == task_ids[:3]
    assert set(ran) <= set(thread.subagents)
    run = replay(thread, preset("deerflow"))
    clamps = [e for e in run.events if e.layer == "subagents" and e.kind == "clamp"]
    assert len(clamps) == 1
    # isolation: each sub-agent read far more than it returned
    counter = get_counter()
    results = thread.tool_results()
    for call_id, sub in thread.subagents.items():
        inside = sum(counter.count_message(m) for m in sub.messages)
        returned = counter.count_message(results[call_id])
        assert inside > 3 * returned
        assert sub.messages[0].type == "human" and sub.messages[-1].type == "ai"
        assert not any(tc["name"] == "task" for tc in sub.tool_calls())  # no nesting


def test_long_refactor_reminds_the_todos_after_a_summary() -> None:
    thread = generated("long-refactor").thread
    run = replay(thread, preset("deerflow"))
    summaries = [e.step for e in run.events if e.layer == "summarization" and e.kind == "summarize"]
    reminders = [e.step for e in run.events if e.layer == "todo" and e.kind == "reminder"]
    assert summaries and reminders
    assert min(reminders) >= min(summaries)
    # the reminder lists the todo items the agent wrote
    first = next(e for e in run.events if e.layer == "todo" and e.kind == "reminder")
    assert "- [completed] Refactor /project/src/ledgerline/billing.py" in first.payload["text"]
    assert thread.todos == [] and thread.extra["final_todos"]


def test_interrupted_leaves_dangling_calls_that_are_patched_at_every_later_step() -> None:
    result = generated("interrupted")
    thread = result.thread
    answered = thread.tool_results()
    dangling = [tc["id"] for tc in thread.tool_calls() if tc["id"] not in answered]
    assert dangling == ["call-3-0", "call-3-1", "call-3-2", "call-8-0"]
    assert [m.type for m in thread.messages].count("human") == 3
    run = replay(thread, preset("deerflow"))
    patched_steps = sorted({e.step for e in run.events if e.layer == "dangling"})
    assert patched_steps == list(range(4, len(run.steps)))
    view = run.steps[-1].view
    patches = [m for m in view if isinstance(m, ToolMessage) and m.tool_call_id in dangling]
    assert [p.tool_call_id for p in patches] == dangling
    assert all(p.status == "error" for p in patches)


def test_memory_carries_across_two_threads_through_the_workspace(tmp_path) -> None:  # noqa: ANN001
    result = generated("memory-two-threads")
    first, second = result.related[0], result.thread
    assert second.extra["previous_thread"] == first.thread_id
    assert "KESTREL" in second.extra["memories_before"]["/memories/AGENTS.md"]
    ws = Workspace(tmp_path)
    config = get_scenario("memory-two-threads").lesson_config()  # deepagents with memory on
    r1 = replay(first, config, workspace=ws)
    assert kinds(r1)["memory.persist"] == 1
    assert "Release 2.4 codename: KESTREL" in (tmp_path / "memories" / "AGENTS.md").read_text()
    r2 = replay(second, config, workspace=ws)
    inject = next(e for e in r2.events if e.layer == "memory" and e.kind == "inject")
    assert inject.step == 0 and "KESTREL" in inject.payload["text"]
    # the live agent used the injected memory instead of looking for it
    assert not any(tc["name"] == "ls" for tc in second.tool_calls())
    assert "KESTREL" in str(second.messages[-1].content)
    assert "Thursdays after 14:00 CET" in str(second.messages[-1].content)


def test_memory_thread_without_the_memory_layer_has_to_look() -> None:
    config = preset("deepagents").with_overrides(["memory.enabled=false"])
    result = get_scenario("memory-two-threads").run_live(steps=8, config=config)
    second = result.thread
    assert [tc["name"] for tc in second.tool_calls()][:2] == ["ls", "read_file"]


def test_needle_is_planted_early_and_needed_late() -> None:
    result = generated("needle")
    thread = result.thread
    needle = thread.extra["needle"]
    assert needle["text"] == "MERLIN-88"
    assert needle["planted_message_id"] == thread.messages[0].id
    assert "MERLIN-88" in str(thread.messages[0].content)
    assert sum("MERLIN-88" in str(m.content) for m in thread.messages[1:-1] if m.type != "ai") == 0
    # generated under deepagents: offloading kept the context small, so the agent still knew it
    assert "MERLIN-88" in str(thread.messages[-1].content)
    run = replay(thread, preset("deerflow"))
    assert kinds(run)["summarization.summarize"] >= 2
    first_human = thread.messages[0].id
    assert all(m.id != first_human for m in run.steps[-1].view)  # summarized away under DeerFlow's trigger
