"""The aggregates charge a compaction what its per-compaction views charge it (issue 33, the aggregates' half).

A compaction's cost in the prompt cache is what it made the cache write again (engine.cost.payback's
`cache_miss_tokens` / `_dollars`: its card, its net, the Summaries table, Evals' "why the cache missed"). The
aggregates — engine.cost.run_cost's `lost_by_cause`, the sweep's `cache_lost_dollars`, Compare's "cache misses $",
the forensics summary's "cache misses dollars" — priced its unread history at (write − read) instead, as for a TTL
expiry: Claude Code session fa812bfe…, step 126, "$0.07, 10,519 tokens" on the card and "145,791 tokens not read,
$0.84" in the aggregates. The unread history is never sent again; a TTL expiry's is, and keeps its price.
"""

from __future__ import annotations

import pytest

from engine.config.schema import preset
from engine.cost.misses import lost_price_per_token
from engine.cost.run_cost import run_cost
from engine.evals.account import compaction_accounts, forensics_summary
from engine.evals.account_rows import misses_by_cause
from engine.evals.policy_compare import compare_policies
from engine.evals.sweep import aggregate, run_metrics
from engine.run.replay import replay
from tests.conftest import TRACES
from tests.evals.forensics_threads import coding_thread

PRICES = ("cost.prices=[{prefix: claude-sonnet-4-5, input: 1, output: 10, cache_read: 0.1, cache_write_5m: 1.25, "
          "cache_write_1h: 2}]")
SESSION = TRACES / "claude-code" / "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
PAUSES = TRACES / "claude-code" / "4d5611e5-241a-462a-8d15-5122611a9569.jsonl"


def _run(*extra: str):  # noqa: ANN202
    return replay(coding_thread(), preset("as-recorded").with_overrides(["tokens.counter=approximate", PRICES, *extra]))


def _fresh(run, *, accounts: bool):  # noqa: ANN001, ANN202
    run.derived.pop("cost", None)  # engine.cost.run_cost.COST_KEY: price it again, this way
    return run_cost(run, accounts=accounts)


def test_every_aggregate_charges_the_compaction_what_its_card_does() -> None:
    run = _run()
    [a] = compaction_accounts(run)
    write_tokens, write_dollars = a.cache["write_tokens"], a.cache["write_dollars"]
    assert (a.cache["cause"], a.cache["lost_tokens"], write_tokens) == ("compaction", 692, 36)
    assert write_dollars == pytest.approx(36 * 1.25 / 1e6, abs=1e-6)
    unread_price = a.cache["lost_dollars"]  # 692 tokens at (write − read): what the aggregates used to charge
    assert unread_price == pytest.approx(692 * (1.25 - 0.1) / 1e6, abs=1e-6) and unread_price != write_dollars
    for accounts in (True, False):  # sweeps and Compare price without the accounts: the same figure
        cost = _fresh(run, accounts=accounts)
        assert cost.totals()["lost_by_cause"] == {
            "compaction": {"steps": 1, "tokens": 692, "tokens_written_again": 36, "dollars": write_dollars}}
        assert misses_by_cause(cost) == {"compaction": {"steps": 1, "tokens_not_read": 692, "tokens_written_again": 36,
                                                        "dollars": write_dollars}}
        step = cost.steps[a.step]
        assert (step.charged_as, step.miss_tokens, step.miss_dollars) == ("compaction", 36, pytest.approx(write_dollars))
        assert step.unread_dollars == pytest.approx(unread_price, abs=1e-6)  # the unread tokens' price, kept as such, not charged
        assert cost.to_dict()["steps"][a.step]["miss_dollars"] == write_dollars
    m = run_metrics(run)
    assert (m["cache_lost_dollars"], m["cache_lost_tokens"], m["cache_written_again_tokens"]) == (
        write_dollars, {"compaction": 692}, {"compaction": 36})
    assert aggregate([m, m])["cache_lost_dollars"] == round(2 * write_dollars, 6)
    assert aggregate([m, m])["cache_written_again_tokens"] == {"compaction": 72}
    assert forensics_summary(run)["cache misses dollars"] == write_dollars
    [row] = compare_policies({}, run)
    assert row["cache misses $"] == write_dollars


def _sums_agree(run) -> None:  # noqa: ANN001
    """The per-compaction views' figures, summed, are the aggregates' compaction row, with or without the accounts."""
    cost = _fresh(run, accounts=True)
    per_compaction = sum(c.cache_miss_dollars for c in cost.compactions)
    per_compaction_tokens = sum(c.cache_miss_tokens for c in cost.compactions)
    assert per_compaction > 0
    for accounts in (True, False):
        cost = _fresh(run, accounts=accounts)
        lost = cost.totals()["lost_by_cause"]
        assert lost["compaction"]["dollars"] == pytest.approx(per_compaction, abs=1e-6)
        assert lost["compaction"]["tokens_written_again"] == per_compaction_tokens
        assert lost["compaction"]["steps"] == sum(1 for s in cost.steps if s.charged_as == "compaction")
        others = sum(v["dollars"] for c, v in lost.items() if c != "compaction")
        assert run_metrics(run)["cache_lost_dollars"] == pytest.approx(per_compaction + others, abs=1e-5)


