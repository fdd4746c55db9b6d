"""Bills per step, summarizer calls and the compaction account, checked against a hand computation."""

from __future__ import annotations

import math

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from engine import preset, replay
from engine.cost.prices import price_for, price_table, table_checked
from engine.cost.run_cost import FORK_PROMPT, run_cost
from engine.thread.model import RecordedCompaction, RecordedUsage, Thread

# round prices (dollars per million tokens) so the hand computation reads plainly
PRICES = ["cost.prices=[{prefix: claude-sonnet-4-5, input: 1, output: 10, cache_read: 0.1, cache_write_5m: 1.25, "
          "cache_write_1h: 2}]"]
M = 1_000_000


def _thread(*, compaction: bool = False, times: dict[str, str] | None = None, file_lines: int = 200) -> Thread:
    messages = [
        SystemMessage(content="You are a careful coding agent. " * 300, id="sys"),
        HumanMessage(content="Fix the failing test in parser.py.", id="h1"),
        AIMessage(content="", id="a1", tool_calls=[{"name": "read_file", "args": {"path": "parser.py"}, "id": "c1"}]),
        ToolMessage(content="def parse(x):\n    return x\n" * file_lines, tool_call_id="c1", id="t1"),
        AIMessage(content="The parser returns its input unchanged; fixed.", id="a2"),
        HumanMessage(content="Now run the tests.", id="h2"),
        AIMessage(content="", id="a3", tool_calls=[{"name": "bash", "args": {"cmd": "pytest"}, "id": "c2"}]),
        ToolMessage(content="12 passed", tool_call_id="c2", id="t2"),
        AIMessage(content="All 12 tests pass.", id="a4"),
        HumanMessage(content="Thanks, commit it.", id="h3"),
        AIMessage(content="Committed.", id="a5"),
    ]
    thread = Thread("hand", messages, source_format="native", model="claude-sonnet-4-5-20250929")
    if compaction:
        thread.compactions = [RecordedCompaction(index=5, summary="Fixed parse() in parser.py.", message_id="sum")]
    thread.timestamps = dict(times or {})
    return thread


def _run(thread: Thread, extra: list[str] | None = None):
    return replay(thread, preset("as-recorded").with_overrides([*PRICES, *(extra or [])]))


def test_each_step_is_billed_as_reads_of_the_previous_request_and_writes_of_the_rest() -> None:
    run = _run(_thread())
    cost = run_cost(run)
    views = [s.view_tokens for s in run.steps]
    assert views[0] > 1024  # the system prompt alone is over Sonnet 4.5's 1,024-token minimum
    outputs = [run.counter.count_message(s.response) for s in run.steps]
    expected_total = 0.0
    for k, entry in enumerate(cost.steps):
        read = views[k - 1] if k else 0
        write = views[k] - read
        assert (entry.cache.read, entry.cache.write, entry.cache.uncached) == (read, write, 0)
        assert entry.output_tokens == outputs[k]
        dollars = (read * 0.1 + write * 1.25 + outputs[k] * 10) / M
        assert math.isclose(entry.bill.total, dollars, abs_tol=1e-12)
        expected_total += dollars
        assert math.isclose(entry.cumulative, expected_total, abs_tol=1e-12)
        assert entry.cause == ("first call" if k == 0 else None)
    assert math.isclose(cost.total(), expected_total, abs_tol=1e-12)
    totals = cost.totals()
    assert totals["cache_read_tokens"] == sum(views[:-1])
    assert totals["hit_rate"] == round(sum(views[:-1]) / sum(views), 4)
    assert cost.to_dict()["price"]["input"] == 1.0 and cost.to_dict()["prices_checked"] == table_checked()


