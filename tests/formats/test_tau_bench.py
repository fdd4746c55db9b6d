"""tau-bench results: many threads per file, listed and picked by `task_id-trial`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, SystemMessage, ToolMessage

from engine.errors import ThreadLoadError, ThreadNotFoundError
from engine.formats import detect_format, list_threads, load_thread, open_source
from tests.conftest import trace_path

SAMPLE = ("tau-bench", "gpt-4o-airline.json")


def test_lists_every_result_with_a_unique_id() -> None:
    path = trace_path(*SAMPLE)
    assert detect_format(open_source(path)) == "tau_bench"
    refs = list_threads(path)
    assert len(refs) == 200 and len({r.thread_id for r in refs}) == 200
    assert [(r.thread_id, r.messages) for r in refs[:4]] == [("0-0", 32), ("1-0", 12), ("2-0", 24), ("3-0", 62)]
    assert refs[0].title == "reward 0.0: You are mia_li_3668. You want to fly from New York to Seattle on May 20 "
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
