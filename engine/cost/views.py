"""The cost of a run as the dashboard shows it: a step's bill, the compactions' accounts, A vs B, per-step series.

Pure data from engine.cost.run_cost's `RunCost` (no Streamlit, no plotly), so every number a page shows is
tested here. Dollars are US dollars from engine/data/prices.yaml (or the config's `cost.prices`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.base.wording import money
from engine.cost.bill import write_price
from engine.cost.payback import CompactionCost
from engine.cost.run_cost import RunCost, StepCost, SummarizerCall

NOT_MODELLED = "not modelled"  # a cache cell of a run whose cost model runs no prompt cache (cost.cache: none)


def dollars(x: float | None) -> str:
    """An amount as every page and the CLI write it (`engine.base.wording.money`): $1,234.57, −$0.0062; '-' for None."""
    return money(x)


def percent(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def paid_back(account: CompactionCost) -> str:
    """'after N steps', 'never (within N steps)', or 'unpriced' (no price row for the model)."""
    if not account.priced:
        return "unpriced"
    if account.paid_back_after is None:
        return f"never (within {account.horizon_steps} step{'s' if account.horizon_steps != 1 else ''})"
    n = account.paid_back_after
    return f"after {n} step{'s' if n != 1 else ''}"


def paid_back_sentence(account: CompactionCost) -> str:
    """'paid back after N steps', 'never paid back (within N steps)' or 'unpriced'."""
    text = paid_back(account)
    if text.startswith("after"):
        return "paid back " + text
    return "never paid back" + text.removeprefix("never") if text.startswith("never") else text


def pricing_note(cost: RunCost) -> str:
    """One line: what the run is priced as, which cache, whether times apply."""
    from engine.cost.prices import table_checked

    if cost.price is None:
        where = f"no price for {cost.model or 'an unnamed model'} (add a `cost.prices` row in the config)"
    else:
        where = f"priced as {cost.price.prefix} (price table of {table_checked()})"
    cache = {"anthropic": f"Anthropic prompt cache, {cost.rules.ttl} TTL", "openai": "OpenAI automatic prefix cache",
             "none": "no prompt cache"}.get(cost.rules.kind, cost.rules.kind)
    timed = "" if cost.rules.kind == "none" else (
        " · TTLs from the recorded times" if cost.timed else " · no recorded times: every call taken as within the TTL")
    return f"{where} · {cache}{timed}"


def step_bill_rows(cost: RunCost, k: int) -> list[dict[str, Any]]:
    """Step k's bill by kind of token: modelled tokens and dollars, and the recorded ones on the as-recorded run."""
    s = cost.steps[k]
    price = cost.price
    rec = s.recorded or {}
    rb = s.recorded_bill
    write_rate = write_price(price, s.cache.ttl) if price is not None else None
    rows = [
        ("uncached input", s.cache.uncached, price.input if price else None, s.bill.input,
         rec.get("input"), rb.input if rb else None),
        ("cache read", s.cache.read, price.cache_read if price else None, s.bill.cache_read,
         rec.get("cache_read"), rb.cache_read if rb else None),
        (f"cache write ({s.cache.ttl})", s.cache.write, write_rate, s.bill.cache_write,
         rec.get("cache_write"), rb.cache_write if rb else None),
        ("output", s.output_tokens, price.output if price else None, s.bill.output,
         rec.get("output"), rb.output if rb else None),
    ]
    out = []
    for kind, tokens, rate, usd_, rtokens, rusd in rows:
        # an unpriced model's dollars are unknown ("-"), not $0.000000
        row: dict[str, Any] = {"kind": kind, "tokens": tokens, "$ per M tokens": "-" if rate is None else f"{rate:g}",
                               "dollars": dollars(usd_ if price is not None else None)}
        if s.recorded is not None:
            row["recorded tokens"] = rtokens
            row["recorded dollars"] = dollars(rusd)
        out.append(row)
    total: dict[str, Any] = {"kind": "total", "tokens": s.cache.total + s.output_tokens, "$ per M tokens": "",
                             "dollars": dollars(s.bill.total if price is not None else None)}
    if s.recorded is not None:
        rec_total = sum(int(rec.get(key) or 0) for key in ("input", "cache_read", "cache_write", "output"))
        total["recorded tokens"] = rec_total
        total["recorded dollars"] = dollars(rb.total if rb else None)
    out.append(total)
    return out


