"""SWE-agent trajectories: the two shared samples (function calling and the older text-only form)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from engine.base.errors import ThreadLoadError, ThreadNotFoundError
from engine.formats import detect_format, list_threads, load_thread, open_source
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


def v11_history() -> list[dict[str, Any]]:
    """SWE-agent 1.1's shape: content lists with cache_control, litellm calls with `index`, thinking_blocks."""
    text = "I've uploaded a repository. Consider the following PR description:\n\n<pr_description>\nFix the widget\n"
    return [
        {"role": "system", "content": [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
         "agent": "main", "message_type": "system_prompt"},
        {"role": "user", "content": [{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}],
         "agent": "main", "message_type": "observation"},
        {"role": "assistant", "content": "Look", "thought": "Look", "action": "view /repo", "agent": "main",
         "message_type": "action", "thinking_blocks": [{"type": "thinking", "thinking": "hmm", "signature": "s"}],
         "tool_calls": [{"index": 1, "name": None, "id": "toolu_1", "type": "function",
                         "function": {"name": "str_replace_editor", "arguments": "{\"command\": \"view\"}"}}]},
        {"role": "tool", "content": [{"type": "text", "text": "files", "cache_control": {"type": "ephemeral"}}],
         "agent": "main", "message_type": "observation", "tool_call_ids": ["toolu_1"]},
    ]


def test_v11_list_content_and_pr_description_title(tmp_path: Path) -> None:
    doc = {"trajectory": [], "history": v11_history(), "environment": "django__django-1",
           "replay_config": json.dumps({"agent": {"model": {"name": "claude-x"}}}),
           "info": {"swe_agent_version": "1.1.0", "model_stats": {"tokens_sent": 8123, "tokens_received": 12}}}
    thread = load_thread(write(tmp_path, doc))
    assert thread.by_role() == {"system": 1, "human": 1, "ai": 1, "tool": 1}
    assert (thread.title, thread.model, thread.system_prompt) == ("Fix the widget", "claude-x", "sys")
    assert thread.tool_calls() == [{"name": "str_replace_editor", "args": {"command": "view"}, "id": "toolu_1",
                                    "type": "tool_call"}]
    assert thread.tool_results()["toolu_1"].content[0]["text"] == "files"
    assert thread.messages[2].additional_kwargs["thinking_blocks"][0]["thinking"] == "hmm"
    assert thread.extra["info"]["model_stats"] == {"tokens_sent": 8123, "tokens_received": 12}


def attempt(exit_status: str, history: list[dict[str, Any]]) -> dict[str, Any]:
    return {"trajectory": [], "history": history, "info": {"exit_status": exit_status}, "environment": "main"}


def test_retry_agent_attempts_are_threads(tmp_path: Path) -> None:
    first, second = attempt("exit_cost", v11_history()[:2]), attempt("submitted", v11_history())
    # Mid-run (choose=False) a RetryAgent file holds only its attempts.
    path = write(tmp_path, {"attempts": [first, second]})
    assert detect_format(open_source(path)) == "swe_agent"
    assert [(r.thread_id, r.messages) for r in list_threads(path)] == [("run.attempt-0", 2), ("run.attempt-1", 4)]
    assert (load_thread(path).thread_id, load_thread(path).extra["threads_in_file"]) == ("run.attempt-0", 2)
    # Once chosen, the best attempt is also merged into the top level and loads by default.
    chosen = {"attempts": [first, second], **second, "info": {"exit_status": "submitted", "best_attempt_idx": 1}}
    path = write(tmp_path, chosen)
    assert [r.thread_id for r in list_threads(path)] == ["run", "run.attempt-0", "run.attempt-1"]
    top = load_thread(path)
    assert (top.thread_id, len(top.messages), top.extra["info"]["best_attempt_idx"]) == ("run", 4, 1)
    assert load_thread(path, thread_id="run.attempt-0").extra["info"] == {"exit_status": "exit_cost"}
    with pytest.raises(ThreadNotFoundError, match="threads: run, run.attempt-0, run.attempt-1"):
        load_thread(path, thread_id="run.attempt-7")


def test_bad_attempt_names_its_place(tmp_path: Path) -> None:
    bad = attempt("submitted", [{"role": "assistant", "content": 5}])
    path = write(tmp_path, {"attempts": [attempt("submitted", v11_history()), bad]})
    with pytest.raises(ThreadLoadError, match="expected a string") as err:
        load_thread(path, thread_id="run.attempt-1")
    assert (err.value.format, err.value.location) == ("swe_agent", "$.attempts[1].history[0].content")
