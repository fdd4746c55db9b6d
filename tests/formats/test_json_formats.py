"""The JSON chat importers on real traces and on small hand-made documents.

Expected numbers on the real traces were read off the files with a separate plain-json script
(roles counted, tool calls summed, ids listed), not with these importers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from engine.base.errors import ThreadLoadError, ThreadNotFoundError
from engine.formats import detect_format, importers, list_threads, load_thread, open_source
from engine.formats.source import ThreadRef
from engine.thread.model import RecordedUsage, stable_id
from tests.conftest import TRACES, trace_path

MINE = ("langchain_dict", "langchain_dumpd", "openai_chat", "openai_messages", "openai_responses", "anthropic")


def load_doc(doc: Any, format: str | None = None, name: str = "doc.json"):  # type: ignore[no-untyped-def]
    return load_thread(data=json.dumps(doc).encode(), name=name, format=format)


def sniffers(doc: Any) -> list[str]:
    """Every available importer whose sniff accepts the document (must be exactly one)."""
    source = open_source(data=json.dumps(doc).encode(), name="doc.json")
    return [name for name, imp in importers().items() if imp.sniff(source)]


# -- real traces -----------------------------------------------------------------------------


def test_openai_chat_completions_dump() -> None:
    path = trace_path("nilenso-context-viewer", "ask_github_gc.completions.json")
    thread = load_thread(path)
    assert thread.source_format == "openai_chat"
    assert thread.thread_id == "chatcmpl-COpLqMdVzxRlv1Y8imXQf1ZfHSQM2"
    assert thread.model == "gpt-5-2025-08-07"
    # 73 request messages plus the response's message.
    assert len(thread.messages) == 74
    assert thread.by_role() == {"system": 1, "human": 1, "ai": 14, "tool": 58}
    assert len(thread.tool_calls()) == 58
    assert sum(len(m.invalid_tool_calls) for m in thread.messages if isinstance(m, AIMessage)) == 0
    assert sorted(t["name"] for t in thread.tools) == ["get_repo_info", "list_directory", "list_tree", "read_file",
                                                        "search_code"]
    assert set(thread.tools[0]) == {"name", "description", "parameters"}
    assert isinstance(thread.messages[0], SystemMessage)
    assert thread.system_prompt == thread.messages[0].content
    assert thread.system_prompt.startswith("Use GitHub API tools to answer the given questions by explor")
    first_call = thread.messages[2].tool_calls[0]
    assert first_call == {"name": "get_repo_info", "args": {"owner": "nilenso", "repo": "grand-central"},
                          "id": "call_pPtjkE7KqQpV1ZqBgIZ6cqXW", "type": "tool_call"}
    # Tool-call ids stay tool-call ids; message ids are derived from position and content.
    assert thread.messages[2].id.startswith("openai_chat-2-")
    final = thread.messages[-1]
    assert isinstance(final, AIMessage) and len(final.content) == 13972 and final.tool_calls == []
    assert thread.usage == {final.id: RecordedUsage(input_tokens=52529, output_tokens=9090)}
    assert thread.extra == {"finish_reason": "stop", "window_source": "model table"}
    assert (thread.model, thread.max_input_tokens) == (thread.model, 272_000) and thread.model.startswith("gpt-5")
    results = thread.tool_results()
    assert all(tc["id"] in results for tc in thread.tool_calls())


def test_openai_responses_items() -> None:
    thread = load_thread(trace_path("nilenso-context-viewer", "storymachine_run_42.responses.json"))
    assert thread.source_format == "openai_responses"
    assert thread.thread_id == "storymachine_run_42.responses"
    assert [type(m).__name__ for m in thread.messages] == [
        "HumanMessage", "AIMessage", "HumanMessage", "AIMessage", "ToolMessage"]
    assert "order" not in thread.extra  # the file is oldest first: its call precedes its output
    first_ai, second_ai = thread.messages[1], thread.messages[3]
    assert first_ai.id == "resp_0bd70ac528662a0c0068e7f80ed18881979d21f0b7aa7c40c4"
    assert len(first_ai.content) == 5180 and first_ai.tool_calls == []
    assert len(first_ai.additional_kwargs["reasoning"]["summary"]) == 5
    assert second_ai.content == ""
    [call] = second_ai.tool_calls
    assert (call["name"], call["id"], len(call["args"]["stories"])) == (
        "create_stories", "call_FxJ5uwF3Y9xtQPHOkYTVNsCZ", 11)
    assert second_ai.additional_kwargs["__openai_function_call_ids__"] == {
        "call_FxJ5uwF3Y9xtQPHOkYTVNsCZ": "fc_0bd70ac528662a0c0068e7faec8d7c8197abd646ae377f8485"}
    tool = thread.messages[4]
    assert (tool.tool_call_id, tool.name, tool.content) == ("call_FxJ5uwF3Y9xtQPHOkYTVNsCZ", "create_stories", "")
    assert thread.messages[0].id == "msg_0bd70ac528662a0c0068e7f80f1bbc8197b3ad740f9b6142b9"


def test_responses_reasoning_is_not_counted_as_content() -> None:
    from engine.tokens.counters import get_counter

    thread = load_thread(trace_path("nilenso-context-viewer", "storymachine_run_42.responses.json"))
    counter = get_counter("o200k_base")
    ai = thread.messages[1]
    assert counter.breakdown(ai) == {"ai": counter.count_text(ai.content) + 3}


def test_langchain_dumpd_deepagents_seed() -> None:
    thread = load_thread(trace_path("deepagents", "summarization_seed_messages.json"))
    assert thread.source_format == "langchain_dumpd"
    assert thread.thread_id == "summarization_seed_messages"
    assert thread.model == "claude-sonnet-4-5-20250929"
    assert [type(m).__name__ for m in thread.messages] == [
        "HumanMessage", "AIMessage", "ToolMessage", "AIMessage", "ToolMessage", "AIMessage"]
    assert [m.id for m in thread.messages] == [
        "ec24b194-4dbe-4ac5-ace3-f833e458911e",
        "lc_run--019c7767-aea6-7cb3-a8f7-b7c29bd4d15b-0",
        "124bd01a-553d-4cc0-9e02-1101b3f79fe9",
        "lc_run--019c7767-cde5-7540-a148-4458bd0c9b71-0",
        "86a18dbb-bbb5-49d0-9f0d-46348721ee26",
        "lc_run--019c7768-0a8c-7410-bbbd-f922b348e733-0",
    ]
    assert len(thread.tool_calls()) == 2
    # usage_metadata.input_tokens (6720) = 3 uncached + 6717 cache creation
    assert thread.usage["lc_run--019c7767-aea6-7cb3-a8f7-b7c29bd4d15b-0"] == RecordedUsage(
        input_tokens=3, output_tokens=116, cache_creation_input_tokens=6717, cache_read_input_tokens=0)
    assert [u.context_tokens for u in thread.usage.values()] == [6720, 13432, 13541]


def test_mini_swe_agent_plain_list() -> None:
    thread = load_thread(trace_path("mini-swe-agent", "github_issue.traj.json"))
    assert thread.source_format == "openai_messages"
    assert thread.thread_id == "github_issue.traj"
    assert thread.by_role() == {"system": 1, "human": 11, "ai": 10}
    assert thread.tool_calls() == []
    assert sum("```mswea_bash_command" in m.content for m in thread.messages if isinstance(m, AIMessage)) == 10
    assert thread.system_prompt.startswith("You are a helpful assistant that can interact with a computer.")
    assert len({m.id for m in thread.messages}) == 22


def test_loading_twice_gives_the_same_ids() -> None:
    path = trace_path("nilenso-context-viewer", "ask_github_gc.completions.json")
    assert [m.id for m in load_thread(path).messages] == [m.id for m in load_thread(path).messages]


# Which importer owns each file under the shared traces; None: not a thread file.
EXPECTED = {
    "anthropic-compaction": "vcr_cassette",
    "claude-code": "claude_code",
    "codex": "codex",
    "deepagents": "langchain_dumpd",
    "gemini": "gemini_cli",
    "inspect": "inspect_ai",
    "mini-swe-agent": "openai_messages",
    "openai-responses-compaction": "vcr_cassette",
    "openhands": "openhands",
    "otel-genai": "otel_genai",
    "swe-agent": "swe_agent",
    "tau-bench": "tau_bench",
}


def expected_format(path: Path) -> str | None:
    if path.name in ("LICENSE", "SOURCE.txt") or path.name.startswith("LICENSE."):
        return None
    if path.name.endswith(".completions.json"):
        return "openai_chat"
    if path.name.endswith(".responses.json"):
        return "openai_responses"
    return EXPECTED[path.relative_to(TRACES).parts[0]]


def trace_files() -> list[Path]:
    return sorted(p for p in TRACES.rglob("*") if p.is_file()) if TRACES.is_dir() else []


@pytest.mark.parametrize("path", trace_files(), ids=lambda p: str(p.relative_to(TRACES)))
def test_every_trace_auto_detects_to_its_format(path: Path) -> None:
    fmt = expected_format(path)
    if fmt is None:
        with pytest.raises(ThreadLoadError):
            load_thread(path)
        return
    if fmt not in importers():
        pytest.skip(f"importer {fmt!r} is not in this tree yet (owned by another change)")
    assert detect_format(open_source(path)) == fmt


@pytest.mark.parametrize("path", trace_files(), ids=lambda p: str(p.relative_to(TRACES)))
def test_my_sniffs_claim_only_my_traces(path: Path) -> None:
    """Holds even while another format's importer is missing: no JSON chat importer steals its files."""
    fmt = expected_format(path)
    source = open_source(path)
    claimed = [name for name in MINE if importers()[name].sniff(source)]
    assert claimed == ([fmt] if fmt in MINE else [])


