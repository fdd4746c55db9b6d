"""Differential test: LangChain's real ContextEditingMiddleware inside `create_agent`, against our
`langchain` preset as shipped (only the ClearToolUsesEdit settings a user gives set as config keys)
replaying the thread that run recorded, and against our `context_editing` layer inside `create_agent`.

Each generated thread is a pre-built history (human turns, AI messages with 0-3 parallel calls,
orphan results, results the nearest AI message does not own, unnamed results, already-cleared
results, equal AI messages) followed by 1-2 scripted model calls that run real tools; each draws
its own ClearToolUsesEdit settings (trigger, keep, clear_at_least, clear_tool_inputs, exclude_tools,
placeholder). Every request the model receives must be identical, message for message (content,
ids, artifacts, tool calls, response_metadata["context_editing"]): in the replay, the steps of the
scripted calls (the history's own AI messages were never sent by this run, so they have no
reference request).
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ClearToolUsesEdit, ContextEditingMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage, messages_to_dict
from langchain_core.tools import tool

from engine.config.schema import EngineConfig, preset
from engine.config.sections import ContextEditingConfig
from engine.layers.base import LayerContext
from engine.layers.context_editing import ContextEditingLayer
from engine.layers.context_editing_rules import clear_tool_uses_langchain
from engine.run.replay import replay
from engine.thread.model import Thread
from engine.tokens.counters import ApproximateCounter

TOOLS = ("read_file", "grep", "bash", "memory")
WORDS = ("alpha", "beta", "gamma", "delta", "parser", "token", "window", "x")


class ScriptedModel(GenericFakeChatModel):
    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self


def _text(n: int) -> str:
    return " ".join(WORDS[(n + 3 * i) % len(WORDS)] for i in range(n))


def _make_tool(name: str) -> Any:
    def run(size: int = 10) -> str:
        return f"{name}: " + _text(size)

    run.__name__ = name
    run.__doc__ = f"The {name} tool (returns `size` words)."
    return tool(run)


TOOL_OBJECTS = [_make_tool(n) for n in TOOLS]


def normalized(messages: Any) -> list[dict[str, Any]]:
    """messages_to_dict, with the random uuid ToolNode gives a live tool's result made deterministic."""
    out = messages_to_dict(list(messages))
    for m in out:
        if m["type"] == "tool" and m["data"]["tool_call_id"].startswith("s"):
            m["data"]["id"] = "result-" + m["data"]["tool_call_id"]
    return out


