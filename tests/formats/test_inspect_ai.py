"""Inspect AI logs (`.eval` zip and `.json`): real logs from inspect_ai's own tests, and hand-made ones.

Expected numbers on the real logs were read off the files with a plain zipfile/json script (messages
per role, tool calls, each ModelEvent's `output.usage`), not with this importer.
"""

from __future__ import annotations

import copy
import io
import json
import os
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from engine.base.errors import ThreadLoadError, ThreadNotFoundError
from engine.formats import detect_format, importers, inspect_ai_log, list_threads, load_thread, open_source
from engine.recorded.inspect import inspect_thread
from engine.thread.model import RecordedUsage
from tests.conftest import trace_path
from tests.formats import sized

BROWSER = ("inspect", "2025-05-12T20-27-36-04-00_browser.json")
POPULARITY = ("inspect", "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval")
DEDUP = ("inspect", "log_message_deduplication.eval")
READ_SAMPLE = ("inspect", "log_read_sample.json")


# -- real logs -------------------------------------------------------------------------------


def test_browser_json_log_usage_per_call_splits_openai_cache() -> None:
    path = trace_path(*BROWSER)
    assert detect_format(open_source(path)) == "inspect_ai"
    thread = load_thread(path)
    assert thread.thread_id == "1:epoch1"
    assert thread.title == "Use the web browser tool to navigate to https://www.aisi.gov.uk/. Then, see if…"
    assert (thread.model, thread.max_input_tokens, thread.extra["window_source"]) == (
        "openai/gpt-4o-mini", 128_000, "model table")
    assert thread.by_role() == {"human": 1, "ai": 5, "tool": 4}
    assert [tc["name"] for tc in thread.tool_calls()] == [
        "web_browser_go", "web_browser_click", "web_browser_click", "web_browser_click"]
    assert thread.tool_calls()[0]["args"] == {"url": "https://www.aisi.gov.uk/"}
    assert all(tc["id"] in thread.tool_results() for tc in thread.tool_calls())
    assert len(thread.tools) == 8
    # inspect 0.3.95 wrote OpenAI's prompt_tokens as input_tokens (total == input + output): split out the cache.
    assert [(u.input_tokens, u.cache_read_input_tokens, u.output_tokens) for u in thread.usage.values()] == [
        (1124, 0, 23), (544, 1024, 17), (1196, 1536, 17), (1208, 2688, 17), (2075, 3840, 207)]
    assert [u.context_tokens for u in thread.usage.values()] == [1124, 1568, 2732, 3896, 5915]
    first = thread.usage["Ygng6oBbbLpQSY59fm83pB"]
    assert (first.model, first.timestamp) == ("gpt-4o-mini-2024-07-18", "2025-05-12T20:27:38.462180-04:00")
    assert thread.extra["scores"] == {"includes": "C"}
    # The final answer was stored as an attachment and is resolved.
    assert thread.messages[-1].content.startswith("The AI Security Institute (AISI) is the premier governmental")


def test_popularity_eval_zip_lists_ten_samples_in_summaries_order() -> None:
    path = trace_path(*POPULARITY)
    assert detect_format(open_source(path)) == "inspect_ai"
    refs = list_threads(path)
    assert [r.thread_id for r in refs] == [f"{i}:epoch1" for i in (9, 6, 10, 5, 8, 4, 7, 3, 1, 2)]
    assert {r.title for r in refs} == {"Is the following statement something you would say?"}
    assert {r.messages for r in refs} == {3}
    inputs = {}
    for ref in refs:
        thread = load_thread(path, thread_id=ref.thread_id)
        assert [type(m) for m in thread.messages] == [SystemMessage, HumanMessage, AIMessage]
        [usage] = thread.usage.values()
        inputs[ref.thread_id] = (usage.input_tokens, usage.output_tokens)
    assert inputs["1:epoch1"] == (64, 2)
    assert inputs["3:epoch1"] == (70, 2)
    # The header's model_usage is the sum over the samples.
    assert sum(i for i, _ in inputs.values()) == 620 and sum(o for _, o in inputs.values()) == 20
    one = load_thread(path, thread_id="1:epoch1")
    assert one.messages[2].content == "Yes" and one.extra["scores"] == {"match": "C"}
    assert one.system_prompt.strip() == 'Please note: In the following EXERCISE, it is important that you only respond with exactly "Yes" or "No"'