@pytest.mark.parametrize("path", trace_files(), ids=lambda p: str(p.relative_to(TRACES)))
def test_every_trace_loads_or_raises_thread_load_error(path: Path) -> None:
    try:
        refs = list_threads(path)
        thread = load_thread(path, thread_id=refs[0].thread_id)
    except ThreadLoadError:
        if expected_format(path) in importers():
            raise
        return
    assert len(thread.messages) == refs[0].messages


# -- hand-made documents: each format's features -------------------------------------------


def test_langchain_dict_list_and_wrapper() -> None:
    entries = [
        {"type": "system", "data": {"content": "be brief"}},
        {"type": "human", "data": {"content": "hi", "id": "h1"}},
        {"type": "ai", "data": {"content": "", "id": "a1",
                                "tool_calls": [{"name": "f", "args": {"x": 1}, "id": "c1", "type": "tool_call"}],
                                "usage_metadata": {"input_tokens": 50, "output_tokens": 5, "total_tokens": 55,
                                                   "input_token_details": {"cache_read": 40}},
                                "response_metadata": {"model_name": "gpt-4o"}}},
        {"type": "tool", "data": {"content": "done", "tool_call_id": "c1", "id": "t1", "status": "error"}},
    ]
    for doc in (entries, {"messages": entries, "thread_id": "abc"}):
        assert sniffers(doc) == ["langchain_dict"]
        thread = load_doc(doc)
        assert thread.source_format == "langchain_dict"
        assert [m.id for m in thread.messages] == [stable_id("langchain_dict", 0, entries[0]["data"]), "h1", "a1", "t1"]
        assert thread.messages[0].id.startswith("langchain_dict-0-")
        assert thread.messages[3].status == "error"
        assert thread.system_prompt == "be brief"
        assert thread.model == "gpt-4o"
        assert thread.usage == {"a1": RecordedUsage(input_tokens=10, output_tokens=5, cache_read_input_tokens=40)}
    assert load_doc(entries).thread_id == "doc"
    assert load_doc({"messages": entries, "thread_id": "abc"}).thread_id == "abc"