def recorded_ttl_split(s: StepCost) -> str | None:
    """'5m 1,234 · 1h 0' when the source recorded its cache writes by TTL."""
    rec = s.recorded or {}
    five, hour = rec.get("cache_write_5m"), rec.get("cache_write_1h")
    if five is None and hour is None:
        return None
    return f"5m {int(five or 0):,} · 1h {int(hour or 0):,}"


def output_note(s: StepCost) -> str | None:
    """Why both bills price more output than the source recorded (engine.cost.run_cost: the larger of the two counts)."""
    recorded = (s.recorded or {}).get("output")
    if recorded is None or recorded >= s.output_tokens:
        return None
    return (f"output priced at {s.output_tokens:,} tokens, our count of the response, in both bills: the recorded "
            f"{recorded:,} was written before the response ended")


def cache_off_note(cost: RunCost) -> str | None:
    """What to say where a cache miss would be listed when the run models no prompt cache (None: it models one).

    With no cache nothing is read, so nothing can miss: "no miss" and "0 tokens" would read as a cache that
    worked (the landing sample: `ctxi eval cache` printed "cache none, hit rate 0.0%" while Evals said no
    step lost what the previous one cached). RunCost does not keep the config, so both ways to get here are named.
    """
    if cost.rules.kind != "none":
        return None
    why = (f"cost.cache is none, or auto for {cost.model or 'an unnamed model'}, which has no price row"
           if cost.price is None else f"cost.cache is none, or the price row for {cost.price.prefix} names no cache")
    return (f"The prompt cache is not modelled for this run ({why}): no call reads it, so its misses cannot be counted. "
            "To model it, set cost.cache to anthropic or openai (Config › Cost, or ?cost.cache=anthropic in the "
            "link), or price the run as a model that has one (cost.model, e.g. ?cost.model=claude-sonnet-4-5).")


def miss_text(s: StepCost, account: CompactionCost | None = None, *, priced: bool = True) -> str | None:
    """Why the step did not read what the previous call left cached, and what the aggregates charge it, in words
    (None: it read all of it and is charged nothing).

    The charge is the step's own (`StepCost.charged_as`, `miss_tokens`, `miss_dollars`), the figures
    engine.cost.run_cost's `lost_by_cause` sums: so the Step page's numbers, summed over the steps, are the
    Timeline's, Compare's and the sweep's. A compaction's unread tokens are the history it replaced: they are not
    written again, so they are not priced at (write − read) like a TTL expiry's; what it did make the cache write
    is its account's cache misses (engine.cost.payback), the figure in its net — also at a step that read the
    whole cached prefix, and at one whose first difference was a change of model, tools or system prompt.
    `account`: that compaction's account (its `priced` is used); `priced`: the run has a price (else no dollars)."""
    use = s.cache
    if account is not None:
        priced = account.priced
    if s.cause == "first call":
        return "first call: nothing cached yet in this conversation"
    charged = s.charged_as
    if charged is None and (not use.lost or s.cause is None):
        return None
    detail = f" ({s.cause_detail})" if s.cause_detail else ""
    why = {"compaction": f"a compaction rewrote the history{detail}",
           "edit": f"an earlier message was changed in place{detail}",
           "insertion": f"content was inserted before cached content{detail}",
           "removal": f"earlier messages were dropped{detail}",
           "tools": f"the tools sent changed{detail}",
           "system": "the system prompt changed",
           "model": f"the model changed{detail}: each model has its own cache",
           "prefix": "the prompt before the messages changed",
           "ttl": f"the cache entry expired ({use.gap_s:,.0f} s since the previous call, TTL {use.ttl})"
           if use.gap_s is not None else f"the cache entry expired (TTL {use.ttl})",
           "lookback": "more than 20 content blocks were appended since the cached prefix"}.get(
        s.cause or "", f"{s.cause}{detail}")
    unread = f"{use.lost:,} of the {use.previous_cached:,} tokens the previous call cached were not read"
    if charged == "compaction":
        written, cost = s.miss_tokens, s.miss_dollars
        price = f" ({dollars(cost)}, the cache misses in its net)" if priced and cost is not None else ""
        if s.cause == "compaction":
            return f"{unread}: {why}; " + (f"it wrote {written:,} tokens to the cache in their place{price}"
                                            if written is not None else
                                            "only what it sent in their place was written to the cache")
        by = f" ({account.layer}.{account.kind})" if account is not None else ""
        wrote = (f"it wrote {written:,} tokens to the cache beyond the step's new messages{price}"
                 if written is not None else "what it wrote beyond the step's new messages is not settled")
        if s.cause is None:  # it read everything cached, then wrote its summary: its account charges that write
            return (f"a compaction took effect at this step{by}: nothing the previous call cached went unread, but "
                    f"{wrote}: its summary and what it sent with it, counted under compaction in the run's cache misses")
        # a change of model, tools or system prompt came first, but the history was rewritten all the same
        return (f"{unread}: {why}; a compaction rewrote the history at this step too{by}, so that history is not "
                f"sent again and the miss is counted under compaction: {wrote}")
    cost = s.miss_dollars if priced else None
    again = f", {dollars(cost)} to write again" if cost else ""
    return f"{unread}{again}: {why}"


