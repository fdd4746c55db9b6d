"""One account per compaction, its JSON, and `ctxi eval survival|cache`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cli.ctxi import main
from engine.config.schema import preset
from engine.cost.run_cost import run_cost
from engine.evals.account import compaction_accounts, survival_report
from engine.formats.native import dumps
from engine.run.replay import replay
from tests.conftest import TRACES, trace_path
from tests.evals.forensics_threads import SUMMARY, TEST_FILE, coding_thread

SETS = ["--set", "tokens.counter=approximate", "--set",
        "cost.prices=[{prefix: claude-sonnet-4-5, input: 1, output: 10, cache_read: 0.1, cache_write_5m: 1.25, "
        "cache_write_1h: 2}]"]


def _run():
    return replay(coding_thread(), preset("as-recorded").with_overrides([s for s in SETS if s != "--set"]))


def test_the_account_joins_survival_recovery_cache_and_payback() -> None:
    run = _run()
    [a] = compaction_accounts(run)
    cost = run_cost(run)
    assert (a.step, a.source, a.layer, a.kind, a.trigger) == (3, "recorded", "recorded", "compaction", "auto")
    assert a.summary == SUMMARY and a.summary_tokens == run.counter.count_text(SUMMARY)
    assert a.tokens_after == run.steps[3].view_tokens
    assert a.survival.rate == 0.3846 and a.recovery.calls == 2
    assert a.cache["cause"] == "compaction" and a.cache["lost_tokens"] == cost.steps[3].cache.lost
    assert a.payback is not None and a.payback["net_dollars"] == round(cost.compactions[0].net_dollars, 6)
    assert "per_step" not in a.payback
    net = cost.compactions[0].net_dollars
    from engine.cost.views import dollars

    word = "saved" if net >= 0 else "cost"
    assert a.headline == (f"The compaction at step 3 {word} {dollars(abs(net))} net, lost 1 of 3 file paths and "
                          f"cost 2 re-fetches ({dollars(a.recovery.dollars)}).")
    doc = a.to_dict()
    assert sorted(doc) == ["cache", "headline", "kind", "layer", "payback", "recorded_tokens_before", "recovery",
                           "source", "step", "summarizer", "summary", "summary_tokens", "survival", "tokens_after",
                           "tokens_before", "trigger"]
    assert doc["survival"]["facts"][0] == {"class": "path", "value": TEST_FILE, "kept": True, "where": "summary",
                                           "recoverable": False, "step": 0, "message_id": "h0"}
    assert "facts" not in a.to_dict(facts=False)["survival"]


def test_the_report_totals_pool_every_compaction() -> None:
    report = survival_report(_run(), facts=False)
    totals = report["totals"]
    assert totals["survival"]["facts_total"] == 13 and totals["survival"]["facts_kept"] == 5
    assert totals["recovery"]["calls"] == 2 and totals["recovery"]["bases"] == ["recorded"]
    assert totals["fresh_start"] == {"first_edit_step": 2, "steps_to_first_edit": 2, "actions_before_first_edit": 2}
    assert set(totals) == {"survival", "recovery", "fresh_start", "cache_lost_by_cause", "split", "recorded_diagnosis"}


@pytest.fixture()
def thread_file(tmp_path: Path) -> str:
    path = tmp_path / "coding.json"
    path.write_text(dumps(coding_thread()), encoding="utf-8")
    return str(path)


def test_ctxi_eval_survival_json_defaults_to_the_recorded_compactions(thread_file: str,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "survival", thread_file, *SETS, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == "context-inspector/eval-survival" and doc["config"]["preset"] == "as-recorded"
    [c] = doc["compactions"]
    assert (c["step"], c["source"], c["survival"]["facts_total"], c["recovery"]["calls"]) == (3, "recorded", 13, 2)
    assert main(["eval", "survival", thread_file, *SETS, "--json", "--no-facts"]) == 0
    assert "facts" not in json.loads(capsys.readouterr().out)["compactions"][0]["survival"]


def test_ctxi_eval_survival_and_cache_text(thread_file: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "survival", thread_file, *SETS]) == 0
    out = capsys.readouterr().out
    assert "compactions  1; facts kept 38.5% (5 of 13)" in out
    assert "recovery (recorded) 2 calls" in out and "first new edit 2 steps later" in out
    assert main(["eval", "cache", thread_file, *SETS, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == "context-inspector/eval-cache"
    assert [(s["step"], s["cause"]) for s in doc["steps"]] == [(0, "first call"), (3, "compaction")]
    assert doc["recorded_diagnosis"] is None  # the thread records no diagnosis


# TRACES, not trace_path: trace_path skips the calling test, and a decorator runs as the module is collected
@pytest.mark.skipif(not TRACES.joinpath("claude-code", "4d5611e5-241a-462a-8d15-5122611a9569.jsonl").exists(),
                    reason="../shared/traces is absent")
def test_a_real_claude_code_compaction_account() -> None:
    from engine.formats import load_thread

    thread = load_thread(trace_path("claude-code", "4d5611e5-241a-462a-8d15-5122611a9569.jsonl"))
    [a] = compaction_accounts(replay(thread, preset("as-recorded")))
    classes = {cls: (c["kept"], c["total"]) for cls, c in a.survival.by_class().items()}
    assert classes == {"path": (15, 20), "command": (5, 24), "number": (5, 45), "error": (1, 2),
                       "identifier": (23, 29), "decision": (1, 8)}
    assert (a.recovery.basis, a.recovery.calls, a.recovery.steps_to_first_edit) == ("recorded", 5, 0)
    assert [r.step for r in a.recovery.refetches] == [65, 65, 70, 80, 137]
    assert a.cache["cause"] == "compaction" and a.recorded_tokens_before == 170_251