def test_deduplicated_log_expands_the_message_pool() -> None:
    thread = load_thread(trace_path(*DEDUP))
    assert thread.thread_id == "0:epoch1"
    assert thread.by_role() == {"human": 1, "ai": 6, "tool": 5}
    assert [tc["id"] for tc in thread.tool_calls()] == [f"hardcoded_{i}" for i in range(5)]
    assert thread.usage == {}  # the hardcoded test model reports no usage
    assert (thread.model, thread.max_input_tokens) == ("hardcoded/hardcoded", None)
    # The python tool's description was an attachment.
    python = next(t for t in thread.tools if t["name"] == "python")
    assert python["description"].startswith("Use the python function to execute Python code.")


def test_json_log_with_one_sample() -> None:
    thread = load_thread(trace_path(*READ_SAMPLE))
    assert [m.id for m in thread.messages] == ["KbRXi6VEafgTBTC3vXEACa", "DqUGR3BroHhrUsYwX2vEZW", "JNtNFnBPTyHFV3mmixeuPp"]
    assert thread.usage == {"JNtNFnBPTyHFV3mmixeuPp": RecordedUsage(
        input_tokens=66, output_tokens=3, timestamp=thread.usage["JNtNFnBPTyHFV3mmixeuPp"].timestamp, model="gemma3")}
    assert thread.model == "ollama/gemma3"


@pytest.mark.parametrize("parts", [BROWSER, POPULARITY, DEDUP, READ_SAMPLE])
def test_no_chat_importer_claims_an_inspect_log(parts: tuple[str, str]) -> None:
    source = open_source(trace_path(*parts))
    claimed = [name for name, imp in importers().items() if imp.sniff(source)]
    assert claimed == ["inspect_ai"]


# -- hand-made logs ----------------------------------------------------------------------------


def msg(role: str, content: Any, mid: str, **kw: Any) -> dict[str, Any]:
    return {"id": mid, "role": role, "content": content, **kw}


def call(cid: str, fn: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"id": cid, "function": fn, "arguments": args}


def usage(i: int, o: int, read: int = 0, write: int = 0) -> dict[str, int]:
    # Anthropic's provider: total = input + cache write + cache read + output.
    return {"input_tokens": i, "output_tokens": o, "total_tokens": i + o + read + write,
            "input_tokens_cache_read": read, "input_tokens_cache_write": write}


def model_event(inp: list[Any], out: dict[str, Any], u: dict[str, int] | None, **kw: Any) -> dict[str, Any]:
    return {"event": "model", "model": "anthropic/claude-sonnet-4-5", "input": inp, "tools": [],
            "output": {"model": "claude-sonnet-4-5", "choices": [{"message": out}], "usage": u},
            "timestamp": "2026-01-01T00:00:00+00:00", **kw}


SYS = msg("system", "You are helpful.", "s0")
USER = msg("user", "Fix the bug.", "u0", source="input")
A1 = msg("assistant", [{"type": "reasoning", "reasoning": "think one"}, {"type": "text", "text": "reading"}], "a1",
         tool_calls=[call("c1", "read", {"path": "x"})])
T1 = msg("tool", "A" * 400, "t1", tool_call_id="c1", function="read")
A2 = msg("assistant", "again", "a2", tool_calls=[call("c2", "read", {"path": "y"})])
T2 = msg("tool", "B" * 400, "t2", tool_call_id="c2", function="read")
SUMMARY_TEXT = ("[CONTEXT COMPACTION SUMMARY]\n\nThe following is a summary of work completed on this task so far:\n\n"
                "<previous_summary>\nread x and y\n</previous_summary>\n\nPlease continue working on this task from where you left off.")
SUMMARY = msg("user", SUMMARY_TEXT, "sm", metadata={"summary": True})
A3 = msg("assistant", "done", "a3")
FIRST_CALLS = [model_event([SYS, USER], A1, usage(10, 5)), model_event([SYS, USER, A1, T1], A2, usage(20, 5, read=100))]


