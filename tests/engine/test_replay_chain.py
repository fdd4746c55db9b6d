"""The replay driver's request objects and step sums give what LangChain's own objects and a fresh
computation give (issue 17: the driver's per-step cost).

- `ReplayRequest` / `new_request` / `new_tool_request`: the same fields and values as LangChain's
  `ModelRequest(...)`, `ModelRequest.override(...)` and `ToolCallRequest(...)`;
- `StepSums.step`: the view's and the state's breakdowns equal a breakdown computed afresh at
  every step, whether the view is the state, a new list, or the state again;
- `trim_for_summary` skips LangChain's partial search only where it cannot change the result.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from langchain.agents.middleware import ModelRequest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.utils import trim_messages
from langgraph.prebuilt.tool_node import ToolCallRequest

from engine.layers.approximate import ScaledCounter, scaled_count
from engine.layers.summary_rules import trim_for_summary
from engine.run.chain import ReplayRequest, new_request, new_tool_request
from engine.run.step_sums import Snapshot, StepSums
from engine.tokens.counters import ApproximateCounter, breakdown_messages


def _fields(request: Any) -> dict[str, Any]:
    return {f.name: getattr(request, f.name) for f in dataclasses.fields(ModelRequest)}


def _pair() -> tuple[ModelRequest[Any], ReplayRequest]:
    model = GenericFakeChatModel(messages=iter(()))
    messages: list[Any] = [HumanMessage("hi", id="h")]
    tools: list[Any] = [{"name": "read", "description": "d", "parameters": {}}]
    state: dict[str, Any] = {"messages": messages}
    system = SystemMessage("sys", id="s")
    theirs = ModelRequest(model=model, messages=messages, system_message=system, tools=tools, state=state, runtime=None)
    ours = new_request(model, messages, system, tools, state, None)
    return theirs, ours


def test_a_new_request_has_langchains_fields_and_values() -> None:
    theirs, ours = _pair()
    assert isinstance(ours, ModelRequest)
    assert list(ours.__dict__) == list(theirs.__dict__) == [f.name for f in dataclasses.fields(ModelRequest)]
    assert _fields(ours) == _fields(theirs)
    assert ours == theirs and theirs == ours
    assert ours.model_settings is not theirs.model_settings  # a fresh dict each, as LangChain makes


@pytest.mark.parametrize("changes", [
    {"system_message": SystemMessage("other", id="s2")},
    {"system_message": None},
    {"messages": [HumanMessage("x", id="x")]},
    {"tools": None},
    {"tools": []},
    {"state": None},
    {"model_settings": None},
    {"model_settings": {"temperature": 0}},
    {"tool_choice": "auto", "response_format": None},
    {"messages": [], "system_message": SystemMessage("both", id="b")},
])
def test_override_gives_what_langchains_override_gives(changes: dict[str, Any]) -> None:
    theirs, ours = _pair()
    expected, got = theirs.override(**changes), ours.override(**changes)
    assert type(got) is ReplayRequest
    assert list(got.__dict__) == list(expected.__dict__)
    assert _fields(got) == _fields(expected)
    for name in ("messages", "tools", "state", "system_message"):  # the same objects, not copies
        assert (getattr(got, name) is getattr(expected, name)) or name in changes and getattr(expected, name) is not changes[name]
    assert _fields(ours) == _fields(theirs)  # the original is left as it was


def test_the_deprecated_and_the_wrong_spellings_behave_as_langchains() -> None:
    theirs, ours = _pair()
    got, expected = ours.override(system_prompt="text"), theirs.override(system_prompt="text")
    assert got.system_message is not None and expected.system_message is not None
    assert got.system_message.content == expected.system_message.content == "text"
    with pytest.raises(TypeError):
        ours.override(not_a_field=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        theirs.override(not_a_field=1)  # type: ignore[call-arg]


def test_a_tool_request_has_langgraphs_fields() -> None:
    call = {"name": "read", "args": {"p": 1}, "id": "c1", "type": "tool_call"}
    state = {"messages": []}
    ours = new_tool_request(call, state)
    theirs = ToolCallRequest(tool_call=call, tool=None, state=state, runtime=None)  # type: ignore[arg-type]
    assert ours == theirs
    assert list(ours.__dict__) == list(theirs.__dict__)


def _messages(n: int) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for i in range(n):
        out.append(HumanMessage(f"question {i} " + "w " * (i % 5), id=f"h{i}"))
        out.append(AIMessage(f"answer {i}", id=f"a{i}", tool_calls=[{"name": "read", "args": {"i": i}, "id": f"c{i}"}]))
        out.append(ToolMessage("result " * (1 + i % 9), tool_call_id=f"c{i}", id=f"t{i}"))
    return out


def test_step_sums_equal_a_fresh_breakdown_at_every_step() -> None:
    counter = ApproximateCounter()
    sums = StepSums(counter, agent_prompt_tokens=7)
    system = SystemMessage("the prompt " * 10, id="system")
    tools = [{"name": "read", "description": "reads", "parameters": {}}]
    entry = sums.tools_entry(tools)
    state_list: list[BaseMessage] = []
    other: list[BaseMessage] = []
    history: list[BaseMessage] = [SystemMessage("an old prompt", id="old-system"), *_messages(30)]
    for step, m in enumerate(history):
        state_list.append(m)
        if step % 5 == 2:  # the driver forks the state to replace a message by id: a stub, a copy
            state_list = list(state_list)
            k = step // 2
            state_list[k] = ToolMessage("[cleared]", tool_call_id="x", id=state_list[k].id)
        if step == 17:  # the only message of its category replaced: that category is gone
            state_list = list(state_list)
            state_list[0] = HumanMessage("no longer a system message", id="old-system")
        state = Snapshot(state_list)
        if step % 7 in (3, 4):  # the view is another list for two steps, then the state again
            other = [HumanMessage("a summary", id=f"s{step}"), *state_list[-4:]]
            view = Snapshot(other)
        else:
            view = Snapshot(state_list)
        view_by, state_by, view_tokens, state_tokens = sums.step(view, state, system, entry)
        assert state_by == breakdown_messages(counter, state_list), step
        assert (view_tokens, state_tokens) == (sum(view_by.values()), sum(state_by.values())), step
        expected = dict(breakdown_messages(counter, list(view)))
        expected["system"] = expected.get("system", 0) + counter.count_message(system)
        expected["agent_prompt"] = 7
        expected["tools"] = counter.count_tools(tools)
        assert {k: v for k, v in view_by.items() if v} == {k: v for k, v in expected.items() if v}, step


def _fresh(counter: ApproximateCounter):  # type: ignore[no-untyped-def]
    def count(ms: list[Any]) -> int:  # a new scaled count per probe: no cache to trust
        for m in ms:
            counter.invalidate(m)
        return scaled_count(counter, ms)
    return count


@pytest.mark.parametrize("newest", ["tool", "ai", "human", "human-blocks", "tool-blocks"])
def test_trimming_without_the_partial_search_gives_what_trim_messages_gives(newest: str) -> None:
    counter = ApproximateCounter()
    big = "\n".join(f"line {i} " + "x" * (i % 13) for i in range(400))
    last: BaseMessage = {
        "tool": ToolMessage(big, tool_call_id="c9", id="big"),
        "ai": AIMessage(big, id="big"),
        "human": HumanMessage(big, id="big"),
        "human-blocks": HumanMessage([{"type": "text", "text": big}, {"type": "text", "text": "more"}], id="big"),
        "tool-blocks": ToolMessage([{"type": "text", "text": big}], tool_call_id="c9", id="big"),
    }[newest]
    for lead in ([], [SystemMessage("system prompt " * 20, id="sys")]):
        for messages in ([*lead, *_messages(12), last], [*lead, *_messages(12), last, HumanMessage("q", id="q")],
                         [*lead, last], [*lead, *_messages(3)]):
            for limit in (10, 60, 300, 900, 1500, 4000, 100_000):
                expected = trim_messages(list(messages), max_tokens=limit, token_counter=_fresh(counter),
                                         start_on="human", strategy="last", allow_partial=True, include_system=True)
                got = trim_for_summary(messages, limit, ScaledCounter(counter))
                assert [(m.id, m.content) for m in got] == [(m.id, m.content) for m in expected], (newest, limit)