def recorded_cause_text(s: StepCost) -> str | None:
    """Claude Code's own diagnosis of the step, beside ours (None when the transcript records none)."""
    reason = s.recorded_reason
    if reason is None:
        return None
    if reason == "none":
        return "recorded diagnosis: no change found since the previous request"
    if reason == "pending":
        return "recorded diagnosis: still pending when the response was written"
    tokens = f", {s.recorded_missed_tokens:,} tokens after the change" if s.recorded_missed_tokens else ""
    verdict = {True: "agrees with ours", False: f"ours says {s.cause or 'no miss'}", None: "not compared"}[s.agrees]
    return f"recorded diagnosis: {reason}{tokens} ({verdict})"


def summarizer_calls_before(cost: RunCost, k: int) -> list[SummarizerCall]:
    return [c for c in cost.summarizer_calls if c.step == k]


def summarizer_call_line(call: SummarizerCall) -> str:
    """One line on a compaction's own model call: its tokens and what it cost — the recorded usage priced
    where the source recorded the call (what payback and the net use), the modelled bill beside it."""
    head = (f"Summarizer call before this step ({call.layer}, {call.style}"
            + (", recorded" if call.recorded_bill is not None else "") + f"): {call.input_tokens:,} input tokens")
    if call.recorded_bill is not None:
        read = (call.recorded or {}).get("cache_read")
        return (head + (f" ({read:,} read from the cache, as recorded)" if isinstance(read, int) else "")
                + f", {call.output_tokens:,} output: {dollars(call.recorded_bill.total)} as recorded"
                + f" (modelled: {dollars(call.bill.total)})")
    return (head + (f" ({call.cache.read:,} read from the cache)" if call.cache is not None else "")
            + f", {call.output_tokens:,} output: {dollars(call.bill.total)} modelled")


def account_at(cost: RunCost, k: int) -> CompactionCost | None:
    return next((c for c in cost.compactions if c.step == k), None)


def compaction_rows(cost: RunCost) -> list[dict[str, Any]]:
    """Per compaction: what it saved, what its cache misses and summarizer cost, net, and when it paid back.

    A model with no price row has no dollars: its money cells are unknown ('-', as a step's bill writes
    them), not "$0.00" beside "unpriced" (the landing sample's compactions read "net $0.00").

    "cache misses" is what the compaction made the cache write again (engine.cost.payback: its summary and what
    it kept, at the write price) — the figure its net and its account use everywhere, not the larger count of
    cached tokens it left unread (engine.evals.account_rows.misses_by_cause). A run that models no prompt cache
    has no misses to count: its cells say "not modelled", not 0."""
    modelled = cost.rules.kind != "none"

    def cell(c: CompactionCost, x: float) -> str:
        return dollars(x if c.priced else None)

    def miss(c: CompactionCost) -> str:
        return cell(c, c.cache_miss_dollars) if modelled or not c.priced else NOT_MODELLED

    return [{"step": c.step, "by": f"{c.layer}.{c.kind}", "steps compared": c.horizon_steps,
             "input tokens saved": c.saved_tokens, "saved": cell(c, c.saved_dollars),
             "cache misses": miss(c), "cache miss tokens": c.cache_miss_tokens if modelled else NOT_MODELLED,
             "summarizer call": cell(c, c.summarizer_dollars), "net": cell(c, c.net_dollars),
             "paid back": paid_back(c)} for c in cost.compactions]