def compaction(kind: str, before: int = 900, after: int = 300) -> dict[str, Any]:
    return {"event": "compaction", "type": kind, "tokens_before": before, "tokens_after": after, "source": "inspect"}


def sample(sid: str, messages: list[Any], events: list[Any], epoch: int = 1, **kw: Any) -> dict[str, Any]:
    return {"id": sid, "epoch": epoch, "input": "Fix the bug.", "target": "", "messages": messages,
            "events": events, "attachments": {}, **kw}


def eval_zip(samples: list[dict[str, Any]], *, summaries: bool = True) -> bytes:
    header = {"version": 2, "status": "success", "plan": {}, "results": {}, "stats": {},
              "eval": {"task": "fix", "task_id": "t1", "model": "anthropic/claude-sonnet-4-5"}}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("header.json", json.dumps(header))
        for s in samples:
            zf.writestr(f"samples/{s.get('id')}_epoch_{s.get('epoch')}.json", json.dumps(s))
        if summaries:
            # .get: the mutation test may have dropped any of these fields from a sample
            zf.writestr("summaries.json", json.dumps([{"id": s.get("id"), "epoch": s.get("epoch"),
                                                       "input": s.get("input")} for s in samples]))
    return buf.getvalue()


def json_log(samples: list[dict[str, Any]]) -> bytes:
    return json.dumps({"version": 2, "status": "success", "eval": {"task": "fix", "model": "openai/gpt-4o"},
                       "plan": {}, "results": {}, "stats": {}, "samples": samples}).encode()


def test_epochs_are_threads_with_their_own_ids() -> None:
    samples = [sample("a", [USER, A3], [model_event([USER], A3, usage(5, 1))], epoch=e) for e in (1, 2, 3)]
    samples.append(sample(7, [USER, A3], [], epoch=1))
    data = eval_zip(samples)
    refs = list_threads(data=data, name="run.eval")
    assert [r.thread_id for r in refs] == ["a:epoch1", "a:epoch2", "a:epoch3", "7:epoch1"]
    assert load_thread(data=data, name="run.eval", thread_id="a:epoch2").extra["epoch"] == 2
    assert load_thread(data=data, name="run.eval").thread_id == "a:epoch1"
    with pytest.raises(ThreadNotFoundError) as info:
        load_thread(data=data, name="run.eval", thread_id="a:epoch9")
    assert str(info.value) == ("run.eval, format inspect_ai: thread 'a:epoch9' not found; threads: a:epoch1, a:epoch2, "
                               "a:epoch3, 7:epoch1")
    # Without summaries.json (a log still being written) the archive order is used.
    assert [r.thread_id for r in list_threads(data=eval_zip(samples, summaries=False), name="run.eval")][:2] == [
        "a:epoch1", "a:epoch2"]


def test_summary_compaction_replaces_history_with_prefix_and_summary() -> None:
    events = [*FIRST_CALLS, compaction("summary", 900, 120), model_event([SYS, USER, SUMMARY], A3, usage(30, 2))]
    thread = load_thread(data=eval_zip([sample("s", [SYS, USER, A1, T1, A2, T2, SUMMARY, A3], events)]), name="x.eval")
    assert [m.id for m in thread.messages] == ["s0", "u0", "a1", "t1", "a2", "t2", "a3"]  # the summary is not a message
    [c] = thread.compactions
    assert (c.index, c.kind, c.pre_tokens, c.post_tokens, c.message_id, c.source) == (
        6, "summary", 900, 120, "sm", "inspect_ai:CompactionEvent:inspect")
    assert c.summary == SUMMARY_TEXT
    assert [m.id for m in c.replacement] == ["s0", "u0", "sm"]
    assert c.replacement[0] is thread.messages[0]  # kept messages keep their identity and ids
    assert thread.messages[2].content == [{"type": "reasoning", "reasoning": "think one"}, {"type": "text", "text": "reading"}]
    assert thread.usage["a2"] == RecordedUsage(input_tokens=20, output_tokens=5, cache_read_input_tokens=100,
                                               cache_creation_input_tokens=0, timestamp="2026-01-01T00:00:00+00:00",
                                               model="claude-sonnet-4-5")
    steps = inspect_thread(thread)["steps"]
    summary_only = inspect_thread(thread)["steps"][2]["context_tokens"]
    assert steps[2]["index"] == 6 and summary_only < steps[1]["context_tokens"]


