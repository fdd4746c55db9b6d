"""What a compaction cost, as the pages show it: one card per compaction (Layers › Summaries) and the run's
survival, recovery and cache-miss tables (Evals). The numbers are engine.evals.account's; the rows are
engine.evals.account_rows'; this module only lays them out. A failure says so in one line."""

from __future__ import annotations

import streamlit as st

from engine.base.wording import plural
from engine.cost.run_cost import RunCost
from engine.cost.views import cache_off_note, dollars, percent
from engine.evals.account import CompactionAccount, compaction_accounts, compare_forensics, survival_report
from engine.evals.account_rows import (
    account_metrics,
    cache_line,
    cause_rows,
    class_rows,
    compaction_rows,
    disagreement_rows,
    fact_rows,
    refetch_rows,
    summarizer_line,
)
from engine.evals.fact_classes import CLASS_LABELS, CLASSES
from engine.run.run import Run
from ui import session
from ui.advice import no_compaction_advice, stress_applies
from ui.figures import compaction_by
from ui.text import error_text, escape_md
from ui.widgets import EMPTY_CELL, table, table_height

RULES = "docs/evals.md, *Compaction survival*"


def accounts_of(run: Run) -> list[CompactionAccount] | None:
    """The run's compaction accounts (kept on the cached run), or None after one error line."""
    try:
        return compaction_accounts(run)
    except Exception as exc:  # an eval bug must not take the page down
        st.error(escape_md(f"The compaction accounts failed on this run: {error_text(exc)}"))
        return None


def selected_step(event: object, rows: list[dict[str, object]], column: str) -> int | None:
    """The step in `column` of the row a dataframe selection points at (its state object, or a plain dict)."""
    selection = event.get("selection") if isinstance(event, dict) else getattr(event, "selection", None)
    picked = selection.get("rows") if isinstance(selection, dict) else getattr(selection, "rows", None)
    if not picked or not 0 <= picked[0] < len(rows):
        return None
    step = rows[picked[0]].get(column)
    return step if isinstance(step, int) else None


def _open_step(key: str, rows: list[dict[str, object]], column: str) -> None:
    """A table whose selected row opens the Step page at that row's step (the dataframe's on_select callback)."""
    step = selected_step(st.session_state.get(key), rows, column)
    if step is not None:
        session.set_step(step)
        session.go_to("pages/step.py")


def _selectable(rows: list[dict[str, object]], key: str, column: str) -> None:
    if not rows:
        st.caption("None.")
        return
    numeric = [c for c in rows[0] if all(isinstance(r.get(c), int | None) and not isinstance(r.get(c), bool)
                                         for r in rows) and "step" not in c]
    st.dataframe(rows, hide_index=True, key=key, placeholder=EMPTY_CELL, on_select=lambda: _open_step(key, rows, column),
                 selection_mode="single-row", height=table_height(len(rows)),
                 column_config={c: st.column_config.NumberColumn(c, format="localized") for c in numeric})


def compaction_card(run: Run, account: CompactionAccount, cost: RunCost | None) -> None:
    """One compaction's whole account: what it saved, kept, lost and cost to recover, and the cache it broke."""
    priced = cost is not None and cost.price is not None
    cache_off = cache_off_note(cost) if cost is not None else None
    with st.container(border=True):
        who = ("recorded by the source agent" if account.source == "recorded"
               else f"simulated by this run ({escape_md(compaction_by(account.layer))})")
        st.markdown(f"**Compaction account · step {account.step}** · {who}"
                    + (f" · trigger {escape_md(account.trigger)}" if account.trigger else ""))
        st.markdown(escape_md(account.headline))
        metrics = list(account_metrics(account, priced=priced, cache_modelled=cache_off is None).items())
        # one row that wraps, each tile as wide as its label and value: four fixed columns cut both at 1024 px
        # ("facts kept 95 of …", "cache written agai…": a projector, walk-through)
        row = st.container(horizontal=True, gap="medium", key=f"account_metrics_{account.step}")
        for label, value in metrics:
            row.metric(label, value, width="content")
        st.caption("Request before: what the step would have sent without the compaction; after: what it sent (whole "
                   "requests, prompt included)."
                   + (f" The source agent counted {account.recorded_tokens_before:,} tokens before it."
                      if account.recorded_tokens_before is not None else ""))
        left, right = st.columns([3, 2])
        with left:
            st.markdown("**What survived, by class**")
            table(class_rows(account.survival), height=table_height(len(CLASSES)))
        with right:
            st.caption(f"Kept = still in what the model sees after the compaction: the summary, a message kept, a "
                       f"re-injected file, the system prompt. Lost facts a file of the run still holds are "
                       f"*recoverable*. Rules: {RULES}.")
            classes = ["all", *[c for c in CLASSES if any(f.cls == c for f in account.survival.facts)]]
            cls = st.selectbox("Facts of the class", classes, key=f"fx_class_{account.step}",
                               format_func=lambda c: "every class" if c == "all" else CLASS_LABELS[c])
            status = st.radio("Show", ["lost", "kept", "all"], horizontal=True, key=f"fx_status_{account.step}")
        rows = fact_rows(account.survival, cls=None if cls == "all" else cls,
                         kept=None if status == "all" else status == "kept")
        _selectable(rows, f"fx_facts_{account.step}", "introduced at step")
        st.caption("Select a row to open the step that introduced the fact."
                   + (f" The first {len(rows)} shown." if len(rows) == 200 else ""))
        r = account.recovery
        label = ("What the agent fetched again afterwards (recorded)" if r.basis == "recorded"
                 else "What the later steps would need again (an estimate: the removed reads and runs they use)")
        st.markdown(f"**{label}** · {r.calls} call{'s' if r.calls != 1 else ''}, {r.tokens:,} tokens"
                    + (f", {dollars(r.dollars)}" if priced else "")
                    + (f" · first new edit {plural(r.steps_to_first_edit, 'step')} later" if r.steps_to_first_edit is not None
                       else " · no new edit before the next compaction"))
        _selectable(refetch_rows(r, priced=priced), f"fx_refetch_{account.step}", "step")
        if r.estimate is not None and r.basis == "recorded":
            e = r.estimate
            st.caption(f"The estimate for the same compaction: {e.calls} re-fetch{'es' if e.calls != 1 else ''}, "
                       f"{e.tokens:,} tokens.")
        st.markdown("**The cache it broke** · " + escape_md(cache_line(account, priced=priced, cache_off=cache_off)))
        line = summarizer_line(account, priced=priced)
        if line:
            st.caption(escape_md(line))
        with st.expander("The account as JSON (`ctxi eval survival FILE --json` prints the same)"):
            st.json(account.to_dict(facts=False), expanded=False)


