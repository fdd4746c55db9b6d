"""OpenTelemetry GenAI traces: any-agent's flattened span dumps, and hand-made OTLP JSON documents.

Expected numbers on the real traces were read off the files with a plain json script (spans per
`gen_ai.operation.name`, their `gen_ai.usage.*`, trace and span ids), not with this importer.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from engine.base.errors import ThreadLoadError, ThreadNotFoundError
from engine.formats import detect_format, importers, list_threads, load_thread, open_source
from engine.recorded.inspect import inspect_thread
from tests.conftest import trace_path

# -- real any-agent traces ---------------------------------------------------------------------------

REAL = {
    # file: (trace id, LLM span ids, (input, output) per call, tool-call ids or None when generated)
    "any-agent_OPENAI_trace.json": ("4bedea77bb33b9c5f280371eae21ea97", ["8100d9dbee1f3e47", "1b1e636a0d314482", "975e0660433b7a8b"],
                                    [(269, 16), (359, 14), (392, 46)], None),
    "any-agent_LANGCHAIN_trace.json": ("572318454595034fe5076610d6400542",
                                       ["a78bc9a92c52cd14", "9e57109d37201d92", "32fc8bcda1853115", "f0ed860f11d4a132"],
                                       [(245, 16), (331, 14), (366, 33), (320, 62)], None),
    "any-agent_AGNO_trace.json": ("1de0532b350588ff152b1edf6bf358b3", ["19145660c14f5a36", "4eef67eb98690e82", "51ae1a4394cea471"],
                                  [(395, 16), (483, 14), (518, 44)], ["LlAGPjfO0", "wzCUjvRq4"]),
}


@pytest.mark.parametrize("name", sorted(REAL))
def test_any_agent_trace_is_one_thread_with_usage_per_call(name: str) -> None:
    trace_id, span_ids, usage, call_ids = REAL[name]
    path = trace_path("otel-genai", name)
    assert detect_format(open_source(path)) == "otel_genai"
    assert [n for n, imp in importers().items() if imp.sniff(open_source(path))] == ["otel_genai"]
    [ref] = list_threads(path)
    thread = load_thread(path)
    assert thread.thread_id == ref.thread_id == f"trace-{trace_id}"
    assert thread.title == "Find what year it is in the America/New_York timezone and write the value…"
    # The first call's input (system, user), each call's output, each tool's result before the next call.
    roles = [type(m) for m in thread.messages]
    assert roles[:6] == [SystemMessage, HumanMessage, AIMessage, ToolMessage, AIMessage, ToolMessage]
    assert roles[6:] == [AIMessage] * (len(span_ids) - 2)
    assert [m.id for m in thread.messages if isinstance(m, AIMessage)] == [f"otel-{s}" for s in span_ids]
    assert [tc["name"] for tc in thread.tool_calls()] == ["get_current_time", "write_file"]
    assert thread.tool_calls()[0]["args"] == {"timezone": "America/New_York"}
    expected_ids = call_ids or [f"otel_genai-{span_ids[0]}-out-call0", f"otel_genai-{span_ids[1]}-out-call0"]
    assert [tc["id"] for tc in thread.tool_calls()] == expected_ids
    assert [m.tool_call_id for m in thread.messages if isinstance(m, ToolMessage)] == expected_ids
    assert json.loads(thread.messages[3].content)["timezone"] == "America/New_York"
    assert [(u.input_tokens, u.output_tokens) for u in thread.usage.values()] == usage
    # the trace records no window: the model table's (Mistral Small 3.x, 128k) fills it
    assert (thread.model, thread.max_input_tokens) == ("mistral/mistral-small-latest", 128_000)
    assert thread.extra["window_source"] == "model table"
    assert thread.compactions == [] and ref.messages == len(thread.messages)


def test_any_agent_final_answer_text() -> None:
    thread = load_thread(trace_path("otel-genai", "any-agent_LANGCHAIN_trace.json"))
    assert thread.messages[6].content.startswith("Here are the steps I have taken:")
    assert json.loads(thread.messages[7].content)["steps"][1]["description"] == "Wrote the year to a file."


# -- hand-made OTLP ---------------------------------------------------------------------------------------


def value(v: Any) -> dict[str, Any]:
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}  # proto3 JSON writes int64 as a string
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, list):
        return {"arrayValue": {"values": [value(x) for x in v]}}
    return {"stringValue": v if isinstance(v, str) else json.dumps(v)}


def kv(d: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": value(v)} for k, v in d.items()]


def span(sid: str, name: str, attrs: dict[str, Any], start: int, parent: str = "", trace: str = "ab" * 16,
         events: tuple[tuple[str, dict[str, Any]], ...] = ()) -> dict[str, Any]:
    return {"traceId": trace, "spanId": sid, "parentSpanId": parent, "name": name, "kind": 3,
            "startTimeUnixNano": str(1_700_000_000_000_000_000 + start), "endTimeUnixNano": str(1_700_000_000_000_000_000 + start + 5),
            "attributes": kv(attrs), "events": [{"timeUnixNano": "0", "name": n, "attributes": kv(a)} for n, a in events]}


def otlp(spans: list[dict[str, Any]]) -> dict[str, Any]:
    return {"resourceSpans": [{"resource": {"attributes": kv({"service.name": "agent"})},
                               "scopeSpans": [{"scope": {"name": "instrumentation"}, "spans": spans}]}]}


SYSTEM = [{"type": "text", "content": "You are a weather bot."}]
USER = {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}
CALL = {"role": "assistant", "parts": [{"type": "reasoning", "content": "need the tool"},
                                       {"type": "tool_call", "id": "call_1", "name": "get_weather", "arguments": {"location": "Paris"}}]}
RESULT = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_1", "response": "rainy, 57°F"}]}
ANSWER = {"role": "assistant", "parts": [{"type": "text", "content": "It is rainy."}], "finish_reason": "stop"}


def chat(sid: str, inp: list[Any] | None, out: list[Any], start: int, tokens: tuple[int, ...] = (100, 10),
         conversation: str | None = "conv-1", parent: str = "agent", trace: str = "ab" * 16, **extra: Any) -> dict[str, Any]:
    attrs: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                             "gen_ai.request.model": "gpt-4o", "gen_ai.response.model": "gpt-4o-2024-08-06",
                             "gen_ai.output.messages": json.dumps(out), "gen_ai.system_instructions": json.dumps(SYSTEM),
                             "gen_ai.usage.input_tokens": tokens[0], "gen_ai.usage.output_tokens": tokens[1]}
    if inp is not None:
        attrs["gen_ai.input.messages"] = json.dumps(inp)
    if conversation:
        attrs["gen_ai.conversation.id"] = conversation
    for key, n in zip(("gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_creation.input_tokens",
                       "gen_ai.usage.reasoning.output_tokens"), tokens[2:], strict=False):
        attrs[key] = n
    attrs.update({k.replace("__", "."): v for k, v in extra.items()})
    return span(sid, "chat gpt-4o", attrs, start, parent, trace)


def agent(sid: str = "agent", start: int = 0, parent: str = "") -> dict[str, Any]:
    return span(sid, "invoke_agent weather", {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather"}, start, parent)


def tool(sid: str, call_id: str | None, result: str, start: int, parent: str = "agent", name: str = "get_weather") -> dict[str, Any]:
    attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.call.result": result}
    if call_id:
        attrs["gen_ai.tool.call.id"] = call_id
    return span(sid, f"execute_tool {name}", attrs, start, parent)


def weather_spans() -> list[dict[str, Any]]:
    return [agent(), chat("c1", [USER], [CALL], 10, (120, 12), gen_ai__tool__definitions=json.dumps([{"type": "function", "name": "get_weather"}])),
            tool("t1", "call_1", "rainy, 57°F", 20),
            chat("c2", [USER, CALL, RESULT], [ANSWER], 30, (180, 8, 100, 20, 3))]


def load(doc: Any, name: str = "trace.json", **kw: Any):  # type: ignore[no-untyped-def]
    return load_thread(data=json.dumps(doc).encode(), name=name, **kw)


def test_otlp_semconv_messages_parts_and_cache_usage() -> None:
    thread = load(otlp(weather_spans()))
    assert thread.thread_id == "conv-1"
    assert [type(m) for m in thread.messages] == [SystemMessage, HumanMessage, AIMessage, ToolMessage, AIMessage]
    assert thread.system_prompt == "You are a weather bot."
    assert thread.messages[2].content == [{"type": "reasoning", "reasoning": "need the tool"}]
    assert thread.messages[2].tool_calls == [{"name": "get_weather", "args": {"location": "Paris"}, "id": "call_1", "type": "tool_call"}]
    assert (thread.messages[3].tool_call_id, thread.messages[3].content) == ("call_1", "rainy, 57°F")
    assert thread.tools == [{"type": "function", "name": "get_weather"}]
    # input_tokens include the cache (semconv): 180 = 60 uncached + 100 read + 20 written.
    second = thread.usage["otel-c2"]
    assert (second.input_tokens, second.cache_read_input_tokens, second.cache_creation_input_tokens,
            second.reasoning_tokens, second.context_tokens) == (60, 100, 20, 3, 180)
    assert second.model == "gpt-4o-2024-08-06" and second.timestamp == "2023-11-14T22:13:20+00:00"
    assert (thread.model, thread.max_input_tokens) == ("gpt-4o-2024-08-06", 128_000)


def test_flattened_and_otlp_give_the_same_thread() -> None:
    flat = []
    for s in weather_spans():
        attrs = {a["key"]: next(iter(a["value"].values())) for a in s["attributes"]}
        attrs = {k: int(v) if k.startswith("gen_ai.usage.") else v for k, v in attrs.items()}
        flat.append({"name": s["name"], "context": {"trace_id": s["traceId"], "span_id": s["spanId"]},
                     "parent": {"span_id": s["parentSpanId"] or None}, "start_time": int(s["startTimeUnixNano"]),
                     "attributes": attrs, "events": []})
    a, b = load(otlp(weather_spans())), load({"spans": flat})
    assert [(m.type, m.id, m.content) for m in a.messages] == [(m.type, m.id, m.content) for m in b.messages]
    assert a.usage == b.usage
    jsonl = "\n".join(json.dumps(otlp([s])) for s in weather_spans()).encode()
    assert detect_format(open_source(data=jsonl, name="export.jsonl")) == "otel_genai"
    assert [m.id for m in load_thread(data=jsonl, name="export.jsonl").messages] == [m.id for m in a.messages]


def test_one_thread_per_conversation_else_per_trace() -> None:
    spans = [*weather_spans(),
             chat("d1", [{"role": "user", "parts": [{"type": "text", "content": "Hi"}]}], [ANSWER], 40, conversation="conv-2"),
             chat("e1", [USER], [ANSWER], 50, conversation=None, parent="", trace="cd" * 16)]
    refs = list_threads(data=json.dumps(otlp(spans)).encode(), name="t.json")
    assert [(r.thread_id, r.messages) for r in refs] == [("conv-1", 5), ("conv-2", 3), (f"trace-{'cd' * 16}", 3)]
    assert load(otlp(spans), thread_id="conv-2").messages[1].content == "Hi"
    with pytest.raises(ThreadNotFoundError):
        load(otlp(spans), thread_id="conv-9")


def test_calls_without_input_get_the_history_and_tool_spans_results() -> None:
    spans = [agent(), chat("c1", [USER], [CALL], 10), tool("t1", None, "rainy", 20), chat("c2", None, [ANSWER], 30)]
    thread = load(otlp(spans))
    assert [m.type for m in thread.messages] == ["system", "human", "ai", "tool", "ai"]
    assert thread.messages[3].tool_call_id == "call_1"  # paired by tool name
    assert thread.messages[3].id == "otel-t1"


def test_a_wrapping_framework_span_does_not_double_count() -> None:
    inner = chat("p1", [USER], [ANSWER], 12, parent="f1")
    outer = span("f1", "call_llm gpt-4o", {"gen_ai.operation.name": "call_llm", "gen_ai.usage.input_tokens": 100,
                                          "gen_ai.output": "It is rainy."}, 11, "agent")
    thread = load(otlp([agent(), outer, inner]))
    assert list(thread.usage) == ["otel-p1"] and thread.extra["llm_spans"] == 1


def test_compacted_input_is_a_recorded_compaction() -> None:
    summary = {"role": "user", "parts": [{"type": "text", "content": "Summary: Paris is rainy."}]}
    follow = {"role": "user", "parts": [{"type": "text", "content": "And tomorrow?"}]}
    spans = [*weather_spans(),
             chat("c3", [summary, follow], [ANSWER], 40, gen_ai__conversation__compacted=True)]
    thread = load(otlp(spans))
    [c] = thread.compactions
    assert (c.index, c.kind, c.summary, c.trigger, c.source) == (5, "summary", "Summary: Paris is rainy.", "compacted",
                                                                 "otel_genai:gen_ai.conversation.compacted")
    assert [m.id for m in c.replacement][0] == "otel_genai-c1-system" and len(c.replacement) == 2
    assert c.replacement[1].content == "Summary: Paris is rainy." and c.replacement[1].additional_kwargs["ctxi_kind"] == "summary"
    assert c.replacement[0] is thread.messages[0]
    assert [m.content for m in thread.messages[5:]] == ["And tomorrow?", "It is rainy."]
    steps = inspect_thread(thread)["steps"]
    assert steps[-1]["context_tokens"] < steps[-2]["context_tokens"]


def test_rewritten_input_without_a_signal_is_a_trim() -> None:
    spans = [*weather_spans(), chat("c3", [{"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}],
                                    [ANSWER], 40)]
    thread = load(otlp(spans))
    [c] = thread.compactions
    assert (c.index, c.kind, c.trigger, c.source, c.summary) == (5, "trim", None, "otel_genai:input", "")
    # The call was sent the system prompt and the question again, not the tool round: the kept ones are the thread's own.
    assert len(c.replacement) == 2
    assert c.replacement[0] is thread.messages[0] and c.replacement[1] is thread.messages[1]
    assert len(thread.messages) == 6


def test_compaction_part_is_a_server_compaction() -> None:
    compacted = {"role": "assistant", "parts": [{"type": "compaction", "id": "cmp_1", "content": "Earlier: Paris weather asked."},
                                                {"type": "text", "content": "Continuing."}]}
    spans = [*weather_spans(), chat("c3", None, [compacted], 40)]
    thread = load(otlp(spans))
    [c] = thread.compactions
    assert (c.index, c.kind, c.summary, c.source) == (6, "server", "Earlier: Paris weather asked.", "otel_genai:compaction part")
    assert [m.content for m in c.replacement] == ["Earlier: Paris weather asked."]


def test_older_conventions_indexed_attributes_and_events() -> None:
    indexed = span("o1", "openai.chat", {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
                                         "gen_ai.prompt.0.role": "system", "gen_ai.prompt.0.content": "Be brief.",
                                         "gen_ai.prompt.1.role": "user", "gen_ai.prompt.1.content": "2+2?",
                                         "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.content": "",
                                         "gen_ai.completion.0.tool_calls.0.name": "calc",
                                         "gen_ai.completion.0.tool_calls.0.arguments": '{"x": "2+2"}',
                                         "gen_ai.completion.0.tool_calls.0.id": "k1",
                                         "gen_ai.usage.prompt_tokens": 30, "gen_ai.usage.completion_tokens": 4}, 10)
    thread = load(otlp([indexed]))
    assert [m.type for m in thread.messages] == ["system", "human", "ai"]
    assert thread.tool_calls() == [{"name": "calc", "args": {"x": "2+2"}, "id": "k1", "type": "tool_call"}]
    assert (thread.usage["otel-o1"].input_tokens, thread.usage["otel-o1"].output_tokens) == (30, 4)
    events = span("v1", "chat gpt-4o", {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 9}, 10, events=(
        ("gen_ai.system.message", {"content": "Be brief."}), ("gen_ai.user.message", {"content": "hello"}),
        ("gen_ai.choice", {"gen_ai.event.content": json.dumps({"index": 0, "message": {"content": "hi!"}})})))
    assert [(m.type, m.content) for m in load(otlp([events])).messages] == [("system", "Be brief."), ("human", "hello"), ("ai", "hi!")]
    prompt_events = span("w1", "chat gpt-4o", {"gen_ai.operation.name": "chat"}, 10, events=(
        ("gen_ai.content.prompt", {"gen_ai.prompt": json.dumps([{"role": "user", "content": "q"}])}),
        ("gen_ai.content.completion", {"gen_ai.completion": json.dumps([{"role": "assistant", "content": "a"}])})))
    assert [(m.type, m.content) for m in load(otlp([prompt_events])).messages] == [("human", "q"), ("ai", "a")]


def test_llm_calls_under_a_tool_span_are_a_subagent() -> None:
    spans = [*weather_spans()[:2], tool("t1", "call_1", "rainy", 20),
             agent("sub", 21, parent="t1"),
             chat("s1", [{"role": "user", "parts": [{"type": "text", "content": "look up Paris"}]}], [ANSWER], 22, parent="sub"),
             weather_spans()[3]]
    thread = load(otlp(spans))
    assert list(thread.usage) == ["otel-c1", "otel-c2"]
    sub = thread.subagents["call_1"]
    assert (sub.thread_id, [m.type for m in sub.messages], list(sub.usage)) == ("conv-1/call_1", ["system", "human", "ai"], ["otel-s1"])
    assert [r.thread_id for r in list_threads(data=json.dumps(otlp(spans)).encode(), name="t.json")] == ["conv-1"]


WRONG = [
    (otlp([{**chat("c1", [USER], [ANSWER], 1), "attributes": "oops"}]), "$.resourceSpans[0].scopeSpans[0].spans[0].attributes",
     "expected an array of {key, value} attributes, got string"),
    (otlp([chat("c1", [USER], [ANSWER], 1, (100, 10)) | {"attributes": kv({"gen_ai.operation.name": "chat",
                                                                            "gen_ai.usage.input_tokens": 2.5})}]),
     "$.resourceSpans[0].scopeSpans[0].spans[0].attributes.gen_ai.usage.input_tokens", "expected an integer, got number"),
    (otlp([span("c1", "chat", {"gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps([{"role": 5}])}, 1)]),
     "$.resourceSpans[0].scopeSpans[0].spans[0].attributes.gen_ai.input.messages[0].role", "expected a role string, got number"),
    (otlp([span("c1", "chat", {"gen_ai.operation.name": "chat", "gen_ai.output.messages": json.dumps(
        [{"role": "assistant", "parts": [{"type": "tool_call", "name": 7}]}])}, 1)]),
     "$.resourceSpans[0].scopeSpans[0].spans[0].attributes.gen_ai.output.messages[0].parts[0].name",
     "expected a tool name string, got number"),
    (otlp([span("x1", "http", {"gen_ai.system": "openai"}, 1)]), "$", "no GenAI model-call spans"),
]


@pytest.mark.parametrize("doc,location,message", WRONG)
def test_malformed_spans_name_the_place(doc: Any, location: str, message: str) -> None:
    with pytest.raises(ThreadLoadError) as info:
        load(doc, name="bad.json", format="otel_genai")
    assert (info.value.format, info.value.location) == ("otel_genai", location)
    assert info.value.message.startswith(message)


def test_generic_traces_are_not_claimed() -> None:
    plain = otlp([span("x1", "GET /", {"http.method": "GET"}, 1)])
    source = open_source(data=json.dumps(plain).encode(), name="http.json")
    assert not importers()["otel_genai"].sniff(source)


# -- fuzz ---------------------------------------------------------------------------------------------------


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(node, list):
        for i, v in enumerate(node[:20]):
            out.extend(_paths(v, (*prefix, i)))
    return out


@pytest.fixture(scope="module")
def samples() -> dict[str, tuple[Any, list[tuple[Any, ...]]]]:
    real = json.loads(trace_path("otel-genai", "any-agent_AGNO_trace.json").read_bytes())
    hand = otlp(weather_spans())
    return {name: (doc, [p for p in _paths(doc) if len(p) < 10]) for name, doc in (("agno", real), ("otlp", hand))}


VALUES = st.sampled_from([None, 0, -1, 2.5, True, "", "x", "[1]", '{"role": 1}', "[{}]", [], {}, [None], {"stringValue": 3}])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_traces_only_raise_thread_load_error(samples: dict[str, Any], data: st.DataObject) -> None:
    doc, paths = samples[data.draw(st.sampled_from(sorted(samples)))]
    path = data.draw(st.sampled_from(paths))
    mutated = copy.deepcopy(doc)
    if path:
        node = mutated
        for key in path[:-1]:
            node = node[key]
        if data.draw(st.booleans()) and isinstance(node, dict):
            node.pop(path[-1])
        else:
            node[path[-1]] = data.draw(VALUES)
    else:
        mutated = data.draw(VALUES)
    blob = json.dumps(mutated).encode()
    for forced in (None, "otel_genai"):
        try:
            for ref in list_threads(data=blob, name="fuzzed.json", format=forced)[:2]:
                load_thread(data=blob, name="fuzzed.json", format=forced, thread_id=ref.thread_id)
        except ThreadLoadError as exc:
            assert "fuzzed.json" in str(exc)


def _conversations(n: int) -> bytes:
    """`n` conversations of one model call each, every other one with a sub-agent under its tool call."""
    spans: list[dict[str, Any]] = []
    for k in range(n):
        base = {"gen_ai.conversation.id": f"conv-{k}", "gen_ai.operation.name": "chat",
                "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "ok"}]}])}
        spans.append({"name": "chat m", "context": {"trace_id": k, "span_id": 3 * k + 1}, "parent": None,
                      "start_time": 10 * k, "attributes": base})
        if k % 2:
            spans.append({"name": "execute_tool t", "context": {"trace_id": k, "span_id": 3 * k + 2}, "parent": None,
                          "start_time": 10 * k + 1, "attributes": {"gen_ai.operation.name": "execute_tool",
                                                                    "gen_ai.tool.call.id": f"call-{k}",
                                                                    "gen_ai.conversation.id": f"conv-{k}"}})
            spans.append({"name": "chat sub", "context": {"trace_id": k, "span_id": 3 * k + 3},
                          "parent": {"span_id": 3 * k + 2}, "start_time": 10 * k + 2, "attributes": base})
    return json.dumps({"spans": spans}).encode()


def test_listing_many_conversations_is_linear() -> None:
    """Each thread's sub-agents are found from one index of the groups, not by scanning every group per thread."""
    from tests.formats.test_linear import events

    refs = list_threads(data=_conversations(6), name="many.json")
    assert [r.thread_id for r in refs] == [f"conv-{k}" for k in range(6)]
    assert load_thread(data=_conversations(6), name="many.json", thread_id="conv-3").subagents.keys() == {"call-3"}
    per_conversation = [events(lambda n=n: list_threads(data=_conversations(n), name="many.json")) / n
                        for n in (250, 1000)]
    assert per_conversation[1] <= per_conversation[0] * 1.1, per_conversation
