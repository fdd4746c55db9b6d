"""The cost sections pages show: the Timeline's cumulative cost, the Step's bill, compactions' paybacks, A vs B.

All numbers come from engine.cost.run_cost (computed once per cached run) through engine.cost.views; this
module only lays them out. A cost that cannot be computed says so in one line and never takes a page down.
"""

from __future__ import annotations

import streamlit as st

from engine.cost.run_cost import RunCost, run_cost
from engine.cost.views import (
    account_at,
    compaction_rows,
    compare_cost_rows,
    dollars,
    miss_text,
    output_note,
    paid_back_sentence,
    percent,
    pricing_note,
    recorded_cause_text,
    recorded_ttl_split,
    step_bill_rows,
    summarizer_call_line,
    summarizer_calls_before,
)
from engine.run.run import Run
from ui.cost_figures import compare_cost_figure, cost_figure
from ui.figures import cached_figure, compaction_by
from ui.text import error_text, escape_md
from ui.widgets import table


def _note(text: str) -> str:
    """A cost note as Markdown-safe text whose one config key reads as code: escaped, "`cost.prices`" was shown
    with its backticks (engine.cost.views.pricing_note names the key for the CLI too)."""
    return escape_md(text).replace(escape_md("`cost.prices`"), "`cost.prices`")


def cost_of(run: Run) -> RunCost | None:
    """The run's cost (kept on the cached run), or None after one error line."""
    try:
        return run_cost(run)
    except Exception as exc:  # a cost-model bug must not take the page down
        st.error(escape_md(f"The cost model failed on this run: {error_text(exc)}"))
        return None


def timeline_cost(run: Run) -> None:
    """Cumulative dollars and the cache hit rate per step, the totals, and every compaction's account."""
    cost = cost_of(run)
    if cost is None or not cost.steps:
        return
    if cost.price is None:
        st.info(escape_md(f"No price for the model {cost.model or '(none named)'}: the cache use below is modelled, "
                          "the dollars are not. Choose a model to price it as (Config page, Cost section: "
                          "cost.model, e.g. claude-sonnet-4-5 or gpt-4.1) or add a cost.prices row."))
    t = cost.totals()
    cols = st.columns(5)
    cols[0].metric("Dollars (modelled)", dollars(t["dollars"] if cost.price is not None else None),  # unpriced: "-"
                   help="every call priced with the modelled prompt cache, plus the summarizer calls")
    cols[1].metric("Dollars (recorded usage)", dollars(t.get("recorded_dollars")),
                   help="the recorded usage of each call priced the same way (as-recorded run of a thread that "
                        "recorded its cache use); '-' otherwise")
    cols[2].metric("Cache hit rate", percent(t["hit_rate"]),
                   delta=f"recorded {percent(t['recorded_hit_rate'])}" if t.get("recorded_hit_rate") is not None else None,
                   delta_color="off", delta_arrow="off", help="cache reads over all input sent, over the session")
    priced = cost.price is not None  # an unpriced model: its dollars are unknown ("-"), not "$0.00"
    cols[3].metric("Summarizer dollars", dollars(t["summarizer_billed_dollars"] if priced else None),
                   help="the compactions' own model calls: as recorded where the source recorded the call, "
                        "else modelled")
    # the misses under the causes they are charged to, as the Step page states each step's (StepCost.charged_as)
    cols[4].metric("Cache writes", dollars(t["cache_write_dollars"] if priced else None),
                   help="; ".join(f"{cause}: {row['tokens']:,} tokens not read, {row['tokens_written_again']:,} "
                                  f"written again" + (f" ({dollars(row['dollars'])})" if priced else "")
                                  for cause, row in t["lost_by_cause"].items())
                   or "no cached prefix was lost")
    if not priced and not any(step.cache.hit_rate for step in cost.steps):
        # no dollars and no cache hit: the chart was a flat $0.00 line over a flat 0 % (the landing sample)
        st.caption(_note(pricing_note(cost)) + ". No chart: without a price there are no dollars to draw, "
                   "and no call read the prompt cache.")
    else:
        # built once per run (ui.figures.cached_figure): a config served from the run cache does not rebuild it
        st.plotly_chart(cached_figure(run, "cost", lambda: cost_figure(cost)), key="timeline_cost_chart",
                        config={"displaylogo": False})
        st.caption(_note(pricing_note(cost)) + ". Bars: each step's bill by kind of token; lines: cumulative "
                   "dollars (the summarizer calls included). Dotted lines: compactions.")
    compactions_table(cost)


