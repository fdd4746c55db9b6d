"""VCR cassettes of Anthropic Messages and OpenAI Responses calls.

The numbers asserted on the real cassettes (shared/traces/*-compaction, from pydantic-ai) were read
off the YAML with a separate plain `yaml.safe_load` script (usage fields, ids, message counts per
request), not with this importer.
"""

from __future__ import annotations

import copy
import gzip
import json
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from engine.base.errors import ThreadLoadError, ThreadNotFoundError
from engine.formats import detect_format, importers, list_threads, load_thread, open_source
from engine.recorded.inspect import inspect_thread
from engine.thread.model import RecordedUsage
from tests.conftest import trace_path

ANTHROPIC_URI = "https://api.anthropic.com/v1/messages?beta=true"
RESPONSES_URI = "https://api.openai.com/v1/responses"


def cassette(*interactions: dict[str, Any]) -> bytes:
    return yaml.safe_dump({"interactions": list(interactions), "version": 1}, sort_keys=True).encode()


def interaction(uri: str, request: Any, response: Any, *, status: int = 200, headers: dict[str, list[str]] | None = None,
                raw: bool = False) -> dict[str, Any]:
    """One vcrpy interaction; `raw` keeps the response body as given (bytes, SSE text)."""
    body = response if raw else json.dumps(response)
    return {
        "request": {"method": "POST", "uri": uri, "body": json.dumps(request), "headers": {"content-type": ["application/json"]}},
        "response": {"status": {"code": status, "message": "OK"}, "headers": headers or {}, "body": {"string": body}},
    }


def load(data: bytes, name: str = "cassette.yaml", **kwargs: Any):  # type: ignore[no-untyped-def]
    return load_thread(data=data, name=name, **kwargs)


def anthropic_reply(rid: str, content: list[dict[str, Any]], usage: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"id": rid, "type": "message", "role": "assistant", "model": "claude-sonnet-4-6", "content": content,
            "stop_reason": "end_turn", "usage": usage, **extra}


# -- the real cassettes ----------------------------------------------------------------------------


def test_anthropic_compaction_end_to_end() -> None:
    thread = load_thread(trace_path("anthropic-compaction", "test_anthropic_compaction_end_to_end.yaml"))
    assert thread.source_format == "vcr_cassette"
    assert thread.thread_id == "test_anthropic_compaction_end_to_end"
    # the API window of Sonnet 4.6 (engine/data/models.yaml); only Claude Code runs it in 200k
    assert (thread.model, thread.max_input_tokens) == ("claude-sonnet-4-6", 1_000_000)
    assert [m.type for m in thread.messages] == ["system", "human", "ai", "human", "ai"]
    assert thread.system_prompt == "You are a helpful assistant. Be very brief."
    first, second = thread.messages[2], thread.messages[4]
    assert (first.id, second.id) == ("msg_01F14qCbQK62eHkEDj6yvZsi", "msg_015qYFL1xbq3pYbMr5ugbyLc")
    # The compaction block is the compaction's, not the reply's content.
    assert first.content == [{"text": "Hello! \U0001F44B", "type": "text"}]
    assert thread.messages[3].content == [{"text": "What did I ask you to do?", "type": "text"}]
    # usage.iterations: the `message` iteration is the call's usage; the compaction one is the compaction's.
    assert thread.usage == {
        first.id: RecordedUsage(input_tokens=220, output_tokens=8, cache_creation_input_tokens=0, cache_read_input_tokens=0,
                                cache_creation_5m_tokens=0, cache_creation_1h_tokens=0),
        second.id: RecordedUsage(input_tokens=239, output_tokens=10, cache_creation_input_tokens=0, cache_read_input_tokens=0,
                                 cache_creation_5m_tokens=0, cache_creation_1h_tokens=0),
    }
    [compaction] = thread.compactions
    assert (compaction.index, compaction.kind, compaction.source, compaction.trigger) == (2, "server", "anthropic:compaction", "auto")
    assert (compaction.pre_tokens, compaction.post_tokens) == (55196, 125)
    assert compaction.summary.startswith("The user provided a very long context consisting entirely of the repeated sentence")
    assert compaction.summary.endswith("Next step: Say hello to the user.")
    assert compaction.replacement is not None
    assert [type(m) for m in compaction.replacement] == [SystemMessage, HumanMessage]
    assert compaction.replacement[0].id == thread.messages[0].id
    assert compaction.replacement[1].content == compaction.summary and compaction.message_id == compaction.replacement[1].id
    assert thread.extra["calls"] == 2 and "skipped_interactions" not in thread.extra
    # Both steps run on the compacted context: system + summary (+ the turns since).
    steps = inspect_thread(thread)["steps"]
    assert [s["recorded_input_tokens"] for s in steps] == [220, 239]
    assert steps[1]["context_tokens"] - steps[0]["context_tokens"] > 0
    assert all(s["context_tokens"] < 300 for s in steps)


