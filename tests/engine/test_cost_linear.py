"""Pricing a run costs each step its new messages, not its whole request (engine.cost.cache,
engine.cost.cache_run, engine.cost.payback), with the same numbers as building every request whole.

Issue 38.4 / 39.6: a run's cost walked every request: the block lists were concatenated and copied,
the cache layout compared and copied four arrays and (OpenAI) refreshed every prefix entry, and the
compaction accounts concatenated tuples, per step. The work is counted (`PromptCache.work`: positions
compared, copied or computed and entries scanned or written; `RequestBuilder.work`: blocks listed),
not timed.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from engine.config.schema import preset
from engine.cost.cache import Block, CacheRules, Joined, PromptCache, Request, layout
from engine.cost.cache_run import RequestBuilder
from engine.cost.run_cost import run_cost
from engine.run.replay import replay
from engine.thread.model import Thread


def chat(calls: int, model: str) -> Thread:
    """Short tool calls and results: a request that grows by two small messages a step."""
    messages: list[BaseMessage] = [HumanMessage("List the directory, one entry at a time.", id="h")]
    for k in range(calls):
        messages.append(AIMessage(f"Looking at entry {k}.", id=f"a{k}",
                                  tool_calls=[{"name": "ls", "args": {"path": f"/src/{k}"}, "id": f"c{k}"}]))
        messages.append(ToolMessage(f"/src/{k}: file, {k % 97} lines", tool_call_id=f"c{k}", name="ls", id=f"t{k}"))
    return Thread(f"chat-{calls}", messages, source_format="synthetic", model=model, max_input_tokens=200_000)


# a trigger low enough to compact a few times over the larger thread, so the accounts run too
CONFIG = ["summarization.trigger=tokens:5000", "summarization.keep=messages:40"]


@pytest.fixture()
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """The work of every cache (the run's, its summarizer forks' and the accounts' copies) and builder."""
    totals = {"cache": 0, "builder": 0}
    send, messages = PromptCache.send, RequestBuilder.messages

    def counting_send(self: PromptCache, request: Request) -> Any:
        before = self.work
        out = send(self, request)
        totals["cache"] += self.work - before
        return out

    def counting_messages(self: RequestBuilder, step: Any) -> Any:
        before = self.work
        out = messages(self, step)
        totals["builder"] += self.work - before
        return out

    monkeypatch.setattr(PromptCache, "send", counting_send)
    monkeypatch.setattr(RequestBuilder, "messages", counting_messages)
    return totals


@pytest.mark.parametrize("model", ["gpt-4o", "claude-sonnet-4-5"])  # OpenAI's and Anthropic's caches
def test_pricing_work_per_message_does_not_grow_with_the_thread(model: str, counted: dict[str, int]) -> None:
    per_message: dict[str, list[float]] = {"cache": [], "builder": []}
    for calls in (500, 2000):
        run = replay(chat(calls, model), preset("deepagents").with_overrides(CONFIG))
        cost = run_cost(run)
        assert cost.rules.kind == ("openai" if model == "gpt-4o" else "anthropic")
        assert len(cost.compactions) >= calls // 100
        for key in per_message:
            per_message[key].append(counted[key] / len(run.thread.messages))
            counted[key] = 0
    for key, (small, large) in per_message.items():
        # each step lists its new blocks and lays out its new positions; a compaction relists its view
        # (a cache copy per compaction, at C speed, is not counted)
        assert large <= small * 1.15, (key, per_message)
        assert large < 12, (key, per_message)


def test_the_shortcuts_give_what_whole_requests_give() -> None:
    """Every request built as a plain tuple of its blocks and fed to a fresh cache the same way gives the
    same report (the shared block lists, layouts and expiry cells change nothing)."""
    for model in ("gpt-4o", "claude-sonnet-4-5"):
        run = replay(chat(300, model), preset("deepagents").with_overrides(CONFIG))
        shared = run_cost(run).to_dict()
        builder = RequestBuilder(run)
        plain = [Request(tuple(builder.request(s).blocks), s.index) for s in run.steps]
        walked = [Request(builder.request(s).blocks, s.index) for s in run.steps]
        rules = run_cost(run).rules
        a, b = PromptCache(rules), PromptCache(rules)
        assert [a.send(r).to_dict() for r in plain] == [b.send(r).to_dict() for r in walked]
        again = dataclasses.replace(run, derived={})
        assert json.dumps(run_cost(again).to_dict()) == json.dumps(shared)


def test_a_layout_extends_the_previous_requests_arrays_and_a_diverging_one_copies_them() -> None:
    chain = [Block(f"m{i}", 10) for i in range(6)]
    first = layout(Joined((chain, 4)))
    second = layout(Joined((chain, 6)), first)
    assert second.hashes is first.hashes and (first.size, second.size) == (4, 6) and second.work == 2
    # a request that extends `first` again (a counterfactual stream from the same state) must not
    # write past what `second` appended: it copies first
    other = [*chain[:4], Block("x", 1)]
    third = layout(Joined((other, 5)), first)
    assert third.hashes is not first.hashes and third.hashes[:4] == first.hashes[:4]
    assert second.hashes[4] != third.hashes[4] and second.cumulative[5] == 60 and third.cumulative[4] == 41


def test_an_openai_chain_refreshes_its_prefixes_in_one_cell_and_copies_stay_apart() -> None:
    rules = CacheRules("openai", min_tokens=1024, ttl_s=300.0)
    blocks = [Block(f"m{i}", 600) for i in range(4)]
    cache = PromptCache(rules)
    assert cache.send(Request(Joined((blocks, 2)), 0.0)).read == 0
    fork = cache.copy()
    # 400 s later the first request's prefixes have expired in the fork; the main stream refreshed them at 200 s
    assert cache.send(Request(Joined((blocks, 3)), 200.0)).read == 1152  # 1,200 read, in 128-token steps
    assert cache.send(Request(Joined((blocks, 4)), 450.0)).read == 1792
    assert fork.send(Request(Joined((blocks, 3)), 400.0)).read == 0
