"""Survival of a compaction's removed history, and the recovery it cost, on hand-made threads with known answers."""

from __future__ import annotations

from engine.config.schema import preset
from engine.evals.recovery import fresh_start, recovery
from engine.evals.survival import run_survival_totals, survival
from engine.run.replay import replay
from engine.summarizers.choice import CallableSummarizer
from tests.evals.forensics_threads import SETTINGS, TEST_FILE, coding_thread
from tests.evals.threads import summarization_only

APPROX = ["tokens.counter=approximate"]
PRICED = ["cost.prices=[{prefix: claude-sonnet-4-5, input: 1, output: 10, cache_read: 0.1, cache_write_5m: 1.25, "
          "cache_write_1h: 2}]"]


def _recorded():
    return replay(coding_thread(), preset("as-recorded").with_overrides([*APPROX, *PRICED]))


def test_a_recorded_compaction_keeps_what_its_summary_states() -> None:
    [s] = survival(_recorded())
    assert (s.step, s.source, s.layer, s.removed_messages) == (3, "recorded", "recorded", 7)
    facts = {(f.cls, f.value): (f.kept, f.where, f.step, f.message_id) for f in s.facts}
    assert facts == {
        ("path", TEST_FILE): (True, "summary", 0, "h0"),  # the summary writes tests/test_upload.py
        ("path", "tests/test_upload.py"): (True, "summary", 1, "a1"),
        ("path", SETTINGS): (False, None, 2, "a2"),
        ("command", "pytest tests/test_upload.py -x"): (False, None, 1, "a1"),
        ("number", "1500 ms"): (True, "summary", 1, "t1"),
        ("number", "1 failed"): (False, None, 1, "t1"),
        ("number", "41 passed"): (False, None, 1, "t1"),
        ("number", "3.52 s"): (False, None, 1, "t1"),
        ("number", "2 second"): (False, None, 2, "a2"),
        ("error", "FAILED tests/test_upload.py::test_upload - TimeoutError: upload took 1500 ms"): (True, "summary", 1, "t1"),
        ("identifier", "OPS-2210"): (True, "summary", 0, "h0"),
        ("decision", "I'll read the failing test first."): (False, None, 0, "a0"),
        ("decision", "The fix is to raise the upload timeout to 2 seconds in the config settings."): (False, None, 2, "a2"),
    }
    rates = {cls: (c["kept"], c["total"], c["rate"]) for cls, c in s.by_class().items()}
    assert rates == {"path": (2, 3, 0.6667), "command": (0, 1, 0.0), "number": (1, 5, 0.2), "error": (1, 1, 1.0),
                     "identifier": (1, 1, 1.0), "decision": (0, 2, 0.0)}
    assert (s.kept, len(s.facts), s.rate) == (5, 13, 0.3846)
    assert run_survival_totals([s])["rate"] == 0.3846


def test_what_the_view_keeps_by_id_was_not_removed_and_counts_as_kept() -> None:
    run = replay(coding_thread(compacted=False), summarization_only("state"),
                 summarizer=CallableSummarizer(lambda messages: "Upload test OPS-2210 fails."))
    first, second, third = survival(run)
    assert [s.step for s in (first, second, third)] == [3, 4, 6]
    assert first.removed_messages == 5  # h0, a0, t0, a1, t1: a2 and t2 are kept (keep = 2 messages)
    assert {f.value for f in first.facts if f.kept} == {"OPS-2210"}
    # the third compaction removes a3/t3/a4/t4 and the second summary; a5 (an edit of TEST_FILE) is kept
    assert [(f.value, f.where) for f in third.facts if f.cls == "path"] == [(TEST_FILE, "kept"),
                                                                            ("tests/test_upload.py", "kept")]


def test_a_lost_fact_the_history_file_holds_is_recoverable() -> None:
    run = replay(coding_thread(compacted=False), summarization_only("view"),
                 summarizer=CallableSummarizer(lambda messages: "Upload test OPS-2210 fails."))
    first = survival(run)[0]
    lost = [f for f in first.facts if not f.kept]
    assert lost and all(f.recoverable for f in lost)  # Deep Agents' /conversation_history/<session>.md
    state = survival(replay(coding_thread(compacted=False), summarization_only("state"),
                            summarizer=CallableSummarizer(lambda messages: "Upload test OPS-2210 fails.")))[0]
    assert not any(f.recoverable for f in state.facts)  # state mode writes no history file


def test_the_agent_re_read_and_re_ran_what_the_compaction_removed() -> None:
    run = _recorded()
    [r] = recovery(run)
    assert (r.basis, r.step, r.horizon_end) == ("recorded", 3, 8)
    # step 3 re-reads the test file, step 4 re-runs pytest; step 6's pytest comes after an edit: new output
    assert [(x.step, x.kind, x.target, x.original_step) for x in r.refetches] == [
        (3, "read", TEST_FILE, 0), (4, "command", "pytest tests/test_upload.py -x", 1)]
    assert (r.first_edit_step, r.steps_to_first_edit, r.actions_before_first_edit) == (5, 2, 2)
    tokens = [run.counter.count_message(m) for m in run.thread.messages if m.id in ("t3", "t4")]
    assert [x.result_tokens for x in r.refetches] == tokens and r.tokens == sum(tokens)
    from engine.cost.run_cost import run_cost

    cost = run_cost(run)
    # each call costs its step's recorded-or-modelled bill (one call per response here) and its result written
    # to the cache at 1.25 $/M
    expected = [cost.steps[k].bill.total + t * 1.25 / 1e6 for k, t in ((3, tokens[0]), (4, tokens[1]))]
    assert [round(x.dollars, 9) for x in r.refetches] == [round(e, 9) for e in expected]
    assert fresh_start(run).to_dict() == {"first_edit_step": 2, "steps_to_first_edit": 2, "actions_before_first_edit": 2}


def test_a_simulated_compaction_estimates_the_refetches_later_steps_need() -> None:
    run = _recorded()
    estimate = recovery(run)[0].estimate
    assert estimate is not None and estimate.basis == "estimate"
    # the read of TEST_FILE (t0) and the pytest run (t1) were removed, and steps 3 and 4 use them again
    assert [(x.step, x.kind, x.target) for x in estimate.refetches] == [
        (3, "read", TEST_FILE), (4, "command", "pytest tests/test_upload.py -x")]
    whatif = replay(coding_thread(compacted=False), summarization_only("state").with_overrides(PRICED),
                    summarizer=CallableSummarizer(lambda messages: "Upload test OPS-2210 fails."))
    first = recovery(whatif)[0]
    assert (first.basis, first.step, first.horizon_end) == ("estimate", 3, 4)
    assert [(x.step, x.kind, x.target) for x in first.refetches] == [(3, "read", TEST_FILE)]  # a3 re-reads it


def test_a_command_run_again_after_a_write_is_new_output_not_a_refetch() -> None:
    thread = coding_thread()
    del thread.messages[11:13]  # no re-run before the edit: pytest runs again only after it
    run = replay(thread, preset("as-recorded").with_overrides([*APPROX, *PRICED]))
    [r] = recovery(run)
    assert [(x.step, x.kind) for x in r.refetches] == [(3, "read")]
    assert (r.first_edit_step, r.actions_before_first_edit) == (4, 1)