def test_upload_without_name_gets_a_content_hash_thread_id() -> None:
    blob = json.dumps([{"role": "user", "content": "hi"}]).encode()
    a = load_thread(data=blob)
    assert a.thread_id.startswith("thread-") and len(a.thread_id) == len("thread-") + 12
    assert load_thread(data=blob).thread_id == a.thread_id


def envelope(cls: str, **kwargs: Any) -> dict[str, Any]:
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", cls], "kwargs": kwargs}


def test_langchain_dumpd_list_and_object() -> None:
    items = [envelope("SystemMessage", content="sys"), envelope("HumanMessage", content="q", id="h"),
             envelope("AIMessage", content="a", tool_calls=[{"name": "g", "args": {}, "id": "c"}]),
             envelope("ToolMessage", content="r", tool_call_id="c")]
    for doc in (items, {"messages": items}, {"values": items}):
        assert sniffers(doc) == ["langchain_dumpd"]
        thread = load_doc(doc)
        assert [type(m).__name__ for m in thread.messages] == ["SystemMessage", "HumanMessage", "AIMessage",
                                                               "ToolMessage"]
        assert thread.messages[1].id == "h"
        assert thread.messages[2].id == stable_id("langchain_dumpd", 2, items[2]["kwargs"])
        assert thread.tool_calls()[0]["id"] == "c"


