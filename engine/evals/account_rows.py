"""The compaction accounts as the pages' tables (plain rows: Layers › Summaries' card, Evals' survival tab).

Every number comes from engine.evals.account, engine.evals.survival, engine.evals.recovery and
engine.cost; these functions only choose columns and words, so the pages compute nothing.
"""

from __future__ import annotations

from typing import Any

from engine.cost.run_cost import RunCost
from engine.cost.views import NOT_MODELLED, dollars, percent
from engine.evals.account import CompactionAccount
from engine.evals.fact_classes import CLASS_LABELS, CLASSES
from engine.evals.recovery import Recovery
from engine.evals.survival import Survival

WHERE_LABELS = {"kept": "a message kept", "summary": "the summary", "reinjected": "re-injected", "system": "system prompt"}


def class_rows(s: Survival) -> list[dict[str, Any]]:
    """Per fact class: kept, lost, total and the survival rate."""
    rates = s.by_class()
    return [{"facts": CLASS_LABELS[c], "kept": rates[c]["kept"], "lost": rates[c]["lost"], "total": rates[c]["total"],
             "survival": percent(rates[c]["rate"])} for c in CLASSES]


def fact_rows(s: Survival, *, cls: str | None = None, kept: bool | None = None, limit: int = 200) -> list[dict[str, Any]]:
    """The facts, lost first, each with the step that introduced it (filtered by class and by kept/lost)."""
    facts = [f for f in s.facts if (cls is None or f.cls == cls) and (kept is None or f.kept == kept)]
    facts.sort(key=lambda f: (f.kept, CLASSES.index(f.cls), f.step))
    return [{"introduced at step": f.step, "class": CLASS_LABELS[f.cls], "status": "kept" if f.kept else "lost",
             "where": WHERE_LABELS.get(f.where or "", "recoverable (file)" if f.recoverable else "—"),
             "fact": f.value} for f in facts[:limit]]


def refetch_rows(r: Recovery, *, priced: bool = True) -> list[dict[str, Any]]:
    """The calls that fetched again (or would have to) what the compaction removed; an unpriced model's
    dollars are unknown ("-", docs/dashboard.md), not the $0.00 its zero price rate gives."""
    return [{"step": x.step, "tool": x.tool, "what": x.kind, "result tokens": x.result_tokens,
             "dollars": dollars(x.dollars if priced else None), "fetched before at step": x.original_step,
             "target": x.target} for x in r.refetches]


# What a compaction cost in the prompt cache, wherever a page or the CLI shows it: the tokens it made the cache
# write again — its summary and what it kept, after the point it rewrote — at the write price
# (engine.cost.payback's `cache_miss_tokens` / `_dollars`, account.cache's `write_tokens` / `write_dollars`).
# That is what its net, its headline and the Summaries table charge. The other count, the tokens the previous
# call had cached that this step did not read (`lost_tokens`, 145,791 at the compaction of Claude Code session
# fa812bfe…), is the history the compaction rewrote: it is not sent again (what the compaction kept of it is
# part of what it wrote), so it is a count, not a cost. Pricing unread tokens at (write − read) is right for a TTL
# expiry or an edit, whose tokens are sent again; for that compaction it charged $0.84 for 145,791 tokens nobody
# re-sent, beside the $0.07 in the net on the same screen. A demanding reader wants one answer to "what did the
# compaction cost in the cache": the one its net already charges. So a compaction's unread tokens are shown as a
# count under their own label, and its dollars are its account's — in the aggregates too (engine.cost.run_cost's
# `StepCost.miss_dollars` and `lost_by_cause`: Compare's "cache misses $", the sweep's `cache_lost_dollars`).
WRITTEN_AGAIN = "cache written again (tokens)"


def account_metrics(a: CompactionAccount, *, priced: bool, cache_modelled: bool = True) -> dict[str, str]:
    """The card's headline numbers, as text (the cache: what the compaction made it write again, see above)."""
    net = a.payback.get("net_dollars") if a.payback else None
    paid = a.payback.get("paid_back_after") if a.payback else None
    r = a.recovery
    return {
        "request before": f"{a.tokens_before:,}",
        "request after": f"{a.tokens_after:,}",
        "net saved": dollars(net) if priced and net is not None else "-",
        "paid back after": ("-" if not priced or a.payback is None else "never" if paid is None
                            else f"{paid} step{'s' if paid != 1 else ''}"),
        "facts kept": f"{a.survival.kept} of {len(a.survival.facts)}",
        "re-fetches" + (" (estimate)" if r.basis == "estimate" else ""): f"{r.calls}",
        "steps to first new edit": "none" if r.steps_to_first_edit is None else f"{r.steps_to_first_edit}",
        WRITTEN_AGAIN: (NOT_MODELLED if not cache_modelled else "-" if a.cache.get("write_tokens") is None
                        else f"{a.cache['write_tokens']:,}"),
    }