def test_the_sum_over_many_compactions_is_the_aggregates_compaction_row() -> None:
    from engine.lessons.coding_session import coding_session_thread

    config = preset("deepagents").with_overrides(["tokens.counter=approximate", "cost.model=claude-sonnet-4-5",
                                                  PRICES, "summarization.trigger=tokens:6000"])
    run = replay(coding_session_thread(), config)
    assert len(compaction_accounts(run)) >= 40
    _sums_agree(run)


@pytest.mark.skipif(not SESSION.exists(), reason="../shared/traces is absent")
def test_a_compaction_that_read_the_whole_prefix_is_charged_its_summary_too() -> None:
    """fa812bfe… under Deep Agents with a 20k trigger: 120 compaction steps, 79 of which read everything the
    previous call cached (no miss) yet made the cache write their summary; their accounts charge it, so do the
    aggregates (before: only the 41 that missed, each at its unread history's price)."""
    from engine.formats import load_thread

    run = replay(load_thread(SESSION), preset("deepagents").with_overrides(["summarization.trigger=tokens:20000"]))
    cost = _fresh(run, accounts=False)
    quiet = [s for s in cost.steps if s.charged_as == "compaction" and s.cause is None]
    assert quiet and all(s.cache.lost == 0 and s.miss_tokens for s in quiet)
    _sums_agree(run)


def test_a_ttl_expiry_is_still_its_unread_tokens_written_again() -> None:
    thread = coding_thread()
    ids = [m.id for m in thread.messages if m.id]
    thread.timestamps = {mid: f"2026-02-12T10:{2 * i:02d}:00Z" if i < 3 else f"2026-02-12T11:{i:02d}:00Z"
                         for i, mid in enumerate(ids)}
    run = replay(thread, preset("as-recorded").with_overrides(
        ["tokens.counter=approximate", PRICES, "recorded.compactions=false"]))
    for accounts in (True, False):
        cost = _fresh(run, accounts=accounts)
        ttl = [s for s in cost.steps if s.cause == "ttl"]
        assert ttl and not cost.compactions
        lost = sum(s.cache.lost for s in ttl)
        per_token = lost_price_per_token(cost.price, cost.rules)
        assert per_token == pytest.approx((1.25 - 0.1) / 1e6)
        assert cost.totals()["lost_by_cause"]["ttl"] == {"steps": len(ttl), "tokens": lost, "tokens_written_again": lost,
                                                         "dollars": round(lost * per_token, 6)}
    assert run_metrics(run)["cache_lost_dollars"] == round(lost * per_token, 6)


def _as_recorded(path):  # noqa: ANN001, ANN202
    from engine.config.presets import default_preset_name
    from engine.formats import load_thread

    thread = load_thread(path)
    return replay(thread, preset(default_preset_name(thread)))


@pytest.mark.skipif(not SESSION.exists(), reason="../shared/traces is absent")
def test_the_real_sessions_aggregates_say_what_its_card_says() -> None:
    """fa812bfe…, as recorded: the card's $0.07 (10,519 tokens written again), not $0.84 for 145,791 unread."""
    run = _as_recorded(SESSION)
    [a] = compaction_accounts(run)
    assert (a.step, a.cache["write_tokens"], a.cache["write_dollars"]) == (126, 10_519, 0.065744)
    assert a.cache["lost_tokens"] == 145_791 and a.cache["lost_dollars"] == 0.838298  # the old aggregate
    for accounts in (True, False):
        assert _fresh(run, accounts=accounts).totals()["lost_by_cause"] == {
            "compaction": {"steps": 1, "tokens": 145_791, "tokens_written_again": 10_519, "dollars": 0.065744}}
    assert run_metrics(run)["cache_lost_dollars"] == 0.065744
    assert forensics_summary(run)["cache misses dollars"] == 0.065744


@pytest.mark.skipif(not PAUSES.exists(), reason="../shared/traces is absent")
def test_a_real_session_with_a_compaction_and_two_pauses() -> None:
    """4d5611e5…, as recorded: its compaction at step 61 is charged its account's 14,603 tokens; its two long
    pauses (TTL expiries) keep their price, the unread tokens at (write − read)."""
    run = _as_recorded(PAUSES)
    cost = _fresh(run, accounts=True)
    [c] = cost.compactions
    lost = cost.totals()["lost_by_cause"]
    assert lost["compaction"] == {"steps": 1, "tokens": 149_403, "tokens_written_again": c.cache_miss_tokens,
                                  "dollars": round(c.cache_miss_dollars, 6)}
    assert (c.step, c.cache_miss_tokens) == (61, 14_603)
    ttl = [s for s in cost.steps if s.cause == "ttl"]
    assert lost["ttl"] == {"steps": 2, "tokens": 164_821, "tokens_written_again": 164_821,
                           "dollars": round(sum(s.cache.lost for s in ttl) * lost_price_per_token(cost.price, cost.rules), 6)}
    assert run_metrics(run)["cache_lost_dollars"] == round(lost["compaction"]["dollars"] + lost["ttl"]["dollars"], 6)
