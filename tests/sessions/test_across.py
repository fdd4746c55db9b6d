"""Across sessions: the set at a glance from the list's rows, and which policy saves the most per compaction."""

from __future__ import annotations

from pathlib import Path

from engine.config.schema import preset
from engine.evals.sweep import sweep
from engine.sessions.across import policy_table, session_figures, totals, verdict
from engine.sessions.listing import SummaryIndex, summarize_listing
from engine.thread.synthetic import synthetic_thread
from engine.workspace.disk_sessions import discover, resolve_roots
from tests.sessions import trees


def test_totals_and_rows_come_from_the_list(tmp_path: Path) -> None:
    trees.make_all(tmp_path)
    rows = summarize_listing(discover(resolve_roots([tmp_path])), index=SummaryIndex(), workers=1).rows
    t = totals(rows)
    compacted = [r.agent for r in rows if r.compactions]
    assert compacted == ["cline"]  # the hand-made Cline task truncates once (tests/formats/test_cline.py XML_UI)
    assert (t["sessions"], t["compacted"], t["overflowed"], t["steps"]) == (6, 1, 0, sum(r.steps for r in rows))
    assert t["dollars"] == round(sum(r.dollars for r in rows if r.dollars is not None), 6)
    assert {r["id"] for r in session_figures(rows)} == {r.id for r in rows}


def test_the_policy_that_saves_most_per_compaction_is_marked() -> None:
    threads = [synthetic_thread(steps=40, seed=s) for s in (1, 2)]
    result = sweep(threads, preset("stress"), {"preset": ["stress", "deepagents", "langchain"]}, executor="serial")
    rows = policy_table(result)
    assert [r.policy for r in rows] == ["stress", "deepagents", "langchain"]
    by = {r.policy: r for r in rows}
    assert by["langchain"].compactions == 0 and by["langchain"].saved_per_compaction is None  # never compacts
    best = [r for r in rows if r.best]
    assert len(best) == 1
    compacting = [r for r in rows if r.compactions]
    assert best[0].saved_per_compaction == max(r.saved_per_compaction for r in compacting)
    assert verdict(rows, 2).startswith(f"On these 2 session(s), {best[0].policy} saves the most per compaction")
