"""The Step page's per-step cache-miss charges sum to the aggregates' totals by cause.

The aggregates (engine.cost.run_cost's `lost_by_cause`: the Timeline's Cost section, Compare's "cache misses by
cause", the sweep's `cache_lost_dollars`) charge a compaction step its account's cache misses — what it made the cache
write again — also at a step that read the whole cached prefix but wrote its summary. The Step page said nothing at
such a step, and at any compaction step gave no figure ("only what it sent in their place was written"), so the
Step page and the Timeline disagreed with no explanation. Here every step's text (engine.cost.views.miss_text, as
ui/cost_panel.step_bill calls it) is read back, its tokens and dollars summed per cause, and set against the
aggregates. And a compaction step whose requests first differ by a change of model is charged to the compaction
(its account's figure), not to the model at its unread history's price (engine.cost.run_cost, StepCost.charged_as).
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

import pytest
from langchain_core.messages import AIMessage

from engine.config.presets import default_preset_name
from engine.config.schema import preset
from engine.cost.misses import lost_price_per_token
from engine.cost.run_cost import RunCost, run_cost
from engine.cost.views import account_at, dollars, miss_text
from engine.evals.account import compaction_accounts
from engine.evals.account_rows import cache_line
from engine.formats import load_thread
from engine.run.replay import replay
from engine.thread.model import RecordedUsage
from tests.conftest import SAMPLES, TRACES

SAMPLE = SAMPLES / "long-refactor.json"
SAMPLE_CONFIG = ["cost.model=claude-sonnet-4-5", "summarization.trigger=tokens:6000"]
SESSION = TRACES / "claude-code" / "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
PAUSES = TRACES / "claude-code" / "4d5611e5-241a-462a-8d15-5122611a9569.jsonl"

# what a step's text says it is charged: a compaction's write, or the unread tokens written again
_WROTE = re.compile(r"it wrote ([\d,]+) tokens to the cache[^(]*\((\$[\d.,]+), the cache misses in its net\)")
_AGAIN = re.compile(r"^([\d,]+) of the [\d,]+ tokens the previous call cached were not read, (\$[\d.,]+) to write again")


def _fresh(run: Any, *, accounts: bool) -> RunCost:
    run.derived.pop("cost", None)  # engine.cost.run_cost.COST_KEY: price it again, this way
    return run_cost(run, accounts=accounts)


def _shown(cost: RunCost) -> dict[str, dict[str, Any]]:
    """Per cause, the steps, tokens written again and dollars the Step page's texts state (dollars as written)."""
    out: dict[str, dict[str, Any]] = defaultdict(lambda: {"steps": 0, "tokens_written_again": 0, "dollars": []})
    for s in cost.steps:
        text = miss_text(s, account_at(cost, s.step))  # as ui/cost_panel.step_bill shows it on the Step page
        charged = s.charged_as
        if charged is None:
            continue
        assert text is not None, f"step {s.step}: charged {s.miss_tokens:,} tokens under {charged}, but no text"
        found = (_WROTE.search(text) if charged == "compaction" else _AGAIN.search(text))
        assert found is not None, f"step {s.step} ({charged}): no charge in {text!r}"
        row = out[charged]
        row["steps"] += 1
        row["tokens_written_again"] += int(found.group(1).replace(",", ""))
        row["dollars"].append(found.group(2))
        assert found.group(2) == dollars(s.miss_dollars)  # the figure lost_by_cause sums, as money() writes it
    return dict(out)


def _agrees(cost: RunCost) -> dict[str, dict[str, Any]]:
    lost = cost.totals()["lost_by_cause"]
    shown = _shown(cost)
    assert set(shown) == set(lost)
    for cause, row in lost.items():
        assert shown[cause]["steps"] == row["steps"], cause
        assert shown[cause]["tokens_written_again"] == row["tokens_written_again"], cause
        # each step's dollars are written as money() writes them; their exact values sum to the aggregate
        exact = sum(s.miss_dollars or 0.0 for s in cost.steps if s.charged_as == cause)
        assert row["dollars"] == pytest.approx(exact, abs=1e-6)
    if cost.compactions:  # and the compaction row is the sum of the compactions' own accounts (their net's figure)
        assert lost["compaction"]["tokens_written_again"] == sum(c.cache_miss_tokens for c in cost.compactions)
        assert lost["compaction"]["dollars"] == pytest.approx(sum(c.cache_miss_dollars for c in cost.compactions),
                                                              abs=1e-6)
    return shown


def _sample_run(thread: Any = None) -> Any:
    return replay(thread or load_thread(SAMPLE), preset("deepagents").with_overrides(SAMPLE_CONFIG))


