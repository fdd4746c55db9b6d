"""`ctxi inspect` and `engine.recorded.inspect.inspect_thread`: the documented object, text output, errors."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from engine.cli.ctxi import main
from engine.formats.native import dumps
from engine.recorded.inspect import inspect_thread, step_contexts
from engine.thread.model import RecordedCompaction, RecordedUsage, Thread
from engine.tokens.counters import get_counter
from tests.conftest import trace_path

TOP_KEYS = ["schema", "version", "format", "thread_id", "title", "model", "max_input_tokens", "messages", "by_role",
            "tool_calls", "subagents", "recorded_compactions", "recorded_microcompactions", "skipped_records", "warnings",
            "compaction_call_of", "tokens", "largest_messages", "steps"]


def sample_thread() -> Thread:
    """system, task, a call and its result, a compaction, then two more model calls."""
    call = {"name": "read_file", "args": {"path": "a.py"}, "id": "c1", "type": "tool_call"}
    messages = [
        SystemMessage("You are a coding agent.", id="m0"),
        HumanMessage("Fix a.py", id="m1"),
        AIMessage("", tool_calls=[call], id="m2"),
        ToolMessage("x = 1\n" * 200, tool_call_id="c1", name="read_file", id="m3"),
        AIMessage("Fixed.", id="m4"),
        HumanMessage("Now b.py", id="m5"),
        AIMessage("Done.", id="m6"),
    ]
    sub = Thread("agent-1", [HumanMessage("look", id="s0"), AIMessage("found", id="s1")])
    return Thread(
        "t1", messages, source_format="native", model="m", max_input_tokens=1000, title="Fix a.py",
        usage={"m2": RecordedUsage(input_tokens=500, cache_read_input_tokens=100), "m6": RecordedUsage(input_tokens=50)},
        compactions=[RecordedCompaction(index=5, trigger="auto", pre_tokens=900, summary="SUMMARY: fixed a.py",
                                        message_id="sum")],
        subagents={"c1": sub},
    )


def test_steps_count_from_the_last_compaction() -> None:
    counter = get_counter()
    thread = sample_thread()
    m = thread.messages
    summary = 3 + counter.count_text("SUMMARY: fixed a.py")
    system = counter.count_message(m[0])
    after = summary + counter.count_message(m[5])
    # right after the compaction the request is 50: the agent's prompt is what the system prompt, the summary
    # and m5 leave of it; the rest of the first call's hidden input was first-turn content the compaction
    # removed (calibration: measured at the first recorded call after a compaction)
    prompt = 50 - system - after
    first_turn = 600 - counter(m[:2]) - prompt
    assert step_contexts(thread, counter) == [
        {"step": 0, "index": 2, "message_id": "m2", "context_tokens": counter(m[:2]), "recorded_input_tokens": 600,
         "agent_prompt_tokens": prompt, "hidden_tokens": first_turn, "calibrated_tokens": 600},
        {"step": 1, "index": 4, "message_id": "m4", "context_tokens": counter(m[:4]), "recorded_input_tokens": None,
         "agent_prompt_tokens": prompt, "hidden_tokens": first_turn,
         "calibrated_tokens": counter(m[:4]) + prompt + first_turn},
        {"step": 2, "index": 6, "message_id": "m6", "context_tokens": system + after, "recorded_input_tokens": 50,
         "agent_prompt_tokens": prompt, "hidden_tokens": 0, "calibrated_tokens": 50},
    ]


def test_inspect_object() -> None:
    counter = get_counter()
    thread = sample_thread()
    report = inspect_thread(thread, counter)
    assert list(report) == TOP_KEYS
    assert (report["schema"], report["version"], report["format"], report["thread_id"]) == (
        "context-inspector/inspect", 1, "native", "t1")
    assert (report["recorded_microcompactions"], report["skipped_records"]) == ([], {})
    assert report["messages"] == 7
    assert report["by_role"] == {"ai": 3, "human": 2, "system": 1, "tool": 1}
    assert report["tool_calls"] == {"count": 1, "by_name": {"read_file": 1}}
    assert report["subagents"] == [{"tool_call_id": "c1", "thread_id": "agent-1", "messages": 2,
                                    "tokens": counter(thread.subagents["c1"].messages)}]
    summary_tokens = 3 + counter.count_text("SUMMARY: fixed a.py")
    assert report["recorded_compactions"] == [{"index": 5, "trigger": "auto", "pre_tokens": 900,
                                               "summary_tokens": summary_tokens}]
    tokens = report["tokens"]
    assert tokens["counter"] == "o200k_base"
    assert tokens["total"] == counter(thread.messages) == sum(tokens["by_category"].values())
    assert sorted(tokens["by_category"]) == ["ai", "human", "system", "tool_calls", "tool_results"]
    assert (tokens["peak"], tokens["peak_step"]) == (counter(thread.messages[:4]), 1)
    # the next request: the system prompt, the recorded summary and what followed it
    assert tokens["final_context"] == counter.count_message(thread.messages[0]) + summary_tokens + counter(thread.messages[5:])
    assert report["largest_messages"][0] == {"index": 3, "id": "m3", "role": "tool",
                                             "tokens": counter.count_message(thread.messages[3])}
    assert len(report["largest_messages"]) == 5
    assert [s["step"] for s in report["steps"]] == [0, 1, 2]


def write_native(tmp_path: Path) -> Path:
    path = tmp_path / "thread.json"
    path.write_text(dumps(sample_thread()), encoding="utf-8")
    return path


def test_json_output_matches_inspect_thread(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_native(tmp_path)
    assert main(["inspect", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == inspect_thread(sample_thread(), get_counter())


def test_counter_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_native(tmp_path)
    assert main(["inspect", str(path), "--json", "--counter", "approximate"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["tokens"]["counter"] == "approximate"
    assert out["tokens"]["total"] == get_counter("approximate")(sample_thread().messages)


def test_text_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_native(tmp_path)
    assert main(["inspect", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    total = get_counter()(sample_thread().messages)
    assert lines[1:8] == [
        "format:      native",
        "thread:      t1  Fix a.py",
        "model:       m (window 1,000)",
        "messages:    7  (ai 3, human 2, system 1, tool 1)",
        "tool calls:  1  (read_file 1)",
        "sub-agents:  1",
        f"  c1  2 messages, {get_counter()(sample_thread().subagents['c1'].messages):,} tokens",
    ]
    assert "recorded compactions: 1" in lines
    assert any(line.startswith(f"tokens (o200k_base): total {total:,}, peak context ") for line in lines)
    assert "steps:       3 model calls, 2 with recorded usage" in lines


def test_real_claude_code_session(capsys: pytest.CaptureFixture[str]) -> None:
    path = trace_path("claude-code", "4d5611e5-241a-462a-8d15-5122611a9569.jsonl")
    assert main(["inspect", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["format"], out["messages"], out["by_role"]) == ("claude_code", 295, {"ai": 139, "human": 6, "tool": 150})
    assert out["recorded_compactions"] == [{"index": 135, "trigger": "auto", "pre_tokens": 170251,
                                            "summary_tokens": out["recorded_compactions"][0]["summary_tokens"]}]
    assert [s["tool_call_id"] for s in out["subagents"]] == ["toolu_017pLRuPHYTX5t99EnLyV53m"]
    assert out["tool_calls"]["by_name"]["Bash"] == 67
    assert len(out["steps"]) == 139 and all(s["recorded_input_tokens"] for s in out["steps"])
    # Claude Code's prompt is the cache prefix later calls read (21,478); the rest of the first call's hidden
    # input is the first turn's context (CLAUDE.md, reminders)
    assert out["steps"][0] == {"step": 0, "index": 1, "message_id": "msg_01PdWvcjJ6E9BgscDveYt9YV",
                               "context_tokens": 39, "recorded_input_tokens": 26450,
                               "agent_prompt_tokens": 21478, "hidden_tokens": 26450 - 21478 - round(1.12 * 39),
                               "calibrated_tokens": 26450}
    # calibrated = the provider's tokens of prompt, texts and hidden = recorded, at every recorded step
    assert all(s["calibrated_tokens"] == s["recorded_input_tokens"] for s in out["steps"])


def test_list_multi_thread_file(capsys: pytest.CaptureFixture[str]) -> None:
    path = trace_path("tau-bench", "gpt-4o-airline.json")
    assert main(["inspect", "--list", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 201
    assert lines[0].split() == ["thread", "id", "messages", "title"]
    assert lines[1].split()[:4] == ["0-0", "32", "reward", "0.0:"]
    assert main(["inspect", "--list", "--json", str(path)]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed[3] == {"thread_id": "3-0", "title": listed[3]["title"], "messages": 62}
    assert main(["inspect", str(path), "--thread", "3-0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["messages"] == 62


@pytest.mark.parametrize("args, message", [
    (["inspect", "{dir}/missing.json"], "ctxi inspect: error: {dir}/missing.json: file not found"),
    (["inspect", "{dir}/empty.json"], "ctxi inspect: error: {dir}/empty.json: file is empty"),
    (["inspect", "{dir}/big.json", "--max-bytes", "10"],
     "ctxi inspect: error: {dir}/big.json: file is 20 bytes, above the size limit of 10 bytes "
     "(raise it with --max-bytes or CTXI_MAX_BYTES)"),
    (["inspect", "{dir}/big.json", "--format", "swe_agent"],
     "ctxi inspect: error: {dir}/big.json, format swe_agent, at $: expected a SWE-agent trajectory: an object with "
     "'trajectory' (array) and 'history' or 'info'"),
])
def test_errors_are_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        args: list[str], message: str) -> None:
    (tmp_path / "empty.json").write_text("")
    (tmp_path / "big.json").write_text('{"a": "0123456789"}\n')
    assert main([a.format(dir=tmp_path) for a in args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == message.format(dir=tmp_path) + "\n"


def test_console_script_entry_point(tmp_path: Path) -> None:
    exe = shutil.which("ctxi")
    if exe is None:
        pytest.skip("ctxi console script not installed (pip install -e .)")
    path = write_native(tmp_path)
    done = subprocess.run([exe, "inspect", str(path), "--json"], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout)["thread_id"] == "t1"