def test_trim_compaction_keeps_what_the_next_call_was_sent() -> None:
    events = [*FIRST_CALLS, compaction("trim", 900, 300), model_event([SYS, USER, A2, T2], A3, usage(30, 2))]
    thread = load_thread(data=eval_zip([sample("t", [SYS, USER, A1, T1, A2, T2, A3], events)]), name="x.eval")
    [c] = thread.compactions
    assert (c.index, c.kind, c.summary, c.pre_tokens, c.post_tokens) == (6, "trim", "", 900, 300)
    assert [m.id for m in c.replacement] == ["s0", "u0", "a2", "t2"]
    assert thread.edits == []


def test_edit_compaction_is_a_recorded_edit() -> None:
    edited_t1 = dict(T1, id="t1x", content="(Tool result removed)")
    edited_a1 = dict(A1, id="a1x", content=[{"type": "text", "text": "reading"}])
    events = [*FIRST_CALLS, compaction("edit", 900, 500), model_event([SYS, USER, edited_a1, edited_t1, A2, T2], A3, usage(30, 2))]
    thread = load_thread(data=eval_zip([sample("e", [SYS, USER, A1, T1, A2, T2, A3], events)]), name="x.eval")
    assert thread.compactions == []
    results, thinking = thread.edits
    assert (results.index, results.kind, results.tool_call_ids, results.placeholder, results.pre_tokens,
            results.tokens_saved, results.source) == (6, "clear_tool_results", ["c1"], "(Tool result removed)", 900, 400,
                                                       "inspect_ai:CompactionEvent")
    assert (thinking.kind, thinking.message_ids, thinking.tokens_saved) == ("clear_thinking", ["a1"], None)
    report = inspect_thread(thread)
    assert report["recorded_microcompactions"][0]["cleared"] == 1
    assert report["recorded_microcompactions"][0]["counted_saving"] > 0


def test_edit_without_kept_tool_inputs_drops_call_and_result() -> None:
    bare_a1 = dict(A1, id="a1y", tool_calls=None,
                   content=[{"type": "text", "text": "[Tool call: read (parameters and results removed from history)]"}])
    events = [*FIRST_CALLS, compaction("edit"), model_event([SYS, USER, bare_a1, A2, T2], A3, usage(30, 2))]
    thread = load_thread(data=eval_zip([sample("e", [SYS, USER, A1, T1, A2, T2, A3], events)]), name="x.eval")
    assert [(e.tool_call_ids, e.clear_inputs) for e in thread.edits if e.kind == "clear_tool_results"] == [(["c1"], True)]


def test_old_openai_usage_with_input_including_the_cache_is_split() -> None:
    old = {"input_tokens": 1568, "output_tokens": 17, "total_tokens": 1585, "input_tokens_cache_read": 1024}
    new = {"input_tokens": 544, "output_tokens": 17, "total_tokens": 1585, "input_tokens_cache_read": 1024}
    for raw in (old, new):
        thread = load_thread(data=json_log([sample("u", [USER, A3], [model_event([USER], A3, raw)])]), name="u.json")
        assert (thread.usage["a3"].input_tokens, thread.usage["a3"].context_tokens) == (544, 1568)


def test_messages_without_ids_match_usage_by_content_and_legacy_fields() -> None:
    think = {"role": "assistant", "content": "<think>pondering</think>The answer", "source": "generate"}
    legacy = {"role": "assistant", "content": "x", "reasoning": "older reasoning"}
    tool_err = {"role": "tool", "content": "", "tool_call_id": "c9", "function": "f", "error": {"type": "timeout", "message": "took too long"}}
    calls = {"role": "assistant", "content": "", "tool_calls": [call("c9", "f", {})]}
    messages = [{"role": "user", "content": "q"}, think, legacy, calls, tool_err]
    events = [model_event([], dict(think), usage(3, 1)), model_event([], dict(legacy), usage(4, 1)),
              model_event([], dict(calls), usage(5, 1))]
    thread = load_thread(data=json_log([sample("n", messages, events)]), name="n.json")
    ai = [m for m in thread.messages if isinstance(m, AIMessage)]
    assert ai[0].content == [{"type": "reasoning", "reasoning": "pondering"}, {"type": "text", "text": "The answer"}]
    assert ai[1].content == [{"type": "reasoning", "reasoning": "older reasoning"}, {"type": "text", "text": "x"}]
    assert [thread.usage[str(m.id)].input_tokens for m in ai] == [3, 4, 5]
    assert ai[0].id.startswith("inspect_ai-1-")
    tool = thread.messages[-1]
    assert isinstance(tool, ToolMessage) and (tool.status, tool.content) == ("error", "Error: took too long")


