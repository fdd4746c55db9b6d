"""OpenHands trajectories: the V0 samples from OpenHands' own tests, hand-made V0 and V1 streams.

Expected numbers on the real trajectories were read off the files with a plain json script (events,
`tool_call_metadata.model_response.usage`), not with this importer. V1 events are built here
field by field from the SDK's pydantic models (openhands-sdk/openhands/sdk/event/*.py), each
serialized with its class name as `kind`.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from engine.base.errors import ThreadLoadError
from engine.config.schema import preset
from engine.formats import detect_format, importers, list_threads, load_thread, open_source
from engine.recorded.inspect import inspect_thread
from engine.run.replay import replay
from engine.thread.model import RecordedUsage
from tests.conftest import trace_path

# -- real V0 trajectories ------------------------------------------------------------------------


def test_basic_trajectory_usage_splits_litellm_cache_counts() -> None:
    path = trace_path("openhands", "basic.json")
    assert detect_format(open_source(path)) == "openhands"
    thread = load_thread(path)
    assert thread.thread_id == "basic"
    assert [type(m) for m in thread.messages] == [HumanMessage, AIMessage, ToolMessage, AIMessage]
    assert [m.id for m in thread.messages] == ["openhands-0", "openhands-3", "openhands-4", "openhands-5"]
    assert [(tc["name"], tc["id"]) for tc in thread.tool_calls()] == [
        ("str_replace_editor", "toolu_017nBp7UfiGqyrA7j77HgtFP"), ("finish", "toolu_01BUKu3B7nY574atNECkBiFk")]
    assert thread.tool_calls()[0]["args"]["command"] == "create"
    assert thread.messages[1].content == ("I'll help you create a simple 2048 game in Python. I'll use the "
                                          "str_replace_editor to create the file.")
    # FileEditObservation.__str__ for the ACI editor: its formatted output, not the stored diff.
    assert thread.messages[2].content == "File created successfully at: /workspace/game_2048.py"
    assert thread.messages[2].tool_call_id == "toolu_017nBp7UfiGqyrA7j77HgtFP"
    # LiteLLM's prompt_tokens (3486, 4646) hold the cache write and read: the uncached rest is 4 and 6.
    assert thread.usage["openhands-3"] == RecordedUsage(
        input_tokens=4, output_tokens=1135, cache_creation_input_tokens=3482, cache_read_input_tokens=0,
        timestamp="2025-01-27T22:45:13.764487", model="claude-3-5-sonnet-20241022")
    assert (thread.usage["openhands-5"].input_tokens, thread.usage["openhands-5"].cache_creation_input_tokens,
            thread.usage["openhands-5"].cache_read_input_tokens, thread.usage["openhands-5"].output_tokens) == (6, 1158, 3482, 177)
    assert [u.context_tokens for u in thread.usage.values()] == [3486, 4646]
    assert (thread.model, thread.max_input_tokens) == ("claude-3-5-sonnet-20241022", 200_000)
    assert thread.extra == {"version": "v0", "skipped_records": {}, "window_source": "model table"}


def test_basic_interactions_messages_and_one_recorded_call() -> None:
    thread = load_thread(trace_path("openhands", "basic_interactions.json"))
    assert thread.by_role() == {"human": 3, "ai": 3}
    assert [m.content for m in thread.messages[:2]] == ["what's 1+1?", "1 + 1 equals 2."]
    assert thread.title == "what's 1+1?"
    # Only the finish call recorded its response; OpenAI's prompt_tokens include the 2304 cached.
    assert list(thread.usage) == ["openhands-15"]
    assert (thread.usage["openhands-15"].input_tokens, thread.usage["openhands-15"].cache_read_input_tokens,
            thread.usage["openhands-15"].context_tokens) == (169, 2304, 2473)
    assert thread.model == "gpt-4o-2024-08-06"


@pytest.mark.parametrize("name", ["basic.json", "basic_interactions.json"])
def test_no_other_importer_claims_an_openhands_trajectory(name: str) -> None:
    source = open_source(trace_path("openhands", name))
    assert [n for n, imp in importers().items() if imp.sniff(source)] == ["openhands"]


# -- hand-made V0 ---------------------------------------------------------------------------------


def ev(i: int, source: str, **kw: Any) -> dict[str, Any]:
    return {"id": i, "timestamp": f"2025-03-01T00:00:{i:02d}", "source": source, **kw}


def response(rid: str, calls: list[str], content: str = "", usage: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"id": rid, "model": "gpt-4o", "usage": usage,
            "choices": [{"message": {"role": "assistant", "content": content, "tool_calls": [
                {"id": c, "type": "function", "function": {"name": "execute_bash", "arguments": '{"command": "ls"}'}}
                for c in calls]}}]}


def run(i: int, call: str, rid: str, calls: list[str], content: str = "", usage: dict[str, Any] | None = None,
        **kw: Any) -> dict[str, Any]:
    return ev(i, "agent", action="run", message="Running command: ls", args={"command": "ls", "thought": content},
              tool_call_metadata={"function_name": "execute_bash", "tool_call_id": call,
                                  "model_response": response(rid, calls, content, usage), "total_calls_in_response": len(calls)},
              **kw)


def out(i: int, call: str, text: str) -> dict[str, Any]:
    return ev(i, "agent", observation="run", content=text, cause=i - 1,
              extras={"command": "ls", "metadata": {"exit_code": 0, "prefix": "", "suffix": "\n[The command completed with exit code 0.]"}},
              tool_call_metadata={"function_name": "execute_bash", "tool_call_id": call})


def lite(p: int, c: int, cached: int = 0) -> dict[str, Any]:
    return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c, "prompt_tokens_details": {"cached_tokens": cached}}


def v0_stream(condensation: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        ev(0, "agent", action="system", args={"content": "You are OpenHands agent.", "tools": [{"type": "function",
                                                                                                 "function": {"name": "execute_bash"}}]}),
        ev(1, "user", action="message", args={"content": "list the files", "image_urls": ["https://x/y.png"]}),
        ev(2, "agent", action="recall", args={"query": "list"}),
        run(3, "c1", "r1", ["c1"], "Listing.", lite(1000, 10)), out(4, "c1", "a.txt"),
        run(5, "c2", "r2", ["c2", "c3"], "", lite(1100, 20, 1000)), run(6, "c3", "r2", ["c2", "c3"]),
        out(7, "c2", "b"), out(8, "c3", "c"),
        ev(9, "agent", action="condensation", args=condensation),
        run(10, "c4", "r3", ["c4"], "Again.", lite(300, 5)), out(11, "c4", "d"),
        ev(12, "agent", action="finish", args={"outputs": {}, "thought": "Done."}),
        ev(13, "environment", observation="agent_state_changed", content="", extras={"agent_state": "finished"}),
    ]


def load(doc: Any, name: str = "traj.json", **kw: Any):  # type: ignore[no-untyped-def]
    return load_thread(data=json.dumps(doc).encode(), name=name, **kw)


def test_v0_events_become_messages_with_one_ai_message_per_response() -> None:
    thread = load(v0_stream({"forgotten_event_ids": [3, 4]}))
    assert [m.id for m in thread.messages] == ["openhands-0", "openhands-1", "openhands-3", "openhands-4", "openhands-5",
                                               "openhands-7", "openhands-8", "openhands-10", "openhands-11", "openhands-12"]
    assert isinstance(thread.messages[0], SystemMessage) and thread.system_prompt == "You are OpenHands agent."
    assert thread.tools == [{"type": "function", "function": {"name": "execute_bash"}}]
    assert thread.messages[1].content == [{"type": "text", "text": "list the files"},
                                          {"type": "image_url", "image_url": {"url": "https://x/y.png"}}]
    assert [tc["id"] for tc in thread.messages[4].tool_calls] == ["c2", "c3"]
    assert thread.messages[3].content == "a.txt\n[The command completed with exit code 0.]"
    assert thread.messages[-1].content == "Done."
    assert {k: (u.input_tokens, u.cache_read_input_tokens) for k, u in thread.usage.items()} == {
        "openhands-3": (1000, 0), "openhands-5": (100, 1000), "openhands-10": (300, 0)}
    assert thread.extra["skipped_records"] == {"action:recall": 1, "observation:agent_state_changed": 1}


def test_v0_condensation_inserts_the_summary_at_its_offset() -> None:
    thread = load(v0_stream({"forgotten_events_start_id": 3, "forgotten_events_end_id": 6, "summary": "SUMMARY",
                             "summary_offset": 2}))
    [c] = thread.compactions
    assert (c.index, c.kind, c.summary, c.message_id, c.source) == (
        7, "summary", "SUMMARY", "openhands-9-summary", "openhands:CondensationAction")
    # Kept events 0, 1, 2 (the recall sends nothing), the summary at offset 2; results 7 and 8 lost their calls.
    assert [m.id for m in c.replacement] == ["openhands-0", "openhands-1", "openhands-9-summary"]
    assert c.replacement[2].content == "SUMMARY"
    steps = inspect_thread(thread)["steps"]
    assert [s["index"] for s in steps] == [2, 4, 7, 9]
    assert steps[2]["context_tokens"] < steps[1]["context_tokens"]


def test_v0_condensation_without_offset_appends_and_without_summary_trims() -> None:
    appended = load(v0_stream({"forgotten_event_ids": [3, 4], "summary": "S"}))
    assert [m.id for m in appended.compactions[0].replacement][-1] == "openhands-9-summary"
    trimmed = load(v0_stream({"forgotten_event_ids": [3, 4]}))
    [c] = trimmed.compactions
    assert (c.kind, c.summary) == ("trim", "")
    assert [m.id for m in c.replacement] == ["openhands-0", "openhands-1", "openhands-5", "openhands-7", "openhands-8"]


def test_v0_condensation_request_and_stored_summary_observation() -> None:
    stream = v0_stream({"forgotten_event_ids": [3, 4]})
    stream.insert(9, ev(20, "user", action="condensation_request", args={}))
    assert load(stream).compactions[0].trigger == "request"
    older = [ev(0, "user", action="message", args={"content": "go"}), run(1, "c1", "r1", ["c1"], "x", lite(50, 1)),
             out(2, "c1", "y"), ev(3, "environment", observation="condense", content="what happened so far"),
             run(4, "c2", "r2", ["c2"], "z", lite(20, 1)), out(5, "c2", "w")]
    thread = load(older)
    assert [m.id for m in thread.messages] == ["openhands-0", "openhands-1", "openhands-2", "openhands-4", "openhands-5"]
    [c] = thread.compactions
    assert (c.index, c.summary, c.replacement, c.source) == (3, "what happened so far", None,
                                                            "openhands:AgentCondensationObservation")


def test_v0_llm_metrics_give_per_call_usage_never_a_total() -> None:
    def snap(p: int, c: int) -> dict[str, Any]:
        return {"accumulated_cost": 0.0, "accumulated_token_usage": {"model": "m", "prompt_tokens": p,
                                                                   "completion_tokens": c, "cache_read_tokens": 0,
                                                                   "cache_write_tokens": 0, "context_window": 64000}}
    stream = [ev(0, "user", action="message", args={"content": "hi"}),
              ev(1, "agent", action="message", args={"content": "one"}, llm_metrics=snap(100, 5)),
              ev(2, "user", action="message", args={"content": "more"}),
              ev(3, "agent", action="message", args={"content": "two"}, llm_metrics=snap(250, 12)),
              run(4, "c1", "r9", ["c1"], "t", None, llm_metrics={"token_usages": [
                  {"model": "m", "prompt_tokens": 400, "completion_tokens": 3, "cache_read_tokens": 300,
                   "cache_write_tokens": 0, "response_id": "r9"}]})]
    thread = load(stream)
    assert {k: (u.input_tokens, u.output_tokens) for k, u in thread.usage.items()} == {
        "openhands-1": (100, 5), "openhands-3": (150, 7), "openhands-4": (100, 3)}
    assert thread.max_input_tokens == 64_000 and "window_source" not in thread.extra


# -- hand-made V1 ---------------------------------------------------------------------------------


def system_prompt_event() -> dict[str, Any]:
    return {"kind": "SystemPromptEvent", "id": "e0", "timestamp": "2026-01-01T00:00:00", "source": "agent",
            "system_prompt": {"type": "text", "text": "You are OpenHands."}, "tools": [{"name": "terminal"}],
            "dynamic_context": {"type": "text", "text": "repo: x"}}


def message_event(i: int, text: str, role: str = "user", rid: str | None = None) -> dict[str, Any]:
    return {"kind": "MessageEvent", "id": f"e{i}", "timestamp": "t", "source": "user" if role == "user" else "agent",
            "llm_message": {"role": role, "content": [{"type": "text", "text": text}]}, "llm_response_id": rid,
            "activated_skills": [], "extended_content": []}


def action_event(i: int, rid: str, call: str, thought: str = "", thinking: str | None = None) -> dict[str, Any]:
    event = {"kind": "ActionEvent", "id": f"e{i}", "timestamp": "t", "source": "agent",
             "thought": [{"type": "text", "text": thought}] if thought else [], "reasoning_content": None,
             "thinking_blocks": [], "action": {"kind": "ExecuteBashAction", "command": "ls"}, "tool_name": "terminal",
             "tool_call_id": call, "tool_call": {"id": call, "name": "terminal", "arguments": '{"command": "ls"}',
                                                 "origin": "completion"},
             "llm_response_id": rid, "security_risk": "LOW"}
    if thinking:
        event["thinking_blocks"] = [{"type": "thinking", "thinking": thinking, "signature": "sig"}]
    return event


def observation_event(i: int, call: str, text: str) -> dict[str, Any]:
    return {"kind": "ObservationEvent", "id": f"e{i}", "timestamp": "t", "source": "environment", "tool_name": "terminal",
            "tool_call_id": call, "action_id": "a", "extended_content": [],
            "observation": {"kind": "ExecuteBashObservation", "content": [{"type": "text", "text": text}], "exit_code": 0}}


def condensation_event(i: int, forgotten: list[str], summary: str | None, offset: int | None) -> dict[str, Any]:
    return {"kind": "Condensation", "id": f"e{i}", "timestamp": "t", "source": "environment",
            "forgotten_event_ids": forgotten, "summary": summary, "summary_offset": offset, "llm_response_id": "cond"}


def token_usage(rid: str, prompt: int, completion: int, read: int = 0, write: int = 0) -> dict[str, Any]:
    return {"model": "claude-sonnet-4-5", "prompt_tokens": prompt, "completion_tokens": completion,
            "cache_read_tokens": read, "cache_write_tokens": write, "reasoning_tokens": 0, "context_window": 200_000,
            "per_turn_token": prompt + completion, "response_id": rid}


def stats_event(usages: list[dict[str, Any]], key: str = "stats") -> dict[str, Any]:
    stats = {"usage_to_metrics": {"agent": {"model_name": "anthropic/claude-sonnet-4-5", "accumulated_cost": 0.1,
                                            "token_usages": usages}}}
    return {"kind": "ConversationStateUpdateEvent", "id": "st", "timestamp": "t", "source": "environment",
            "key": key, "value": stats if key == "stats" else {"stats": stats}}


def v1_stream() -> list[dict[str, Any]]:
    return [system_prompt_event(), message_event(1, "list files"),
            action_event(2, "r1", "c1", "Let me look.", thinking="hmm"), observation_event(3, "c1", "a.txt"),
            action_event(4, "r2", "c2"), action_event(5, "r2", "c3"), observation_event(6, "c2", "b"),
            observation_event(7, "c3", "c"),
            condensation_event(8, ["e2", "e3", "e4"], "Summary: listed files", 1),
            action_event(9, "r3", "c4", "after"), observation_event(10, "c4", "d"),
            {"kind": "PauseEvent", "id": "p", "timestamp": "t", "source": "user"},
            stats_event([token_usage("r1", 1000, 20, write=900), token_usage("r2", 1200, 30, 900, 250),
                         token_usage("r3", 600, 10, 500, 50)])]


def test_v1_events_batches_thinking_and_usage_by_response() -> None:
    thread = load(v1_stream(), name="conversation.json")
    assert thread.extra == {"version": "v1", "skipped_records": {"PauseEvent": 1}}
    assert [m.id for m in thread.messages] == ["e0", "e1", "e2", "e3", "e4", "e6", "e7", "e9", "e10"]
    assert thread.messages[0].content == "You are OpenHands.\nrepo: x" and thread.tools == [{"name": "terminal"}]
    assert thread.messages[2].content == [{"type": "thinking", "thinking": "hmm", "signature": "sig"},
                                          {"type": "text", "text": "Let me look."}]
    assert [tc["id"] for tc in thread.messages[4].tool_calls] == ["c2", "c3"]
    assert {k: (u.input_tokens, u.cache_creation_input_tokens, u.cache_read_input_tokens) for k, u in thread.usage.items()} == {
        "e2": (100, 900, 0), "e4": (50, 250, 900), "e9": (50, 50, 500)}
    assert (thread.model, thread.max_input_tokens) == ("claude-sonnet-4-5", 200_000)


def test_v1_condensation_follows_the_sdk_view() -> None:
    thread = load(v1_stream(), name="conversation.json")
    [c] = thread.compactions
    # e4 is forgotten, so its whole batch (e5) is; e6/e7 lose their calls; the summary goes at offset 1.
    assert (c.index, c.kind, c.summary, c.message_id) == (7, "summary", "Summary: listed files", "e8:summary")
    assert [m.id for m in c.replacement] == ["e0", "e8:summary", "e1"]
    assert c.replacement[1].additional_kwargs["ctxi_kind"] == "summary"


def test_v1_keeps_one_thinking_batch_and_handles_requests() -> None:
    stream = v1_stream()
    stream[8] = condensation_event(8, ["e2", "e3"], None, None)
    stream.insert(8, {"kind": "CondensationRequest", "id": "rq", "timestamp": "t", "source": "environment"})
    thread = load(stream, name="conversation.json")
    [c] = thread.compactions
    # The only thinking batch (e2) would be lost while e4's batch is kept: the SDK keeps e2 and its result.
    assert (c.kind, c.trigger) == ("trim", "request")
    assert [m.id for m in c.replacement] == ["e0", "e1", "e2", "e3", "e4", "e6", "e7"]


def test_v1_wrappers_jsonl_rejections_and_errors() -> None:
    stream = v1_stream()[:4] + [
        action_event(11, "r4", "c5"),
        {"kind": "UserRejectObservation", "id": "e12", "timestamp": "t", "source": "user", "tool_name": "terminal",
         "tool_call_id": "c5", "action_id": "e11", "rejection_reason": "not now"},
        action_event(13, "r5", "c6"),
        {"kind": "AgentErrorEvent", "id": "e14", "timestamp": "t", "source": "agent", "tool_name": "terminal",
         "tool_call_id": "c6", "error": "tool crashed"},
        stats_event([token_usage("r4", 10, 1)], key="full_state")]
    for blob, name in ((json.dumps({"items": stream, "next_page_id": None}).encode(), "page.json"),
                       (json.dumps({"events": stream}).encode(), "events.json"),
                       (b"\n".join(json.dumps(e).encode() for e in stream), "events.jsonl")):
        assert detect_format(open_source(data=blob, name=name)) == "openhands"
        thread = load_thread(data=blob, name=name)
        assert [(m.content, m.status) for m in thread.messages if isinstance(m, ToolMessage)][1:] == [
            ("Action rejected: not now", "error"), ("tool crashed", "error")]
        assert list(thread.usage) == ["e11"]
        assert list_threads(data=blob, name=name)[0].messages == 8


WRONG = [
    ([{"id": "x", "source": "user", "action": "message"}], "$[0]", None),  # not OpenHands: the sniff refuses it
    ([{"id": 0, "source": "user", "action": "message", "args": {"content": "a"}},
      {"id": 1, "source": "robot", "action": "message"}], "$[1].source", "expected one of user, agent, environment"),
    ([{"id": 0, "source": "agent", "action": "run", "args": {}, "tool_call_metadata": {"function_name": "f"}}],
     "$[0].tool_call_metadata.tool_call_id", "expected a string, got null"),
    ([{"id": 0, "source": "agent", "action": "run", "args": {}, "tool_call_metadata": {
        "function_name": "f", "tool_call_id": "c", "model_response": {"id": "r", "usage": {"prompt_tokens": "9"}}}}],
     "$[0].tool_call_metadata.model_response.usage.prompt_tokens", "expected an integer, got string"),
    ([system_prompt_event(), {**action_event(1, "r", "c"), "tool_call": {"id": "c", "name": "t", "arguments": "[1]"}}],
     "$[1].tool_call.arguments", "arguments are JSON array, not an object"),
    ([system_prompt_event(), {**condensation_event(2, [], "s", 1), "summary_offset": -1}],
     "$[1].summary_offset", "expected a non-negative integer"),
]


@pytest.mark.parametrize("doc,location,message", WRONG)
def test_malformed_events_name_the_place(doc: Any, location: str, message: str | None) -> None:
    blob = json.dumps(doc).encode()
    with pytest.raises(ThreadLoadError) as info:
        load_thread(data=blob, name="bad.json", format="openhands")
    if message is None:
        assert info.value.message.startswith("expected OpenHands events")
        return
    assert (info.value.format, info.value.location) == ("openhands", location)
    assert info.value.message.startswith(message)
    assert detect_format(open_source(data=blob, name="bad.json")) == "openhands"


# -- fuzz -------------------------------------------------------------------------------------------


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
    basic = json.loads(trace_path("openhands", "basic.json").read_bytes())
    cond = v0_stream({"forgotten_events_start_id": 3, "forgotten_events_end_id": 6, "summary": "S", "summary_offset": 2})
    return {name: (doc, [p for p in _paths(doc) if len(p) < 9]) for name, doc in
            (("basic", basic), ("v0", cond), ("v1", v1_stream()))}


VALUES = st.sampled_from([None, 0, -3, 1.5, True, "", "x", [], {}, [None], {"kind": 1}, ["e1"]])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_trajectories_only_raise_thread_load_error(samples: dict[str, Any], data: st.DataObject) -> None:
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
    for forced in (None, "openhands"):
        try:
            load_thread(data=blob, name="fuzzed.json", format=forced)
        except ThreadLoadError as exc:
            assert "fuzzed.json" in str(exc)


# -- an exported V1 conversation: events.json with trajectory.json (baseState) beside it ------------
def long_run(calls: int, request_after: int | None = None) -> list[dict[str, Any]]:
    """A system prompt, a user message, then `calls` responses of one call and its observation each
    (2 events apiece); a CondensationRequest (the environment's, after a context-window error) after
    response `request_after`, then the condensation it brought."""
    events = [system_prompt_event(), message_event(1, "refactor the parser")]
    i = 2
    for k in range(calls):
        events += [action_event(i, f"r{k}", f"c{k}"), observation_event(i + 1, f"c{k}", f"out {k} " * 40)]
        i += 2
        if k == request_after:
            events.append({"kind": "CondensationRequest", "id": f"e{i}", "timestamp": "t", "source": "environment"})
            i += 1
    return events


BASE_STATE = {"id": "conv1", "agent": {"kind": "Agent", "llm": {"model": "litellm_proxy/claude-sonnet-4-5",
                                                                 "max_input_tokens": 200_000},
                                       "condenser": {"kind": "LLMSummarizingCondenser", "max_size": 240, "keep_first": 4,
                                                     "llm": {"model": "litellm_proxy/claude-sonnet-4-5"}}},
              "max_iterations": 500, "execution_status": "finished"}


def export(tmp_path: Path, events: list[dict[str, Any]], base_state: dict[str, Any] | None = BASE_STATE) -> Path:
    folder = tmp_path / "conv1"
    folder.mkdir()
    (folder / "events.json").write_text(json.dumps(events))
    if base_state is not None:
        (folder / "trajectory.json").write_text(json.dumps({"baseState": base_state, "conversation_id": "conv1"}))
    return folder


def test_v1_export_takes_model_window_and_condenser_from_base_state(tmp_path: Path) -> None:
    folder = export(tmp_path, long_run(98, request_after=96))
    thread = load_thread(folder / "events.json")
    assert (thread.model, thread.max_input_tokens) == ("litellm_proxy/claude-sonnet-4-5", 200_000)
    assert thread.extra["openhands_condenser"] == {"kind": "LLMSummarizingCondenser", "max_size": 240, "keep_first": 4}
    assert (thread.extra["openhands_state_from"], thread.extra["condensation_requests"]) == ("trajectory.json", [97])
    # trajectory.json opened (or dropped) with events.json beside it opens the events
    assert detect_format(open_source(folder / "trajectory.json")) == "openhands"
    assert len(load_thread(folder / "trajectory.json").messages) == len(thread.messages)


def test_v1_settings_alone_say_what_to_open(tmp_path: Path) -> None:
    (tmp_path / "trajectory.json").write_text(json.dumps({"baseState": BASE_STATE}))
    with pytest.raises(ThreadLoadError) as info:
        load_thread(tmp_path / "trajectory.json")
    assert str(info.value).count("\n") == 0 and "events.json" in str(info.value) and "trajectory.json" in str(info.value)


def test_openhands_preset_condenses_where_the_conversation_did(tmp_path: Path) -> None:
    # 98 responses: 1 + 1 + 2 x 98 = 198 events; the recorded condenser (max_size 240) never condenses on
    # size, the environment's CondensationRequest (before the 98th call, event 196) makes it condense
    # there, keeping half the view. The SDK's defaults (120) condense as soon as the view passes 120 events.
    folder = export(tmp_path, [*long_run(98, request_after=96)])
    thread = load_thread(folder / "events.json")
    run = replay(thread, preset("openhands"))
    [event] = [e for e in run.events if e.layer == "compaction"]
    assert (event.step, event.payload["requested"], event.payload["events_before"]) == (97, True, 196)
    # events 4 .. 102 (keep_first 4, then 196 // 2 - 4 - 1 = 93 newest kept), and the observation of the
    # last forgotten call with it (the view drops an observation whose call is gone)
    assert event.payload["forgotten_events"] == 196 - 4 - 93 + 1
    (tmp_path / "x").mkdir()
    defaults = replay(load_thread(export(tmp_path / "x", long_run(98), base_state=None) / "events.json"),
                      preset("openhands"))
    assert [e.step for e in defaults.events if e.kind == "compact"][:1] == [60]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_exports_load_or_are_one_error_line(tmp_path_factory: pytest.TempPathFactory, data: st.DataObject) -> None:
    from tests.formats.mutations import WRONG_VALUES, mutate, paths

    which = data.draw(st.sampled_from(["events", "state"]))
    events, state = long_run(6, request_after=3), {"baseState": BASE_STATE}
    doc = events if which == "events" else state
    changed = mutate(doc, data.draw(st.sampled_from(paths(doc))), data.draw(WRONG_VALUES), data.draw(st.booleans()))
    folder = tmp_path_factory.mktemp("oh")
    (folder / "events.json").write_text(json.dumps(changed if which == "events" else events))
    (folder / "trajectory.json").write_text(json.dumps(changed if which == "state" else state))
    for entry in ("events.json", "trajectory.json"):
        try:
            load_thread(folder / entry)
        except ThreadLoadError as exc:
            assert "\n" not in str(exc) and ("events.json" in str(exc) or "trajectory.json" in str(exc)), str(exc)


# -- the incremental view equals View.from_events at every event (issue 39.6: one pass per Condensation was
# -- quadratic) --------------------------------------------------------------------------------------------
from engine.formats.openhands_v1 import Views, view_events  # noqa: E402


@st.composite
def streams(draw: Any) -> list[tuple[dict[str, Any], str]]:
    """Random V1 streams: unique event ids (the SDK's are UUIDs), Condensations forgetting ids seen, not yet
    seen or unknown, few response ids and call ids, thinking blocks, summaries with and without offsets."""
    n = draw(st.integers(0, 24))
    names = [f"e{i}" for i in range(n)] + ["x", 5]
    out = []
    for i in range(n):
        kind = draw(st.sampled_from(["ActionEvent", "ActionEvent", "ObservationEvent", "AgentErrorEvent", "MessageEvent",
                                     "Condensation", "CondensationRequest", "PauseEvent"]))
        event: dict[str, Any] = {"kind": kind, "id": f"e{i}"}
        if kind == "ActionEvent":
            event.update(llm_response_id=draw(st.sampled_from([None, "r1", "r2", "r3"])),
                         tool_call_id=draw(st.sampled_from(["c1", "c2", "c3", None])),
                         thinking_blocks=draw(st.sampled_from([[], [{"type": "thinking", "thinking": "t"}]])))
        elif kind in ("ObservationEvent", "AgentErrorEvent"):
            event["tool_call_id"] = draw(st.sampled_from(["c1", "c2", "c3", None]))
        elif kind == "Condensation":
            event.update(forgotten_event_ids=draw(st.lists(st.sampled_from(names), max_size=5)),
                         summary=draw(st.sampled_from([None, "s"])), summary_offset=draw(st.sampled_from([None, 0, 1, 3, True])))
        out.append((event, f"$[{i}]"))
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=streams())
def test_the_incremental_view_is_the_sdks_view_at_every_event(events: list[tuple[dict[str, Any], str]]) -> None:
    views = Views(events)
    for p in range(len(events)):
        assert views.view(p) == view_events(events[:p + 1]), p
