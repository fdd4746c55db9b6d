"""`ctxi eval survival|cache FILE`: what each compaction kept, lost and cost to recover; why each step missed the cache.

The numbers are engine.evals.account's and engine.cost's; `--json` prints the same objects the pages show.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from engine.base.wording import plural

if TYPE_CHECKING:
    from engine.run.run import Run

SURVIVAL_HELP = "what each compaction kept of the history it removed, and what the agent fetched again"
CACHE_HELP = "why each step missed the prompt cache, what it cost, and the recorded diagnosis beside ours"


def add_arguments(sub: Any, common: Any) -> None:
    survival = sub.add_parser("survival", help=SURVIVAL_HELP, description=(
        "For every compaction (recorded or simulated): the facts of the removed history by class (file paths, "
        "commands, numbers with units, errors, identifiers and URLs, decisions and open todos), kept or lost; the "
        "calls that fetched again what it held (an estimate for a simulated compaction); the cache it broke; its "
        "summarizer call and payback. Rules: docs/evals.md. Default preset: as-recorded for a thread that recorded "
        "its usage, else deepagents."))
    common(survival)
    survival.add_argument("--no-facts", dest="facts", action="store_false",
                          help="leave the list of facts out of --json output (the counts stay)")
    cache = sub.add_parser("cache", help=CACHE_HELP, description=(
        "Every step whose request could not read what the previous one cached: our cause (model, tools, system, "
        "compaction, edit, insertion, removal, prefix, ttl, lookback), the tokens and dollars lost per cause, the "
        "bill split into new and replayed input, and Claude Code's recorded cache_miss_reason beside ours."))
    common(cache)


def run_survival(args: argparse.Namespace, result: Run, header: dict[str, Any]) -> int:
    from engine.cost.run_cost import run_cost
    from engine.cost.views import cache_off_note, dollars, percent
    from engine.evals.account import compaction_accounts, survival_report
    from engine.evals.fact_classes import CLASS_LABELS, CLASSES

    if args.json:
        report = survival_report(result, facts=args.facts)
        doc = {"schema": report.pop("schema"), "version": report.pop("version"), **header, **report}
        sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=1) + "\n")
        return 0
    accounts = compaction_accounts(result)
    if not accounts:
        print("compactions  none measured (no compaction after the first step with these settings)")
        return 0
    report = survival_report(result, facts=False)["totals"]
    cost = run_cost(result)  # the accounts' own (kept on the run)
    priced, cache_off = cost.price is not None, cache_off_note(cost)
    print(f"compactions  {len(accounts)}; facts kept {percent(report['survival']['rate'])} "
          f"({report['survival']['facts_kept']:,} of {report['survival']['facts_total']:,})")
    for a in accounts:
        print(f"step {a.step:>5}  {a.source} {a.layer}.{a.kind}: {a.tokens_before:,} -> {a.tokens_after:,} tokens")
        print(f"  {a.headline}")
        classes = a.survival.by_class()
        print("  kept " + "; ".join(f"{CLASS_LABELS[c]} {classes[c]['kept']}/{classes[c]['total']}"
                                    for c in CLASSES if classes[c]["total"]))
        r = a.recovery
        edit = ("no new edit" if r.steps_to_first_edit is None
                else f"first new edit {plural(r.steps_to_first_edit, 'step')} later")
        print(f"  recovery ({r.basis}) {plural(r.calls, 'call')}, {r.tokens:,} tokens"
              + (f", {dollars(r.dollars)}" if priced else "") + f"; {edit}")
        cache = a.cache
        # its cost in the cache is what it made the cache write again, the figure in its net; the cached tokens
        # it left unread are the history it replaced, a count (engine.evals.account_rows, WRITTEN_AGAIN)
        if cache_off is None and (cache["lost_tokens"] or cache["write_tokens"]):
            written = ("" if cache["write_tokens"] is None else
                       f"{cache['write_tokens']:,} tokens written again, {dollars(cache['write_dollars'] if priced else None)}; ")
            unread = (f"{cache['lost_tokens']:,} cached tokens not read ({cache['cause']}"
                      + (": replaced, not sent again)" if cache["cause"] == "compaction" else ")"))
            print(f"  cache misses {written}{unread}"
                  + (f"; recorded: {cache['recorded_reason']}" if cache["recorded_reason"] else ""))
    if cache_off is not None:
        print(f"cache        {cache_off}")
    fresh = report["fresh_start"]
    if fresh["steps_to_first_edit"] is not None:
        print(f"fresh start  first edit after {plural(fresh['steps_to_first_edit'], 'step')} "
              f"({plural(fresh['actions_before_first_edit'], 'action')})")
    return 0


def run_cache(args: argparse.Namespace, result: Run, header: dict[str, Any]) -> int:
    from engine.cost.run_cost import run_cost
    from engine.cost.views import cache_off_note, dollars, percent
    from engine.evals.account_rows import misses_by_cause

    cost = run_cost(result, accounts=False)  # a compaction's miss is still its account's (StepCost.miss_dollars)
    totals = cost.totals()
    misses = misses_by_cause(cost)
    # per step: the unread tokens and their price if sent again (`lost_*`, StepCost.unread_dollars: for reference at
    # a step charged to a compaction, whose history is never sent again), and what the step is charged (`miss_*`,
    # under `charged_as`, what lost_by_cause sums): a compaction's own cache misses (also where a change of model,
    # tools or system prompt came first), any other miss's unread tokens written again
    steps = [{"step": s.step, "cause": s.cause, "detail": s.cause_detail, "lost_tokens": s.cache.lost,
              "lost_dollars": round(s.unread_dollars, 6), "charged_as": s.charged_as, "miss_tokens": s.miss_tokens,
              "miss_dollars": None if s.miss_dollars is None else round(s.miss_dollars, 6), "recorded": s.recorded_reason,
              "recorded_missed_tokens": s.recorded_missed_tokens, "agrees": s.agrees}
             for s in cost.steps
             if s.cause is not None or s.charged_as is not None or s.recorded_reason not in (None, "none")]
    if args.json:
        doc = {"schema": "context-inspector/eval-cache", "version": 1, **header, "provider": cost.rules.kind,
               "steps": steps, "lost_by_cause": totals["lost_by_cause"], "misses_by_cause": misses,
               "cache_modelled": cost.rules.kind != "none", "split": totals["split"],
               "recorded_split": totals.get("recorded_split"), "recorded_diagnosis": cost.agreement()}
        sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=1) + "\n")
        return 0
    print(f"cache        {cost.rules.kind}, hit rate {percent(totals['hit_rate'])}")
    off = cache_off_note(cost)
    if off is not None:
        print(f"  {off}")
    for cause, row in misses.items():
        again = row["tokens_written_again"]
        print(f"  {cause:11} {plural(row['steps'], 'step')}, {row['tokens_not_read']:,} tokens not read, "
              + ("" if again is None else f"{again:,} written again, ") + dollars(row["dollars"]))
    split = totals["split"]
    if cost.price is None:  # unknown dollars read "-", never $0.00 (docs/dashboard.md): the tokens' share only
        print(f"bill split   unpriced; replayed input {percent(split['replayed_token_share'])} of the input tokens")
    else:
        print(f"bill split   new input {dollars(split['new_dollars'])}, replayed input "
              f"{dollars(split['replayed_dollars'])} ({percent(split['replayed_share'])} of input dollars), "
              f"output {dollars(split['output_dollars'])}")
    agreement = cost.agreement()
    if agreement is not None:
        print(f"recorded     {agreement['scored']} scored of {agreement['recorded_steps']} diagnosed steps; "
              f"ours agrees at {agreement['agreed']} ({percent(agreement['rate'])})")
        for d in agreement["disagreements"]:
            print(f"  step {d['step']:>5} recorded {d['recorded']}, ours {d['ours'] or 'no miss'}")
    return 0