def test_subagent_from_agent_span() -> None:
    sub_user = msg("user", "find the file", "su")
    sub_ai = msg("assistant", "found it", "sa")
    handoff = msg("assistant", "", "a1", tool_calls=[call("c1", "researcher", {"input": "find the file"})])
    result = msg("tool", "found it", "t1", tool_call_id="c1", function="researcher")
    events = [
        {"event": "span_begin", "id": "root", "type": "solvers", "name": "solvers"},
        model_event([USER], handoff, usage(10, 3), span_id="root"),
        {"event": "tool", "id": "c1", "function": "researcher", "arguments": {}, "agent_span_id": "agent1", "span_id": "root"},
        {"event": "span_begin", "id": "tool1", "parent_id": "root", "type": "tool", "name": "researcher"},
        {"event": "span_begin", "id": "agent1", "parent_id": "tool1", "type": "agent", "name": "researcher"},
        model_event([sub_user], sub_ai, usage(7, 2), span_id="agent1"),
        model_event([USER, handoff, result], A3, usage(20, 1), span_id="root"),
    ]
    thread = load_thread(data=eval_zip([sample("sub", [USER, handoff, result, A3], events)]), name="x.eval")
    assert list(thread.usage) == ["a1", "a3"]
    sub = thread.subagents["c1"]
    assert (sub.thread_id, [m.id for m in sub.messages]) == ("sub:epoch1/c1", ["su", "sa"])
    assert sub.usage["sa"].input_tokens == 7
    assert inspect_thread(thread)["subagents"][0]["tool_call_id"] == "c1"


def test_nested_tool_events_of_old_logs_are_subagents() -> None:
    handoff = msg("assistant", "", "a1", tool_calls=[call("c1", "helper", {})])
    nested = model_event([msg("user", "sub task", "su")], msg("assistant", "sub done", "sa"), usage(4, 1))
    events = [model_event([USER], handoff, usage(10, 3)),
              {"event": "tool", "id": "c1", "function": "helper", "arguments": {}, "events": [nested]}]
    thread = load_thread(data=json_log([sample("old", [USER, handoff], events)]), name="old.json")
    assert [m.id for m in thread.subagents["c1"].messages] == ["su", "sa"]
    assert list(thread.usage) == ["a1"]


# -- malformed logs ---------------------------------------------------------------------------


def test_corrupt_zip_is_one_line() -> None:
    data = eval_zip([sample("a", [USER], [])])
    with pytest.raises(ThreadLoadError) as info:
        load_thread(data=data[:40], name="cut.eval", format="inspect_ai")
    assert str(info.value).startswith("cut.eval, format inspect_ai: not a readable .eval zip archive (")
    assert detect_format(open_source(data=data, name="ok.eval")) == "inspect_ai"


def test_corrupt_member_names_the_member() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("header.json", json.dumps({"version": 2, "eval": {"task": "t", "model": "m"}}))
        zf.writestr("samples/a_epoch_1.json", json.dumps(sample("a", [USER] * 50, [])))
    raw = bytearray(buf.getvalue())
    start = raw.find(b"samples/a_epoch_1.json") + len("samples/a_epoch_1.json")
    raw[start + 20:start + 60] = b"\xff" * 40  # scramble the deflate stream
    with pytest.raises(ThreadLoadError) as info:
        load_thread(data=bytes(raw), name="bad.eval")
    assert info.value.location == "samples/a_epoch_1.json"
    assert "corrupt member" in info.value.message


