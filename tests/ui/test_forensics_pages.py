"""The compaction accounts through AppTest: the card on Layers › Summaries, the Evals survival tab, the sweep's
survival columns and Pareto axes, Compare's rows. The numbers are engine.evals.account's (tested by hand in
tests/evals/test_survival.py and test_account.py); these tests check each page shows the same ones."""

from __future__ import annotations

import re

from engine.config.schema import preset
from engine.cost.views import percent
from engine.evals.account import compaction_accounts, survival_report
from engine.evals.account_rows import compaction_rows
from engine.run.replay import replay
from tests.ui.builders import demo_thread

PRICED = {"preset": "stress", "cost.model": "claude-sonnet-4-5"}


def plain(elements) -> str:  # noqa: ANN001
    return " ".join(re.sub(r"\\(.)", r"\1", e.value) for e in elements)


def frames(at) -> list[list[dict]]:  # noqa: ANN001
    return [f.value.to_dict(orient="records") for f in at.dataframe]


def _accounts(at):  # noqa: ANN001, ANN201
    run = replay(demo_thread(), at.session_state["config"])
    return run, compaction_accounts(run)


def test_the_summaries_tab_shows_the_selected_compactions_account(start) -> None:  # noqa: ANN001
    at = start("pages/layers.py", **PRICED)
    at.session_state["tab"] = "Summaries"
    at.run()
    assert not at.exception, at.exception
    run, accounts = _accounts(at)
    assert accounts, "the stress preset compacts the demo thread"
    first = accounts[0]
    text = plain(at.markdown)
    assert f"Compaction account · step {first.step}" in text and first.headline in text
    classes = next(rows for rows in frames(at) if rows and "facts" in rows[0] and "survival" in rows[0])
    assert [(r["kept"], r["total"]) for r in classes] == [
        (c["kept"], c["total"]) for c in first.survival.by_class().values()]
    metric = {m.label: m.value for m in at.metric}
    assert metric["facts kept"] == f"{first.survival.kept} of {len(first.survival.facts)}"


def test_the_evals_survival_tab_lists_every_compaction(start) -> None:  # noqa: ANN001
    at = start("pages/evals.py", **PRICED)
    at.session_state["tab"] = "Compaction survival"
    at.run()
    assert not at.exception, at.exception
    run, accounts = _accounts(at)
    table = next(rows for rows in frames(at) if rows and "facts kept" in rows[0] and "re-fetches" in rows[0])
    expected = compaction_rows(accounts, priced=True)
    assert [r["step"] for r in table] == [r["step"] for r in expected]
    assert [r["facts kept"] for r in table] == [r["facts kept"] for r in expected]
    totals = survival_report(run, facts=False)["totals"]
    metric = {m.label: m.value for m in at.metric}
    assert metric["Facts kept"] == percent(totals["survival"]["rate"])
    assert metric["Re-fetches"] == f"{totals['recovery']['calls']:,}"
    causes = next(rows for rows in frames(at) if rows and "cause" in rows[0] and "tokens not read" in rows[0])
    assert {r["cause"] for r in causes} <= {"compaction", "ttl", "edit", "removal", "insertion", "lookback", "prefix"}


def test_a_selected_row_names_the_step_to_open() -> None:
    from ui.forensics import selected_step

    rows = [{"step": 12, "fact": "a"}, {"step": 40, "fact": "b"}, {"step": None, "fact": "c"}]
    assert selected_step({"selection": {"rows": [1], "columns": []}}, rows, "step") == 40
    assert selected_step({"selection": {"rows": []}}, rows, "step") is None
    assert selected_step({"selection": {"rows": [2]}}, rows, "step") is None
    assert selected_step({"selection": {"rows": [9]}}, rows, "step") is None
    assert selected_step(None, rows, "step") is None


def test_the_policies_table_and_compare_page_show_survival(start) -> None:  # noqa: ANN001
    at = start("pages/compare.py", **PRICED)
    assert not at.exception, at.exception
    facts = next(rows for rows in frames(at) if rows and rows[0].get("") == "format")
    names = [r[""] for r in facts]
    assert "facts kept after compactions" in names and "re-fetches after compactions" in names
    config = preset("stress").with_overrides(["cost.model=claude-sonnet-4-5"])
    assert compaction_accounts(replay(demo_thread(), config))  # the open thread compacts under these settings


def test_compare_says_no_compaction_where_a_run_has_none(start) -> None:  # noqa: ANN001
    """A run without compactions has nothing to account for: its cells say so, not "-" and "0 (-)"
    (the walk-through's Compare of the landing sample against code-analysis)."""
    at = start("pages/compare.py", thread="sample:a_demo", vs="sample:b_small", **PRICED)
    assert not at.exception, at.exception
    facts = {r[""]: r for r in next(rows for rows in frames(at) if rows and rows[0].get("") == "format")}
    assert facts["recorded compactions"]["B"] == "0" and facts["summarizer calls"]["B"] == "0"
    assert facts["facts kept after compactions"]["B"] == facts["re-fetches after compactions"]["B"] == "no compaction"
    assert facts["summarizer calls"]["A"] != "0"  # A compacts: its numbers, without a "(-)" basis
    assert re.fullmatch(r"\d+\.\d%", facts["facts kept after compactions"]["A"])
    assert "(-)" not in facts["re-fetches after compactions"]["A"]


def test_the_policies_table_writes_shares_as_percents_and_says_none(start) -> None:  # noqa: ANN001
    """The walk-through read needle retention as "0" and "1" and an empty "compaction steps" cell for a policy
    that never compacts (Config › Compare runs on the landing sample)."""
    at = start("pages/config.py", preset="stress")
    at.session_state["tab"] = "Compare runs"
    at.run()
    assert not at.exception, at.exception
    rows = next(rows for rows in frames(at) if rows and "needle retention" in rows[0])
    for r in rows:
        assert re.fullmatch(r"\d+\.\d%|n/a", r["needle retention"]), r
        assert re.fullmatch(r"\d+\.\d%|n/a|no compaction", r["facts kept"]), r
        assert r["compaction steps"] == ("none" if r["compactions"] == 0 else r["compaction steps"]) != ""
        assert r["facts kept"] != "no compaction" or r["compactions"] == 0
    assert any(r["compactions"] == 0 for r in rows) and any(r["compactions"] > 0 for r in rows)
