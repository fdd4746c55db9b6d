"""Issue 11, wrong types: one clear line, never a traceback, for a wrong type anywhere in any format.

Repros from the issue, each a traceback on main before this series: a non-string content-block
`type`, native `tools` that are not objects, `max_input_tokens` not an integer, `system_prompt` not
a string, a list-valued block id in dumpd, a list-valued `model_provider`; and the LangChain dict,
native and dumpd importers quoted 4 lines of pydantic text. The hypothesis tests mutate the type of
one field of a real file of each format (or of a hand-made one where no trace is small enough),
then load it and, when it loads, inspect it: only a one-line ThreadLoadError may come out.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage

from engine.base.errors import ThreadLoadError
from engine.config.loading import load_config
from engine.formats import load_thread
from engine.formats.native import dumps
from engine.recorded.inspect import inspect_thread
from engine.run.replay import replay
from engine.thread.model import RecordedUsage, Thread
from engine.tokens.counters import ApproximateCounter, TiktokenCounter
from tests.conftest import TRACES
from tests.formats.mutations import mutate, paths

NAME = "wrong-types.json"
WRONG = st.sampled_from([None, 0, -1, 2.5, True, "", "x", [], {}, ["x"], [None], {"type": 1}, [[[]]], {"a": [1]}])
FUZZ = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def assert_one_line(exc: ThreadLoadError, name: str = NAME) -> None:
    text = str(exc)
    assert "\n" not in text, text
    assert name in text, text
    assert "validation error" not in text and "pydantic.dev" not in text and "input_value=" not in text, text


def load_and_inspect(data: bytes, fmt: str | None, name: str = NAME) -> Thread | None:
    try:
        thread = load_thread(data=data, name=name, format=fmt)
    except ThreadLoadError as exc:
        assert_one_line(exc, name)
        return None
    inspect_thread(thread, TiktokenCounter())  # a loaded thread must count and replay without a traceback
    if len(thread.messages) <= 40:
        replay(thread, load_config(thread=thread))
    return thread


# -- the repros, exact -------------------------------------------------------------------------------------------------

def native_doc() -> dict[str, Any]:
    thread = Thread(thread_id="t", messages=[HumanMessage("hi", id="h"), AIMessage("yo", id="a")], model="gpt-4o",
                    tools=[{"name": "read", "description": "d", "parameters": {}}], system_prompt="sys",
                    max_input_tokens=1000, usage={"a": RecordedUsage(input_tokens=5, output_tokens=2)})
    return json.loads(dumps(thread))


def dumpd(cls: str, **kwargs: Any) -> dict[str, Any]:
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", cls], "kwargs": kwargs}


def at(doc: Any, path: tuple[Any, ...], value: Any) -> bytes:
    return json.dumps(mutate(doc, path, value, False)).encode()


NATIVE_CASES = [
    (("tools",), ["x", 1], "at $.tools[0]: expected an object, got string"),
    (("max_input_tokens",), "200k", "at $.max_input_tokens: expected an integer or null, got string"),
    (("max_input_tokens",), 1.5, "at $.max_input_tokens: expected an integer or null, got number"),
    (("max_input_tokens",), True, "at $.max_input_tokens: expected an integer or null, got boolean"),
    (("max_input_tokens",), 0, "at $.max_input_tokens: expected a positive integer, got 0"),
    (("system_prompt",), ["a"], "at $.system_prompt: expected a string or null, got array"),
    (("system_prompt",), 5, "at $.system_prompt: expected a string or null, got number"),
    (("model",), ["gpt-4o"], "at $.model: expected a string or null, got array"),
    (("messages", 1, "data", "content"), [{"type": ["text"], "text": "x"}],
     "at $.messages[1].data.content[0].type: content part needs a string 'type', got array"),
    (("messages", 1, "data", "id"), ["a"], "at $.messages[1].data.id: invalid ai message: expected a string, got array"),
    (("messages", 0, "data", "content"), 5,
     "at $.messages[0].data.content: expected a string, a list of content parts or null, got number"),
    (("messages", 1, "data", "response_metadata"), {"model_provider": ["openai"]},
     "at $.messages[1].data.response_metadata.model_provider: expected a string or null, got array"),
    (("messages", 1, "data", "tool_calls"), [{"name": 1}], "at $.messages[1].data.tool_calls[0].name: expected a string, got number"),
    (("usage", "a", "input_tokens"), "5", "at $.usage.a.input_tokens: expected an integer or null, got string"),
    (("compactions",), [{"index": "5"}], "at $.compactions[0].index: expected an integer, got string"),
    (("edits",), [{"index": 1, "tool_call_ids": [1]}], "at $.edits[0].tool_call_ids[0]: expected a string, got number"),
    (("subagents",), {"c": {"version": 1, "messages": "x"}}, "at $.subagents.c.messages: 'messages' must be a list"),
]


@pytest.mark.parametrize(("path", "value", "message"), NATIVE_CASES, ids=[".".join(map(str, c[0])) for c in NATIVE_CASES])
def test_native_wrong_types_are_one_line(path: tuple[Any, ...], value: Any, message: str) -> None:
    with pytest.raises(ThreadLoadError) as info:
        load_thread(data=at(native_doc(), path, value), name=NAME)
    assert str(info.value) == f"{NAME}, format native, {message}"
    assert_one_line(info.value)


DUMPD = [dumpd("HumanMessage", content="hi", id="h"), dumpd("AIMessage", content="yo", id="a")]
DUMPD_CASES = [
    ((1, "kwargs", "id"), ["a", "b"], "at $[1].kwargs.id: cannot load AIMessage: expected a string, got array"),
    ((1, "kwargs", "content"), [{"type": "tool_use", "id": ["a"], "name": "x", "input": {}}],
     "at $[1].kwargs.content[0].id: expected a string or null, got array"),
    ((1, "kwargs", "response_metadata"), {"model_provider": ["openai"]},
     "at $[1].kwargs.response_metadata.model_provider: expected a string or null, got array"),
    ((1, "kwargs", "tool_calls"), [{"name": "x", "args": "notdict", "id": "c"}],
     "at $[1].kwargs.tool_calls[0].args: cannot load AIMessage: expected an object, got string"),
    ((1, "kwargs", "content"), [{"type": 5, "text": "x"}],
     "at $[1].kwargs.content[0].type: content part needs a string 'type', got number"),
]


@pytest.mark.parametrize(("path", "value", "message"), DUMPD_CASES, ids=[".".join(map(str, c[0])) for c in DUMPD_CASES])
def test_dumpd_wrong_types_are_one_line(path: tuple[Any, ...], value: Any, message: str) -> None:
    with pytest.raises(ThreadLoadError) as info:
        load_thread(data=at(DUMPD, path, value), name=NAME)
    assert str(info.value) == f"{NAME}, format langchain_dumpd, {message}"


def test_langchain_dict_pydantic_error_is_translated() -> None:
    doc = [{"type": "human", "data": {"content": "hi", "id": {"a": 1}}}]
    with pytest.raises(ThreadLoadError) as info:
        load_thread(data=json.dumps(doc).encode(), name=NAME)
    assert str(info.value) == f"{NAME}, format langchain_dict, at $[0].data.id: invalid human message: expected a string, got object"


def test_non_string_block_types_count_as_json() -> None:
    # straight to the counter (a thread built in code, or by an importer that lets the block through)
    counter = TiktokenCounter()
    for kind in (["text"], {"a": 1}, 3):
        message = AIMessage(content=[{"type": kind, "text": "hello"}, {"type": "text", "text": "x"}], id="a",
                            tool_calls=[{"name": "t", "args": {}, "id": "c"}])
        assert counter.count_message(message) > 0
        # LangChain's approximate counter (the framework presets') raises on an unhashable type; ours counts it
        assert ApproximateCounter().count_message(message) > 0
    message = AIMessage(content=[{"type": "tool_use", "id": ["c"], "name": "t", "input": {}}], id="a",
                        tool_calls=[{"name": "t", "args": {}, "id": "c"}])
    assert counter.count_message(message) > 0
    thinking = AIMessage(content=[{"type": ["thinking"], "thinking": "x"}], id="b")
    thread = Thread(thread_id="t", messages=[HumanMessage("q", id="h"), thinking, HumanMessage("q2", id="h2"),
                                             AIMessage("ok", id="c")], model="claude-sonnet-4-20250514")
    assert len(inspect_thread(thread, counter)["steps"]) == 2
    assert replay(thread, load_config(thread=thread)).steps


# -- mutated files of every format ----------------------------------------------------------------------------------

def hand_made() -> dict[str, tuple[Any, bool]]:
    """Small documents for formats whose real traces are too big to mutate field by field quickly."""
    anthropic = {"model": "claude-sonnet-4-20250514", "system": [{"type": "text", "text": "sys"}],
                 "tools": [{"name": "read", "description": "d", "input_schema": {"type": "object"}}],
                 "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]},
                              {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "s"},
                                                                {"type": "tool_use", "id": "c1", "name": "read",
                                                                 "input": {"path": "/a"}}]},
                              {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1",
                                                            "content": [{"type": "text", "text": "A"}]}]}]}
    chat = {"model": "gpt-4o", "messages": [
        {"role": "system", "content": "sys"}, {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{\"p\": 1}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "A"}],
        "tools": [{"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}}]}
    lc_dict = json.loads(dumps(Thread(thread_id="t", messages=[HumanMessage("hi", id="h"), AIMessage(
        "yo", id="a", tool_calls=[{"name": "read", "args": {"p": 1}, "id": "c"}],
        usage_metadata={"input_tokens": 5, "output_tokens": 1, "total_tokens": 6},
        response_metadata={"model_provider": "openai", "model_name": "gpt-4o"})])))["messages"]
    return {"native": (native_doc(), False), "anthropic": (anthropic, False), "openai_chat": (chat, False),
            "langchain_dict": (lc_dict, False), "langchain_dumpd": (DUMPD, False)}


REAL = {  # small real files of the other formats (path under the shared traces, JSON Lines?)
    "claude_code": ("claude-code/short.jsonl", True),
    "codex": ("codex/vibecodingtracker-codex.jsonl", True),
    "gemini_cli": ("gemini/agent-sessions-gemini-jsonl_v040.SYNTHETIC.jsonl", True),
    "openhands": ("openhands/basic_interactions.json", False),
    "openai_messages": ("mini-swe-agent/github_issue.traj.json", False),
    "otel_genai": ("otel-genai/any-agent_OPENAI_trace.json", False),
    "openai_responses": ("nilenso-context-viewer/storymachine_run_42.responses.json", False),
    "langchain_dumpd-real": ("deepagents/summarization_seed_messages.json", False),
}


def sample(fmt: str) -> tuple[Any, bool]:
    if fmt in REAL:
        rel, lines = REAL[fmt]
        path = TRACES / rel
        if not path.is_file():
            pytest.skip(f"shared trace {path} not present")
        text = path.read_text(encoding="utf-8")
        return ([json.loads(line) for line in text.splitlines() if line.strip()] if lines else json.loads(text)), lines
    return hand_made()[fmt]


@pytest.mark.parametrize("fmt", [*hand_made(), *REAL])
@FUZZ
@given(data=st.data())
def test_a_wrong_type_anywhere_is_one_line_or_loads_and_counts(fmt: str, data: st.DataObject) -> None:
    doc, lines = sample(fmt)
    if lines:
        i = data.draw(st.integers(0, len(doc) - 1))
        path = (i, *data.draw(st.sampled_from(paths(doc[i]))))
    else:
        path = data.draw(st.sampled_from(paths(doc)[:4000]))
    changed = mutate(doc, path, data.draw(WRONG), data.draw(st.booleans()))
    raw = ("".join(json.dumps(r) + "\n" for r in changed) if lines else json.dumps(changed)).encode()
    name = "wrong-types.jsonl" if lines else NAME
    forced = None if fmt.endswith("-real") or fmt in REAL else fmt
    load_and_inspect(raw, forced, name)
    load_and_inspect(raw, None, name)  # auto-detected too: another importer may claim it


@pytest.mark.parametrize("kind", [["text"], 5, {"a": 1}], ids=["array", "number", "object"])
def test_a_non_string_block_type_in_the_anthropic_and_claude_code_importers(kind: Any) -> None:
    # the repro: a traceback in tokens.py through both importers
    doc = {"model": "claude-sonnet-4-20250514", "messages": [{"role": "user", "content": [{"type": kind, "text": "hi"}]},
                                                             {"role": "assistant", "content": "ok"}]}
    with pytest.raises(ThreadLoadError) as info:
        load_thread(data=json.dumps(doc).encode(), name=NAME, format="anthropic")
    got = {list: "array", int: "number", dict: "object"}[type(kind)]
    assert str(info.value) == (f"{NAME}, format anthropic, at $.messages[0].content[0].type: content part needs a "
                               f"string 'type', got {got}")

    def record(kind_: str, uuid: str, parent: str | None, content: Any) -> dict[str, Any]:
        message: dict[str, Any] = {"role": kind_, "content": content}
        if kind_ == "assistant":
            message |= {"model": "claude-sonnet-4-20250514", "id": "m1", "usage": {"input_tokens": 3, "output_tokens": 1}}
        return {"type": kind_, "uuid": uuid, "parentUuid": parent, "sessionId": "s1", "isSidechain": False,
                "timestamp": "2026-01-01T00:00:00Z", "message": message}

    lines = [record("user", "u1", None, "hi"), record("assistant", "a1", "u1", [{"type": kind, "text": "x"}])]
    thread = load_thread(data="".join(json.dumps(r) + "\n" for r in lines).encode(), name="s.jsonl")
    assert thread.source_format == "claude_code"
    assert len(inspect_thread(thread, TiktokenCounter())["steps"]) == 1  # the odd block counts as its JSON text
    assert replay(thread, load_config(thread=thread)).steps


def test_a_message_type_refusing_a_field_in_a_generic_importer_is_one_line() -> None:
    # hypothesis found it: an OpenHands action whose recorded model message content is [None] made
    # LangChain's AIMessage raise pydantic's several-line ValidationError through the generic guard
    doc, _ = sample("openhands")
    changed = mutate(doc, (5, "tool_call_metadata", "model_response", "choices", 0, "message", "content"), [None], False)
    with pytest.raises(ThreadLoadError) as info:
        load_thread(data=json.dumps(changed).encode(), name=NAME)
    assert_one_line(info.value)
    assert str(info.value) == (f"{NAME}, format openhands: unexpected content (AIMessage.content: expected a string, "
                               "got array (and 1 more field))")