def test_a_gap_longer_than_the_ttl_rewrites_the_whole_prefix_and_says_why() -> None:
    times = {"h1": "2026-02-12T10:00:00Z", "a1": "2026-02-12T10:00:03Z", "t1": "2026-02-12T10:00:04Z",
             "a2": "2026-02-12T10:00:08Z", "h2": "2026-02-12T10:06:00Z", "a3": "2026-02-12T10:06:02Z"}
    run = _run(_thread(times=times))
    uses = [s.cache for s in run_cost(run).steps]
    # step 2 (a3) starts at h2, 356 s after step 1 started (t1): the 5-minute entries are gone
    assert uses[2].gap_s == pytest.approx(356.0)
    assert (uses[2].read, uses[2].write, uses[2].expired) == (0, run.steps[2].view_tokens, run.steps[1].view_tokens)
    assert run_cost(run).steps[2].cause == "ttl"
    # a 1-hour TTL keeps them
    hour = run_cost(_run(_thread(times=times), ["cost.cache_ttl=1h"]))
    assert hour.steps[2].cache.read == run.steps[1].view_tokens and hour.steps[2].cause is None


@pytest.mark.parametrize(("file_lines", "paid_back"), [(200, None), (4000, 2)])
def test_a_compaction_forks_a_summarizer_call_rewrites_the_prefix_and_is_paid_back(file_lines: int,
                                                                                  paid_back: int | None) -> None:
    # the compaction drops a file read: a small one never pays for the summarizer, a large one at once
    run = _run(_thread(compaction=True, file_lines=file_lines))
    cost = run_cost(run)
    c = next(s.index for s in run.steps if any(e.layer == "recorded" for e in s.events))
    assert c == 2 and [e.kind for e in run.steps[c].events] == ["compaction"]
    count = run.counter.count_message
    system = run.steps[0].view_tokens - count(run.thread.messages[1])  # the system prompt (the breakpoint)
    views = [s.view_tokens for s in run.steps]
    outputs = [count(s.response) for s in run.steps]
    a2 = run.thread.messages[4]
    # the summarizer: step 1's request + the response it got (a2) + the compact prompt, reading step 1's cache
    fork_tokens = views[1] + count(a2) + count(HumanMessage(content=FORK_PROMPT))
    [call] = cost.summarizer_calls
    summary_out = run.counter.count_text("Fixed parse() in parser.py.")
    assert (call.style, call.cache.read) == ("fork", views[1])
    assert call.input_tokens == fork_tokens
    summarizer = (views[1] * 0.1 + (fork_tokens - views[1]) * 1.25 + summary_out * 10) / M
    assert math.isclose(call.bill.total, summarizer, abs_tol=1e-12)
    # the first request after it reads only the system prompt and writes the summary and what follows
    step = cost.steps[c]
    assert (step.cache.read, step.cache.write, step.cause) == (system, views[c] - system, "compaction")
    assert step.cache.rewritten == fork_tokens - system
    # without it: step 1's request + a2, then every later message appended; read from the cache throughout
    h2, a3, t2, a4, h3 = (count(run.thread.messages[i]) for i in (5, 6, 7, 8, 9))
    base = views[1] + count(a2)
    without = [base + h2, base + h2 + a3 + t2, base + h2 + a3 + t2 + a4 + h3]
    reads = [views[1], without[0], without[1]]
    with_reads = [system, views[2], views[3]]
    deltas = []
    for j, k in enumerate(range(c, len(run.steps))):
        w = (reads[j] * 0.1 + (without[j] - reads[j]) * 1.25 + outputs[k] * 10) / M
        actual = (with_reads[j] * 0.1 + (views[k] - with_reads[j]) * 1.25 + outputs[k] * 10) / M
        deltas.append(w - actual)
    [account] = cost.compactions
    assert account.step == c and account.horizon_steps == 3
    assert account.saved_tokens == sum(without) - sum(views[c:])
    assert math.isclose(account.net_dollars, sum(deltas) - summarizer, abs_tol=1e-12)
    new_at_c = h2  # the only message that was new anyway
    assert account.cache_miss_tokens == views[c] - system - new_at_c
    assert math.isclose(account.cache_miss_dollars, account.cache_miss_tokens * 1.25 / M, abs_tol=1e-12)
    assert math.isclose(account.saved_dollars, sum(deltas) + account.cache_miss_dollars, abs_tol=1e-12)
    running, paid = -summarizer, None
    for n, d in enumerate(deltas, start=1):
        running += d
        if paid is None and running >= 0:
            paid = n
    assert account.paid_back_after == paid == paid_back
    assert "paid back" in account.headline or "never paid back" in account.headline