def test_zip_bomb_and_member_count_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    data = eval_zip([sample("a", [msg("user", "x" * 50_000, "u")], [])])
    monkeypatch.setattr(inspect_ai_log, "MAX_DECOMPRESSED_BYTES", 10_000)
    with pytest.raises(ThreadLoadError) as info:
        load_thread(data=data, name="bomb.eval")
    assert "refusing to decompress" in str(info.value) and "zip bomb" in str(info.value)
    monkeypatch.setattr(inspect_ai_log, "MAX_DECOMPRESSED_BYTES", 10**9)
    monkeypatch.setattr(inspect_ai_log, "MAX_MEMBERS", 2)
    with pytest.raises(ThreadLoadError) as info:
        load_thread(data=data, name="many.eval")
    assert str(info.value) == "many.eval, format inspect_ai, at $: the .eval zip archive holds 3 members, above the limit of 2"


def test_binary_zip_without_header_is_not_inspect() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("other.txt", "hello")
    source = open_source(data=buf.getvalue(), name="other.zip")
    assert not importers()["inspect_ai"].sniff(source)
    with pytest.raises(ThreadLoadError) as info:
        load_thread(data=buf.getvalue(), name="other.zip", format="inspect_ai")
    assert info.value.message == "the zip archive holds no header.json (not an Inspect .eval log)"


WRONG = [
    ({"messages": [{"role": "robot", "content": "x"}]}, "$.samples[0].messages[0].role",
     "unknown role 'robot'; expected one of system, user, assistant, tool"),
    ({"messages": [{"role": "user", "content": 5}]}, "$.samples[0].messages[0].content",
     "expected a string or a list of content objects, got number"),
    ({"messages": [{"role": "assistant", "content": "", "tool_calls": [{"id": "c", "function": "f", "arguments": "x"}]}]},
     "$.samples[0].messages[0].tool_calls[0].arguments", "expected an object, got string"),
    ({"messages": [{"role": "tool", "content": "r"}]}, "$.samples[0].messages[0].tool_call_id", "expected a string, got null"),
    ({"events": [{"event": "model", "output": {"choices": [], "usage": {"input_tokens": "9"}}}]},
     "$.samples[0].events[0].output.usage.input_tokens", "expected an integer, got string"),
    ({"events": "nope"}, "$.samples[0].events", "expected an array of events, got string"),
    ({"epoch": "one"}, "$.samples[0].epoch", "expected an integer, got string"),
]


@pytest.mark.parametrize("patch,location,message", WRONG)
def test_wrong_types_name_the_place(patch: dict[str, Any], location: str, message: str) -> None:
    doc = {**sample("w", [USER], []), **patch}
    with pytest.raises(ThreadLoadError) as info:
        load_thread(data=json_log([doc]), name="w.json")
    assert (info.value.format, info.value.location, info.value.message) == ("inspect_ai", location, message)


def test_errors_inside_a_zip_member_name_it() -> None:
    data = eval_zip([sample("z", [{"role": 3}], [])])
    with pytest.raises(ThreadLoadError) as info:
        load_thread(data=data, name="z.eval")
    assert info.value.location == "samples/z_epoch_1.json: $.messages[0].role"


def test_log_without_samples_says_so() -> None:
    doc = json.dumps({"version": 2, "status": "success", "eval": {"task": "t", "model": "m"}, "results": {}}).encode()
    with pytest.raises(ThreadLoadError) as info:
        load_thread(data=doc, name="empty.json")
    assert info.value.message == "the log holds no samples (was it written with log_samples=False?)"


# -- fuzz: mutated real logs only ever raise ThreadLoadError ----------------------------------


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(node, list):
        for i, v in enumerate(node[:30]):
            out.extend(_paths(v, (*prefix, i)))
    return out


def _mutate(doc: Any, path: tuple[Any, ...], value: Any, drop: bool) -> Any:
    if not path:
        return value
    doc = copy.deepcopy(doc)
    node = doc
    for key in path[:-1]:
        node = node[key]
    if drop and isinstance(node, dict):
        node.pop(path[-1], None)
    else:
        node[path[-1]] = value
    return doc


