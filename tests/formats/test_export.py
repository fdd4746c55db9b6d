"""Exporters: native and LangChain dicts round-trip; OpenAI messages are what the Chat API accepts."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from engine.base.errors import ConfigError
from engine.formats import load_thread
from engine.formats.export import export, to_langchain_dicts, to_native, to_openai_messages
from engine.thread.model import RecordedCompaction, RecordedUsage, Thread
from tests.conftest import trace_path

TRACES = [
    ("deepagents", "summarization_seed_messages.json"),
    ("mini-swe-agent", "github_issue.traj.json"),
    ("nilenso-context-viewer", "ask_github_gc.completions.json"),
    ("nilenso-context-viewer", "storymachine_run_42.responses.json"),
]


def rich_thread() -> Thread:
    sub = Thread("sub", [HumanMessage("find it", id="s1"), AIMessage("found", id="s2")], source_format="claude_code")
    return Thread(
        thread_id="t-1",
        messages=[
            SystemMessage("rules", id="m0"),
            HumanMessage([{"type": "text", "text": "héllo"}], id="m1"),
            AIMessage("", id="m2", tool_calls=[{"name": "Task", "args": {"q": "é"}, "id": "c1"}],
                      invalid_tool_calls=[{"name": "bad", "args": "{x", "id": "c2", "error": "not JSON",
                                           "type": "invalid_tool_call"}],
                      usage_metadata={"input_tokens": 9, "output_tokens": 1, "total_tokens": 10}),
            ToolMessage("done", tool_call_id="c1", id="m3", status="error", artifact={"k": 1}),
            AIMessage("ok", id="m4", additional_kwargs={"ctxi_kind": "summary"}),
        ],
        source_format="openai_chat",
        model="gpt-x",
        max_input_tokens=128000,
        system_prompt="rules",
        tools=[{"name": "Task", "description": "d", "parameters": {"type": "object"}}],
        todos=[{"content": "a", "status": "pending"}],
        subagents={"c1": sub},
        usage={"m2": RecordedUsage(input_tokens=9, output_tokens=1, cache_read_input_tokens=4)},
        compactions=[RecordedCompaction(index=4, trigger="auto", pre_tokens=100, summary="s", message_id="m4")],
        title="A title",
        extra={"k": [1, 2]},
    )


def test_native_round_trip_is_byte_identical_for_a_rich_thread() -> None:
    text = to_native(rich_thread())
    again = load_thread(data=text.encode("utf-8"), name="t.json")
    assert again.source_format == "openai_chat"
    assert to_native(again) == text
    assert again.subagents["c1"].messages == rich_thread().subagents["c1"].messages
    assert again.compactions == rich_thread().compactions
    assert again.usage == rich_thread().usage


@pytest.mark.parametrize("parts", TRACES, ids=lambda p: p[1])
def test_native_round_trip_of_real_traces(parts: tuple[str, str]) -> None:
    thread = load_thread(trace_path(*parts))
    text = to_native(thread)
    again = load_thread(data=text.encode("utf-8"), name="x.json")
    assert to_native(again) == text
    assert again.messages == thread.messages
    assert (again.source_format, again.thread_id, again.model) == (thread.source_format, thread.thread_id, thread.model)


@pytest.mark.parametrize("parts", TRACES, ids=lambda p: p[1])
def test_langchain_dicts_round_trip_to_the_same_messages(parts: tuple[str, str]) -> None:
    thread = load_thread(trace_path(*parts))
    blob = json.dumps(to_langchain_dicts(thread)).encode()
    again = load_thread(data=blob, name="x.json")
    assert again.source_format == "langchain_dict"
    assert again.messages == thread.messages
    assert again.usage.keys() <= {m.id for m in thread.messages}


def test_langchain_dicts_of_rich_thread() -> None:
    thread = rich_thread()
    dicts = to_langchain_dicts(thread)
    assert [d["type"] for d in dicts] == ["system", "human", "ai", "tool", "ai"]
    again = load_thread(data=json.dumps(dicts).encode(), name="x.json")
    assert again.messages == thread.messages
    assert again.usage == {"m2": RecordedUsage(input_tokens=9, output_tokens=1)}


def test_openai_messages_of_rich_thread() -> None:
    out = to_openai_messages(rich_thread())
    assert out == [
        {"role": "system", "content": "rules"},
        {"role": "user", "content": "héllo"},  # text-only blocks join into a string
        {"role": "assistant", "content": "", "tool_calls": [
            {"type": "function", "id": "c1", "function": {"name": "Task", "arguments": '{"q": "é"}'}},
            {"type": "function", "id": "c2", "function": {"name": "bad", "arguments": "{x"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "done"},
        {"role": "assistant", "content": "ok"},
    ]


def test_openai_messages_put_the_system_prompt_first_when_missing() -> None:
    thread = Thread("t", [HumanMessage("hi"), AIMessage("yo")], system_prompt="be kind")
    assert to_openai_messages(thread) == [
        {"role": "system", "content": "be kind"}, {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "yo"}]
    with_system = Thread("t", [SystemMessage("own"), HumanMessage("hi")], system_prompt="be kind")
    assert [m["content"] for m in to_openai_messages(with_system)] == ["own", "hi"]


def test_openai_messages_drop_blocks_openai_has_no_type_for() -> None:
    ai = AIMessage([{"type": "thinking", "thinking": "hm", "signature": "s"}, {"type": "text", "text": "A"},
                    {"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}}],
                   tool_calls=[{"name": "f", "args": {"a": 1}, "id": "t1"}])
    [out] = to_openai_messages(Thread("t", [ai]))
    assert out == {"role": "assistant", "content": "A",
                   "tool_calls": [{"type": "function", "id": "t1", "function": {"name": "f", "arguments": '{"a": 1}'}}]}


def summary(thread: Thread) -> list[Any]:
    return [(m.type, m.content, [(c["id"], c["name"], c["args"]) for c in getattr(m, "tool_calls", [])],
             getattr(m, "tool_call_id", None)) for m in thread.messages]


def test_openai_export_reimports_as_the_same_conversation() -> None:
    thread = load_thread(trace_path("nilenso-context-viewer", "ask_github_gc.completions.json"))
    blob = json.dumps(to_openai_messages(thread)).encode()
    again = load_thread(data=blob, name="x.json")
    assert again.source_format == "openai_messages"
    assert summary(again) == summary(thread)


def test_openai_export_of_anthropic_thread_keeps_tool_pairs() -> None:
    doc = {"system": "s", "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "r"}]}]}
    thread = load_thread(data=json.dumps(doc).encode(), name="a.json")
    out = to_openai_messages(thread)
    assert [m["role"] for m in out] == ["system", "user", "assistant", "tool"]
    assert out[2]["tool_calls"] == [{"type": "function", "id": "t1", "function": {"name": "f", "arguments": '{"a": 1}'}}]
    assert (out[3]["tool_call_id"], out[3]["content"]) == ("t1", "r")


def test_export_by_name() -> None:
    thread = rich_thread()
    assert export(thread, "native") == to_native(thread)
    assert json.loads(export(thread, "langchain_dict")) == to_langchain_dicts(thread)
    assert json.loads(export(thread, "openai_messages")) == to_openai_messages(thread)
    with pytest.raises(ConfigError) as info:
        export(thread, "xml")
    assert str(info.value) == "format: unknown export format 'xml'; choose one of native, langchain_dict, openai_messages"
