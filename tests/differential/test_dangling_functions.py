"""Differential on message lists: each framework's dangling-call patch function vs ours.

An agent run rarely produces the odd shapes these patches exist for (LangChain 1.5's create_agent
answers invalid calls itself, and summaries never split a call from its result), so each patch is
also checked directly on seeded random message lists that have them: unanswered calls, invalid
calls, orphan results, results far from their call, empty or missing ids and names, raw provider
tool calls. DeerFlow's functions come from ../shared/reference-code (skipped when absent), Deep
Agents' from the installed deepagents==0.7.32.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.runtime import Runtime

from engine.layers import LayerContext
from engine.layers.dangling import DanglingToolCallLayer, deepagents_patched_state
from engine.layers.dangling_head import head_patch
from tests.differential import deerflow_side as df
from tests.differential.harness import shape

LISTS = 300


def _call(rng: random.Random, i: int, k: int, odd: bool) -> dict[str, Any]:
    call_id: Any = f"c{i}-{k}"
    name: Any = rng.choice(["search", "fetch", "write_file"])
    if odd and rng.random() < 0.2:
        call_id = rng.choice(["", None])
    if odd and rng.random() < 0.15:
        name = rng.choice(["", "  "])
    return {"name": name, "args": {"q": str(k)}, "id": call_id, "type": "tool_call"}


def messages_for(seed: int, *, odd: bool) -> list[BaseMessage]:
    """A history with the shapes the patches handle; `odd` adds malformed ids, names and raw calls."""
    rng = random.Random(seed)
    out: list[BaseMessage] = [HumanMessage("go", id="h0")]
    pending: list[dict[str, Any]] = []
    for i in range(rng.randint(2, 9)):
        calls = [_call(rng, i, k, odd) for k in range(rng.randint(0, 3))]
        kwargs: dict[str, Any] = {}
        if odd and not calls and rng.random() < 0.3:
            kwargs = {"tool_calls": [{"id": f"raw{i}", "type": "function",
                                      "function": {"name": rng.choice(["search", ""]), "arguments": rng.choice(['{"q": 1}', "{bad"])}}]}
        invalid = ([{"name": rng.choice(["write_file", "search", ""]), "args": "{bad", "id": f"bad{i}",
                     "error": rng.choice(["Expecting value", None]), "type": "invalid_tool_call"}]
                   if rng.random() < 0.25 else [])
        out.append(AIMessage("", id=f"a{i}", tool_calls=calls, invalid_tool_calls=invalid, additional_kwargs=kwargs))
        pending += calls
        if rng.random() < 0.2:
            out.append(HumanMessage(f"note {i}", id=f"n{i}"))  # a result may come after another message
        for call in list(pending):
            roll = rng.random()
            if roll < 0.65:  # answered (in order, or later)
                pending.remove(call)
                out.append(ToolMessage(f"result {call['id']}", tool_call_id=call["id"] or "",
                                       name=call["name"] if rng.random() < 0.8 else None, id=f"t{i}-{len(out)}"))
            elif roll < 0.8:
                pending.remove(call)  # never answered: dangling
        if rng.random() < 0.15:
            out.append(ToolMessage("orphan", tool_call_id=f"gone{i}", name="search", id=f"o{i}"))
    return out


def _shapes(messages: list[BaseMessage] | None, known: set[str]) -> Any:
    return None if messages is None else [shape(m, known) for m in messages]


@pytest.mark.parametrize("odd", [False, True], ids=["regular", "malformed"])
def test_deerflow_v2_0_m0_patch_matches(odd: bool) -> None:
    real = df._load("v2.0-m0", "dangling_tool_call_middleware").DanglingToolCallMiddleware()
    agree = 0
    for seed in range(LISTS):
        msgs = messages_for(seed, odd=odd)
        ours = DanglingToolCallLayer(LayerContext(), style="deerflow", drop_orphans=False).patched_view(msgs)
        known = {m.id for m in msgs if m.id}
        agree += _shapes(real._build_patched_messages(list(msgs)), known) == _shapes(ours, known)
    assert agree == LISTS, f"{agree}/{LISTS} message lists patched alike"


@pytest.mark.parametrize("odd", [False, True], ids=["regular", "malformed"])
def test_deerflow_head_patch_matches(odd: bool) -> None:
    real = df._load("head", "dangling_tool_call_middleware").DanglingToolCallMiddleware()
    agree = 0
    for seed in range(LISTS):
        msgs = messages_for(seed, odd=odd)
        found = head_patch(msgs)
        known = {m.id for m in msgs if m.id}
        agree += _shapes(real._build_patched_messages(list(msgs)), known) == _shapes(found[0] if found else None, known)
    assert agree == LISTS, f"{agree}/{LISTS} message lists patched alike"


def test_deepagents_patch_matches() -> None:
    patch_tool_calls = pytest.importorskip("deepagents.middleware.patch_tool_calls")
    real = patch_tool_calls.PatchToolCallsMiddleware()
    agree = 0
    for seed in range(LISTS):
        msgs = [m for m in messages_for(seed, odd=False)]
        update = real.before_agent({"messages": list(msgs)}, Runtime())
        theirs = update["messages"][1:] if update else None  # after RemoveMessage(REMOVE_ALL_MESSAGES)
        known = {m.id for m in msgs if m.id}
        agree += _shapes(theirs, known) == _shapes(deepagents_patched_state(msgs), known)
    assert agree == LISTS, f"{agree}/{LISTS} message lists patched alike"


def test_the_lists_have_the_shapes() -> None:
    """The generator produces what the patches are for (else the tests above prove little)."""
    lists = [messages_for(seed, odd=True) for seed in range(LISTS)]
    ids = [{m.tool_call_id for m in msgs if isinstance(m, ToolMessage)} for msgs in lists]
    dangling = sum(any(tc["id"] and tc["id"] not in answered for m in msgs if isinstance(m, AIMessage) for tc in m.tool_calls)
                   for msgs, answered in zip(lists, ids, strict=True))
    orphans = sum(any(isinstance(m, ToolMessage) and m.tool_call_id.startswith("gone") for m in msgs) for msgs in lists)
    empty_ids = sum(any(not tc["id"] for m in msgs if isinstance(m, AIMessage) for tc in m.tool_calls) for msgs in lists)
    invalid = sum(any(m.invalid_tool_calls for m in msgs if isinstance(m, AIMessage)) for msgs in lists)
    assert min(dangling, orphans, empty_ids, invalid) >= LISTS // 10, (dangling, orphans, empty_ids, invalid)