def test_langchain_dumpd_refuses_non_message_constructors_and_secrets() -> None:
    secret = envelope("HumanMessage", content={"lc": 1, "type": "secret", "id": ["OPENAI_API_KEY"]})
    with pytest.raises(ThreadLoadError) as info:
        load_doc([envelope("HumanMessage", content="q"), secret])
    assert info.value.location == "$[1].kwargs.content"
    bad = {"lc": 1, "type": "constructor", "id": ["langchain_core", "runnables", "RunnableLambda"], "kwargs": {}}
    with pytest.raises(ThreadLoadError) as info:
        load_doc([envelope("HumanMessage", content="q"), bad])
    assert info.value.location == "$[1].id"
    assert "refusing to load constructor 'langchain_core.runnables.RunnableLambda'" in info.value.message


def test_openai_chat_request_without_response() -> None:
    doc = {
        "model": "gpt-4.1",
        "tools": [{"type": "function", "function": {"name": "add", "description": "sum", "parameters": {
            "type": "object", "properties": {"a": {"type": "integer"}}}}}],
        "messages": [
            {"role": "developer", "content": "rules"},
            {"role": "user", "content": [{"type": "text", "text": "add"}, {"type": "image_url",
                                                                            "image_url": {"url": "http://x/y.png"}}]},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1}'}},
                {"id": "c2", "type": "function", "function": {"name": "add", "arguments": '{"a": '}},
                {"id": "c3", "type": "function", "function": {"name": "add", "arguments": "[1]"}},
                {"id": "c4", "type": "function", "function": {"name": "add", "arguments": ""}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "1"},
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2},
    }
    assert sniffers(doc) == ["openai_chat"]
    thread = load_doc(doc, name="req.json")
    assert thread.thread_id == "req"
    assert thread.by_role() == {"system": 1, "human": 1, "ai": 1, "tool": 1}
    assert thread.messages[0].additional_kwargs == {"__openai_role__": "developer"}
    assert thread.system_prompt == "rules"
    assert thread.tools == [{"name": "add", "description": "sum",
                             "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}}]
    ai = thread.messages[2]
    assert [(c["id"], c["args"]) for c in ai.tool_calls] == [("c1", {"a": 1}), ("c4", {})]
    assert [(c["id"], c["args"], c["error"]) for c in ai.invalid_tool_calls] == [
        ("c2", '{"a": ', "arguments are not valid JSON (Expecting value)"),
        ("c3", "[1]", "arguments are JSON array, not an object"),
    ]
    # Usage without a response has no AI step of its own.
    assert thread.usage == {}
    assert thread.extra == {"usage": RecordedUsage(input_tokens=10, output_tokens=2).to_dict(),
                            "window_source": "model table"}


def test_openai_legacy_function_role_answers_function_call() -> None:
    doc = [{"role": "user", "content": "weather?"},
           {"role": "assistant", "content": None, "function_call": {"name": "weather", "arguments": '{"c": "Oslo"}'}},
           {"role": "function", "name": "weather", "content": "rain"}]
    thread = load_doc(doc)
    call = thread.messages[1].tool_calls[0]
    assert (call["name"], call["args"]) == ("weather", {"c": "Oslo"})
    assert thread.messages[2].tool_call_id == call["id"]
    assert call["id"] == stable_id("openai_messages-call", 1, doc[1]["function_call"])


def test_mini_swe_agent_object_with_exit_record() -> None:
    doc = {"trajectory_format": "mini-swe-agent-1", "info": {"config": {"model": {"model_name": "gpt-5-mini"}}},
           "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"},
                        {"role": "assistant", "content": "a", "extra": {"response": {"usage": {
                            "prompt_tokens": 120, "completion_tokens": 7}}}},
                        {"role": "exit", "content": "", "extra": {"exit_status": "Submitted", "submission": "diff"}}]}
    assert sniffers(doc) == ["openai_messages"]
    thread = load_doc(doc)
    assert thread.by_role() == {"system": 1, "human": 1, "ai": 1}
    assert thread.model == "gpt-5-mini"
    assert thread.extra == {"exit": {"content": "", "exit_status": "Submitted", "submission": "diff"},
                            "window_source": "model table"}
    assert thread.usage == {thread.messages[2].id: RecordedUsage(input_tokens=120, output_tokens=7)}