def test_anthropic_compaction_with_cache_splits_the_compaction_iteration() -> None:
    thread = load_thread(trace_path("anthropic-compaction", "test_anthropic_compaction_usage_with_cache.yaml"))
    assert [m.type for m in thread.messages] == ["system", "human", "ai"]
    reply = thread.messages[2]
    assert reply.id == "msg_011CduoCGqnmwXgi7jhzyVZM" and reply.content == [{"text": "Hello!", "type": "text"}]
    assert thread.usage[reply.id].context_tokens == 229 and thread.usage[reply.id].output_tokens == 5
    [compaction] = thread.compactions
    # the compaction iteration: input 100 + cache creation 55,096; output 131 (the summary)
    assert (compaction.pre_tokens, compaction.post_tokens) == (55196, 131)
    assert thread.system_prompt == "You are a helpful assistant. Be very brief."


def test_openai_compact_endpoint() -> None:
    thread = load_thread(trace_path("openai-responses-compaction", "test_openai_responses_compact_messages.yaml"))
    assert thread.model == "gpt-4o-mini-2024-07-18"
    assert [m.type for m in thread.messages] == ["system", "human", "ai", "human", "ai", "human", "ai"]
    assert [m.content for m in thread.messages[1:]] == [
        "What is 2+2?", "2 + 2 = 4.", "And 3+3?", "3 + 3 = 6.", "And 5+5?", "5 + 5 = 10"]
    ids = [m.id for m in thread.messages if isinstance(m, AIMessage)]
    assert ids == ["resp_0da8c7d4a85372d10069cdf57de22081949b8f78a343dd9bb4",
                   "resp_044c08d18b020f220069cdf57f20e88193b13d4134c451dc69",
                   "resp_0fe74db124a77f9a0069cdf58540648194ae801d1733255346"]
    assert [thread.usage[i].context_tokens for i in ids] == [29, 51, 298]
    assert [thread.usage[i].output_tokens for i in ids] == [9, 9, 8]
    [compaction] = thread.compactions
    # /responses/compact: usage input 156, output 190; the next request sends the compaction item only.
    assert (compaction.index, compaction.trigger, compaction.pre_tokens, compaction.post_tokens) == (5, "manual", 156, 190)
    assert (compaction.kind, compaction.source, compaction.summary) == ("server", "openai:compaction", "")
    assert compaction.replacement is not None and [m.type for m in compaction.replacement] == ["system", "human"]
    opaque = compaction.replacement[1]
    assert opaque.id == "cmp_0fe74db124a77f9a0169cdf581740c819490de6e615d95448d" and opaque.content == ""
    assert opaque.additional_kwargs["openai_compaction"]["encrypted_chars"] > 1000
    assert thread.extra["calls"] == 4


def test_openai_server_side_compaction_in_a_response() -> None:
    thread = load_thread(trace_path("openai-responses-compaction", "test_openai_responses_compact_stateful_mode.yaml"))
    assert [m.type for m in thread.messages] == ["human", "ai"] * 4
    ai = [m for m in thread.messages if isinstance(m, AIMessage)]
    assert [thread.usage[m.id].input_tokens for m in ai] == [25, 435, 847, 552]
    assert [thread.usage[m.id].output_tokens for m in ai] == [386, 388, 1179, 8]
    [compaction] = thread.compactions
    # The compaction item follows the third answer in its output: it applies from the next message on.
    assert (compaction.index, compaction.kind, compaction.trigger) == (6, "server", "auto")
    assert compaction.replacement is not None and compaction.replacement[0].id == "cmp_0b0c928ec0ba401f0069e0256e19388193b74237b70aeed0f5"
    steps = inspect_thread(thread)["steps"]
    assert [s["recorded_input_tokens"] for s in steps] == [25, 435, 847, 552]
    # Before the compaction our o200k count is within 1 % + 5 tokens of OpenAI's own; after it the
    # opaque compaction item is not countable, so the step counts only the new question.
    for s in steps[:3]:
        assert abs(s["context_tokens"] - s["recorded_input_tokens"]) <= 0.01 * s["recorded_input_tokens"] + 5
    assert steps[3]["context_tokens"] < 30


