"""One account per compaction: what it saved, what it dropped, what it cost to recover, which cache it broke.

`compaction_accounts(run)` joins, for every compaction the run measures (engine.evals.survival: step 0
excepted), what the other modules computed once per run:

- tokens before (the request before the compaction: the event's count, else the previous step's view)
  and after (the step's view), the trigger, the summary and its tokens;
- survival (engine.evals.survival) and recovery (engine.evals.recovery: recorded, or an estimate);
- the cache it broke (engine.cost.misses: the step's lost tokens, our cause and Claude Code's recorded
  diagnosis; engine.cost.payback: what it made the cache write again, its charge), its summarizer call and
  its payback (engine.cost.payback);
- a headline: "The compaction at step 61 saved $5.74, lost 5 of 20 file paths and cost 5 re-fetches ($0.73)."

`ctxi eval survival FILE --json` prints these accounts and the run's totals (`survival_report`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.cost.run_cost import RunCost, StepCost, run_cost
from engine.cost.views import account_at, dollars
from engine.evals.fact_classes import CLASS_LABELS
from engine.evals.recovery import Recovery, fresh_start, recovery, run_recovery_totals
from engine.evals.survival import Survival, run_survival_totals, survival
from engine.run.run import Run
from engine.thread.kinds import message_kind
from engine.tokens.content import message_text

REPORT_SCHEMA = "context-inspector/eval-survival"
REPORT_VERSION = 1


@dataclass
class CompactionAccount:
    """Everything one compaction did and cost (see the module docstring)."""

    step: int
    source: str
    layer: str
    kind: str
    trigger: str | None
    tokens_before: int
    tokens_after: int
    recorded_tokens_before: int | None  # what the source agent counted (Claude Code's preTokens)
    summary: str
    summary_tokens: int
    survival: Survival
    recovery: Recovery
    cache: dict[str, Any]
    summarizer: dict[str, Any] | None
    payback: dict[str, Any] | None
    headline: str

    def to_dict(self, *, facts: bool = True) -> dict[str, Any]:
        return {"step": self.step, "source": self.source, "layer": self.layer, "kind": self.kind,
                "trigger": self.trigger, "tokens_before": self.tokens_before, "tokens_after": self.tokens_after,
                "recorded_tokens_before": self.recorded_tokens_before,
                "summary": self.summary, "summary_tokens": self.summary_tokens,
                "survival": self.survival.to_dict(facts=facts), "recovery": self.recovery.to_dict(),
                "cache": self.cache, "summarizer": self.summarizer, "payback": self.payback, "headline": self.headline}


def compaction_accounts(run: Run) -> list[CompactionAccount]:
    """One account per measured compaction of `run`, in step order."""
    cost = run_cost(run)
    rec = {r.step: r for r in recovery(run)}
    return [_account(run, cost, s, rec[s.step]) for s in survival(run) if s.step in rec]


def _account(run: Run, cost: RunCost, s: Survival, r: Recovery) -> CompactionAccount:
    step = run.steps[s.step]
    event = next(e for e in step.events if e.layer == s.layer and e.kind == s.kind)
    payload = event.payload
    trigger = payload.get("trigger")
    threshold = payload.get("threshold_tokens")
    if trigger is None and isinstance(threshold, int):  # a coding-agent policy's decision (engine.policies)
        trigger = f"tokens >= {threshold:,}"
    # the request it would have sent without the compaction (the payback's counterfactual at this step), else the
    # previous request: whole requests, prompt included, like `tokens_after`
    payback_at = account_at(cost, s.step)
    before = (payback_at.per_step[0]["tokens_without"] if payback_at is not None and payback_at.per_step
              else run.steps[s.step - 1].view_tokens)
    summary = str(payload.get("summary") or payload.get("summary_text") or "")
    if not summary:
        summary = next((message_text(m) for m in step.view if message_kind(m) == "summary"), "")
    entry: StepCost | None = cost.steps[s.step] if s.step < len(cost.steps) else None
    payback = account_at(cost, s.step)
    calls = [c for c in cost.summarizer_calls if c.step == s.step]
    summarizer = None
    if calls:
        summarizer = {"calls": len(calls), "input_tokens": sum(c.input_tokens for c in calls),
                      "output_tokens": sum(c.output_tokens for c in calls),
                      "dollars": round(sum(c.bill.total for c in calls), 6) if cost.price is not None else None,
                      "recorded_dollars": round(sum(c.recorded_bill.total for c in calls if c.recorded_bill), 6)
                      if any(c.recorded_bill for c in calls) else None}
    # `lost_dollars` (StepCost.unread_dollars): the unread history priced as if it were written again, at
    # (write − read) — for reference, charged nowhere: the history is never sent again, so the compaction's step is
    # charged its account's cache misses (`write_dollars`; StepCost.miss_dollars and the aggregates,
    # engine.cost.run_cost), whatever the step's first difference (a change of model, tools or system prompt too).
    cache = {"lost_tokens": entry.cache.lost if entry else 0,
             "lost_dollars": round(entry.unread_dollars, 6) if entry else 0.0,
             "cause": entry.cause if entry else None, "cause_detail": entry.cause_detail if entry else "",
             "write_tokens": payback.cache_miss_tokens if payback else None,
             "write_dollars": round(payback.cache_miss_dollars, 6) if payback else None,
             "recorded_reason": entry.recorded_reason if entry else None,
             "recorded_missed_tokens": entry.recorded_missed_tokens if entry else None}
    account = CompactionAccount(
        step=s.step, source=s.source, layer=s.layer, kind=s.kind,
        trigger=str(trigger) if trigger is not None else None, tokens_before=int(before),
        tokens_after=step.view_tokens,
        recorded_tokens_before=payload["pre_tokens"] if isinstance(payload.get("pre_tokens"), int) else None, summary=summary, summary_tokens=run.counter.count_text(summary) if summary else 0,
        survival=s, recovery=r, cache=cache, summarizer=summarizer,
        payback={k: v for k, v in payback.to_dict().items() if k != "per_step"} if payback else None, headline="")
    account.headline = headline(account, priced=cost.price is not None)
    return account


def headline(a: CompactionAccount, *, priced: bool = True) -> str:
    """One sentence: what it saved, what it lost (file paths first, else the class it lost most of), the re-fetches."""
    net = a.payback.get("net_dollars") if a.payback else None
    saved = (f"saved {dollars(net)} net" if priced and net is not None and net >= 0
             else f"cost {dollars(-net)} net" if priced and net is not None
             else f"went from {a.tokens_before:,} to {a.tokens_after:,} tokens")
    classes = a.survival.by_class()
    shown = "path" if classes["path"]["total"] else max(classes, key=lambda c: (classes[c]["lost"], classes[c]["total"]))
    row = classes[shown]
    lost = (f"lost {row['lost']} of {row['total']} {CLASS_LABELS[shown]}" if row["total"]
            else "stated no facts to lose")
    r = a.recovery
    label = "re-fetch" if r.calls == 1 else "re-fetches"
    paid = f" ({dollars(r.dollars)})" if priced and r.calls else ""
    if not r.calls:
        recovered = "fetched nothing again" if r.basis == "recorded" else "needed nothing fetched again (estimate)"
    else:
        recovered = (f"cost {r.calls} {label}{paid}" if r.basis == "recorded"
                     else f"would cost about {r.calls} {label}{paid} (estimate)")
    return f"The compaction at step {a.step} {saved}, {lost} and {recovered}."


def survival_report(run: Run, *, facts: bool = True) -> dict[str, Any]:
    """The accounts and the run's totals: what `ctxi eval survival --json` prints."""
    accounts = compaction_accounts(run)
    cost = run_cost(run)
    start = fresh_start(run)
    totals = cost.totals()
    return {
        "schema": REPORT_SCHEMA, "version": REPORT_VERSION,
        "compactions": [a.to_dict(facts=facts) for a in accounts],
        "totals": {
            "survival": run_survival_totals([a.survival for a in accounts]),
            "recovery": run_recovery_totals([a.recovery for a in accounts]),
            "fresh_start": start.to_dict(),
            "cache_lost_by_cause": totals["lost_by_cause"],
            "split": totals["split"],
            "recorded_diagnosis": cost.agreement(),
        },
    }