def compactions_table(cost: RunCost, *, heading: str = "**Compactions: did they pay for themselves?**") -> None:
    """Every compaction's account: saved, cache misses, summarizer call, net, paid back after N steps (or never)."""
    if not cost.compactions:
        return
    st.markdown(heading)
    rows = [{**r, "by": compaction_by(str(r["by"]))} for r in compaction_rows(cost)]
    table(rows, height=min(320, 38 + 35 * len(cost.compactions)))
    st.caption("Saved: the later input not sent, priced as it would have been billed without the compaction (same "
               "prompt cache); cache misses: what the compaction made the cache write again; paid back: steps from "
               "the compaction until the savings cover the summarizer call and the misses.")


def payback_line(cost: RunCost | None, step: int) -> str | None:
    """'paid back after N steps' (or never) for a compaction that took effect at `step`, as Markdown-safe text."""
    if cost is None:
        return None
    account = account_at(cost, step)
    return None if account is None else escape_md(account.headline)


def step_bill(run: Run, k: int) -> None:
    """Step k's bill: tokens and dollars by kind, the recorded usage beside it, why the cache missed."""
    cost = cost_of(run)
    if cost is None or k >= len(cost.steps):
        return
    s = cost.steps[k]
    modelled = f"{dollars(s.bill.total)} modelled" if cost.price is not None else "not priced (no price for the model)"
    head = (f"**This step's bill**: {modelled}"
            + (f" · {dollars(s.recorded_bill.total)} from the recorded usage" if s.recorded_bill is not None else "")
            + f" · cache hit rate {percent(s.cache.hit_rate)}"
            + (f" (recorded {percent((s.recorded or {}).get('hit_rate'))})" if s.recorded is not None else "")
            + (f" · cumulative {dollars(s.cumulative)}" if cost.price is not None else ""))
    st.markdown(head)
    table(step_bill_rows(cost, k))
    notes = [pricing_note(cost)]
    split = recorded_ttl_split(s)
    if split:
        notes.append(f"recorded cache writes by TTL: {split}")
    output = output_note(s)
    if output:
        notes.append(output)
    # what the aggregates charge this step (engine.cost.run_cost's lost_by_cause sums the same StepCost figures):
    # a compaction step is charged its account's cache misses, even one that read the whole cached prefix
    why = miss_text(s, account_at(cost, k), priced=cost.price is not None)
    if why:
        notes.append(why)
    recorded = recorded_cause_text(s)
    if recorded:
        notes.append(recorded)
    st.caption(_note(" · ".join(notes)))
    for call in summarizer_calls_before(cost, k):
        st.markdown(escape_md(summarizer_call_line(call)))
    line = payback_line(cost, k)
    if line:
        st.info(line)


def compare_cost(a: Run, b: Run) -> None:
    """A vs B in dollars: cumulative curves and a delta table."""
    ca, cb = cost_of(a), cost_of(b)
    if ca is None or cb is None:
        return
    st.markdown("**Cost**")
    st.plotly_chart(compare_cost_figure(ca, cb), key="compare_cost_chart", config={"displaylogo": False})
    table(compare_cost_rows(ca, cb))
    lines = [f"{label}: the compaction at step {c.step} {paid_back_sentence(c)} (net {dollars(c.net_dollars)})"
             for label, cost in (("A", ca), ("B", cb)) for c in cost.compactions]
    lines.append(f"A: {pricing_note(ca)}. B: {pricing_note(cb)}.")
    st.caption("  \n".join(escape_md(line) for line in lines))


__all__ = ["compactions_table", "compare_cost", "cost_of", "payback_line", "step_bill", "timeline_cost"]