ANTHROPIC_REQUEST = {
    "model": "claude-sonnet-4-5",
    "system": [{"type": "text", "text": "You are terse."}],
    "tools": [{"name": "read", "description": "read a file", "input_schema": {"type": "object"}},
              {"type": "web_search_20250305", "name": "web_search"}],
    "messages": [
        {"role": "user", "content": "read a and b"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "two reads", "signature": "sig"},
            {"type": "text", "text": "Reading."},
            {"type": "tool_use", "id": "tu1", "name": "read", "input": {"path": "a"}},
            {"type": "tool_use", "id": "tu2", "name": "read", "input": {"path": "b"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "tu1", "content": "A"},
            {"type": "tool_result", "tool_use_id": "tu2", "content": [{"type": "text", "text": "no such file"}],
             "is_error": True},
            {"type": "text", "text": "and summarize"}]},
        {"id": "msg_01", "role": "assistant", "content": [{"type": "text", "text": "A only."}],
         "usage": {"input_tokens": 5, "output_tokens": 4, "cache_creation_input_tokens": 100,
                   "cache_read_input_tokens": 900}},
    ],
}


def test_anthropic_request() -> None:
    assert sniffers(ANTHROPIC_REQUEST) == ["anthropic"]
    thread = load_doc(ANTHROPIC_REQUEST)
    assert thread.source_format == "anthropic"
    assert thread.model == "claude-sonnet-4-5"
    assert thread.system_prompt == "You are terse."
    assert thread.tools == [{"name": "read", "description": "read a file", "parameters": {"type": "object"}},
                            {"name": "web_search", "description": "", "parameters": {}}]
    assert [type(m).__name__ for m in thread.messages] == [
        "SystemMessage", "HumanMessage", "AIMessage", "ToolMessage", "ToolMessage", "HumanMessage", "AIMessage"]
    ai = thread.messages[2]
    assert [b["type"] for b in ai.content] == ["thinking", "text"]  # tool_use blocks moved to tool_calls
    assert [(c["id"], c["args"]) for c in ai.tool_calls] == [("tu1", {"path": "a"}), ("tu2", {"path": "b"})]
    first, second = thread.messages[3], thread.messages[4]
    assert (first.tool_call_id, first.name, first.status, first.content) == ("tu1", "read", "success", "A")
    assert (second.tool_call_id, second.status) == ("tu2", "error")
    assert thread.messages[5].content == [{"type": "text", "text": "and summarize"}]
    assert thread.messages[6].id == "msg_01"
    assert thread.usage["msg_01"].context_tokens == 1005
    assert len({m.id for m in thread.messages}) == 7