def forensics_summary(run: Run) -> dict[str, Any]:
    """A run's compactions in a few numbers, for tables that set runs side by side (Compare, the policies)."""
    kept = run_survival_totals(survival(run, files=False))
    refetched = recovery(run)
    cost = run_cost(run, accounts=False)
    totals = cost.totals()
    priced = cost.price is not None
    return {"facts kept": kept["rate"], "facts lost": kept["facts_total"] - kept["facts_kept"],
            "file paths kept": kept["classes"]["path"]["rate"],
            "re-fetches": sum(r.calls for r in refetched),
            "re-fetch basis": "/".join(sorted({r.basis for r in refetched})) or "-",
            "re-fetch dollars": round(sum(r.dollars for r in refetched), 6) if priced else None,
            "cache misses dollars": round(sum(v["dollars"] for v in totals["lost_by_cause"].values()), 6)
            if priced else None,
            # the tokens not read are a count; the dollars above are what the misses wrote again (a compaction: what
            # it made the cache write, its account's figure, not its replaced history: engine.cost.run_cost)
            "cache misses by cause": ", ".join(f"{c} {v['tokens']:,} not read, {v['tokens_written_again']:,} written again"
                                               for c, v in totals["lost_by_cause"].items()) or "-",
            "replayed share of input dollars": totals["split"]["replayed_share"]}


def compare_forensics(a: Run, b: Run) -> list[dict[str, Any]]:
    """Run A vs run B: what their compactions kept, what the agent fetched again, what the cache misses cost."""
    fa, fb = forensics_summary(a), forensics_summary(b)
    out = []
    for key in fa:
        x, y = fa[key], fb[key]
        delta = (round(y - x, 6) if isinstance(x, (int, float)) and isinstance(y, (int, float))
                 and not isinstance(x, bool) else "")
        out.append({"metric": key, "A": x, "B": y, "B − A": delta})
    return out


__all__ = ["REPORT_SCHEMA", "CompactionAccount", "compaction_accounts", "compare_forensics", "forensics_summary",
           "headline", "survival_report"]