def test_recorded_usage_is_priced_on_the_as_recorded_run_only() -> None:
    thread = _thread()
    thread.usage = {"a1": RecordedUsage(input_tokens=3, cache_creation_input_tokens=2000, cache_read_input_tokens=500,
                                        cache_creation_5m_tokens=1500, cache_creation_1h_tokens=500, output_tokens=40)}
    cost = run_cost(_run(thread))
    first = cost.steps[0]
    out = first.output_tokens
    assert first.recorded is not None and first.recorded["cache_read"] == 500
    dollars = (3 * 1 + 500 * 0.1 + 1500 * 1.25 + 500 * 2 + out * 10) / M
    assert first.recorded_bill is not None and math.isclose(first.recorded_bill.total, dollars, abs_tol=1e-12)
    what_if = run_cost(replay(thread, preset("stress").with_overrides(PRICES)))
    assert what_if.steps[0].recorded is None and "recorded_dollars" not in what_if.totals()


def test_the_price_table_is_dated_sourced_and_matched_by_longest_prefix() -> None:
    assert table_checked() == "2026-12-01"
    assert all(row.source and row.input > 0 for row in price_table())
    opus = price_for("anthropic/claude-opus-4-6")
    assert opus is not None and (opus.input, opus.cache_read, opus.cache_write_5m, opus.cache_write_1h, opus.output) == (
        5, 0.5, 6.25, 10, 25)
    assert opus.min_cache_tokens == 4096 and opus.cache == "anthropic"
    old = price_for("claude-opus-4-20250514")
    assert old is not None and old.prefix == "claude-opus-4" and old.input == 15
    mini = price_for("openai:gpt-4o-mini-2024-07-18")
    assert mini is not None and mini.prefix == "gpt-4o-mini" and mini.cache_write_5m == mini.input
    assert price_for("mistral/mistral-small-latest") is None
    # a config row wins, and its missing cache prices follow the provider's multipliers
    own = price_for("claude-opus-4-6", overrides=[{"prefix": "claude-opus", "input": 2, "output": 4}])
    assert own is not None and (own.cache_read, own.cache_write_5m, own.cache_write_1h) == (0.2, 2.5, 4.0)


def test_an_unpriced_model_still_gets_its_cache_use_with_zero_dollars() -> None:
    thread = _thread()
    thread.model = "mistral-small"
    cost = run_cost(replay(thread, preset("as-recorded")))
    assert cost.price is None and cost.rules.kind == "none"
    assert all(s.cache.uncached == s.cache.total and s.bill.total == 0 for s in cost.steps)


