"""Shapes of real files of the JSON chat formats that other tools and versions write.

Each fixture is hand-written to reproduce one shape seen in public files (SDK test snapshots, proxy
and observability-tool fixtures, LangChain 0.1 to 1.x serialisations); no real content is copied.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage

from engine.base.errors import ThreadLoadError, ThreadNotFoundError
from engine.formats import detect_format, importers, list_threads, load_thread, open_source
from engine.thread.model import RecordedUsage


def blob(doc: Any) -> bytes:
    return json.dumps(doc).encode()


def load_doc(doc: Any, name: str = "doc.json", **kw: Any):  # type: ignore[no-untyped-def]
    return load_thread(data=blob(doc), name=name, **kw)


def claimed_by(data: bytes, name: str = "doc.json") -> list[str]:
    source = open_source(data=data, name=name)
    return [fmt for fmt, imp in importers().items() if imp.sniff(source)]


def roles(thread) -> list[str]:  # type: ignore[no-untyped-def]
    return [m.type for m in thread.messages]


# -- LangChain ---------------------------------------------------------------------------------


def flat(mtype: str, content: Any, **fields: Any) -> dict[str, Any]:
    """One message as `model_dump()` writes it (no `data` wrapper)."""
    return {"content": content, "additional_kwargs": {}, "response_metadata": {}, "type": mtype, "name": None, **fields}


def test_flat_model_dump_messages_load_as_langchain_dict() -> None:
    doc = {
        "messages": [
            flat("human", "weather in sf?", id="h-1", example=False),
            flat(
                "ai",
                "",
                id="run-1-0",
                tool_calls=[{"name": "search", "args": {"q": "sf"}, "id": "call_a", "type": "tool_call"}],
                invalid_tool_calls=[],
                usage_metadata={"input_tokens": 48, "output_tokens": 17, "total_tokens": 65, "input_token_details": {"cache_read": 0}},
                response_metadata={"model_name": "gpt-4o-mini-2024-07-18", "finish_reason": "tool_calls"},
            ),
            flat("tool", "foggy", id="t-1", tool_call_id="call_a", status="success", artifact=None),
            flat("ai", "It is foggy.", id="run-2-0", tool_calls=[], invalid_tool_calls=[]),
        ]
    }
    assert claimed_by(blob(doc)) == ["langchain_dict"]
    thread = load_doc(doc)
    assert thread.source_format == "langchain_dict"
    assert roles(thread) == ["human", "ai", "tool", "ai"]
    assert [m.id for m in thread.messages] == ["h-1", "run-1-0", "t-1", "run-2-0"]
    assert thread.tool_calls() == [{"name": "search", "args": {"q": "sf"}, "id": "call_a", "type": "tool_call"}]
    assert thread.model == "gpt-4o-mini-2024-07-18"
    assert thread.usage == {"run-1-0": RecordedUsage(input_tokens=48, output_tokens=17)}


def test_flat_bare_list_and_bad_flat_content_names_the_place() -> None:
    assert roles(load_doc([flat("system", "s"), flat("human", "h")])) == ["system", "human"]
    with pytest.raises(ThreadLoadError) as err:
        load_doc([flat("human", "h"), flat("ai", 7)])
    assert err.value.format == "langchain_dict"
    assert err.value.location == "$[1].content"


def test_dict_entries_of_older_versions_chunks_function_chat_remove() -> None:
    entries = [
        {"type": "human", "data": {"content": "add 1 and 1", "id": "h1", "example": False}},
        {"type": "ai", "data": {"content": "", "id": "a1", "additional_kwargs": {"function_call": {"name": "add", "arguments": "{\"a\": 1, \"b\": 1}"}}}},
        {"type": "function", "data": {"content": "2", "name": "add", "id": "f1"}},
        {"type": "chat", "data": {"content": "looks right", "role": "reviewer", "id": "c1"}},
        {"type": "AIMessageChunk", "data": {"content": "The sum is 2.", "id": "a2", "tool_call_chunks": [],
                                            "usage_metadata": {"input_tokens": 30, "output_tokens": 5, "total_tokens": 35}}},
        {"type": "remove", "data": {"content": "", "id": "c1"}},
        {"type": "remove", "data": {"content": "", "id": "not-there"}},
    ]
    thread = load_doc(entries)
    assert roles(thread) == ["human", "ai", "tool", "ai"]
    call = thread.tool_calls()[0]
    assert (call["name"], call["args"]) == ("add", {"a": 1, "b": 1})
    result = thread.messages[2]
    assert isinstance(result, ToolMessage) and result.tool_call_id == call["id"] and result.name == "add"
    assert type(thread.messages[3]) is AIMessage  # the chunk, as a whole message
    assert thread.usage == {"a2": RecordedUsage(input_tokens=30, output_tokens=5)}
    assert thread.extra["removed"] == ["c1"]
    # the same file loads to the same ids
    assert [m.id for m in load_doc(entries).messages] == [m.id for m in thread.messages]
    assert load_doc(entries).tool_calls()[0]["id"] == call["id"]


def test_chat_message_is_kept_and_remove_all_clears_what_came_before() -> None:
    entries = [
        {"type": "human", "data": {"content": "old", "id": "h0"}},
        {"type": "remove", "data": {"content": "", "id": "__remove_all__"}},
        {"type": "chat", "data": {"content": "note", "role": "moderator", "id": "c1"}},
    ]
    thread = load_doc(entries)
    assert len(thread.messages) == 1 and isinstance(thread.messages[0], ChatMessage)
    assert thread.messages[0].role == "moderator"
    assert thread.extra["removed"] == ["h0"]
    with pytest.raises(ThreadLoadError) as err:
        load_doc([{"type": "remove", "data": {"content": ""}}])
    assert err.value.location == "$[0].data.id"


def envelope(cls: str, **kwargs: Any) -> dict[str, Any]:
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", cls], "kwargs": kwargs}


def test_dumpd_function_chat_remove_and_chunk_classes_load() -> None:
    items = [
        envelope("HumanMessage", content="add", id="h1"),
        envelope("AIMessage", content="", id="a1", additional_kwargs={"function_call": {"name": "add", "arguments": "{}"}}),
        envelope("FunctionMessage", content="2", name="add", id="f1"),
        envelope("ChatMessage", content="ok", role="reviewer", id="c1"),
        envelope("AIMessageChunk", content="done", id="a2"),
        envelope("RemoveMessage", id="h1"),
    ]
    thread = load_doc({"messages": items})
    assert thread.source_format == "langchain_dumpd"
    assert roles(thread) == ["ai", "tool", "chat", "ai"]
    assert [m.id for m in thread.messages] == ["a1", "f1", "c1", "a2"]
    assert thread.messages[1].tool_call_id == thread.tool_calls()[0]["id"]  # type: ignore[attr-defined]
    assert thread.extra["removed"] == ["h1"]


def test_dumpd_still_refuses_non_message_classes() -> None:
    bad = {"lc": 1, "type": "constructor", "id": ["langchain", "prompts", "PromptTemplate"], "kwargs": {}}
    with pytest.raises(ThreadLoadError) as err:
        load_doc([envelope("HumanMessage", content="x"), bad])
    assert err.value.location == "$[1].id"


# -- OpenAI chat ---------------------------------------------------------------------------------

REQUEST: dict[str, Any] = {
    "model": "gpt-4o",
    "messages": [
        {"role": "system", "content": "Be helpful."},
        {"role": "user", "name": "alice", "content": [
            {"type": "text", "text": "What is in this image?"},
            {"type": "image_url", "image_url": {"url": "https://example.test/a.png", "detail": "low"}},
        ]},
    ],
    "tools": [{"type": "function", "function": {"name": "look", "description": "Look", "parameters": {"type": "object"}}}],
}
RESPONSE: dict[str, Any] = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "model": "gpt-4o-2024-08-06",
    "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": None, "refusal": None,
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "look", "arguments": "{\"x\": 1}"}}],
    }}],
    "usage": {"prompt_tokens": 82, "completion_tokens": 17, "total_tokens": 99, "prompt_tokens_details": {"cached_tokens": 64}},
}


@pytest.mark.parametrize("doc", [{**REQUEST, "response": RESPONSE}, {"request": REQUEST, "response": RESPONSE}], ids=["inline", "wrapped"])
def test_chat_request_with_its_response_appends_the_reply_and_usage(doc: dict[str, Any]) -> None:
    assert claimed_by(blob(doc)) == ["openai_chat"]
    thread = load_doc(doc)
    assert roles(thread) == ["system", "human", "ai"]
    assert thread.thread_id == "chatcmpl-1"
    assert thread.model == "gpt-4o"
    assert thread.messages[1].name == "alice"
    assert thread.tool_calls() == [{"name": "look", "args": {"x": 1}, "id": "call_1", "type": "tool_call"}]
    final = thread.messages[-1]
    # prompt_tokens includes the 64 cached tokens: split out as cache reads, the whole prompt stays 82.
    assert thread.usage == {final.id: RecordedUsage(input_tokens=18, output_tokens=17, cache_read_input_tokens=64)}
    assert thread.usage[final.id].context_tokens == 82
    assert thread.extra["finish_reason"] == "tool_calls"
    assert [t["name"] for t in thread.tools] == ["look"]


def test_chat_response_that_is_not_a_chat_completion_is_a_clear_error() -> None:
    with pytest.raises(ThreadLoadError) as err:
        load_doc({**REQUEST, "response": "oops"})
    assert (err.value.format, err.value.location) == ("openai_chat", "$.response")


def jsonl(records: list[Any]) -> bytes:
    return "\n".join(json.dumps(r) for r in records).encode() + b"\n"


def test_jsonl_of_requests_is_one_thread_per_line() -> None:
    records = [
        {**REQUEST, "response": {**RESPONSE, "id": "chatcmpl-a"}},
        {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]},
        {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "q2"}], "response": {**RESPONSE, "id": "chatcmpl-a"}},
    ]
    data = jsonl(records)
    assert claimed_by(data, "log.jsonl") == ["openai_chat"]
    refs = list_threads(data=data, name="log.jsonl")
    # a response id names its thread when unique in the file; else the line number does
    assert [(r.thread_id, r.messages) for r in refs] == [("log-line1", 3), ("log-line2", 2), ("log-line3", 2)]
    first = load_thread(data=data, name="log.jsonl")
    assert first.thread_id == "log-line1" and first.source_format == "openai_chat"
    second = load_thread(data=data, name="log.jsonl", thread_id="log-line2")
    assert roles(second) == ["human", "ai"] and second.model == "gpt-4o-mini"
    unique = jsonl([{**REQUEST, "response": {**RESPONSE, "id": f"chatcmpl-{i}"}} for i in range(2)])
    assert [r.thread_id for r in list_threads(data=unique, name="u.jsonl")] == ["chatcmpl-0", "chatcmpl-1"]
    with pytest.raises(ThreadNotFoundError):
        load_thread(data=data, name="log.jsonl", thread_id="nope")


def test_jsonl_bad_line_names_the_line() -> None:
    data = jsonl([REQUEST, {"model": "m", "messages": [{"role": "robot", "content": "x"}]}])
    with pytest.raises(ThreadLoadError) as err:
        list_threads(data=data, name="log.jsonl")
    assert (err.value.format, err.value.location) == ("openai_chat", "line 2: $.messages[0].role")


# -- OpenAI Responses ------------------------------------------------------------------------------

RESPONSES_REQUEST: dict[str, Any] = {
    "model": "gpt-5",
    "instructions": "Be brief.",
    "tools": [{"type": "function", "name": "weather", "parameters": {"type": "object"}}, {"type": "web_search_preview"}],
    "input": [
        {"role": "user", "content": "Weather in Paris?"},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"},
        {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "weather", "arguments": "{\"city\": \"Paris\"}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "20C"},
        {"type": "computer_call", "id": "cu_1", "call_id": "call_2", "action": {"type": "screenshot"}, "status": "completed"},
        {"type": "computer_call_output", "call_id": "call_2", "output": {"type": "computer_screenshot", "image_url": "data:,"}},
    ],
}


def test_responses_request_body_loads_with_instructions_tools_and_client_calls() -> None:
    assert claimed_by(blob(RESPONSES_REQUEST)) == ["openai_responses"]
    thread = load_doc(RESPONSES_REQUEST)
    assert roles(thread) == ["system", "human", "ai", "tool", "ai", "tool"]
    assert thread.system_prompt == "Be brief." and thread.model == "gpt-5"
    assert [t["name"] for t in thread.tools] == ["weather", "web_search_preview"]
    assert [(c["name"], c["id"]) for c in thread.tool_calls()] == [("weather", "call_1"), ("computer", "call_2")]
    assert thread.tool_calls()[1]["args"] == {"type": "screenshot"}
    assert [m.tool_call_id for m in thread.messages if isinstance(m, ToolMessage)] == ["call_1", "call_2"]
    assert thread.messages[-1].name == "computer"


def test_responses_request_with_response_appends_output_and_usage() -> None:
    response = {
        "id": "resp_9", "object": "response", "model": "gpt-5-2025-08-07", "instructions": None,
        "output": [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": "Sunny.", "annotations": []}]}],
        "usage": {"input_tokens": 120, "input_tokens_details": {"cached_tokens": 100}, "output_tokens": 4},
    }
    for doc in ({**RESPONSES_REQUEST, "response": response}, {"request": RESPONSES_REQUEST, "response": response}):
        thread = load_doc(doc)
        assert thread.source_format == "openai_responses"
        assert thread.thread_id == "resp_9"
        assert thread.system_prompt == "Be brief."  # the response's null instructions keep the request's
        assert roles(thread)[-1] == "ai" and thread.messages[-1].content == "Sunny."
        # input_tokens 120 includes the 100 cached: split out, so the whole request stays 120.
    assert thread.usage == {"resp_9": RecordedUsage(input_tokens=20, output_tokens=4, cache_read_input_tokens=100)}


# -- Anthropic ------------------------------------------------------------------------------------

ANTHROPIC_RESPONSE: dict[str, Any] = {
    "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
    "content": [
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "elephant weight"}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
         "content": [{"type": "web_search_result", "url": "https://example.test", "title": "T", "encrypted_content": "e"}]},
        {"type": "text", "text": "About 6 t.", "citations": [{"type": "web_search_result_location", "url": "https://example.test"}]},
    ],
    "stop_reason": "end_turn",
    "usage": {"input_tokens": 2000, "cache_read_input_tokens": 500, "cache_creation_input_tokens": 0, "output_tokens": 100,
              "server_tool_use": {"web_search_requests": 1}},
}


def test_anthropic_response_alone_is_a_one_message_thread() -> None:
    text_only = {**ANTHROPIC_RESPONSE, "content": [{"type": "text", "text": "Hi."}]}
    for doc in (ANTHROPIC_RESPONSE, text_only):
        assert claimed_by(blob(doc)) == ["anthropic"]
    thread = load_doc(ANTHROPIC_RESPONSE)
    assert thread.thread_id == "msg_01" and thread.model == "claude-sonnet-4-5"
    assert roles(thread) == ["ai"]
    # server tool blocks stay in the content (they are context), and nothing becomes a client tool call
    assert [b["type"] for b in thread.messages[0].content] == ["server_tool_use", "web_search_tool_result", "text"]  # type: ignore[index]
    assert thread.tool_calls() == []
    assert thread.usage == {"msg_01": RecordedUsage(2000, 100, 0, 500)}


def test_anthropic_request_with_its_response() -> None:
    request = {"model": "claude-sonnet-4-5", "system": "Be brief.", "messages": [{"role": "user", "content": "How heavy?"}]}
    for doc in ({**request, "response": ANTHROPIC_RESPONSE}, {"request": request, "response": ANTHROPIC_RESPONSE}):
        assert claimed_by(blob(doc)) == ["anthropic"]
        thread = load_doc(doc)
        assert roles(thread) == ["system", "human", "ai"]
        assert thread.thread_id == "msg_01"
        assert list(thread.usage) == ["msg_01"]


def test_anthropic_blocks_of_every_kind_are_kept() -> None:
    doc = {
        "model": "claude-sonnet-4-5",
        "system": [{"type": "text", "text": "Sys", "cache_control": {"type": "ephemeral"}}],
        "tools": [{"name": "read", "input_schema": {"type": "object"}}, {"type": "web_search_20250305", "name": "web_search"}],
        "messages": [
            {"role": "user", "content": [
                {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "Grass is green."}},
                {"type": "text", "text": "Read it", "cache_control": {"type": "ephemeral"}},
            ]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                {"type": "redacted_thinking", "data": "opaque"},
                {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": True,
                 "content": [{"type": "text", "text": "ENOENT"}, {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}]},
                {"type": "text", "text": "again"},
            ]},
        ],
    }
    thread = load_doc(doc)
    assert roles(thread) == ["system", "human", "ai", "tool", "human"]
    assert [b["type"] for b in thread.messages[1].content] == ["document", "text"]  # type: ignore[index]
    assert [b["type"] for b in thread.messages[2].content] == ["thinking", "redacted_thinking"]  # type: ignore[index]
    result = thread.messages[3]
    assert isinstance(result, ToolMessage) and result.status == "error" and result.name == "read"
    assert [b["type"] for b in result.content] == ["text", "image"]  # type: ignore[union-attr]
    assert [t["name"] for t in thread.tools] == ["read", "web_search"]


def test_detection_of_new_shapes_is_exclusive() -> None:
    docs = [
        {"messages": [flat("human", "h")]},
        {**REQUEST, "response": RESPONSE},
        {"request": REQUEST, "response": RESPONSE},
        RESPONSES_REQUEST,
        {"request": RESPONSES_REQUEST},
        ANTHROPIC_RESPONSE,
        {"request": {"model": "c", "messages": [{"role": "user", "content": "x"}]}, "response": ANTHROPIC_RESPONSE},
    ]
    expected = ["langchain_dict", "openai_chat", "openai_chat", "openai_responses", "openai_responses", "anthropic", "anthropic"]
    assert [claimed_by(blob(d)) for d in docs] == [[e] for e in expected]
    assert [detect_format(open_source(data=blob(d), name="d.json")) for d in docs] == expected


def test_loaded_types_are_langchain_messages() -> None:
    thread = load_doc({"request": REQUEST, "response": RESPONSE})
    assert [type(m) for m in thread.messages] == [SystemMessage, HumanMessage, AIMessage]


# -- round two: more shapes ------------------------------------------------------------------------


def test_jsonl_chat_history_one_entry_per_line_is_one_langchain_dict_thread() -> None:
    data = jsonl([
        {"type": "ai", "data": {"content": "Hello"}},
        {"type": "human", "data": {"content": "hi"}},
        flat("ai", "how can I help?", id="a9"),
    ])
    assert claimed_by(data, "history.jsonl") == ["langchain_dict"]
    thread = load_thread(data=data, name="history.jsonl")
    assert (thread.source_format, thread.thread_id) == ("langchain_dict", "history")
    assert roles(thread) == ["ai", "human", "ai"] and thread.messages[2].id == "a9"
    with pytest.raises(ThreadLoadError) as err:
        load_thread(data=jsonl([{"type": "ai", "data": {"content": "x"}}, {"type": "robot", "data": {"content": "x"}}]), name="h.jsonl")
    assert (err.value.format, err.value.location) == ("langchain_dict", "line 2: $.type")


def test_responses_server_side_calls_stay_in_the_content_and_count() -> None:
    search = {"id": "ws_1", "type": "web_search_call", "status": "completed", "action": {"type": "search", "query": "paris weather"}}
    mcp = {"id": "mcp_1", "type": "mcp_call", "server_label": "docs", "name": "lookup", "arguments": "{}", "output": "long result text"}
    doc = {"id": "resp_1", "object": "response", "model": "gpt-5", "output": [
        search, mcp, {"type": "message", "id": "msg_1", "role": "assistant", "content": [{"type": "output_text", "text": "Sunny."}]},
    ]}
    thread = load_doc(doc)
    (ai,) = thread.messages
    # a Response's output items are stamped with the response id that created them (grouping key)
    assert ai.content == [{"created_by": "resp_1", **search}, {"created_by": "resp_1", **mcp}, {"type": "text", "text": "Sunny."}]
    assert "tool_outputs" not in ai.additional_kwargs
    assert thread.tool_calls() == []


def test_ollama_tool_results_without_ids_answer_the_open_calls() -> None:
    doc = {"model": "llama3.2", "messages": [
        {"role": "user", "content": "Toronto and Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "weather", "arguments": {"city": "Toronto"}}},
            {"function": {"name": "temperature", "arguments": {"city": "Paris"}}},
        ]},
        {"role": "tool", "content": "22", "tool_name": "temperature"},
        {"role": "tool", "content": "11 C"},
    ]}
    thread = load_doc(doc)
    weather, temperature = thread.tool_calls()
    results = [(m.tool_call_id, m.name) for m in thread.messages if isinstance(m, ToolMessage)]
    assert results == [(temperature["id"], "temperature"), (weather["id"], "weather")]
    # a result with no id and no call to answer is still an error naming its place
    with pytest.raises(ThreadLoadError) as err:
        load_doc({"model": "m", "messages": [{"role": "user", "content": "x"}, {"role": "tool", "content": "r"}]})
    assert err.value.location == "$.messages[1].tool_call_id"


def test_fine_tuning_and_batch_jsonl_files_are_one_thread_a_line() -> None:
    finetune = jsonl([
        {"messages": [{"role": "system", "content": "Be terse."}, {"role": "user", "content": "Capital of France?"},
                      {"role": "assistant", "content": "Paris.", "weight": 1}]},
        {"messages": [{"role": "user", "content": "weather?"}, {"role": "assistant", "tool_calls": [
            {"id": "call_w", "type": "function", "function": {"name": "weather", "arguments": "{}"}}]}],
         "tools": [{"type": "function", "function": {"name": "weather", "parameters": {"type": "object"}}}]},
    ])
    assert claimed_by(finetune, "train.jsonl") == ["openai_chat"]
    assert [(r.thread_id, r.messages) for r in list_threads(data=finetune, name="train.jsonl")] == [
        ("train-line1", 3), ("train-line2", 2)]
    second = load_thread(data=finetune, name="train.jsonl", thread_id="train-line2")
    assert [t["name"] for t in second.tools] == ["weather"] and second.tool_calls()[0]["id"] == "call_w"

    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hello"}]}
    batch_in = jsonl([{"custom_id": f"req-{i}", "method": "POST", "url": "/v1/chat/completions", "body": body} for i in (1, 2)])
    assert [r.thread_id for r in list_threads(data=batch_in, name="in.jsonl")] == ["req-1", "req-2"]
    assert load_thread(data=batch_in, name="in.jsonl", thread_id="req-2").model == "gpt-4o-mini"

    batch_out = jsonl([{"id": "batch_req_1", "custom_id": "req-2", "error": None, "response": {"status_code": 200, "body": RESPONSE}}])
    assert claimed_by(batch_out, "out.jsonl") == ["openai_chat"]
    thread = load_thread(data=batch_out, name="out.jsonl")
    assert (thread.thread_id, thread.model, roles(thread)) == ("req-2", "gpt-4o-2024-08-06", ["ai"])
    assert list(thread.usage.values()) == [RecordedUsage(input_tokens=18, output_tokens=17, cache_read_input_tokens=64)]
    broken = jsonl([{"custom_id": "r1", "response": {"status_code": 200, "body": RESPONSE}},
                    {"custom_id": "r2", "response": {"status_code": 200, "body": {**RESPONSE, "choices": [7]}}}])
    with pytest.raises(ThreadLoadError) as err:
        load_thread(data=broken, name="out.jsonl", thread_id="r2")
    assert err.value.location == "line 2: $.response.body.choices[0]"


def test_langsmith_run_inputs_hold_dumpd_messages_as_one_batch() -> None:
    doc = {"messages": [[envelope("SystemMessage", content="sys"), envelope("HumanMessage", content="hi")]]}
    assert claimed_by(blob(doc)) == ["langchain_dumpd"]
    assert roles(load_doc(doc)) == ["system", "human"]
    with pytest.raises(ThreadLoadError) as err:
        load_doc({"messages": [[envelope("HumanMessage", content="hi"), envelope("HumanMessage", content=5)]]})
    assert err.value.location == "$.messages[0][1].kwargs.content"


def http_capture(body: dict[str, Any], response: dict[str, Any]) -> dict[str, Any]:
    """One line of an HTTP tracer's log (claude-trace's shape): request and response with their bodies."""
    return {"request": {"method": "POST", "url": "https://api.example.test/v1/messages", "headers": {}, "body": body},
            "response": {"status_code": 200, "headers": {}, **response}, "logged_at": "2025-06-01T00:00:00Z"}


def test_http_capture_log_of_anthropic_calls_is_one_thread_a_line() -> None:
    system = [{"type": "text", "text": "You are a CLI agent.", "cache_control": {"type": "ephemeral"}}]
    first = [{"role": "user", "content": [{"type": "text", "text": "list files"}]}]
    reply = {"id": "msg_a", "type": "message", "role": "assistant", "model": "claude-sonnet-4",
             "content": [{"type": "tool_use", "id": "toolu_a", "name": "Bash", "input": {"command": "ls"}}],
             "usage": {"input_tokens": 4, "cache_creation_input_tokens": 1200, "cache_read_input_tokens": 0, "output_tokens": 50}}
    second = [*first, {"role": "assistant", "content": reply["content"]},
              {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_a", "content": "a.txt"}]}]
    data = jsonl([
        http_capture({"model": "claude-sonnet-4", "system": system, "messages": first}, {"body": reply}),
        http_capture({"model": "claude-sonnet-4", "system": system, "messages": second, "stream": True}, {"body_raw": "event: message_start\n"}),
    ])
    assert claimed_by(data, "log.jsonl") == ["anthropic"]
    assert [(r.thread_id, r.messages) for r in list_threads(data=data, name="log.jsonl")] == [("msg_a", 3), ("log-line2", 4)]
    first_call = load_thread(data=data, name="log.jsonl")
    assert roles(first_call) == ["system", "human", "ai"]
    assert first_call.usage == {"msg_a": RecordedUsage(4, 50, 1200, 0)}
    streamed = load_thread(data=data, name="log.jsonl", thread_id="log-line2")
    assert roles(streamed) == ["system", "human", "ai", "tool"] and streamed.usage == {}
    # one capture alone is a JSON document and loads the same way
    single = load_doc(http_capture({"model": "claude-sonnet-4", "system": system, "messages": first}, {"body": reply}))
    assert (single.source_format, roles(single)) == ("anthropic", ["system", "human", "ai"])


def test_anthropic_batch_file_and_a_bad_line() -> None:
    rows = [{"custom_id": f"req-{i}", "params": {"model": "claude-3-7-sonnet", "max_tokens": 10, "system": "Be brief.",
                                              "messages": [{"role": "user", "content": "Hello"}]}} for i in (1, 2)]
    data = jsonl(rows)
    assert claimed_by(data, "batch.jsonl") == ["anthropic"]
    assert [r.thread_id for r in list_threads(data=data, name="batch.jsonl")] == ["req-1", "req-2"]
    assert roles(load_thread(data=data, name="batch.jsonl", thread_id="req-2")) == ["system", "human"]
    bad = jsonl([rows[0], {"custom_id": "req-3", "params": {**rows[1]["params"], "messages": [{"role": "robot", "content": "x"}]}}])
    with pytest.raises(ThreadLoadError) as err:
        load_thread(data=bad, name="batch.jsonl", thread_id="req-3")
    assert (err.value.format, err.value.location) == ("anthropic", "line 2: $.messages[0].role")


def test_jsonl_of_responses_calls_is_one_thread_a_line() -> None:
    rows = [{"custom_id": f"r{i}", "method": "POST", "url": "/v1/responses",
             "body": {"model": "gpt-5", "input": [{"role": "user", "content": f"question {i}"}]}} for i in (1, 2)]
    data = jsonl(rows)
    assert claimed_by(data, "batch.jsonl") == ["openai_responses"]
    assert [(r.thread_id, r.messages) for r in list_threads(data=data, name="batch.jsonl")] == [("r1", 1), ("r2", 1)]
    assert load_thread(data=data, name="batch.jsonl", thread_id="r2").messages[0].content == "question 2"


def test_a_broken_line_early_in_a_jsonl_log_is_named() -> None:
    data = jsonl([{"model": "m", "messages": [{"role": "user", "content": "q"}], "response": RESPONSE}]) + b'{"broken\n'
    with pytest.raises(ThreadLoadError) as err:
        load_thread(data=data, name="log.jsonl")
    assert (err.value.format, err.value.location) == ("openai_chat", "line 2, column 2")


def test_dumpd_values_that_could_not_be_serialised_load_as_their_repr() -> None:
    parsed = {"lc": 1, "type": "not_implemented", "id": ["pydantic", "main", "Answer"], "repr": "Answer(city='Paris')"}
    no_repr = {"lc": 1, "type": "not_implemented", "id": ["mymod", "Thing"]}
    thread = load_doc([envelope("HumanMessage", content="q", id="h"),
                       envelope("AIMessage", content="Paris", id="a", additional_kwargs={"parsed": parsed, "extras": [no_repr]})])
    assert thread.messages[1].additional_kwargs == {"parsed": "Answer(city='Paris')", "extras": ["mymod.Thing"]}
