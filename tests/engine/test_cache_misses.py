"""Why a step missed the prompt cache (each cause on a hand-made request stream), what it cost, and
Claude Code's recorded `cache_miss_reason` read from a transcript and set beside ours."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from engine.config.schema import preset
from engine.cost.cache import Block, CacheRules, CacheUse, Request
from engine.cost.misses import agrees, lost_price_per_token, miss_cause
from engine.cost.prices import Price
from engine.cost.run_cost import run_cost
from engine.cost.split import Replayed, split_bill
from engine.formats import load_thread
from engine.run.replay import replay
from engine.run.run import StepRecord
from engine.thread.events import Event

SYSTEM = SystemMessage("You are a coding agent.", id="sys")
H = HumanMessage("Fix app.py", id="h0")
A = AIMessage("", id="a0", tool_calls=[{"name": "Read", "args": {"file_path": "app.py"}, "id": "c0"}])
T = ToolMessage("print('hi')", tool_call_id="c0", id="t0")


def _step(index: int, view: list[BaseMessage], *, system: SystemMessage | None = SYSTEM,
          tools: tuple[str, ...] = ("Read", "Bash"), events: list[Event] | None = None) -> StepRecord:
    return StepRecord(index=index, message_index=index, message_id=f"m{index}", state=tuple(view), view=tuple(view),
                      system=system, tool_names=tools, state_tokens=0, view_tokens=0, raw_tokens=0,
                      view_by_category={}, state_by_category={}, events=events or [])


def _request(step: StepRecord) -> Request:
    prefix = Block(f"prefix:{step.system.content if step.system else ''}:{','.join(step.tool_names)}", 5000, 1, True)
    return Request((prefix, *[Block(f"{m.id}:{m.content!r}", 100) for m in step.view]))


def _cause(prev: StepRecord, step: StepRecord, use: CacheUse | None = None,
           models: tuple[str | None, str | None] = (None, None)) -> tuple[str | None, str]:
    use = use or CacheUse(total=5400, rewritten=300)
    miss = miss_cause(step, use, (prev, _request(prev)), _request(step), models)
    return miss.cause, miss.detail


BEFORE = _step(1, [H, A, T])


def test_each_cause_of_a_rewritten_prefix() -> None:
    assert miss_cause(BEFORE, CacheUse(total=10), None, _request(BEFORE)).cause == "first call"
    assert _cause(BEFORE, _step(2, [H, A, T]), models=("claude-opus-4-6", "claude-sonnet-4-5")) == (
        "model", "claude-opus-4-6 → claude-sonnet-4-5")
    assert _cause(BEFORE, _step(2, [H, A, T], tools=("Read", "Bash", "mcp__db__query"))) == (
        "tools", "added mcp__db__query")
    assert _cause(BEFORE, _step(2, [H, A, T], system=SystemMessage("Today is Monday.", id="sys"))) == ("system", "")
    summary = HumanMessage("Summary of the work so far.", id="s1")
    compacted = _step(2, [summary], events=[Event("summarization", "summarize", 2)])
    assert _cause(BEFORE, compacted) == ("compaction", "summarization.summarize")
    cleared = ToolMessage("[cleared]", tool_call_id="c0", id="t0")
    edited = _step(2, [H, A, cleared], events=[Event("context_editing", "clear", 2)])
    assert _cause(BEFORE, edited) == ("edit", "context_editing.clear")
    stripped = A.model_copy(update={"additional_kwargs": {"ctxi_thinking_stripped": True}, "content": "x"})
    assert _cause(BEFORE, _step(2, [H, stripped, T])) == ("edit", "thinking stripped")
    reminder = HumanMessage("<system-reminder>todo list</system-reminder>", id="r1")
    assert _cause(BEFORE, _step(2, [H, reminder, A, T])) == ("insertion", "human message r1 inserted")
    assert _cause(BEFORE, _step(2, [H, T])) == ("removal", "")
    # the prefix differs only in size (the same system and tools)
    prev, step = BEFORE, _step(2, [H, A, T])
    bigger = Request((Block("prefix-other-size", 6000, 1, True), *_request(step).blocks[1:]))
    assert miss_cause(step, CacheUse(total=6400, rewritten=300), (prev, _request(prev)), bigger).cause == "prefix"


def test_same_content_misses_by_time_or_lookback() -> None:
    same = _step(2, [H, A, T])
    assert _cause(BEFORE, same, CacheUse(total=5400, expired=5300, gap_s=612.0)) == ("ttl", "612 s since the previous call")
    assert _cause(BEFORE, same, CacheUse(total=5400, out_of_window=5300)) == ("lookback", "")
    assert _cause(BEFORE, same, CacheUse(total=5400, read=5300)) == (None, "")


def test_a_miss_costs_the_write_price_less_the_read_price() -> None:
    price = Price(prefix="x", input=1.0, output=10.0, cache_read=0.1, cache_write_5m=1.25, cache_write_1h=2.0)
    assert lost_price_per_token(price, CacheRules("anthropic", ttl="5m")) * 1e6 == pytest.approx(1.15)
    assert lost_price_per_token(price, CacheRules("anthropic", ttl="1h")) * 1e6 == pytest.approx(1.9)
    assert lost_price_per_token(price, CacheRules("openai")) * 1e6 == pytest.approx(0.9)
    assert lost_price_per_token(None, CacheRules("anthropic")) == 0.0


def test_recorded_diagnoses_agree_by_kind() -> None:
    assert agrees("messages_changed", "compaction") and agrees("messages_changed", "insertion")
    assert not agrees("messages_changed", "ttl") and not agrees("tools_changed", None)
    assert agrees("previous_message_not_found", "ttl") and agrees("previous_message_not_found", "compaction")
    assert agrees("unavailable", "ttl") is None and agrees("pending", None) is None and agrees("none", "ttl") is None
    assert agrees("brand_new_reason", "ttl") is None


def test_the_bill_splits_into_new_and_replayed_input() -> None:
    a, b, c = Block("a", 1000), Block("b", 200), Block("c", 50)
    replayed = Replayed()
    assert replayed.send(Request((a,))) == 0
    assert replayed.send(Request((a, b))) == 1000
    assert replayed.send(Request((a, b, c))) == 1200
    assert replayed.send(Request((Block("s", 30), b))) == 200  # after a cut: b was sent before, s is new
    from engine.cost.bill import Bill

    use = CacheUse(total=1250, read=1000, write=250)
    bill = Bill(input=0.0, cache_read=0.0001, cache_write=0.0003125, output=0.001)
    split = split_bill(use, bill, 100, 1200)
    assert (split.new_tokens, split.replayed_cached_tokens, split.replayed_uncached_tokens) == (50, 1000, 200)
    # the 250 tokens not read cost 0.0003125: 50 of them are new, 200 replayed
    assert split.new_dollars == pytest.approx(0.0003125 * 50 / 250)
    assert split.replayed_dollars == pytest.approx(0.0001 + 0.0003125 * 200 / 250)
    assert split.output_dollars == 0.001


# -- Claude Code's recorded diagnosis, end to end ------------------------------------------------------
def _rec(type_: str, uuid: str, when: str, **fields: Any) -> dict[str, Any]:
    return {"type": type_, "uuid": uuid, "sessionId": "s-1", "isSidechain": False, "timestamp": when, **fields}


def _assistant(uuid: str, msg_id: str, when: str, block: dict[str, Any], read: int, write: int,
               diagnostics: Any = "absent", model: str = "claude-opus-4-6") -> dict[str, Any]:
    message: dict[str, Any] = {"model": model, "id": msg_id, "role": "assistant", "content": [block],
                               "usage": {"input_tokens": 3, "cache_creation_input_tokens": write,
                                         "cache_read_input_tokens": read, "output_tokens": 20}}
    if diagnostics != "absent":
        message["diagnostics"] = diagnostics
    return _rec("assistant", uuid, when, message=message)


def _user(uuid: str, when: str, content: Any, **fields: Any) -> dict[str, Any]:
    return _rec("user", uuid, when, message={"role": "user", "content": content}, **fields)


def _reason(kind: str, tokens: int | None = None) -> dict[str, Any]:
    return {"cache_miss_reason": {"type": kind, **({"cache_missed_input_tokens": tokens} if tokens else {})}}


def diagnosed_session() -> list[dict[str, Any]]:
    """A first call, a hit, a compaction, a 10-minute pause, a model switch, and a tools change we cannot see."""
    read = {"type": "tool_use", "id": "c1", "name": "Read", "input": {"file_path": "app.py"}}
    bash = {"type": "tool_use", "id": "c2", "name": "Bash", "input": {"command": "pytest"}}
    text = {"type": "text", "text": "Continuing with the fix."}
    return [
        _user("u1", "2026-09-01T10:00:00Z", "Fix the bug in app.py"),
        _assistant("a1", "msg_1", "2026-09-01T10:00:02Z", read, 0, 20_000, diagnostics=None),
        _user("u2", "2026-09-01T10:00:03Z", [{"type": "tool_result", "tool_use_id": "c1", "content": "x = 1\n" * 40}]),
        _assistant("a2", "msg_2", "2026-09-01T10:00:05Z", bash, 20_000, 200, diagnostics=None),
        _user("u3", "2026-09-01T10:00:06Z", [{"type": "tool_result", "tool_use_id": "c2", "content": "1 failed"}]),
        _rec("system", "b1", "2026-09-01T10:00:07Z", subtype="compact_boundary",
             compactMetadata={"trigger": "auto", "preTokens": 20_300}),
        _user("u4", "2026-09-01T10:00:08Z", "This session is being continued. Summary: fixing app.py.",
              isCompactSummary=True),
        # Claude Code's next request names the compaction call's response: no fingerprint is found
        _assistant("a3", "msg_3", "2026-09-01T10:00:10Z", text, 19_000, 300,
                   diagnostics=_reason("previous_message_not_found")),
        _user("u5", "2026-09-01T10:10:00Z", "Next, please."),  # ten minutes later: the 5-minute entry expired
        _assistant("a4", "msg_4", "2026-09-01T10:10:02Z", text, 0, 19_350, diagnostics=None),
        _user("u6", "2026-09-01T10:10:10Z", "Switch to the faster model."),
        _assistant("a5", "msg_5", "2026-09-01T10:10:12Z", text, 0, 19_400, diagnostics=_reason("model_changed", 19_300),
                   model="claude-sonnet-4-5-20250929"),
        _user("u6b", "2026-09-01T10:10:20Z", "And connect the database server."),
        _assistant("a6", "msg_6", "2026-09-01T10:10:22Z", text, 0, 19_450, diagnostics=_reason("tools_changed", 19_000),
                   model="claude-sonnet-4-5-20250929"),
        _user("u7", "2026-09-01T10:10:30Z", "Thanks."),
        _assistant("a7", "msg_7", "2026-09-01T10:10:32Z", text, 19_450, 40, diagnostics={"cache_miss_reason": None},
                   model="claude-sonnet-4-5-20250929"),
    ]


def _write(tmp_path: Path, records: list[dict[str, Any]]) -> Path:
    path = tmp_path / "s-1.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_the_importer_reads_claude_codes_cache_diagnosis(tmp_path: Path) -> None:
    thread = load_thread(_write(tmp_path, diagnosed_session()))
    got = [(u.cache_miss_reason, u.cache_missed_input_tokens) for u in thread.usage.values()]
    assert got == [("none", None), ("none", None), ("previous_message_not_found", None), ("none", None),
                   ("model_changed", 19_300), ("tools_changed", 19_000), ("pending", None)]
    records = diagnosed_session()
    for r in records:
        r.get("message", {}).pop("diagnostics", None)
    older = load_thread(_write(tmp_path, records))  # before Claude Code 2.1.251: nothing recorded
    assert {u.cache_miss_reason for u in older.usage.values()} == {None}


def test_our_cause_is_set_beside_the_recorded_one_and_every_disagreement_listed(tmp_path: Path) -> None:
    thread = load_thread(_write(tmp_path, diagnosed_session()))
    cost = run_cost(replay(thread, preset("as-recorded")))
    assert [(s.step, s.cause, s.recorded_reason, s.agrees) for s in cost.steps] == [
        (0, "first call", "none", None), (1, None, "none", None),
        (2, "compaction", "previous_message_not_found", True),
        (3, "ttl", "none", None),  # the docs: no divergence and a low read = the entry expired
        (4, "model", "model_changed", True),
        (5, None, "tools_changed", False),  # the transcript does not record the tools: we cannot see this one
        (6, None, "pending", None)]
    report = cost.agreement()
    assert report is not None
    assert (report["recorded_steps"], report["scored"], report["agreed"], report["rate"]) == (7, 3, 2, 0.6667)
    assert [(d["step"], d["recorded"], d["ours"]) for d in report["disagreements"]] == [(5, "tools_changed", None)]
    assert [(d["step"], d["recorded"]) for d in report["not_scored"]] == [(6, "pending")]
    assert cost.to_dict()["steps"][4]["recorded_cause"] == {"type": "model_changed", "cache_missed_input_tokens": 19_300,
                                                            "agrees": True}
    # what each cause cost: the lost tokens written again at (write - read) price
    lost = cost.totals()["lost_by_cause"]
    assert sorted(lost) == ["compaction", "model", "ttl"]
    per_token = (6.25 - 0.5) / 1e6  # claude-opus-4-6, 5-minute writes
    assert lost["ttl"]["dollars"] == pytest.approx(cost.steps[3].cache.lost * per_token, abs=1e-6)