def test_ctxi_replay_json_carries_the_cost(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    import json

    from engine.cli.ctxi import main
    from engine.formats.native import dumps

    path = tmp_path / "t.json"
    thread = _thread(compaction=True, file_lines=4000)
    path.write_text(dumps(thread), encoding="utf-8")
    out = tmp_path / "r.json"
    assert main(["replay", str(path), "--preset", "as-recorded", "--set", PRICES[0], "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "cost         $" in printed and "paid back after 2 steps" in printed
    report = json.loads(out.read_text(encoding="utf-8"))
    cost = report["cost"]
    expected = run_cost(_run(_thread(compaction=True, file_lines=4000))).to_dict()
    assert cost["totals"] == expected["totals"]
    assert [s["step"] for s in cost["steps"]] == [s["index"] for s in report["steps"]]
    assert cost["compactions"][0]["paid_back_after"] == 2 and cost["summarizer_calls"][0]["style"] == "fork"
    assert cost["cache"] == {"provider": "anthropic", "ttl": "5m", "min_tokens": 1024, "prompt_prefix_tokens": None,
                             "timed": False}


def test_an_unpriced_compaction_reports_tokens_and_never_claims_to_pay_back() -> None:
    thread = _thread(compaction=True, file_lines=4000)
    thread.model = "mistral-small"
    [account] = run_cost(replay(thread, preset("as-recorded"))).compactions
    assert not account.priced and account.paid_back_after is None and account.saved_tokens > 0
    assert "no price for this model" in account.headline


def test_summarizer_inputs_of_a_view_mode_run_match_the_summarized_messages_counted_once() -> None:
    # View mode never trims the state and a tiny trigger summarizes at almost every step: each
    # summarizer call is priced from an index of the state, grown once, not a rescan per call.
    # Checked against the rule written plainly: every removed id counted once, as its first
    # occurrence in the previous step's state, then in what the thread added before the call.
    from langchain.agents.middleware.summarization import DEFAULT_SUMMARY_PROMPT

    from engine.cost.payback import history_before
    from engine.thread.synthetic import synthetic_thread

    thread = synthetic_thread(60, seed=3)
    run = replay(thread, preset("deepagents").with_overrides(
        [*PRICES, "summarization.trigger=messages:6", "summarization.keep=messages:2"]))
    calls = [c for c in run_cost(run).summarizer_calls if c.style == "separate"]
    expected = []
    for step in run.steps:
        for event in step.events:
            if (event.layer, event.kind) != ("summarization", "summarize"):
                continue
            removed = set(event.payload["removed_ids"])
            pool = [*(run.steps[step.index - 1].state if step.index else ()), *history_before(run, step, event)]
            first = {}
            for m in pool:
                if m.id in removed:
                    first.setdefault(m.id, m)
            tokens = sum(run.counter.count_message(m) for m in first.values())
            trim = run.config.summarization.trim_tokens_to_summarize
            tokens = tokens if trim is None else min(tokens, trim)
            expected.append(tokens + run.counter.count_text(run.config.summarization.summary_prompt or DEFAULT_SUMMARY_PROMPT))
    assert len(calls) == len(expected) > 20
    assert [c.input_tokens for c in calls] == expected


def test_a_recorded_summarizer_call_is_priced_as_recorded_in_its_payback() -> None:
    """A compaction call the source recorded (Claude Code's agent-acompact file) costs what its usage says:
    the call's dollars, its compaction's summarizer share and net use the recorded bill (issue 35: the
    account used the modelled figure, $0.993 against $0.873 recorded on a real session)."""
    thread = _thread(compaction=True, file_lines=4000)
    thread.usage = {"a1": RecordedUsage(input_tokens=3, cache_creation_input_tokens=2000, output_tokens=40)}
    # all but 10 of the call's input read from the cache: far cheaper than the modelled fork
    thread.extra["compaction_calls"] = [{"thread": {"usage": {"acompact-1": {
        "input_tokens": 10, "cache_read_input_tokens": 30_000, "cache_creation_input_tokens": 0, "output_tokens": 40}}}}]
    cost = run_cost(_run(thread))
    [call] = cost.summarizer_calls
    assert call.recorded_bill is not None
    recorded = (10 * 1 + 30_000 * 0.1 + call.output_tokens * 10) / M
    assert math.isclose(call.recorded_bill.total, recorded, abs_tol=1e-12)
    assert call.dollars == call.recorded_bill.total != call.bill.total
    [account] = cost.compactions
    assert account.summarizer_dollars == call.recorded_bill.total
    assert math.isclose(account.net_dollars, account.saved_dollars - account.cache_miss_dollars - call.recorded_bill.total,
                        abs_tol=1e-12)
    totals = cost.totals()
    assert totals["summarizer_billed_dollars"] == round(call.recorded_bill.total, 6)
    assert totals["summarizer_dollars"] == round(call.bill.total, 6)  # the modelled total stays modelled
    assert call.to_dict()["priced_as"] == "recorded"
