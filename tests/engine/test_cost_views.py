"""What the cost sections of the pages show, checked against a hand computation on a small thread."""

from __future__ import annotations

import math

from engine import preset, replay
from engine.cost.run_cost import run_cost
from engine.cost.views import (
    account_at,
    compaction_rows,
    compare_cost_rows,
    cost_series,
    dollars,
    miss_text,
    output_note,
    paid_back,
    paid_back_sentence,
    pricing_note,
    recorded_ttl_split,
    step_bill_rows,
)
from engine.thread.model import RecordedUsage
from tests.engine.test_cost import _run, _thread

M = 1_000_000


def test_a_steps_bill_lists_each_kind_of_token_at_its_price() -> None:
    run = _run(_thread())
    cost = run_cost(run)
    views = [s.view_tokens for s in run.steps]
    out = run.counter.count_message(run.steps[1].response)
    rows = step_bill_rows(cost, 1)
    # step 1 reads step 0's whole request and writes what it added (the hand-made prices: 1 / 0.1 / 1.25 / 10)
    assert [(r["kind"], r["tokens"], r["$ per M tokens"]) for r in rows] == [
        ("uncached input", 0, "1"), ("cache read", views[0], "0.1"), ("cache write (5m)", views[1] - views[0], "1.25"),
        ("output", out, "10"), ("total", views[1] + out, "")]
    expected = (views[0] * 0.1 + (views[1] - views[0]) * 1.25 + out * 10) / M
    assert rows[-1]["dollars"] == dollars(expected)
    assert "recorded tokens" not in rows[0]  # nothing recorded


def test_an_unpriced_models_bill_has_tokens_and_no_dollars() -> None:
    run = replay(_thread(), preset("as-recorded").with_overrides(["model.name=a-model-nobody-prices"]))
    cost = run_cost(run)
    assert cost.price is None
    rows = step_bill_rows(cost, 1)
    assert [r["dollars"] for r in rows] == ["-"] * 5  # unknown, not $0.000000
    assert rows[-1]["tokens"] == run.steps[1].view_tokens + run.counter.count_message(run.steps[1].response)


def test_the_recorded_usage_sits_beside_the_modelled_bill() -> None:
    thread = _thread()
    thread.usage = {"a1": RecordedUsage(input_tokens=3, cache_creation_input_tokens=2000, cache_read_input_tokens=500,
                                        cache_creation_5m_tokens=1500, cache_creation_1h_tokens=500, output_tokens=40)}
    cost = run_cost(_run(thread))
    rows = step_bill_rows(cost, 0)
    out = cost.steps[0].output_tokens
    assert [r["recorded tokens"] for r in rows] == [3, 500, 2000, 40, 3 + 500 + 2000 + 40]
    assert rows[-1]["recorded dollars"] == dollars((3 + 50 + 1500 * 1.25 + 500 * 2 + out * 10) / M)
    assert recorded_ttl_split(cost.steps[0]) == "5m 1,500 · 1h 500"
    # our count of the response is above the recorded 40 (recorded before the response ended): both bills use it
    assert out > 40 and output_note(cost.steps[0]) == (
        f"output priced at {out:,} tokens, our count of the response, in both bills: the recorded 40 was written "
        "before the response ended")
    assert output_note(cost.steps[1]) is None  # nothing recorded there
    assert recorded_ttl_split(cost.steps[1]) is None


def test_each_compaction_row_says_when_it_paid_back() -> None:
    big = run_cost(_run(_thread(compaction=True, file_lines=4000)))
    small = run_cost(_run(_thread(compaction=True, file_lines=200)))
    [row] = compaction_rows(big)
    account = big.compactions[0]
    assert row["step"] == 2 and row["paid back"] == "after 2 steps" and row["steps compared"] == 3
    assert row["net"] == dollars(account.net_dollars) and row["cache miss tokens"] == account.cache_miss_tokens
    assert compaction_rows(small)[0]["paid back"] == "never (within 3 steps)"
    assert paid_back_sentence(account) == "paid back after 2 steps"
    assert paid_back_sentence(small.compactions[0]) == "never paid back (within 3 steps)"
    assert account_at(big, 2) is account and account_at(big, 1) is None
    # the step after the compaction says why it missed the cache
    why = miss_text(big.steps[2])
    assert why is not None and "a compaction rewrote the history" in why
    assert miss_text(big.steps[0]) == "first call: nothing cached yet in this conversation"
    assert miss_text(big.steps[1]) is None