def card_at(run: Run, step: int, cost: RunCost | None) -> None:
    """The account of the compaction at `step`, if the run measured one there."""
    accounts = accounts_of(run)
    account = next((a for a in accounts or [] if a.step == step), None)
    if account is not None:
        compaction_card(run, account, cost)
    elif accounts is not None and step == 0:
        st.caption("A compaction at the first step has no request before it: nothing to account for.")


def survival_section(run: Run, cost: RunCost | None) -> None:
    """Evals: every compaction's survival and recovery, the run's totals, the cache's misses by cause."""
    accounts = accounts_of(run)
    if accounts is None:
        return
    priced = cost is not None and cost.price is not None
    cache_off = cache_off_note(cost) if cost is not None else None
    if not accounts:
        st.info("No compaction after the first step with these settings: nothing removed, nothing to account for. "
                + no_compaction_advice(run.config, stress=stress_applies(run.config, run.thread)))
    else:
        totals = survival_report(run, facts=False)["totals"]
        kept, rec, fresh = totals["survival"], totals["recovery"], totals["fresh_start"]
        cols = st.columns(5)
        cols[0].metric("Facts kept", percent(kept["rate"]), help="facts of the removed history still in what the "
                       "model sees after each compaction, over every compaction of the run")
        cols[1].metric("File paths kept", percent(kept["classes"]["path"]["rate"]))
        cols[2].metric("Re-fetches", f"{rec['calls']:,}", help="calls that fetched again what a compaction removed "
                       "(recorded compactions: what the agent did; simulated: an estimate)")
        cols[3].metric("Re-fetch cost", dollars(rec["dollars"]) if priced else "-")
        cols[4].metric("Fresh start: first edit", "-" if fresh["steps_to_first_edit"] is None
                       else f"step {fresh['steps_to_first_edit']}",
                       help="steps from the first call to the first write or edit, to compare with each compaction's")
        st.markdown("**After each compaction**")
        rows = [{**r, "by": compaction_by(str(r["by"]))}
                for r in compaction_rows(accounts, priced=priced, cache_modelled=cache_off is None)]
        _selectable(rows, "fx_eval_compactions", "step")
        st.caption("Per class: facts kept / facts the removed history held. Re-fetches: the agent's own calls after "
                   "a recorded compaction; an estimate (est.) for a simulated one. Cache written again: the tokens "
                   "the compaction made the prompt cache write (its summary and what it kept), the cache misses in "
                   f"its net. Select a row to open the step. Rules: {RULES}.")
        pick = st.selectbox("Facts of the compaction at step", [a.step for a in accounts], key="fx_eval_pick")
        chosen = next(a for a in accounts if a.step == pick)
        st.markdown(escape_md(chosen.headline))
        _selectable(fact_rows(chosen.survival), "fx_eval_facts", "introduced at step")
    if cost is None:
        return
    st.markdown("**Why the prompt cache missed**")
    rows = cause_rows(cost)
    if cache_off is not None:  # nothing cached, nothing missed: "no step lost" would read as a cache that worked
        st.caption(escape_md(cache_off))
    elif rows:
        table(rows, height=table_height(len(rows)))
        st.caption("Tokens not read: what the previous call had cached and the step could not read. Tokens written "
                   "again and dollars: what the miss made the cache write, priced over a cache read. A compaction's "
                   "unread tokens are the history it replaced, not sent again: its row counts what it sent in their "
                   "place, at the write price — the cache misses its account and its net charge.")
    else:
        st.caption("No step lost what the previous one cached.")
    split = cost.totals()["split"]
    st.caption(f"Input re-sent from earlier calls: {percent(split['replayed_token_share'])} of the input tokens"
               + (f", {percent(split['replayed_share'])} of the input dollars ({dollars(split['replayed_dollars'])} of "
                  f"{dollars(split['replayed_dollars'] + split['new_dollars'])})" if priced else "") + ".")
    report = cost.agreement()
    if report is not None:
        st.markdown(f"**Claude Code's own diagnosis** · {report['recorded_steps']} steps recorded one; "
                    f"{report['scored']} compared; ours agrees at {report['agreed']} ({percent(report['rate'])})")
        disagreements = disagreement_rows(cost)
        if disagreements:
            _selectable(disagreements, "fx_eval_disagree", "step")


def compare_section(a: Run, b: Run) -> None:
    """Run A vs run B: what their compactions kept, what the agent fetched again, what the cache misses cost."""
    try:
        rows = compare_forensics(a, b)
    except Exception as exc:  # an eval bug must not take the page down
        st.error(escape_md(f"The compaction accounts failed: {error_text(exc)}"))
        return
    st.markdown("**What the compactions kept and cost afterwards**")
    table([{k: ("-" if v is None else v) for k, v in r.items()} for r in rows], height=table_height(len(rows)))