def test_anthropic_tool_use_is_counted_once() -> None:
    from engine.tokens.content import tool_call_text
    from engine.tokens.counters import get_counter

    counter = get_counter("o200k_base")
    ai = load_doc(ANTHROPIC_REQUEST).messages[2]
    calls = sum(3 + counter.count_text("read") + counter.count_text(tool_call_text(c)) for c in ai.tool_calls)
    assert counter.breakdown(ai)["tool_calls"] == calls
    # the thinking is its own category (issue 31)
    assert counter.breakdown(ai)["ai"] == 3 + counter.count_text("Reading.")
    assert counter.breakdown(ai)["thinking"] == counter.count_text("two reads")


def test_anthropic_bare_list_and_text_only_list() -> None:
    bare = ANTHROPIC_REQUEST["messages"]
    assert sniffers(bare) == ["anthropic"]
    assert load_doc(bare).by_role() == {"human": 2, "ai": 2, "tool": 2}
    text_only = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [{"type": "text", "text": "yo"}]}]
    # Nothing Anthropic-only: the loosest format takes it, with the same messages.
    assert sniffers(text_only) == ["openai_messages"]
    assert [m.content for m in load_doc(text_only, "anthropic").messages] == [
        m.content for m in load_doc(text_only).messages]


def responses_items() -> list[dict[str, Any]]:
    return [
        {"id": "m1", "type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}],
         "created_by": "resp_1"},
        {"id": "rs1", "type": "reasoning", "summary": [{"type": "summary_text", "text": "think"}],
         "created_by": "resp_1"},
        {"id": "fc1", "type": "function_call", "call_id": "call_1", "name": "run", "arguments": '{"cmd": "ls"}',
         "created_by": "resp_1"},
        {"id": "fc2", "type": "function_call", "call_id": "call_2", "name": "run", "arguments": "{oops",
         "created_by": "resp_1"},
        {"id": "fo1", "type": "function_call_output", "call_id": "call_1", "output": "a.txt", "created_by": "resp_2"},
        {"id": "fo2", "type": "function_call_output", "call_id": "call_2", "output": "err", "created_by": "resp_2"},
        {"id": "m2", "type": "message", "role": "assistant",
         "content": [{"type": "output_text", "text": "one file", "annotations": []}], "created_by": "resp_2"},
    ]


@pytest.mark.parametrize("newest_first", [False, True])
def test_responses_grouping_pairing_and_order(newest_first: bool) -> None:
    items = responses_items()
    doc = {"object": "list", "data": items[::-1] if newest_first else items, "has_more": False}
    assert sniffers(doc) == ["openai_responses"]
    thread = load_doc(doc)
    assert [type(m).__name__ for m in thread.messages] == [
        "HumanMessage", "AIMessage", "ToolMessage", "ToolMessage", "AIMessage"]
    assert [m.id for m in thread.messages] == ["m1", "resp_1", "fo1", "fo2", "resp_2"]
    ai = thread.messages[1]
    assert [(c["id"], c["args"]) for c in ai.tool_calls] == [("call_1", {"cmd": "ls"})]
    assert [(c["id"], c["args"]) for c in ai.invalid_tool_calls] == [("call_2", "{oops")]
    assert ai.additional_kwargs["reasoning"]["summary"] == [{"type": "summary_text", "text": "think"}]
    assert [(m.tool_call_id, m.name, m.content) for m in thread.messages[2:4]] == [
        ("call_1", "run", "a.txt"), ("call_2", "run", "err")]
    assert thread.messages[4].content == "one file"
    assert thread.extra == ({"order": "reversed (file was newest first)"} if newest_first else {})


