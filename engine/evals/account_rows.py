"""The compaction accounts as the pages' tables (plain rows: Layers › Summaries' card, Evals' survival tab).

Every number comes from engine.evals.account, engine.evals.survival, engine.evals.recovery and
engine.cost; these functions only choose columns and words, so the pages compute nothing.
"""

from __future__ import annotations

from typing import Any

from engine.cost.run_cost import RunCost
from engine.cost.views import dollars, percent
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


def refetch_rows(r: Recovery) -> list[dict[str, Any]]:
    """The calls that fetched again (or would have to) what the compaction removed."""
    return [{"step": x.step, "tool": x.tool, "what": x.kind, "result tokens": x.result_tokens,
             "dollars": dollars(x.dollars), "fetched before at step": x.original_step, "target": x.target}
            for x in r.refetches]


def account_metrics(a: CompactionAccount, *, priced: bool) -> dict[str, str]:
    """The card's headline numbers, as text."""
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
        "cache broken (tokens)": f"{a.cache['lost_tokens']:,}",
    }


def cache_line(a: CompactionAccount, *, priced: bool) -> str:
    """The cache the compaction broke, ours beside the transcript's own diagnosis."""
    c = a.cache
    text = (f"{c['lost_tokens']:,} tokens the previous call cached were not read ({c['cause'] or 'no miss'}"
            + (f": {c['cause_detail']}" if c["cause_detail"] else "") + ")")
    if priced:
        text += f", {dollars(c['lost_dollars'])} to write them again"
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


def compaction_rows(accounts: list[CompactionAccount], *, priced: bool) -> list[dict[str, Any]]:
    """One row per compaction (Evals): survival per class, recovery, first new edit, the cache it broke, net."""
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
        row["cache broken"] = a.cache["lost_tokens"]
        row["net"] = dollars(a.payback.get("net_dollars")) if priced and a.payback else "-"
        rows.append(row)
    return rows


def cause_rows(cost: RunCost) -> list[dict[str, Any]]:
    """Per cause of cache miss: steps, tokens not read again, their price."""
    priced = cost.price is not None
    return [{"cause": c, "steps": v["steps"], "tokens not read": v["tokens"],
             "dollars": dollars(v["dollars"]) if priced else "-"} for c, v in cost.totals()["lost_by_cause"].items()]


def disagreement_rows(cost: RunCost) -> list[dict[str, Any]]:
    """Steps where Claude Code's recorded diagnosis and ours disagree."""
    report = cost.agreement()
    if report is None:
        return []
    return [{"step": d["step"], "recorded": d["recorded"], "ours": d["ours"] or "no miss", "detail": d["detail"],
             "recorded read": d["recorded_read"], "modelled read": d["modelled_read"]} for d in report["disagreements"]]


__all__ = ["WHERE_LABELS", "account_metrics", "cache_line", "cause_rows", "class_rows", "compaction_rows",
           "disagreement_rows", "fact_rows", "refetch_rows", "summarizer_line"]