def cache_line(a: CompactionAccount, *, priced: bool, cache_off: str | None = None) -> str:
    """The cache the compaction broke: what it made the cache write again (its cost, in its net), the cached
    tokens it left unread (a count), and the transcript's own diagnosis beside ours. `cache_off`: the run models
    no prompt cache (engine.cost.views.cache_off_note), said instead of a "0 tokens … (no miss)" that reads as a hit."""
    if cache_off is not None:
        return cache_off
    c = a.cache
    lost, cause, detail = c["lost_tokens"], c["cause"], c["cause_detail"]
    parts = []
    if c.get("write_tokens") is not None:
        parts.append(f"{c['write_tokens']:,} tokens written to the cache again"
                     + (f" ({dollars(c['write_dollars'])})" if priced and c.get("write_dollars") is not None else "")
                     + ": what it sent in place of the history it rewrote, the cache misses in its net")
    if not lost:
        parts.append("nothing the previous call cached went unread")
    elif cause == "compaction":
        parts.append(f"{lost:,} tokens the previous call had cached were not read"
                     + (f" ({detail})" if detail else "")
                     + ": the history it rewrote, of which only what it sent in its place (above) was written again")
    else:  # the step differed by another change first (engine.cost.misses: a model, tools or system change), but
        # the compaction rewrote the history all the same: not sent again, it is not priced (engine.cost.run_cost's
        # StepCost.charged_as: such a step is charged the compaction's write, above)
        parts.append(f"{lost:,} tokens the previous call had cached were not read ({cause}"
                     + (f": {detail}" if detail else "") + "): the history it rewrote, not sent again; the miss is "
                     "counted under compaction, at what it wrote (above)")
    text = "; ".join(parts)
    if c["recorded_reason"]:
        text += f"; Claude Code recorded `{c['recorded_reason']}`" + (
            f" ({c['recorded_missed_tokens']:,} tokens)" if c["recorded_missed_tokens"] else "")
    return text + "."


def summarizer_line(a: CompactionAccount, *, priced: bool) -> str | None:
    s = a.summarizer
    if not s:
        return None
    money = f", {dollars(s['dollars'])}" if priced and s["dollars"] is not None else ""
    recorded = f" ({dollars(s['recorded_dollars'])} from its recorded usage)" if s.get("recorded_dollars") is not None else ""
    return f"Summarizer call: {s['input_tokens']:,} tokens in, {s['output_tokens']:,} out{money}{recorded}."


def compaction_rows(accounts: list[CompactionAccount], *, priced: bool, cache_modelled: bool = True
                    ) -> list[dict[str, Any]]:
    """One row per compaction (Evals): survival per class, recovery, first new edit, what it made the cache
    write again (its cache misses, in its net; see WRITTEN_AGAIN), net."""
    rows = []
    for a in accounts:
        rates = a.survival.by_class()
        row: dict[str, Any] = {"step": a.step, "source": a.source, "by": f"{a.layer}.{a.kind}",
                               "facts kept": percent(a.survival.rate)}
        for c in CLASSES:
            row[CLASS_LABELS[c]] = f"{rates[c]['kept']}/{rates[c]['total']}" if rates[c]["total"] else "—"
        r = a.recovery
        row["re-fetches"] = f"{r.calls}" + (" (est.)" if r.basis == "estimate" else "")
        row["re-fetch tokens"] = r.tokens
        row["re-fetch $"] = dollars(r.dollars) if priced else "-"
        row["first new edit"] = "none" if r.steps_to_first_edit is None else f"+{r.steps_to_first_edit}"
        row["cache written again"] = NOT_MODELLED if not cache_modelled else a.cache.get("write_tokens")
        row["net"] = dollars(a.payback.get("net_dollars")) if priced and a.payback else "-"
        rows.append(row)
    return rows


def _add(total: Any, x: Any) -> Any:
    return None if total is None or x is None else total + x


def misses_by_cause(cost: RunCost) -> dict[str, dict[str, Any]]:
    """Per cause of cache miss: steps, the cached tokens not read, the tokens written again because of it and
    their dollars (None: unpriced, or a compaction whose account is unknown).

    engine.cost.run_cost's `lost_by_cause` in the words of this table (`StepCost.charged_as`, `miss_tokens`,
    `miss_dollars`): a compaction's row writes again and charges what its account does (see WRITTEN_AGAIN), the
    summary and kept messages it sent, not the history it replaced. Any other cause sends its unread tokens
    again: they are its tokens written again, at (write − read) (engine.cost.misses)."""
    priced = cost.price is not None
    out: dict[str, dict[str, Any]] = {}
    for s in cost.steps:
        cause = s.charged_as
        if cause is None:
            continue
        row = out.setdefault(cause, {"steps": 0, "tokens_not_read": 0, "tokens_written_again": 0, "dollars": 0.0})
        row["steps"] += 1
        row["tokens_not_read"] += s.cache.lost
        row["tokens_written_again"] = _add(row["tokens_written_again"], s.miss_tokens)
        row["dollars"] = _add(row["dollars"], s.miss_dollars)
    for row in out.values():
        row["dollars"] = round(row["dollars"], 6) if priced and row["dollars"] is not None else None
    return dict(sorted(out.items()))


def cause_rows(cost: RunCost) -> list[dict[str, Any]]:
    """Per cause of cache miss: steps, cached tokens not read, tokens written again and their price."""
    return [{"cause": c, "steps": v["steps"], "tokens not read": v["tokens_not_read"],
             "tokens written again": v["tokens_written_again"], "dollars": dollars(v["dollars"])}
            for c, v in misses_by_cause(cost).items()]


def disagreement_rows(cost: RunCost) -> list[dict[str, Any]]:
    """Steps where Claude Code's recorded diagnosis and ours disagree."""
    report = cost.agreement()
    if report is None:
        return []
    return [{"step": d["step"], "recorded": d["recorded"], "ours": d["ours"] or "no miss", "detail": d["detail"],
             "recorded read": d["recorded_read"], "modelled read": d["modelled_read"]} for d in report["disagreements"]]


__all__ = ["WHERE_LABELS", "WRITTEN_AGAIN", "account_metrics", "cache_line", "cause_rows", "class_rows",
           "compaction_rows", "disagreement_rows", "fact_rows", "misses_by_cause", "refetch_rows", "summarizer_line"]