def totals_rows(cost: RunCost) -> dict[str, Any]:
    """The headline numbers of a run's cost (for metric tiles)."""
    t = cost.totals()
    return {"dollars": t["dollars"], "summarizer_dollars": t["summarizer_dollars"], "hit_rate": t["hit_rate"],
            "recorded_dollars": t.get("recorded_dollars"), "recorded_hit_rate": t.get("recorded_hit_rate"),
            "cache_write_dollars": t["cache_write_dollars"], "lost_tokens": t["lost_tokens"]}


def compare_cost_rows(a: RunCost, b: RunCost) -> list[dict[str, Any]]:
    """Run A vs run B in dollars and cache use (both modelled, so they compare)."""
    ta, tb = a.totals(), b.totals()

    def money(name: str, key: str) -> dict[str, Any]:
        return {"metric": name, "A": dollars(ta[key]), "B": dollars(tb[key]), "B − A": dollars(tb[key] - ta[key])}

    def tokens(name: str, key: str) -> dict[str, Any]:
        return {"metric": name, "A": f"{ta[key]:,}", "B": f"{tb[key]:,}", "B − A": f"{tb[key] - ta[key]:+,}"}

    hit_delta = None if ta["hit_rate"] is None or tb["hit_rate"] is None else tb["hit_rate"] - ta["hit_rate"]
    return [money("dollars (calls + summarizer)", "dollars"), money("summarizer calls", "summarizer_dollars"),
            money("uncached input", "input_dollars"), money("cache reads", "cache_read_dollars"),
            money("cache writes", "cache_write_dollars"), money("output", "output_dollars"),
            tokens("cache read tokens", "cache_read_tokens"), tokens("cache write tokens", "cache_write_tokens"),
            {"metric": "cache hit rate", "A": percent(ta["hit_rate"]), "B": percent(tb["hit_rate"]),
             "B − A": "-" if hit_delta is None else f"{100 * hit_delta:+.1f} points"},
            {"metric": "compactions net", "A": dollars(ta.get("compaction_net_dollars")),
             "B": dollars(tb.get("compaction_net_dollars")), "B − A": ""}]


@dataclass(frozen=True)
class CostSeries:
    """Per step: the bill by kind, the cumulative modelled and recorded dollars, the hit rates."""

    steps: list[int]
    input: list[float]
    cache_read: list[float]
    cache_write: list[float]
    output: list[float]
    summarizer: list[float]  # summarizer calls made just before the step
    cumulative: list[float]  # calls and summarizer calls, up to and including the step
    recorded_cumulative: list[float | None]
    hit_rate: list[float | None]
    recorded_hit_rate: list[float | None]


def cost_series(cost: RunCost) -> CostSeries:
    before: dict[int, float] = {}
    for c in cost.summarizer_calls:
        before[c.step] = before.get(c.step, 0.0) + c.bill.total
    return CostSeries(
        steps=[s.step for s in cost.steps], input=[s.bill.input for s in cost.steps],
        cache_read=[s.bill.cache_read for s in cost.steps], cache_write=[s.bill.cache_write for s in cost.steps],
        output=[s.bill.output for s in cost.steps], summarizer=[before.get(s.step, 0.0) for s in cost.steps],
        cumulative=[s.cumulative for s in cost.steps],
        recorded_cumulative=[s.recorded_cumulative for s in cost.steps],
        hit_rate=[s.cache.hit_rate for s in cost.steps],
        recorded_hit_rate=[(s.recorded or {}).get("hit_rate") if s.recorded is not None else None for s in cost.steps])


__all__ = ["NOT_MODELLED", "CostSeries", "account_at", "cache_off_note", "compaction_rows", "compare_cost_rows", "cost_series", "dollars",
           "miss_text", "output_note", "recorded_cause_text", "paid_back", "paid_back_sentence", "percent", "pricing_note", "recorded_ttl_split", "step_bill_rows",
           "summarizer_call_line", "summarizer_calls_before", "totals_rows"]