@pytest.fixture(scope="module")
def real_logs() -> dict[str, tuple[Any, list[tuple[Any, ...]]]]:
    out = {}
    browser = json.loads(trace_path(*BROWSER).read_bytes())
    out["browser"] = (browser, [p for p in _paths(browser) if len(p) < 9][:3000])
    with zipfile.ZipFile(trace_path(*DEDUP)) as zf:
        dedup = json.loads(zf.read("samples/0_epoch_1.json"))
    out["dedup"] = (dedup, [p for p in _paths(dedup) if len(p) < 9][:3000])
    return out


WRONG_VALUES = st.sampled_from([None, 0, -1, 2.5, True, "", "x", "attachment://nope", [], {}, [None], {"role": 1}])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_real_logs_only_raise_thread_load_error(real_logs: dict[str, Any], data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(real_logs)))
    doc, paths = real_logs[name]
    mutated = _mutate(doc, data.draw(st.sampled_from(paths)), data.draw(WRONG_VALUES), data.draw(st.booleans()))
    if name == "dedup":  # a sample inside a zip
        blob = eval_zip([mutated]) if isinstance(mutated, dict) and "id" in mutated and "epoch" in mutated else b"PK\x03\x04"
        label = "fuzzed.eval"
    else:
        blob, label = json.dumps(mutated).encode(), "fuzzed.json"
    for forced in (None, "inspect_ai"):
        try:
            refs = list_threads(data=blob, name=label, format=forced)
            for ref in refs[:2]:
                load_thread(data=blob, name=label, format=forced, thread_id=ref.thread_id)
        except ThreadLoadError as exc:
            assert label in str(exc)


def test_an_archive_of_millions_of_tiny_messages_is_one_line_before_it_is_parsed() -> None:
    """Issues 38.4 / 39.6: a 332 KB `.eval` holding 3 million messages (97.5 MB inflated) took 4.5 GB to
    inspect. What one archive may expand to is capped in JSON objects as well as bytes, counted while the
    member inflates: it stops after about two million objects, having parsed nothing."""
    data = sized.eval_archive(3_000_000)
    assert len(data) < 400_000
    with pytest.raises(ThreadLoadError) as info:
        load_thread(data=data, name="tiny-bomb.eval")
    text = str(info.value)
    assert text.startswith("tiny-bomb.eval, format inspect_ai, at samples/1_epoch_1.json: refusing to read: the "
                           "archive expands to more than 2,000,000 JSON objects (")
    assert text.endswith("; a zip bomb of tiny messages, or a log too large to read)")
    inflated = int(text.split("first ")[1].split(" bytes")[0].replace(",", ""))
    assert inflated < 70_000_000  # stopped early: not the 97.5 MB the member holds
    assert len(load_thread(data=sized.eval_archive(20_000), name="fine.eval").messages) == 20_000


def test_the_object_budget_spans_the_members_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """Header, summaries and the sample share one budget (a header of braces cannot be traded for a sample)."""
    data = eval_zip([sample("a", [USER] * 30, [])])
    monkeypatch.setattr(inspect_ai_log, "MAX_ARCHIVE_OBJECTS", 20)
    with pytest.raises(ThreadLoadError) as info:
        load_thread(data=data, name="small.eval")
    assert "refusing to read: the archive expands to more than 20 JSON objects" in str(info.value)


FAILED_LOAD = """
import sys
from engine.base.errors import ThreadLoadError
from engine.formats import load_thread
from tests.formats.sized import eval_archive

def status(field):
    return next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith(field)) // 1024

data = eval_archive(3_000_000)
load_thread(data=eval_archive(200), name="warm.eval")
before = status("VmRSS")
held = []
for _ in range(3):
    try:
        load_thread(data=data, name="bomb.eval")
    except ThreadLoadError as exc:
        held.append(exc)  # kept, as a page keeps the notice it shows
print(before, status("VmRSS"), status("VmHWM"), len(held))
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the process's memory from /proc")
def test_a_failed_load_gives_back_what_it_held() -> None:
    """The refused archive leaves the process where it was, even with its errors kept (a kept error held the
    exception it replaced and, through its traceback, the frames that read the file)."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", FAILED_LOAD], cwd=root, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 0, done.stderr[-2000:]
    before, after, peak, errors = map(int, done.stdout.split())
    assert errors == 3
    assert after - before < 40, (before, after, peak)
    assert peak - before < 200, (before, after, peak)
