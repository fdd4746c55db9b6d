"""The driver replaces a freshly appended response in place, and Deep Agents' open-call check keeps a
set of open calls: both against the slow paths they stand for (issue 17: linear replay)."""

from __future__ import annotations

import random
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, InvalidToolCall, ToolMessage

from engine.config.schema import preset
from engine.layers.dangling import _OpenCallLedger, deepagents_patched_state
from engine.layers.subagents import SubagentLayer
from engine.run.replay import _Driver, replay
from engine.thread.synthetic import synthetic_thread
from engine.tokens.counters import TiktokenCounter


def _states(run: Any) -> list[list[tuple[Any, ...]]]:
    """Every step's state and view, message by message (ids, content, calls)."""
    return [[(m.id, m.content, getattr(m, "tool_calls", None), m.additional_kwargs) for m in seq]
            for s in run.steps for seq in (s.state, s.view)]


def test_a_clamp_replaces_the_response_in_place_and_gives_the_forked_run(monkeypatch: Any) -> None:
    """The sub-agent clamp (after_model, the only hook there) replaces the newest AI message: in place
    (fast) or in a copy of the state (slow, the layer not declared blind): the same report, the same
    states and views at every step (earlier steps' snapshots share the list replaced in place)."""
    thread = synthetic_thread(300, seed=0)
    replace = _Driver._replace_fresh
    taken = {"in place": 0}

    def counting(self: Any, update: Any, pos: int) -> bool:
        hit = replace(self, update, pos)
        taken["in place"] += hit
        return hit

    monkeypatch.setattr(_Driver, "_replace_fresh", counting)
    for name in ("stress", "deerflow"):
        taken["in place"] = 0
        fast = replay(thread, preset(name), token_counter=TiktokenCounter("o200k_base"))
        clamps = sum(1 for s in fast.steps for e in s.events if e.kind.endswith("clamp"))
        assert clamps > 2 and taken["in place"] == clamps, (name, clamps, taken)
        with monkeypatch.context() as m:
            m.setattr(SubagentLayer, "keeps_state_view", True)
            taken["in place"] = 0
            slow = replay(thread, preset(name), token_counter=TiktokenCounter("o200k_base"))
            assert taken["in place"] == 0
        assert fast.to_report() == slow.to_report(), name
        assert _states(fast) == _states(slow), name
        assert [m.id for m in fast.final_state] == [m.id for m in slow.final_state]
        assert all(a is b or a == b for a, b in zip(fast.final_state, slow.final_state, strict=True))


class _Relabel(AgentMiddleware):
    """A user's after_model that replaces the newest AI message by id (nothing declares it blind)."""

    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        last = state["messages"][-1]
        self.seen = state["messages"]  # it keeps the list: replacing in place would change what it holds
        return {"messages": [last.model_copy(update={"content": f"{last.content} (relabelled)"})]}


def test_an_undeclared_after_model_replacement_forks_the_state() -> None:
    thread = synthetic_thread(40, seed=1)
    relabel = _Relabel()
    run = replay(thread, preset("langchain"), layers=[relabel], token_counter=TiktokenCounter("o200k_base"))
    held = relabel.seen
    assert not str(held[-1].content).endswith("(relabelled)")  # what it saw is still what it saw
    assert all(str(m.content).endswith("(relabelled)") for m in run.final_state if isinstance(m, AIMessage))


def _random_messages(rng: random.Random, n: int) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for i in range(n):
        roll = rng.random()
        cid = f"c{rng.randint(0, n // 2)}"
        if roll < 0.35:
            calls = [{"name": "read", "args": {}, "id": f"c{rng.randint(0, n // 2)}" if rng.random() < 0.9 else None}
                     for _ in range(rng.randint(0, 3))]
            invalid = [InvalidToolCall(name="x", args="{", id=cid, error=None, type="invalid_tool_call")] \
                if rng.random() < 0.1 else []
            out.append(AIMessage("", id=f"a{i}", tool_calls=calls, invalid_tool_calls=invalid))
        elif roll < 0.75:
            out.append(ToolMessage("r", tool_call_id=cid, id=f"t{i}"))  # may come before its call
        else:
            out.append(HumanMessage("q", id=f"h{i}"))
    return out


def test_the_open_call_set_agrees_with_the_full_patch_scan_on_random_histories() -> None:
    rng = random.Random(7)
    opened = closed = 0
    for case in range(300):
        messages = _random_messages(rng, rng.randint(1, 40))
        ledger = _OpenCallLedger()
        state: list[BaseMessage] = []
        for m in messages:
            state.append(m)  # the same list, grown
            got = ledger.any_open(state)
            assert got == (deepagents_patched_state(state) is not None), case
            opened += got
            closed += not got
        cut = messages[: rng.randint(0, len(messages))]  # another list: counted afresh
        assert ledger.any_open(cut) == (deepagents_patched_state(cut) is not None), case
    assert opened > 500 and closed > 500, (opened, closed)