def test_the_step_pages_charges_sum_to_the_aggregates_on_a_sample_with_compactions() -> None:
    run = _sample_run()
    for accounts in (True, False):  # sweeps and Compare price without the accounts
        cost = _fresh(run, accounts=accounts)
        quiet = [s for s in cost.steps if s.cause is None and s.charged_as == "compaction"]
        assert quiet, "the sample has compaction steps that read the whole cached prefix"
        shown = _agrees(cost)
        assert shown["compaction"]["steps"] >= 50
        text = miss_text(quiet[0], account_at(cost, quiet[0].step))
        assert text is not None and "counted under compaction in the run's cache misses" in text


@pytest.mark.skipif(not SESSION.exists(), reason="../shared/traces is absent")
def test_the_step_pages_charges_sum_to_the_aggregates_on_a_real_claude_code_session() -> None:
    """fa812bfe… under Deep Agents with a 20k trigger (120 compaction steps, 79 that read everything cached), and
    4d5611e5… as recorded (a compaction and two TTL expiries, each priced at its unread tokens written again)."""
    run = replay(load_thread(SESSION), preset("deepagents").with_overrides(["summarization.trigger=tokens:20000"]))
    for accounts in (True, False):
        shown = _agrees(_fresh(run, accounts=accounts))
        assert shown["compaction"]["steps"] == 120
    if PAUSES.exists():
        thread = load_thread(PAUSES)
        run = replay(thread, preset(default_preset_name(thread)))
        shown = _agrees(_fresh(run, accounts=True))
        assert {c: v["steps"] for c, v in shown.items()} == {"compaction": 1, "ttl": 2}


def _model_changed_at_a_compaction() -> tuple[Any, int]:
    """The sample, its recorded model switched at its first compaction that rewrote the cached history."""
    cost = run_cost(_sample_run())
    c = next(s.step for s in cost.steps if s.cause == "compaction")
    thread = load_thread(SAMPLE)
    run = _sample_run(thread)
    cut = run.steps[c].message_id
    answers = [m for m in thread.messages if isinstance(m, AIMessage)]
    first = next(i for i, m in enumerate(answers) if m.id == cut)
    for m in answers[first:]:
        thread.usage[m.id] = RecordedUsage(model="claude-opus-4-1")
    return _sample_run(thread), c


def test_a_compaction_step_that_changed_the_model_too_is_charged_to_the_compaction() -> None:
    run, c = _model_changed_at_a_compaction()
    for accounts in (True, False):
        cost = _fresh(run, accounts=accounts)
        s = cost.steps[c]
        assert s.cause == "model" and s.cause_detail.endswith("→ claude-opus-4-1")  # the first difference
        assert s.cache.lost and s.charged_as == "compaction"
        # charged its account's figure (what it wrote beyond its new messages), not the unread history at
        # (write − read), which is never sent again
        assert (s.rewrite_tokens, s.rewrite_dollars) != (None, None)
        assert (s.miss_tokens, s.miss_dollars) == (s.rewrite_tokens, s.rewrite_dollars)
        assert s.unread_dollars == pytest.approx(s.cache.lost * lost_price_per_token(cost.price, cost.rules))
        assert s.miss_dollars != pytest.approx(s.unread_dollars)
        assert "model" not in cost.totals()["lost_by_cause"]
        _agrees(cost)
        text = miss_text(s, account_at(cost, c))
        assert text is not None
        assert text.startswith(f"{s.cache.lost:,} of the {s.cache.previous_cached:,} tokens the previous call cached "
                               "were not read: the model changed")
        assert "the miss is counted under compaction" in text
        assert f"it wrote {s.miss_tokens:,} tokens to the cache" in text and dollars(s.miss_dollars) in text
        assert dollars(s.unread_dollars) not in text
    cost = _fresh(run, accounts=True)
    [account] = [a for a in compaction_accounts(run) if a.step == c]
    line = cache_line(account, priced=True)
    assert f"{account.cache['write_tokens']:,} tokens written to the cache again" in line
    assert "counted under compaction" in line and dollars(account.cache["lost_dollars"]) not in line
    assert account_at(cost, c).cache_miss_dollars == pytest.approx(cost.steps[c].miss_dollars)


def test_unread_dollars_is_the_unread_tokens_at_write_minus_read_and_charged_only_when_they_are_sent_again() -> None:
    cost = run_cost(_sample_run())
    per_token = lost_price_per_token(cost.price, cost.rules)
    for s in cost.steps:
        assert s.unread_dollars == pytest.approx(s.cache.lost * per_token if s.cause != "first call" else 0.0)
        if s.charged_as not in (None, "compaction"):
            assert s.miss_dollars == s.unread_dollars
    assert cost.to_dict()["steps"][5]["lost_dollars"] == round(cost.steps[5].unread_dollars, 6)