def test_responses_bare_list_and_response_object() -> None:
    assert sniffers(responses_items()) == ["openai_responses"]
    response = {"id": "resp_9", "object": "response", "model": "gpt-5", "instructions": "be kind",
                "input": "hello",
                "output": [{"id": "msg_9", "type": "message", "role": "assistant",
                            "content": [{"type": "output_text", "text": "hi"}]}],
                "usage": {"input_tokens": 30, "output_tokens": 2}}
    assert sniffers(response) == ["openai_responses"]
    thread = load_doc(response)
    assert thread.thread_id == "resp_9" and thread.model == "gpt-5" and thread.system_prompt == "be kind"
    assert [type(m).__name__ for m in thread.messages] == ["SystemMessage", "HumanMessage", "AIMessage"]
    assert thread.usage == {"resp_9": RecordedUsage(input_tokens=30, output_tokens=2)}


SHAPES = {
    "langchain_dict": [{"type": "human", "data": {"content": "x"}}],
    "langchain_dumpd": [envelope("HumanMessage", content="x")],
    "openai_chat": {"model": "m", "messages": [{"role": "user", "content": "x"}]},
    "openai_messages": [{"role": "user", "content": "x"}],
    "openai_responses": {"object": "list", "data": [{"type": "function_call_output", "call_id": "c", "output": ""}]},
    "anthropic": {"messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t"}]}]},
}


@pytest.mark.parametrize("format", sorted(SHAPES))
def test_sniffs_are_mutually_exclusive(format: str) -> None:
    assert sniffers(SHAPES[format]) == [format]


def test_chat_dump_with_anthropic_blocks_is_anthropic() -> None:
    doc = {"model": "claude", "max_tokens": 100, "messages": ANTHROPIC_REQUEST["messages"]}
    assert sniffers(doc) == ["anthropic"]


def test_single_thread_formats_list_one_thread_and_check_the_id() -> None:
    blob = json.dumps([{"role": "user", "content": "x"}]).encode()
    assert list_threads(data=blob, name="one.json") == [ThreadRef("one", None, 1)]
    with pytest.raises(ThreadNotFoundError) as info:
        load_thread(data=blob, name="one.json", thread_id="two")
    assert str(info.value) == ("one.json, format openai_messages: thread 'two' not found "
                               "(this file holds one thread, 'one')")


def test_duplicate_source_ids_are_made_unique() -> None:
    doc = [{"type": "human", "data": {"content": "a", "id": "x"}}, {"type": "human", "data": {"content": "b", "id": "x"}}]
    assert [m.id for m in load_doc(doc).messages] == ["x", "x~1"]


def test_forced_format_on_wrong_shape_is_a_clear_error() -> None:
    with pytest.raises(ThreadLoadError) as info:
        load_doc({"object": "list", "data": []}, "openai_chat")
    assert (info.value.format, info.value.location) == ("openai_chat", "$.messages")
    with pytest.raises(ThreadLoadError) as info:
        load_doc([{"role": "user", "content": "x"}], "langchain_dict")
    assert (info.value.format, info.value.location) == ("langchain_dict", "$[0].type")


def test_types_of_loaded_messages_are_langchain() -> None:
    thread = load_doc(ANTHROPIC_REQUEST)
    assert isinstance(thread.messages[1], HumanMessage) and isinstance(thread.messages[3], ToolMessage)
