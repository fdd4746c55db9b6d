"""What a compaction cost in the prompt cache, one figure on every screen, and a run without a cache said so.

The walk-through found two cache costs for one compaction on one screen (Claude Code session fa812bfe…, step 126):
the net and the Summaries table charged $0.07 (10,519 tokens written again), the Evals "why the cache missed"
section $0.84 (145,791 unread tokens priced as written again, though the compaction never sent them again). And
on the landing sample, whose cost model runs no prompt cache, "0 tokens … (no miss)" and "$0.00" for an
unpriced re-fetch. The rules: engine.evals.account_rows (WRITTEN_AGAIN), engine.cost.views.cache_off_note.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cli.ctxi import main
from engine.config.schema import preset
from engine.cost.run_cost import run_cost
from engine.cost.views import NOT_MODELLED, account_at, cache_off_note, dollars, miss_text
from engine.cost.views import compaction_rows as cost_compaction_rows
from engine.evals.account import compaction_accounts
from engine.evals.account_rows import (
    WRITTEN_AGAIN,
    account_metrics,
    cache_line,
    cause_rows,
    compaction_rows,
    misses_by_cause,
    refetch_rows,
)
from engine.formats.native import dumps
from engine.run.replay import replay
from tests.conftest import TRACES
from tests.evals.forensics_threads import coding_thread

PRICES = ("cost.prices=[{prefix: claude-sonnet-4-5, input: 1, output: 10, cache_read: 0.1, cache_write_5m: 1.25, "
          "cache_write_1h: 2}]")
SESSION = TRACES / "claude-code" / "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"


def _run(*extra: str):  # noqa: ANN202
    return replay(coding_thread(), preset("as-recorded").with_overrides(["tokens.counter=approximate", PRICES, *extra]))


def test_a_compactions_cache_cost_is_what_it_wrote_again_on_every_row() -> None:
    run = _run()
    [a] = compaction_accounts(run)
    cost = run_cost(run)
    payback = account_at(cost, a.step)
    assert payback is not None
    c = a.cache
    # two quantities: the cached history it replaced (not sent again) and what it sent in its place
    assert (c["cause"], c["lost_tokens"], c["write_tokens"]) == ("compaction", 692, 36)
    assert c["write_tokens"] == payback.cache_miss_tokens and c["write_dollars"] == round(payback.cache_miss_dollars, 6)
    # the net the headline says charges the write, not the unread tokens' price
    assert payback.net_dollars == pytest.approx(payback.saved_dollars - payback.cache_miss_dollars
                                                - payback.summarizer_dollars)
    # Evals › why the cache missed: the same tokens and dollars, beside the count of tokens not read
    assert misses_by_cause(cost) == {"compaction": {"steps": 1, "tokens_not_read": 692, "tokens_written_again": 36,
                                                    "dollars": round(payback.cache_miss_dollars, 6)}}
    assert cause_rows(cost) == [{"cause": "compaction", "steps": 1, "tokens not read": 692, "tokens written again": 36,
                                 "dollars": dollars(payback.cache_miss_dollars)}]
    # the engine's own per-cause aggregate charges the same (Compare, sweeps: tests/engine/test_compaction_cache_aggregates.py)
    assert cost.totals()["lost_by_cause"]["compaction"]["dollars"] == misses_by_cause(cost)["compaction"]["dollars"]
    # Layers › Summaries: the table above the card and the card's metric agree
    [table_row] = cost_compaction_rows(cost)
    metrics = account_metrics(a, priced=True)
    assert metrics[WRITTEN_AGAIN] == "36" == f"{table_row['cache miss tokens']:,}"
    assert "cache broken (tokens)" not in metrics
    assert table_row["cache misses"] == dollars(payback.cache_miss_dollars)
    assert cache_line(a, priced=True) == (
        f"36 tokens written to the cache again ({dollars(payback.cache_miss_dollars)}): what it sent in place of the "
        "history it rewrote, the cache misses in its net; 692 tokens the previous call had cached were not read "
        "(recorded.compaction): the history it rewrote, of which only what it sent in its place (above) was "
        "written again.")
    # Evals › After each compaction
    [row] = compaction_rows([a], priced=True)
    assert row["cache written again"] == 36 and "cache broken" not in row
    # Step page: the unread tokens are not priced as a rewrite
    why = miss_text(cost.steps[a.step], payback)
    assert why == ("692 of the 3,097 tokens the previous call cached were not read: a compaction rewrote the history "
                   f"(recorded.compaction); it wrote 36 tokens to the cache in their place "
                   f"({dollars(payback.cache_miss_dollars)}, the cache misses in its net)")
    assert "to write again" not in (miss_text(cost.steps[a.step]) or "")


def test_a_compaction_priced_without_its_account_is_still_charged_its_accounts_figure() -> None:
    run = _run()
    with_accounts = misses_by_cause(run_cost(run))
    run.derived.pop("cost")  # engine.cost.run_cost.COST_KEY: priced again, without the accounts
    cost = run_cost(run, accounts=False)
    assert not cost.accounted
    assert misses_by_cause(cost)["compaction"] == with_accounts["compaction"] == {
        "steps": 1, "tokens_not_read": 692, "tokens_written_again": 36, "dollars": with_accounts["compaction"]["dollars"]}


def test_a_ttl_miss_still_writes_its_unread_tokens_again() -> None:
    thread = coding_thread()
    ids = [m.id for m in thread.messages if m.id]
    thread.timestamps = {mid: f"2026-02-12T10:{2 * i:02d}:00Z" if i < 3 else f"2026-02-12T11:{i:02d}:00Z"
                         for i, mid in enumerate(ids)}
    cost = run_cost(replay(thread, preset("as-recorded").with_overrides(
        ["tokens.counter=approximate", PRICES, "recorded.compactions=false"])))
    ttl = [s for s in cost.steps if s.cause == "ttl"]
    assert ttl, [s.cause for s in cost.steps]
    row = misses_by_cause(cost)["ttl"]
    lost = sum(s.cache.lost for s in ttl)
    assert row["tokens_not_read"] == row["tokens_written_again"] == lost
    assert row["dollars"] == round(sum(s.unread_dollars for s in ttl), 6)


def test_a_run_without_a_prompt_cache_says_so_instead_of_no_miss() -> None:
    run = _run("cost.model=a-model-nobody-prices")
    cost = run_cost(run)
    assert cost.price is None and cost.rules.kind == "none"
    note = cache_off_note(cost)
    assert note is not None and note.startswith("The prompt cache is not modelled for this run (cost.cache is none, "
                                                "or auto for a-model-nobody-prices, which has no price row)")
    assert "cost.cache to anthropic or openai" in note and "cost.model" in note
    [a] = compaction_accounts(run)
    assert cache_line(a, priced=False, cache_off=note) == note
    assert account_metrics(a, priced=False, cache_modelled=False)[WRITTEN_AGAIN] == NOT_MODELLED
    assert compaction_rows([a], priced=False, cache_modelled=False)[0]["cache written again"] == NOT_MODELLED
    [row] = cost_compaction_rows(cost)
    assert (row["cache misses"], row["cache miss tokens"]) == ("-", NOT_MODELLED)  # unpriced: "-"; no cache: said
    assert cause_rows(cost) == []
    # a priced model with the cache turned off: its cache cells are not "$0.00" either
    off = run_cost(_run("cost.cache=none"))
    assert off.price is not None and cache_off_note(off) is not None and "names no cache" in cache_off_note(off)
    [row] = cost_compaction_rows(off)
    assert (row["cache misses"], row["cache miss tokens"]) == (NOT_MODELLED, NOT_MODELLED)
    assert cache_off_note(run_cost(_run())) is None


def test_an_unpriced_refetch_costs_dash_not_zero_dollars() -> None:
    run = _run("cost.model=a-model-nobody-prices")
    [a] = compaction_accounts(run)
    rows = refetch_rows(a.recovery, priced=False)
    assert len(rows) == a.recovery.calls == 2
    assert [r["dollars"] for r in rows] == ["-", "-"]
    assert [r["dollars"] for r in refetch_rows(a.recovery)] == [dollars(x.dollars) for x in a.recovery.refetches]


@pytest.fixture()
def thread_file(tmp_path: Path) -> str:
    path = tmp_path / "coding.json"
    path.write_text(dumps(coding_thread()), encoding="utf-8")
    return str(path)


def test_the_cli_prints_the_same_cache_cost_and_says_when_there_is_no_cache(
        thread_file: str, capsys: pytest.CaptureFixture[str]) -> None:
    sets = ["--set", "tokens.counter=approximate", "--set", PRICES]
    cost = run_cost(_run())
    write = dollars(cost.compactions[0].cache_miss_dollars)
    assert main(["eval", "survival", thread_file, *sets]) == 0
    out = capsys.readouterr().out
    assert (f"  cache misses 36 tokens written again, {write}; 692 cached tokens not read (compaction: replaced, "
            "not sent again)") in out
    assert main(["eval", "cache", thread_file, *sets]) == 0
    assert f"  compaction  1 step, 692 tokens not read, 36 written again, {write}" in capsys.readouterr().out
    assert main(["eval", "cache", thread_file, *sets, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["misses_by_cause"] == misses_by_cause(cost) and doc["cache_modelled"] is True
    unpriced = [*sets, "--set", "cost.model=a-model-nobody-prices"]
    assert main(["eval", "survival", thread_file, *unpriced]) == 0
    out = capsys.readouterr().out
    assert "cache        The prompt cache is not modelled for this run" in out and "$0.00" not in out
    assert main(["eval", "cache", thread_file, *unpriced]) == 0
    out = capsys.readouterr().out
    assert "The prompt cache is not modelled for this run" in out and "$0.00" not in out


@pytest.mark.skipif(not SESSION.exists(), reason="../shared/traces is absent")
def test_the_real_session_charges_its_compaction_one_cache_cost(capsys: pytest.CaptureFixture[str]) -> None:
    """Claude Code session fa812bfe…, as recorded: its compaction at step 126 wrote 10,519 tokens again (Claude Code
    recorded 10,516 written) and left 145,791 cached tokens unread; $0.07 in the net, and now in every row."""
    from engine.config.presets import default_preset_name
    from engine.formats import load_thread

    thread = load_thread(SESSION)
    run = replay(thread, preset(default_preset_name(thread)))
    [a] = compaction_accounts(run)
    cost = run_cost(run)
    assert a.step == 126 and (a.cache["lost_tokens"], a.cache["write_tokens"]) == (145_791, 10_519)
    assert cost.steps[126].recorded is not None and cost.steps[126].recorded["cache_write"] == 10_516
    assert a.headline.startswith("The compaction at step 126 saved $1.83 net")
    [row] = cause_rows(cost)
    assert row == {"cause": "compaction", "steps": 1, "tokens not read": 145_791, "tokens written again": 10_519,
                   "dollars": "$0.07"}
    line = cache_line(a, priced=True)
    assert line.startswith("10,519 tokens written to the cache again ($0.07)") and "145,791 tokens" in line
    assert "$0.84" not in line and account_metrics(a, priced=True)[WRITTEN_AGAIN] == "10,519"
    assert cost_compaction_rows(cost)[0]["cache misses"] == "$0.07"
    assert main(["eval", "cache", str(SESSION)]) == 0
    out = capsys.readouterr().out
    assert "compaction  1 step, 145,791 tokens not read, 10,519 written again, $0.07" in out and "$0.84" not in out