class Recorder(AgentMiddleware):
    """Innermost observer: the request exactly as the model received it."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[list[dict[str, Any]]] = []

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        self.requests.append(normalized(request.messages))
        return handler(request)


class RecorderOurs(Recorder):
    pass


def random_history(rng: random.Random) -> list[BaseMessage]:
    msgs: list[BaseMessage] = []
    n = 0

    def nid(prefix: str) -> str:
        nonlocal n
        n += 1
        return f"{prefix}{n}"

    for _ in range(rng.randint(1, 4)):
        msgs.append(HumanMessage(_text(rng.randint(1, 60)), id=nid("h")))
        if rng.random() < 0.1:
            msgs.append(ToolMessage(_text(rng.randint(1, 40)), tool_call_id=nid("ghost"), id=nid("o")))  # orphan
        for _ in range(rng.randint(0, 5)):
            calls = [{"name": rng.choice(TOOLS), "args": {"size": rng.randint(1, 200)}, "id": nid("c"),
                      "type": "tool_call"} for _ in range(rng.randint(0, 3))]
            text = "" if rng.random() < 0.3 else _text(rng.randint(1, 20))
            ai = AIMessage(text, tool_calls=calls, id=nid("a"))
            msgs.append(ai)
            if rng.random() < 0.05:
                msgs.append(ai.model_copy())  # an equal AI message: list.index finds the first
            results = []
            for c in calls:
                if rng.random() < 0.08:
                    continue  # a call never answered
                name = c["name"] if rng.random() < 0.8 else None
                meta: dict[str, Any] = {}
                if rng.random() < 0.06:
                    meta = {"context_editing": {"cleared": True, "strategy": "clear_tool_uses"}}
                results.append(ToolMessage(f"{c['name']}: " + _text(int(c["args"]["size"])), tool_call_id=c["id"],
                                           name=name, id=nid("t"), response_metadata=meta,
                                           artifact={"raw": c["id"]} if rng.random() < 0.2 else None))
            rng.shuffle(results)
            if results and rng.random() < 0.07:
                # a later AI message sits between a call and its result: the result is "unmatched"
                msgs.append(AIMessage(_text(3), id=nid("a")))
            msgs.extend(results)
    msgs.append(HumanMessage(_text(rng.randint(1, 30)), id=nid("h")))
    return msgs


def scripted_responses(rng: random.Random) -> list[AIMessage]:
    out: list[AIMessage] = []
    for k in range(rng.randint(0, 1)):
        calls = [{"name": rng.choice(TOOLS), "args": {"size": rng.randint(1, 150)}, "id": f"s{k}-{j}",
                  "type": "tool_call"} for j in range(rng.randint(1, 2))]
        out.append(AIMessage("", tool_calls=calls, id=f"m{k}"))
    out.append(AIMessage("done", id="final"))
    return out


def edit_settings(rng: random.Random, history_tokens: int) -> dict[str, Any]:
    return {
        "trigger": rng.randint(1, max(2, int(history_tokens * 1.3))),
        "keep": rng.choice([0, 0, 1, 2, 3, 3, 5, 8]),
        "clear_at_least": rng.choice([0, 0, 0, rng.randint(1, max(2, history_tokens // 2))]),
        "clear_tool_inputs": rng.random() < 0.4,
        "exclude_tools": tuple(t for t in TOOLS if rng.random() < 0.25),
        "placeholder": rng.choice(["[cleared]", "(gone)", "[Old tool result content cleared]"]),
    }


REF_MODEL = ScriptedModel(messages=iter(()))
OUR_MODEL = ScriptedModel(messages=iter(()))
REF_EDITING = ContextEditingMiddleware(edits=[ClearToolUsesEdit()])
OUR_EDITING = ContextEditingLayer(LayerContext(counter=ApproximateCounter()))
REF_SEEN, OUR_SEEN = Recorder(), RecorderOurs()
REFERENCE = create_agent(REF_MODEL, TOOL_OBJECTS, middleware=[REF_EDITING, REF_SEEN])
OURS = create_agent(OUR_MODEL, TOOL_OBJECTS, middleware=[OUR_EDITING, OUR_SEEN])


def run_both(history: list[BaseMessage], responses: list[AIMessage], edit: dict[str, Any]) -> tuple[Any, Any]:
    REF_EDITING.edits = [ClearToolUsesEdit(**edit)]
    OUR_EDITING.reconfigure(ContextEditingConfig(
        style="langchain", trigger=f"tokens:{edit['trigger']}", keep=edit["keep"], clear_at_least=edit["clear_at_least"],
        clear_tool_inputs=edit["clear_tool_inputs"], exclude_tools=edit["exclude_tools"], placeholder=edit["placeholder"]))
    REF_MODEL.messages = iter([m.model_copy() for m in responses])
    OUR_MODEL.messages = iter([m.model_copy() for m in responses])
    REF_SEEN.requests.clear()
    OUR_SEEN.requests.clear()
    theirs = REFERENCE.invoke({"messages": [m.model_copy(deep=True) for m in history]})
    ours = OURS.invoke({"messages": [m.model_copy(deep=True) for m in history]})
    return theirs, ours


def preset_config(edit: dict[str, Any]) -> EngineConfig:
    """The `langchain` preset as shipped with its ContextEditingMiddleware added to the stack and
    ClearToolUsesEdit's settings as config keys: all a user gives."""
    return preset("langchain").with_overrides([
        "order=[summarization, context_editing]", f"context_editing.trigger=tokens:{edit['trigger']}",
        f"context_editing.keep={edit['keep']}", f"context_editing.clear_at_least={edit['clear_at_least']}",
        f"context_editing.clear_tool_inputs={str(edit['clear_tool_inputs']).lower()}",
        f"context_editing.exclude_tools={list(edit['exclude_tools'])}",
        f"context_editing.placeholder={edit['placeholder']!r}"])


def replayed_requests(final_state: list[BaseMessage], edit: dict[str, Any], calls: int) -> list[list[dict[str, Any]]]:
    """Our replay of the thread the reference run recorded: the views of its last `calls` steps."""
    thread = Thread("ce", [m.model_copy(deep=True) for m in final_state], source_format="langchain_dict")
    run = replay(thread, preset_config(edit))
    return [normalized(step.view) for step in run.steps[-calls:]]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_langchain_preset_replays_langchain_context_editing(seed: int) -> None:
    rng = random.Random(seed)
    history = random_history(rng)
    responses = scripted_responses(rng)
    edit = edit_settings(rng, ApproximateCounter()(history))
    theirs, _ = run_both(history, responses, edit)
    ours = replayed_requests(list(theirs["messages"]), edit, len(responses))
    assert len(ours) == len(REF_SEEN.requests) == len(responses)
    for k, (a, b) in enumerate(zip(REF_SEEN.requests, ours, strict=True)):
        assert b == a, f"request {k} differs (seed {seed}, settings {edit})"


