"""The compaction's cache cost and a run without a prompt cache, as Layers › Summaries and Evals › Compaction
survival show them (the walk-through's three defects: two cache costs for one compaction on one screen; "$0.00"
for an unpriced re-fetch; "no miss" where the landing sample models no cache). Engine side:
tests/evals/test_compaction_cache_cost.py."""

from __future__ import annotations

import re
from pathlib import Path

from engine.cost.run_cost import run_cost
from engine.cost.views import NOT_MODELLED, dollars
from engine.evals.account import compaction_accounts
from engine.evals.account_rows import WRITTEN_AGAIN
from engine.run.replay import replay
from tests.ui.builders import demo_thread

ROOT = Path(__file__).resolve().parents[2]
PRICED = {"preset": "stress", "cost.model": "claude-sonnet-4-5"}
NOTE = "The prompt cache is not modelled for this run"


def plain(elements) -> str:  # noqa: ANN001
    return " ".join(re.sub(r"\\(.)", r"\1", e.value) for e in elements)


def frames(at) -> list[list[dict]]:  # noqa: ANN001
    return [f.value.to_dict(orient="records") for f in at.dataframe]


def test_the_landing_samples_cache_is_said_not_modelled_and_its_refetch_unpriced(start, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("CTXI_SAMPLES_DIR", str(ROOT / "sample_threads"))
    at = start("pages/layers.py")
    at.session_state["tab"] = "Summaries"
    at.run()
    assert not at.exception, at.exception
    metric = {m.label: m.value for m in at.metric}
    assert metric[WRITTEN_AGAIN] == NOT_MODELLED
    [broke] = [plain([m]) for m in at.markdown if m.value.startswith("**The cache it broke**")]
    assert broke.startswith(f"**The cache it broke** · {NOTE}") and "(no miss)" not in broke and "0 tokens" not in broke
    [summaries] = [rows for rows in frames(at) if rows and "cache miss tokens" in rows[0]]
    assert [r["cache miss tokens"] for r in summaries] == [NOT_MODELLED, NOT_MODELLED]
    [refetches] = [rows for rows in frames(at) if rows and "fetched before at step" in rows[0]]
    assert refetches and [r["dollars"] for r in refetches] == ["-"] * len(refetches)  # unknown, not $0.00
    at.switch_page("pages/evals.py").run()
    at.session_state["tab"] = "Compaction survival"
    at.run()
    assert not at.exception, at.exception
    captions = plain(at.caption)
    assert NOTE in captions and "No step lost what the previous one cached." not in captions
    [after] = [rows for rows in frames(at) if rows and "re-fetches" in rows[0] and "facts kept" in rows[0]]
    assert [r["cache written again"] for r in after] == [NOT_MODELLED, NOT_MODELLED]


def test_one_cache_cost_per_compaction_on_the_card_and_in_why_the_cache_missed(start) -> None:  # noqa: ANN001
    at = start("pages/layers.py", **PRICED)
    at.session_state["tab"] = "Summaries"
    at.run()
    assert not at.exception, at.exception
    run = replay(demo_thread(), at.session_state["config"])
    accounts = compaction_accounts(run)
    cost = run_cost(run)
    first = accounts[0]
    write, lost = first.cache["write_tokens"], first.cache["lost_tokens"]
    assert write and lost and write != lost  # two quantities, each under its own label
    metric = {m.label: m.value for m in at.metric}
    assert metric[WRITTEN_AGAIN] == f"{write:,}" and "cache broken (tokens)" not in metric
    text = plain(at.markdown)
    assert (f"**The cache it broke** · {write:,} tokens written to the cache again ({dollars(first.cache['write_dollars'])})"
            in text)
    assert f"{lost:,} tokens the previous call had cached were not read" in text
    assert dollars(first.cache["lost_dollars"]) not in text  # the unread history is not priced as a rewrite
    [summaries] = [rows for rows in frames(at) if rows and "cache miss tokens" in rows[0]]
    assert summaries[0]["cache miss tokens"] == write and summaries[0]["cache misses"] == dollars(
        first.cache["write_dollars"])
    at.switch_page("pages/evals.py").run()
    at.session_state["tab"] = "Compaction survival"
    at.run()
    assert not at.exception, at.exception
    [causes] = [rows for rows in frames(at) if rows and "cause" in rows[0] and "tokens not read" in rows[0]]
    [row] = [r for r in causes if r["cause"] == "compaction"]
    assert row["tokens not read"] == sum(a.cache["lost_tokens"] for a in accounts)
    assert row["tokens written again"] == sum(c.cache_miss_tokens for c in cost.compactions)
    assert row["dollars"] == dollars(sum(c.cache_miss_dollars for c in cost.compactions))
    [after] = [rows for rows in frames(at) if rows and "re-fetches" in rows[0] and "facts kept" in rows[0]]
    assert [r["cache written again"] for r in after] == [a.cache["write_tokens"] for a in accounts]