@pytest.mark.parametrize("name", ["test_anthropic_compaction_end_to_end.yaml", "test_anthropic_compaction_usage_with_cache.yaml"])
def test_real_cassettes_are_detected_and_claimed_by_no_json_importer(name: str) -> None:
    source = open_source(trace_path("anthropic-compaction", name))
    assert detect_format(source) == "vcr_cassette"
    assert [n for n, imp in importers().items() if imp.sniff(source)] == ["vcr_cassette"]


# -- hand-made cassettes: one feature each ---------------------------------------------------------


def test_gzip_and_binary_bodies_are_read() -> None:
    reply = anthropic_reply("msg_1", [{"type": "text", "text": "hi"}], {"input_tokens": 5, "output_tokens": 1})
    data = cassette(interaction(ANTHROPIC_URI, {"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "hello"}]},
                                gzip.compress(json.dumps(reply).encode()), headers={"content-encoding": ["gzip"]}, raw=True))
    assert b"!!binary" in data  # bytes are written as YAML binary (base64), as vcrpy does
    thread = load(data)
    assert [m.content for m in thread.messages] == ["hello", [{"type": "text", "text": "hi"}]]
    assert thread.usage == {"msg_1": RecordedUsage(input_tokens=5, output_tokens=1)}


def test_anthropic_sse_stream_is_assembled() -> None:
    events = [
        ("message_start", {"type": "message_start", "message": {"id": "msg_s", "type": "message", "role": "assistant",
                                                                "model": "claude-sonnet-4-5", "content": [],
                                                                "usage": {"input_tokens": 40, "cache_read_input_tokens": 1000,
                                                                          "cache_creation_input_tokens": 7, "output_tokens": 1}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Let me "}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "look."}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("content_block_start", {"type": "content_block_start", "index": 1,
                                 "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"path\": "}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "\"a.py\"}"}}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 31}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    sse = "".join(f"event: {name}\ndata: {json.dumps(payload)}\n\n" for name, payload in events)
    data = cassette(interaction(ANTHROPIC_URI, {"model": "claude-sonnet-4-5", "stream": True, "messages": [{"role": "user", "content": "go"}]},
                                sse, headers={"content-type": ["text/event-stream; charset=utf-8"]}, raw=True))
    thread = load(data)
    reply = thread.messages[-1]
    assert isinstance(reply, AIMessage) and reply.id == "msg_s"
    assert reply.content == [{"type": "text", "text": "Let me look."}]
    assert reply.tool_calls == [{"name": "read", "args": {"path": "a.py"}, "id": "toolu_1", "type": "tool_call"}]
    assert thread.usage["msg_s"] == RecordedUsage(input_tokens=40, output_tokens=31, cache_creation_input_tokens=7,
                                                  cache_read_input_tokens=1000)
    assert thread.usage["msg_s"].context_tokens == 1047


def test_openai_sse_stream_takes_the_completed_response() -> None:
    response = {"id": "resp_1", "object": "response", "model": "gpt-5", "output": [
        {"type": "message", "id": "m1", "role": "assistant", "content": [{"type": "output_text", "text": "4"}]}],
        "usage": {"input_tokens": 30, "input_tokens_details": {"cached_tokens": 20}, "output_tokens": 2,
                  "output_tokens_details": {"reasoning_tokens": 1}}}
    sse = (f"event: response.created\ndata: {json.dumps({'type': 'response.created', 'response': {**response, 'output': []}})}\n\n"
           f"event: response.completed\ndata: {json.dumps({'type': 'response.completed', 'response': response})}\n\n")
    thread = load(cassette(interaction(RESPONSES_URI, {"model": "gpt-5", "input": "2+2?", "stream": True}, sse, raw=True)))
    assert [m.content for m in thread.messages] == ["2+2?", "4"]
    assert thread.usage == {"resp_1": RecordedUsage(input_tokens=10, output_tokens=2, cache_read_input_tokens=20, reasoning_tokens=1)}


def _tool_turns(n: int) -> list[dict[str, Any]]:
    """A user task, then n tool uses (every second one of `keep_me`), each answered."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "task"}]
    for k in range(n):
        name = "keep_me" if k % 2 else "grep"
        messages.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{k}", "name": name, "input": {"q": k}}]})
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{k}", "content": "x" * 50}]})
    return messages


def test_applied_tool_use_edits_clear_the_oldest_not_excluded() -> None:
    config = {"edits": [{"type": "clear_tool_uses_20250919", "keep": {"type": "tool_uses", "value": 1},
                         "exclude_tools": ["keep_me"], "clear_tool_inputs": ["grep"]}]}
    first = interaction(ANTHROPIC_URI, {"model": "claude-sonnet-4-5", "messages": _tool_turns(4), "context_management": config},
                        anthropic_reply("msg_a", [{"type": "tool_use", "id": "toolu_4", "name": "grep", "input": {"q": 4}}],
                                        {"input_tokens": 900, "output_tokens": 9},
                                        context_management={"applied_edits": [{"type": "clear_tool_uses_20250919",
                                                                               "cleared_tool_uses": 1, "cleared_input_tokens": 120}]}))
    second_messages = [*_tool_turns(4), {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_4", "name": "grep", "input": {"q": 4}}]},
                       {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_4", "content": "y"}]}]
    second = interaction(ANTHROPIC_URI, {"model": "claude-sonnet-4-5", "messages": second_messages, "context_management": config},
                         anthropic_reply("msg_b", [{"type": "text", "text": "done"}], {"input_tokens": 800, "output_tokens": 2},
                                         context_management={"applied_edits": [{"type": "clear_tool_uses_20250919",
                                                                                "cleared_tool_uses": 2, "cleared_input_tokens": 240}]}))
    thread = load(cassette(first, second))
    assert [m.id for m in thread.messages if isinstance(m, AIMessage)][-2:] == ["msg_a", "msg_b"]
    first_edit, second_edit = thread.edits
    index_a = next(i for i, m in enumerate(thread.messages) if m.id == "msg_a")
    index_b = next(i for i, m in enumerate(thread.messages) if m.id == "msg_b")
    # The oldest not-excluded use is toolu_0 (toolu_1 is keep_me); the next call adds toolu_2 only.
    assert (first_edit.index, first_edit.tool_call_ids, first_edit.tokens_saved) == (index_a, ["toolu_0"], 120)
    assert (second_edit.index, second_edit.tool_call_ids, second_edit.tokens_saved) == (index_b, ["toolu_2"], 240)
    assert first_edit.kind == "clear_tool_results" and first_edit.clear_inputs is True  # grep is in clear_tool_inputs
    assert first_edit.source == "anthropic:clear_tool_uses_20250919" and first_edit.message_id == "msg_a"
    assert first_edit.placeholder == ""


def test_applied_thinking_edits_name_the_oldest_thinking_turns() -> None:
    history = [{"role": "user", "content": "q1"},
               {"role": "assistant", "content": [{"type": "thinking", "thinking": "t1", "signature": "s"}, {"type": "text", "text": "a1"}]},
               {"role": "user", "content": "q2"},
               {"role": "assistant", "content": [{"type": "thinking", "thinking": "t2", "signature": "s"}, {"type": "text", "text": "a2"}]},
               {"role": "user", "content": "q3"}]
    reply = anthropic_reply("msg_t", [{"type": "text", "text": "a3"}], {"input_tokens": 50, "output_tokens": 3},
                            context_management={"applied_edits": [{"type": "clear_thinking_20251015", "cleared_thinking_turns": 1,
                                                                   "cleared_input_tokens": 12}]})
    thread = load(cassette(interaction(ANTHROPIC_URI, {"model": "claude-sonnet-4-5", "messages": history,
                                                      "context_management": {"edits": [{"type": "clear_thinking_20251015"}]}}, reply)))
    [edit] = thread.edits
    assert edit.kind == "clear_thinking" and edit.message_ids == [thread.messages[1].id] and edit.tokens_saved == 12


def test_unrelated_and_failed_interactions_are_skipped_and_counted() -> None:
    good = interaction(RESPONSES_URI, {"model": "gpt-5", "input": "hi"},
                       {"id": "resp_ok", "object": "response", "output": [{"type": "message", "role": "assistant",
                                                                          "content": [{"type": "output_text", "text": "hello"}]}]})
    other = {"request": {"method": "GET", "uri": "https://example.invalid/health", "body": None, "headers": {}},
             "response": {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": "ok"}}}
    limited = interaction(RESPONSES_URI, {"model": "gpt-5", "input": "hi"}, {"error": {"message": "slow down"}}, status=429)
    thread = load(cassette(other, limited, good))
    assert thread.extra["skipped_interactions"] == {"HTTP 429": 1, "no JSON request body": 1}
    assert [m.content for m in thread.messages] == ["hi", "hello"]


def test_separate_conversations_are_separate_threads() -> None:
    def call(question: str, rid: str) -> dict[str, Any]:
        return interaction(RESPONSES_URI, {"model": "gpt-5", "input": question},
                           {"id": rid, "object": "response", "output": [{"type": "message", "role": "assistant",
                                                                        "content": [{"type": "output_text", "text": "ok"}]}]})
    data = cassette(call("first?", "resp_a"), call("second?", "resp_b"))
    refs = list_threads(data=data, name="two.yaml")
    assert [(r.thread_id, r.messages) for r in refs] == [("two-1", 2), ("two-2", 2)]
    assert load(data, name="two.yaml").thread_id == "two-2"  # the last call's conversation by default
    assert load(data, name="two.yaml", thread_id="two-1").messages[0].content == "first?"
    with pytest.raises(ThreadNotFoundError, match="two-1, two-2"):
        load(data, name="two.yaml", thread_id="nope")


def test_previous_response_id_chaining_appends() -> None:
    first = interaction(RESPONSES_URI, {"model": "gpt-5", "input": "a"},
                        {"id": "resp_1", "object": "response", "output": [{"type": "message", "role": "assistant",
                                                                          "content": [{"type": "output_text", "text": "A"}]}]})
    second = interaction(RESPONSES_URI, {"model": "gpt-5", "input": "b", "previous_response_id": "resp_1"},
                         {"id": "resp_2", "object": "response", "output": [{"type": "message", "role": "assistant",
                                                                           "content": [{"type": "output_text", "text": "B"}]}]})
    thread = load(cassette(first, second))
    assert [m.content for m in thread.messages] == ["a", "A", "b", "B"]


def test_a_request_that_drops_old_turns_is_a_recorded_trim() -> None:
    def reply(rid: str) -> dict[str, Any]:
        return anthropic_reply(rid, [{"type": "text", "text": rid}], {"input_tokens": 10, "output_tokens": 1})
    turn1 = [{"role": "user", "content": "one"}]
    turn2 = [*turn1, {"role": "assistant", "content": [{"type": "text", "text": "msg_1"}]}, {"role": "user", "content": "two"}]
    turn3 = [{"role": "user", "content": "[summary] one"}, *turn2[1:],
             {"role": "assistant", "content": [{"type": "text", "text": "msg_2"}]}, {"role": "user", "content": "three"}]
    thread = load(cassette(*(interaction(ANTHROPIC_URI, {"model": "claude-sonnet-4-5", "messages": m}, reply(f"msg_{k}"))
                             for k, m in enumerate([turn1, turn2, turn3], start=1))))
    assert [m.content if isinstance(m.content, str) else m.content[0]["text"] for m in thread.messages] == [
        "one", "msg_1", "two", "msg_2", "three", "msg_3"]
    [compaction] = thread.compactions
    assert (compaction.index, compaction.kind, compaction.source) == (4, "summary", "vcr_cassette:request")
    assert compaction.replacement is not None
    assert [m.id for m in compaction.replacement[1:]] == [m.id for m in thread.messages[1:4]]  # kept, same ids
    assert compaction.summary == "[summary] one"


def test_a_json_cassette_loads_too() -> None:
    doc = yaml.safe_load(cassette(interaction(RESPONSES_URI, {"model": "gpt-5", "input": "hi"},
                                              {"id": "r", "object": "response", "output": []})))
    data = json.dumps(doc).encode()
    assert detect_format(open_source(data=data, name="c.json")) == "vcr_cassette"
    assert [m.content for m in load(data, name="c.json").messages] == ["hi"]


# -- bad input: one line naming file, format and place ---------------------------------------------


def test_python_tags_are_refused_not_run() -> None:
    data = b"interactions:\n- request: !!python/object/apply:os.system ['echo hacked']\n  response: {}\n"
    with pytest.raises(ThreadLoadError) as err:
        load(data, name="evil.yaml")
    message = err.value.one_line()
    assert "evil.yaml" in message and "vcr_cassette" in message and "refused" in message and "python/object" in message
    assert "line 2" in message


def test_alias_bombs_are_refused() -> None:
    lines = ["interactions:", "- request: {method: POST, uri: x, body: null}", "  response: {}", "a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{k}: &a{k} [*a{k - 1}, *a{k - 1}, *a{k - 1}, *a{k - 1}, *a{k - 1}, *a{k - 1}, *a{k - 1}, *a{k - 1}, *a{k - 1}, *a{k - 1}]"
              for k in range(1, 9)]
    with pytest.raises(ThreadLoadError, match="aliases expand"):
        load("\n".join(lines).encode(), name="bomb.yaml")


def test_broken_yaml_names_line_and_column() -> None:
    with pytest.raises(ThreadLoadError) as err:
        load(b"interactions:\n- request: {method: POST\n  response: [\n", name="broken.yaml", format="vcr_cassette")
    assert "broken.yaml" in err.value.one_line() and "line " in err.value.one_line()


def test_a_bad_message_names_the_interaction_and_json_path() -> None:
    bad = interaction(ANTHROPIC_URI, {"model": "m", "messages": [{"role": "user", "content": 5}]},
                      anthropic_reply("msg_x", [], {"input_tokens": 1, "output_tokens": 1}))
    with pytest.raises(ThreadLoadError) as err:
        load(cassette(bad), name="bad.yaml")
    assert err.value.location == "interactions[0].request.messages[0].content"


def test_a_cassette_without_provider_calls_says_so() -> None:
    other = {"request": {"method": "GET", "uri": "https://example.invalid/", "body": None, "headers": {}}, "response": {}}
    with pytest.raises(ThreadLoadError, match="no Anthropic Messages or OpenAI Responses calls"):
        load(cassette(other), name="empty.yaml")


# -- fuzz: mutated cassettes raise ThreadLoadError or load ------------------------------------------

BASE = yaml.safe_load(cassette(
    interaction(ANTHROPIC_URI, {"model": "claude-sonnet-4-5", "system": "s", "messages": _tool_turns(2),
                                "context_management": {"edits": [{"type": "clear_tool_uses_20250919"}]}},
                anthropic_reply("msg_f", [{"type": "compaction", "content": "sum"}, {"type": "text", "text": "t"}],
                                {"input_tokens": 3, "output_tokens": 4, "iterations": [{"type": "compaction", "input_tokens": 9},
                                                                                      {"type": "message", "input_tokens": 3}]},
                                context_management={"applied_edits": [{"type": "clear_tool_uses_20250919", "cleared_tool_uses": 1}]})),
    interaction(RESPONSES_URI, {"model": "gpt-5", "input": [{"role": "user", "content": "q"}, {"type": "compaction", "id": "c1",
                                                                                                "encrypted_content": "zz"}]},
                {"id": "r", "object": "response", "output": [{"type": "message", "role": "assistant", "content": "x"}],
                 "usage": {"input_tokens": 1, "input_tokens_details": {"cached_tokens": 0}}}),
))
# Bodies parsed, so mutations reach inside them (pydantic-ai's `parsed_body` shape).
for _item in BASE["interactions"]:
    _item["request"]["parsed_body"] = json.loads(_item["request"].pop("body"))
    _item["response"]["parsed_body"] = json.loads(_item["response"].pop("body")["string"])

PATHS: list[tuple[Any, ...]] = []


def _paths(value: Any, at: tuple[Any, ...]) -> None:
    PATHS.append(at)
    if isinstance(value, dict):
        for key, inner in value.items():
            _paths(inner, (*at, key))
    elif isinstance(value, list):
        for k, inner in enumerate(value):
            _paths(inner, (*at, k))


_paths(BASE, ())
ODD = st.sampled_from([None, 0, -1, 1.5, True, "", "x", [], {}, [1], {"type": 3}, {"role": None}])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(PATHS[1:]), st.booleans(), ODD), min_size=1, max_size=4))
def test_mutated_cassettes_load_or_raise_thread_load_error(mutations: list[tuple[tuple[Any, ...], bool, Any]]) -> None:
    doc = copy.deepcopy(BASE)
    for path, drop, value in mutations:
        parent: Any = doc
        try:
            for key in path[:-1]:
                parent = parent[key]
            if drop and isinstance(parent, dict):
                parent.pop(path[-1], None)
            elif drop and isinstance(parent, list) and isinstance(path[-1], int) and path[-1] < len(parent):
                parent.pop(path[-1])
            else:
                parent[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue
    data = yaml.safe_dump(doc).encode()
    try:
        thread = load_thread(data=data, name="fuzz.yaml", format="vcr_cassette")
    except ThreadLoadError as exc:
        assert "fuzz.yaml" in exc.one_line()
        return
    inspect_thread(thread)
    assert all(isinstance(m, (SystemMessage, HumanMessage, AIMessage, ToolMessage)) for m in thread.messages)
