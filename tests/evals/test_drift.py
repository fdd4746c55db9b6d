"""Goal drift: the session intent after each compaction, flags and the too-long placeholder."""

from __future__ import annotations

from engine.config.schema import preset
from engine.evals import goal_drift, session_intent
from engine.evals.drift import intent_overlap, intent_section, quotes_request
from engine.run.replay import replay
from engine.thread.model import RecordedCompaction
from tests.evals.threads import INTENT, greeting_thread, needle_thread, summarization_only


def test_intent_survives_in_the_summary_session_intent() -> None:
    report = goal_drift(replay(needle_thread(), summarization_only("state")))
    assert report.intent == INTENT and report.intent_id == "h0"
    assert report.statuses == ["before", "before", "before", "summary", "summary"]
    assert [c.to_dict() for c in report.checks] == [{"step": 3, "source": "simulated", "status": "summary",
                                                     "placeholder": False, "has_intent_section": True,
                                                     "overlap": 1.0, "quoted": True}]
    assert report.flagged_steps == [] and report.score == 1.0


def test_placeholder_is_flagged_and_the_intent_missing() -> None:
    run = replay(needle_thread(), summarization_only("state", "summarization.trim_tokens_to_summarize=20"))
    report = goal_drift(run)
    assert report.statuses == ["before", "before", "before", "missing", "missing"]
    assert report.flagged_steps == [3, 4]
    assert report.placeholder_steps == [3, 4]
    assert report.checks[0].placeholder and report.checks[0].status == "missing"
    assert report.score == 0.0


def test_intent_kept_when_only_an_earlier_message_was_summarized() -> None:
    run = replay(greeting_thread(), summarization_only("state", "summarization.keep=messages:5"))
    report = goal_drift(run)
    assert report.statuses == ["before", "before", "before", "kept"]
    assert report.checks[0].status == "kept"
    assert report.score == 1.0


def test_no_compaction_means_nothing_checked() -> None:
    run = replay(needle_thread(), summarization_only("state", "summarization.trigger=messages:100"))
    report = goal_drift(run)
    assert report.statuses == ["before"] * 5 and report.checks == [] and report.score is None


def test_session_intent_and_section_parsing() -> None:
    assert session_intent(needle_thread()).id == "h0"
    summary = "## SESSION INTENT\n- Migrate billing to the cluster\n\n## SUMMARY\n- read files"
    assert intent_section(summary) == "- Migrate billing to the cluster"
    claude = "Summary:\n1. Primary Request and Intent:\n   Migrate billing.\n2. Key Technical Concepts:\n   - x"
    assert intent_section(claude) == "Migrate billing."
    assert intent_section("no sections here") is None
    # content words: migrate, billing, service, new, cluster, vault, code, zebra-4411 -> 3 of 8 present
    assert intent_overlap(INTENT, "migrate the billing cluster") == 0.375
    assert intent_overlap(INTENT, "x " + INTENT.upper() + " y") == 1.0


def test_recorded_compaction_summary_stands_for_the_cut_history() -> None:
    covered = needle_thread()
    covered.compactions.append(RecordedCompaction(
        index=4, summary="1. Primary Request and Intent:\n   Migrate the billing service to the new cluster "
                         "(vault code ZEBRA-4411).\n2. Key Technical Concepts:\n   - none"))
    config = preset("as-recorded").with_overrides(["tokens.counter=approximate"])
    report = goal_drift(replay(covered, config))
    assert report.statuses == ["before", "before", "summary", "summary", "summary"]
    assert [c.to_dict() for c in report.checks] == [{"step": 2, "source": "recorded", "status": "summary",
                                                     "placeholder": False, "has_intent_section": True,
                                                     "overlap": 1.0, "quoted": True}]
    bare = needle_thread()
    bare.compactions.append(RecordedCompaction(index=4, summary="We looked at some files."))
    report = goal_drift(replay(bare, config))
    assert report.statuses[2:] == ["missing", "missing", "missing"] and report.flagged_steps == [2, 3, 4]
    # a what-if that keeps the whole history still shows the intent: nothing drifted in its view
    whatif = goal_drift(replay(bare, preset("langchain").with_overrides(["tokens.counter=approximate"])))
    assert whatif.checks == [] and whatif.flagged_steps == [] and whatif.score is None


def test_a_summary_quoting_the_goal_sentence_keeps_the_intent() -> None:
    # Claude Code session fa812bfe's own summary quotes the request's first sentence and drops its how-to
    # steps: 4 of 15 content words, yet the intent is there.
    intent = ("Work on bead spotter-a0y. Run bd show spotter-a0y to see the issue details and bd ready to find "
              "available subtasks. Start with the first ready task.")
    section = 'User asked to "Work on bead spotter-a0y" and "continue until all are done."'
    assert intent_overlap(intent, section) < 0.6
    assert quotes_request(intent, section)
    assert not quotes_request(intent, 'User asked to "Start" the work.')  # a fragment is not a quote
    assert not quotes_request("Thanks. Fix it.", "Thanks. Fix it.")  # sentences too thin to name a goal
    thread = needle_thread()
    thread.compactions.append(RecordedCompaction(
        index=4, summary="1. Primary Request and Intent:\n   " + section))
    thread.messages[0].content = intent
    report = goal_drift(replay(thread, preset("as-recorded").with_overrides(["tokens.counter=approximate"])))
    assert [(c.status, c.quoted) for c in report.checks] == [("summary", True)]
    assert report.flagged_steps == []
