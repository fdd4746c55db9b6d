"""tau-bench results: many threads per file, listed and picked by `task_id-trial`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, SystemMessage, ToolMessage

from engine.base.errors import ThreadLoadError, ThreadNotFoundError
from engine.formats import detect_format, list_threads, load_thread, open_source
from tests.conftest import trace_path

SAMPLE = ("tau-bench", "gpt-4o-airline.json")


def test_lists_every_result_with_a_unique_id() -> None:
    path = trace_path(*SAMPLE)
    assert detect_format(open_source(path)) == "tau_bench"
    refs = list_threads(path)
    assert len(refs) == 200 and len({r.thread_id for r in refs}) == 200
    assert [(r.thread_id, r.messages) for r in refs[:4]] == [("0-0", 32), ("1-0", 12), ("2-0", 24), ("3-0", 62)]
    assert refs[0].title == "reward 0.0: You are mia_li_3668. You want to fly from New York to Seattle on May…"
    assert refs[-1].thread_id == "49-3"


def test_loads_the_first_thread_by_default_and_any_by_id() -> None:
    path = trace_path(*SAMPLE)
    first = load_thread(path)
    assert (first.thread_id, first.source_format, len(first.messages)) == ("0-0", "tau_bench", 32)
    assert isinstance(first.messages[0], SystemMessage)
    assert first.system_prompt is not None and first.system_prompt.startswith("# Airline Agent Policy")
    call = next(m for m in first.messages if isinstance(m, AIMessage) and m.tool_calls)
    assert call.tool_calls[0] == {"name": "get_user_details", "args": {"user_id": "mia_li_3668"},
                                  "id": "call_oIHazX6yQrB8hUwl4cRilFKj", "type": "tool_call"}
    result = first.tool_results()["call_oIHazX6yQrB8hUwl4cRilFKj"]
    assert isinstance(result, ToolMessage) and result.name == "get_user_details"
    # gpt-4o's runs reuse call ids across turns: the reuse is renamed with its result.
    assert first.tool_results()["call_oIHazX6yQrB8hUwl4cRilFKj~2"].name == "calculate"
    assert first.extra["renamed_tool_call_ids"] == 2
    assert sorted(tc["id"] for tc in first.tool_calls()) == sorted(first.tool_results())
    assert (first.extra["task_id"], first.extra["trial"], first.extra["reward"]) == (0, 0, 0.0)
    assert first.extra["info"]["task"]["user_id"] == "mia_li_3668"
    other = load_thread(path, thread_id="3-2")
    assert (other.thread_id, len(other.messages), other.by_role()) == (
        "3-2", 36, {"system": 1, "human": 7, "ai": 17, "tool": 11})
    assert other.messages[0].id != first.messages[0].id  # ids are per thread


def test_unknown_thread_lists_some_valid_ids() -> None:
    with pytest.raises(ThreadNotFoundError) as err:
        load_thread(trace_path(*SAMPLE), thread_id="99-9")
    assert err.value.message == "thread '99-9' not found; threads: 0-0, 1-0, 2-0, 3-0, 4-0 … (200 threads)"
    assert err.value.format == "tau_bench"


def entry(task_id: int, trial: int, traj: Any) -> dict[str, Any]:
    return {"task_id": task_id, "trial": trial, "reward": 1.0, "info": {"task": {"instruction": "Do it"}}, "traj": traj}


def write(tmp_path: Path, doc: Any) -> Path:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_repeated_task_and_trial_get_stable_suffixes(tmp_path: Path) -> None:
    traj = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    path = write(tmp_path, [entry(7, 0, traj), entry(7, 0, traj), entry(7, 1, traj), entry(7, 0, traj)])
    assert [r.thread_id for r in list_threads(path)] == ["7-0", "7-0~2", "7-1", "7-0~3"]
    assert load_thread(path, thread_id="7-0~3").extra["task_id"] == 7
    assert list_threads(path)[0].title == "reward 1.0: Do it"


def test_bad_message_names_entry_and_place(tmp_path: Path) -> None:
    path = write(tmp_path, [entry(1, 0, [{"role": "user", "content": "hi"}]), entry(2, 0, [{"content": "x"}])])
    with pytest.raises(ThreadLoadError, match="message has no 'role'") as err:
        load_thread(path, thread_id="2-0")
    assert (err.value.format, err.value.location) == ("tau_bench", "$[1].traj[0].role")
    assert len(load_thread(path).messages) == 1


def test_crashed_run_is_titled_by_its_error(tmp_path: Path) -> None:
    # tau-bench keeps a run that failed before its first turn: empty traj, info.error.
    path = write(tmp_path, [{"task_id": 0, "reward": 0.0, "info": {"error": "EOF when reading a line", "traceback": "..."},
                             "traj": [], "trial": 0}])
    assert [(r.thread_id, r.title, r.messages) for r in list_threads(path)] == [
        ("0-0", "reward 0.0: error: EOF when reading a line", 0)]
    assert load_thread(path).messages == []


def call(call_id: str | None, name: str, requestor: str = "assistant", **arguments: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "arguments": arguments, "requestor": requestor}
    if call_id is not None:
        out["id"] = call_id
    return out


def tau2_run(simulations: list[Any]) -> dict[str, Any]:
    return {"timestamp": "t", "simulations": simulations,
            "info": {"agent_info": {"llm": "agent-llm"}, "user_info": {"llm": "user-llm"},
                     "environment_info": {"domain_name": "telecom", "policy": "# Telecom policy"}},
            "tasks": [{"id": "[net]airplane", "user_scenario": {"instructions": {"reason_for_call": "No service.\nmore"}}}]}


def simulation(task_id: str, trial: int, messages: list[Any], reward: float = 1.0) -> dict[str, Any]:
    return {"id": f"sim-{trial}", "task_id": task_id, "trial": trial, "termination_reason": "user_stop",
            "agent_cost": 0.02, "reward_info": {"reward": reward}, "messages": messages}


TAU2_MESSAGES: list[Any] = [
    {"role": "assistant", "content": "Hi! How can I help?", "tool_calls": None, "usage": None},
    {"role": "user", "content": "No service.", "usage": {"prompt_tokens": 900, "completion_tokens": 9}},
    {"role": "assistant", "content": None, "tool_calls": [call("c1", "get_customer", phone="555")],
     "usage": {"prompt_tokens": 4100, "completion_tokens": 30}},
    {"id": "c1", "role": "tool", "content": "not found", "requestor": "assistant", "error": True},
    {"role": "user", "content": None, "tool_calls": [call("u1", "toggle_airplane_mode", "user")]},
    {"id": "u1", "role": "tool", "content": "Airplane mode OFF", "requestor": "user", "error": False},
    {"role": "user", "content": "Works now. ###STOP###", "tool_calls": None},
]


def test_tau2_simulations_are_threads_with_usage_and_without_user_side_tools(tmp_path: Path) -> None:
    path = write(tmp_path, tau2_run([simulation("[net]airplane", 0, TAU2_MESSAGES),
                                     simulation("[net]airplane", 1, TAU2_MESSAGES[:2], reward=0.0)]))
    assert detect_format(open_source(path)) == "tau_bench"
    assert [(r.thread_id, r.title, r.messages) for r in list_threads(path)] == [
        ("[net]airplane-0", "reward 1.0: No service.", 7), ("[net]airplane-1", "reward 0.0: No service.", 2)]
    thread = load_thread(path)
    assert [type(m).__name__ for m in thread.messages] == [
        "AIMessage", "HumanMessage", "AIMessage", "ToolMessage", "HumanMessage"]
    assert thread.tool_calls() == [{"name": "get_customer", "args": {"phone": "555"}, "id": "c1", "type": "tool_call"}]
    result = thread.tool_results()["c1"]
    assert (result.name, result.content, result.status) == ("get_customer", "not found", "error")
    # The simulated user's own call and its result never reach the agent: counted, not shown.
    assert thread.extra["user_side_messages"] == 2
    assert [(u.input_tokens, u.output_tokens) for u in thread.usage.values()] == [(4100, 30)]
    assert thread.usage[thread.messages[2].id or ""].input_tokens == 4100
    assert (thread.model, thread.system_prompt) == ("agent-llm", "# Telecom policy")
    assert (thread.extra["reward"], thread.extra["termination_reason"], thread.extra["agent_cost"]) == (1.0, "user_stop", 0.02)
    assert load_thread(path, thread_id="[net]airplane-1").extra["reward"] == 0.0


def test_tau2_calls_without_ids_pair_in_order_and_ticks_are_flattened(tmp_path: Path) -> None:
    no_ids = [{"role": "user", "content": "Dispute"},
              {"role": "assistant", "content": "", "tool_calls": [call(None, "verify"), call(None, "search", q="x")]},
              {"role": "tool", "content": "ok"}, {"role": "tool", "content": "found"}]
    ticks = [{"tick_id": 0, "user_chunk": {"role": "user", "content": "hi"}},
             {"tick_id": 1, "agent_chunk": {"role": "assistant", "content": None},
              "agent_tool_calls": [call("k1", "get_order")],
              "agent_tool_results": [{"id": "k1", "role": "tool", "content": "{}"}]},
             {"tick_id": 2, "agent_chunk": {"role": "assistant", "content": "On its way."}}]
    path = write(tmp_path, {"simulations": [simulation("a", 0, no_ids),
                                            {"task_id": "b", "trial": 0, "messages": [], "ticks": ticks}]})
    first = load_thread(path)
    assert [(m.name, m.content) for m in first.tool_results().values()] == [("verify", "ok"), ("search", "found")]
    assert sorted(tc["id"] for tc in first.tool_calls()) == sorted(first.tool_results())
    voice = load_thread(path, thread_id="b-0")
    assert [(type(m).__name__, m.content) for m in voice.messages] == [
        ("HumanMessage", "hi"), ("AIMessage", ""), ("ToolMessage", "{}"), ("AIMessage", "On its way.")]
    assert voice.tool_results()["k1"].name == "get_order"


@pytest.mark.parametrize("doc, location, message", [
    ({"info": {}, "simulations": []}, "$.simulations", "the run holds no simulations"),
    ({"simulations": [simulation("a", 0, [{"role": "assistant", "tool_calls": [{"arguments": {}}]}])]},
     "$.simulations[0].messages[0].tool_calls[0].name", "expected a string, got null"),
    ({"simulations": [simulation("a", 0, [{"role": "assistant", "tool_calls": [{"name": "f", "arguments": [1]}]}])]},
     "$.simulations[0].messages[0].tool_calls[0].arguments", "expected an object, got array"),
    ({"simulations": [simulation("a", 0, [{"role": "robot", "content": "x"}])]},
     "$.simulations[0].messages[0].role", "unknown role 'robot'"),
])
def test_bad_tau2_run_names_the_place(tmp_path: Path, doc: dict[str, Any], location: str, message: str) -> None:
    with pytest.raises(ThreadLoadError, match=message) as err:
        load_thread(write(tmp_path, doc))
    assert (err.value.format, err.value.location) == ("tau_bench", location)