def test_unpriced_compactions_never_claim_to_pay_back() -> None:
    thread = _thread(compaction=True, file_lines=4000)
    thread.model = "mistral-small"
    cost = run_cost(replay(thread, preset("as-recorded")))
    assert paid_back(cost.compactions[0]) == "unpriced"
    assert pricing_note(cost).startswith("no price for mistral-small")
    # no dollars either: unknown, not "$0.00" beside "unpriced"
    [row] = compaction_rows(cost)
    assert [row[k] for k in ("saved", "cache misses", "summarizer call", "net")] == ["-"] * 4


def test_the_series_accumulates_calls_and_summarizer_calls() -> None:
    cost = run_cost(_run(_thread(compaction=True, file_lines=4000)))
    s = cost_series(cost)
    [call] = cost.summarizer_calls
    assert s.summarizer == [0.0, 0.0, call.bill.total, 0.0, 0.0]
    running = 0.0
    for k, step in enumerate(cost.steps):
        running += s.summarizer[k] + s.input[k] + s.cache_read[k] + s.cache_write[k] + s.output[k]
        assert math.isclose(s.cumulative[k], running, abs_tol=1e-12)
        assert s.hit_rate[k] == step.cache.hit_rate
    assert s.recorded_cumulative == [None] * 5


def test_compare_rows_are_b_minus_a_in_dollars_and_cache_use() -> None:
    a = run_cost(_run(_thread(file_lines=4000)))
    b = run_cost(_run(_thread(compaction=True, file_lines=4000)))
    rows = {r["metric"]: r for r in compare_cost_rows(a, b)}
    ta, tb = a.totals(), b.totals()
    assert rows["dollars (calls + summarizer)"] == {"metric": "dollars (calls + summarizer)",
                                                    "A": dollars(ta["dollars"]), "B": dollars(tb["dollars"]),
                                                    "B − A": dollars(tb["dollars"] - ta["dollars"])}
    assert rows["summarizer calls"]["A"] == "$0.00" and rows["summarizer calls"]["B"] == dollars(b.summarizer_calls[0].bill.total)
    assert rows["cache read tokens"]["B − A"] == f"{tb['cache_read_tokens'] - ta['cache_read_tokens']:+,}"
    assert rows["compactions net"]["A"] == "$0.00" and rows["compactions net"]["B"] == dollars(b.compactions[0].net_dollars)


def test_dollars_read_one_way_cents_unless_below_a_cent() -> None:
    """One format everywhere (issue 35 found "net $-0.0062", "−$0.9863" and "$12.6147" on one page)."""
    assert [dollars(x) for x in (1234.56789, 12.6147, -0.9863, -0.0199, -0.0062, 0.000123, 0.00999, 0.0, None)] == [
        "$1,234.57", "$12.61", "−$0.99", "−$0.02", "−$0.0062", "$0.00012", "$0.01", "$0.00", "-"]


def test_the_price_note_names_the_row_the_cache_and_the_times() -> None:
    cost = run_cost(_run(_thread()))
    assert pricing_note(cost) == ("priced as claude-sonnet-4-5 (price table of 2026-12-01) · Anthropic prompt cache, "
                                  "5m TTL · no recorded times: every call taken as within the TTL")
    hour = run_cost(_run(_thread(), ["cost.cache_ttl=1h"]))
    assert "1h TTL" in pricing_note(hour) and step_bill_rows(hour, 1)[2]["kind"] == "cache write (1h)"
