"""SWE-agent trajectories: the two shared samples (function calling and the older text-only form)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from engine.errors import ThreadLoadError
from engine.formats import detect_format, load_thread, open_source
from tests.conftest import trace_path

FUNCTION_CALLING = "marshmallow-1867.function_calling_replace_from_source.traj"
TEXT_ONLY = "pydicom__pydicom-1458.traj"


def test_function_calling_run() -> None:
    path = trace_path("swe-agent", FUNCTION_CALLING)
    assert detect_format(open_source(path)) == "swe_agent"
    thread = load_thread(path)
    assert thread.thread_id == "marshmallow-1867.function_calling_replace_from_source"
    assert thread.by_role() == {"system": 1, "human": 1, "ai": 13, "tool": 13}
    assert thread.title == "TimeDelta serialization precision"
    assert thread.model == "replay"  # the run was a replay: replay_config names the replay model
    assert thread.system_prompt is not None and thread.system_prompt.startswith("SETTING: You are an autonomous programmer")
    first_call = thread.messages[2]
    assert isinstance(first_call, AIMessage)
    assert first_call.tool_calls == [{"name": "bash", "args": {"command": "ls -F"}, "id": "call_9diWc1DYm4RLmPfHgIaP2wd",
                                      "type": "tool_call"}]
    assert first_call.additional_kwargs["swe_agent_action"] == "ls -F"
    result = thread.messages[3]
    assert isinstance(result, ToolMessage)
    assert (result.tool_call_id, result.name) == ("call_9diWc1DYm4RLmPfHgIaP2wd", "bash")
    # The demonstration reuses call ids across turns; each reuse gets a suffix and keeps its result.
    assert [tc["id"] for tc in thread.tool_calls()][5:9] == [
        "call_5iDdbOYybq7L19vqXmR0DPaU", "call_5iDdbOYybq7L19vqXmR0DPaU~2",
        "call_ahToD2vM0aQWJPkRmy5cumru", "call_ahToD2vM0aQWJPkRmy5cumru~2"]
    assert sorted(tc["id"] for tc in thread.tool_calls()) == sorted(thread.tool_results())
    assert thread.extra["info"]["exit_status"] == "submitted"
    assert thread.extra["info"]["model_stats"] == {"instance_cost": 0, "tokens_sent": 0, "tokens_received": 0,
                                                   "api_calls": 13}
    assert not any(k.startswith("edited_files") for k in thread.extra["info"])
    inputs = thread.extra["step_inputs"]
    assert [s["messages"] for s in inputs] == list(range(4, 29, 2))
    assert inputs[0] == {"step": 0, "messages": 4, "chars": 6085}


def test_text_only_run_keeps_observations_as_user_turns() -> None:
    thread = load_thread(trace_path("swe-agent", TEXT_ONLY))
    assert thread.by_role() == {"system": 1, "human": 13, "ai": 12}
    assert thread.tool_calls() == []
    demo = thread.messages[1]
    assert isinstance(demo, HumanMessage) and demo.additional_kwargs["swe_agent_demo"] is True
    assert thread.title == "Pixel Representation attribute should be optional for pixel data handler"
    assert thread.extra["info"]["model_stats"]["tokens_sent"] == 122612
    assert thread.extra["environment"] == "swe_main"
    assert "step_inputs" not in thread.extra
    assert thread.messages[-1].additional_kwargs["swe_agent_action"] == "submit\n"


def write(tmp_path: Path, doc: Any) -> Path:
    path = tmp_path / "run.traj"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_steps_rebuild_a_run_without_history(tmp_path: Path) -> None:
    doc = {"trajectory": [{"thought": "look", "action": "ls", "observation": "a.py", "response": "look\n```ls```"},
                          {"thought": "done", "action": "submit", "observation": "diff", "response": ""}],
           "info": {"exit_status": "submitted"}}
    thread = load_thread(write(tmp_path, doc))
    assert [(type(m).__name__, m.content) for m in thread.messages] == [
        ("AIMessage", "look\n```ls```"), ("HumanMessage", "a.py"), ("AIMessage", "done"), ("HumanMessage", "diff")]
    assert thread.messages[2].additional_kwargs == {"swe_agent_action": "submit"}


def test_tool_turn_answering_two_ids(tmp_path: Path) -> None:
    calls = [{"id": f"c{i}", "type": "function", "function": {"name": "bash", "arguments": json.dumps({"command": c})}}
             for i, c in enumerate(["ls", "pwd"])]
    doc = {"trajectory": [], "info": {}, "history": [
        {"role": "system", "content": "sys"},
        {"role": "assistant", "content": "two", "tool_calls": calls},
        {"role": "tool", "content": "out", "tool_call_ids": ["c0", "c1"]},
        {"role": "tool", "content": "orphan", "tool_call_ids": []},
    ]}
    thread = load_thread(write(tmp_path, doc))
    assert [(type(m).__name__, getattr(m, "tool_call_id", None), m.content) for m in thread.messages] == [
        ("SystemMessage", None, "sys"), ("AIMessage", None, "two"), ("ToolMessage", "c0", "out"),
        ("ToolMessage", "c1", ""), ("HumanMessage", None, "orphan")]
    assert isinstance(thread.messages[0], SystemMessage)


@pytest.mark.parametrize("history, location, message", [
    (["oops"], "$.history[0]", "expected a message object, got string"),
    ([{"role": "tool", "content": "x", "tool_call_ids": "c0"}], "$.history[0].tool_call_ids",
     "expected a list of tool call ids, got string"),
    ([{"role": "assistant", "content": 5}], "$.history[0].content", "expected a string"),
])
def test_bad_history_names_the_place(tmp_path: Path, history: list[Any], location: str, message: str) -> None:
    with pytest.raises(ThreadLoadError, match=message) as err:
        load_thread(write(tmp_path, {"trajectory": [], "history": history, "info": {}}))
    assert (err.value.format, err.value.location) == ("swe_agent", location)