def test_the_preset_counts_as_langchain_does() -> None:
    # The minimal case: four grep results of "alpha beta gamma delta " * 100 and
    # ClearToolUsesEdit(trigger=2000, keep=1). count_tokens_approximately counts 2,422 (> 2,000) and
    # clears t0-t2; the run's o200k counter counts 1,681 and would clear nothing.
    msgs: list[BaseMessage] = [HumanMessage("find it", id="h0")]
    for i in range(4):
        msgs.append(AIMessage("", tool_calls=[{"name": "grep", "args": {"q": "x"}, "id": f"t{i}"}], id=f"a{i}"))
        msgs.append(ToolMessage("alpha beta gamma delta " * 100, tool_call_id=f"t{i}", name="grep", id=f"r{i}"))
    msgs.append(AIMessage("done", id="final"))
    edit = {"trigger": 2000, "keep": 1, "clear_at_least": 0, "clear_tool_inputs": False, "exclude_tools": (),
            "placeholder": "[cleared]"}
    run = replay(Thread("minimal", msgs, source_format="langchain_dict"), preset_config(edit))
    last = run.steps[-1]
    assert [m.content for m in last.view if isinstance(m, ToolMessage)] == ["[cleared]"] * 3 + ["alpha beta gamma delta " * 100]
    [event] = [e for e in run.events if e.kind == "clear"]
    assert (event.step, event.payload["request_tokens"], event.payload["counter"], event.payload["tool_call_ids"]) == (
        4, 2422, "approximate", ["t0", "t1", "t2"])
    assert run.counter(list(msgs[:-1])) < 2000  # what the run's own counter would have compared


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_requests_match_langchain_context_editing(seed: int) -> None:
    rng = random.Random(seed)
    history = random_history(rng)
    responses = scripted_responses(rng)
    edit = edit_settings(rng, ApproximateCounter()(history))
    theirs, ours = run_both(history, responses, edit)
    assert len(OUR_SEEN.requests) == len(REF_SEEN.requests) == len(responses)
    for k, (a, b) in enumerate(zip(REF_SEEN.requests, OUR_SEEN.requests, strict=True)):
        assert b == a, f"request {k} differs (seed {seed}, settings {edit})"
    # the state is never edited: both agents end with the same, unedited history
    assert normalized(ours["messages"]) == normalized(theirs["messages"])


def test_the_generator_covers_what_the_rule_skips_and_clears() -> None:
    """The differential is only as good as its threads: they must reach every branch of the rule."""
    seen = {"cleared": 0, "already_cleared": 0, "unmatched": 0, "orphan": 0, "inputs": 0, "stopped_early": 0,
            "no_trigger": 0, "excluded": 0}
    counter = ApproximateCounter()
    for seed in range(150):
        rng = random.Random(seed)
        history = random_history(rng)
        scripted_responses(rng)
        edit = edit_settings(rng, counter(history))
        done = clear_tool_uses_langchain(history, count=counter, **edit)
        seen["no_trigger"] += int(counter(history) <= edit["trigger"])
        seen["cleared"] += len(done.cleared_call_ids)
        seen["inputs"] += len(done.cleared_input_ids)
        seen["stopped_early"] += int(edit["clear_at_least"] > 0 and bool(done.cleared_call_ids))
        seen["excluded"] += sum(1 for m in history if isinstance(m, ToolMessage) and m.name in edit["exclude_tools"])
        seen["already_cleared"] += sum(1 for m in history if isinstance(m, ToolMessage)
                                       and m.response_metadata.get("context_editing"))
        seen["orphan"] += sum(1 for m in history if isinstance(m, ToolMessage) and m.tool_call_id.startswith("ghost"))
        names = {tc["id"] for m in history if isinstance(m, AIMessage) for tc in m.tool_calls}
        seen["unmatched"] += sum(1 for i, m in enumerate(history) if isinstance(m, ToolMessage)
                                 and m.tool_call_id in names and not any(
                                     tc["id"] == m.tool_call_id for tc in next(
                                         x for x in reversed(history[:i]) if isinstance(x, AIMessage)).tool_calls))
    assert all(v > 0 for v in seen.values()), seen
