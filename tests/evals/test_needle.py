"""Needle retention: exact classes on hand-made threads where the answer is known."""

from __future__ import annotations

from engine.config.schema import preset
from engine.evals import needle_retention, pick_needles
from engine.run.replay import replay
from engine.thread.model import RecordedCompaction
from engine.thread.synthetic import synthetic_thread
from tests.evals.threads import (
    NEEDLE_BIG,
    NEEDLE_INTENT,
    NEEDLE_NEVER,
    NEEDLE_TOOL,
    needle_thread,
    summarization_only,
)


def test_state_mode_needle_in_intent_survives_in_summary_tool_needle_is_lost() -> None:
    run = replay(needle_thread(), summarization_only("state"))
    report = needle_retention(run, [NEEDLE_INTENT, NEEDLE_TOOL, NEEDLE_NEVER])
    assert [c.step for c in report.compactions] == [3]
    assert report.classes == {
        NEEDLE_INTENT: ["in_view", "in_view", "in_view", "in_summary", "in_summary"],
        NEEDLE_TOOL: ["absent", "in_view", "in_view", "lost", "lost"],
        NEEDLE_NEVER: ["never"] * 5,  # in no message and no view: "never in the thread", not "not yet"
    }
    assert report.introduced == {NEEDLE_INTENT: 0, NEEDLE_TOOL: 1, NEEDLE_NEVER: None}
    assert report.checked_steps == [3, 4]
    assert report.score == 0.0 and report.recovery_score == 0.0
    assert report.counts() == {"in_view": 0, "in_summary": 2, "recoverable": 0, "lost": 2}
    assert report.files == {NEEDLE_INTENT: [], NEEDLE_TOOL: [], NEEDLE_NEVER: []}


def test_view_mode_history_file_makes_the_tool_needle_recoverable() -> None:
    run = replay(needle_thread(), summarization_only("view"))
    report = needle_retention(run, [NEEDLE_INTENT, NEEDLE_TOOL])
    assert report.classes[NEEDLE_TOOL] == ["absent", "in_view", "in_view", "recoverable", "recoverable"]
    assert report.classes[NEEDLE_INTENT] == ["in_view", "in_view", "in_view", "in_summary", "in_summary"]
    (path,) = report.files[NEEDLE_TOOL]
    assert path.startswith("/conversation_history/") and path.endswith(".md")
    assert report.score == 0.0 and report.recovery_score == 1.0
    assert report.at_compactions() == [{"step": 3, "source": "simulated", "kind": "summarize", "placeholder": False,
                                        "classes": {NEEDLE_INTENT: "in_summary", NEEDLE_TOOL: "recoverable"}}]


def test_case_insensitive_match() -> None:
    run = replay(needle_thread(), summarization_only("view"))
    report = needle_retention(run, ["zebra-4411", "kestrel-09"])
    assert report.classes["zebra-4411"][3] == "in_summary"
    assert report.classes["kestrel-09"][3] == "recoverable"


def test_too_long_placeholder_loses_every_needle() -> None:
    run = replay(needle_thread(), summarization_only("state", "summarization.trim_tokens_to_summarize=20"))
    report = needle_retention(run, [NEEDLE_INTENT, NEEDLE_TOOL])
    assert report.classes[NEEDLE_INTENT] == ["in_view", "in_view", "in_view", "lost", "lost"]
    assert [(c.step, c.placeholder) for c in report.compactions] == [(3, True)]


def test_offloaded_result_is_recoverable_without_any_compaction() -> None:
    config = preset("deepagents").with_overrides([
        "tokens.counter=approximate", "filesystem.tool_result_token_limit=500", "summarization.trigger=messages:100"])
    run = replay(needle_thread(big_result=True), config)
    report = needle_retention(run, [NEEDLE_BIG, NEEDLE_TOOL])
    assert report.compactions == []
    assert report.files[NEEDLE_BIG] == ["/large_tool_results/c1"]
    assert report.classes[NEEDLE_BIG] == ["absent", "absent", "recoverable", "recoverable", "recoverable"]
    # no compaction: every step is checked; steps 1-4 hold a needle, only step 1 has all of them in view
    assert report.checked_steps == [0, 1, 2, 3, 4]
    assert report.score == 0.25 and report.recovery_score == 1.0


def test_no_compaction_and_everything_in_view_scores_one() -> None:
    run = replay(needle_thread(), preset("langchain").with_overrides(["tokens.counter=approximate"]))
    report = needle_retention(run, [NEEDLE_INTENT])
    assert report.classes[NEEDLE_INTENT] == ["in_view"] * 5
    assert report.score == 1.0


def test_needle_never_in_thread_has_no_score() -> None:
    run = replay(needle_thread(), summarization_only("state"))
    report = needle_retention(run, [NEEDLE_NEVER])
    assert report.score is None and report.recovery_score is None


def test_auto_picked_needles_are_the_planted_codes() -> None:
    assert pick_needles(needle_thread()) == [NEEDLE_INTENT, NEEDLE_TOOL]
    assert pick_needles(synthetic_thread(120)) == ["BLUE-HERON-7"]
    run = replay(needle_thread(), summarization_only("state"))
    report = needle_retention(run)
    assert report.auto_picked and report.needles == (NEEDLE_INTENT, NEEDLE_TOOL)


def test_report_json_shape() -> None:
    run = replay(needle_thread(), summarization_only("view"))
    doc = needle_retention(run, [NEEDLE_TOOL]).to_dict(per_step=False)
    assert sorted(doc) == ["auto_picked", "checked_steps", "compactions", "counts", "files", "introduced",
                           "needles", "recovery_score", "score"]
    assert "classes" in needle_retention(run, [NEEDLE_TOOL]).to_dict()


def test_a_recorded_compaction_counts_where_the_run_re_enacts_it() -> None:
    thread = needle_thread()
    # the source agent cut everything before t1 (message 4) and kept only the intent's code in its summary
    thread.compactions.append(RecordedCompaction(index=4, trigger="auto", summary=f"Task: migrate. Code {NEEDLE_INTENT}."))
    needles = [NEEDLE_INTENT, NEEDLE_TOOL, NEEDLE_NEVER]
    recorded = needle_retention(replay(thread, preset("as-recorded").with_overrides(["tokens.counter=approximate"])),
                                needles)
    assert [(c.step, c.source) for c in recorded.compactions] == [(2, "recorded")]
    after = {NEEDLE_INTENT: "in_summary", NEEDLE_TOOL: "lost", NEEDLE_NEVER: "never"}
    # one computation: the table after the compaction, the bands at that step and the score agree
    assert recorded.at_compactions()[0]["classes"] == after == recorded.at_step(2)
    assert recorded.checked_steps == [2, 3, 4] and recorded.score == 0.0
    # a what-if that does not re-enact the cut has no compaction: both needles stay in its view
    whatif = needle_retention(replay(thread, preset("langchain").with_overrides(["tokens.counter=approximate"])),
                              needles)
    assert whatif.compactions == [] and whatif.classes[NEEDLE_TOOL][2] == "in_view" and whatif.score == 1.0


def test_auto_picked_needles_are_facts_a_person_states() -> None:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    from engine.evals import session_intent
    from engine.evals.facts import facts_in, typed_by_person
    from engine.thread.model import Thread

    reminder = HumanMessage("<system-reminder>\nPostToolUse hook: ERR-9001 in lib/a.ex\n</system-reminder>", id="h-hook")
    meta = HumanMessage("Caveat: DEMO-77 from a local command", id="h-meta",
                        additional_kwargs={"claude_code_meta": True})
    ask = HumanMessage("Deploy the billing service on port 8443 before Friday; the ticket is OPS-2210 and "
                       "Maria Keller signs off.", id="h0")
    call = AIMessage("I'll use `BlueGreenDeploy` for the switch.", id="a0",
                     tool_calls=[{"name": "Bash", "args": {"command": "git log -1"}, "id": "c0"}])
    log = ToolMessage("commit a2898e3f91 (HEAD)\nAuthor: someone\n    141871 lines changed in /srv/app/build-77/x.py\n"
                      "the fallback region is KESTREL-09", tool_call_id="c0", name="Bash", id="t0")
    thread = Thread(thread_id="planted", messages=[reminder, meta, ask, call, log], source_format="test")
    assert [typed_by_person(m) for m in (reminder, meta, ask)] == [False, False, True]
    assert session_intent(thread) is ask
    # the person's facts first (a code, a name, what a number counts), then a decision, then a stated value;
    # never a hash, a path or a bare number
    assert pick_needles(thread, k=6) == ["OPS-2210", "Maria Keller", "8443", "BlueGreenDeploy", "KESTREL-09"]
    assert facts_in("see a2898e3 and 3f2c9d1e-aa and /srv/build-77/ok and Bash", tools=frozenset({"Bash"})) == []


def test_markup_is_never_a_needle() -> None:
    from engine.evals.facts import facts_in

    # mini-swe-agent's task template wraps its example in <example_response> tags and fences its
    # commands as ```mswea_bash_command: the harness's markup, not facts anyone planted
    text = ("Fix the parser; the release is build_42.\n<example_response>\nTHOUGHT: look\n\n"
            "```mswea_bash_command\nls\n```\n</example_response>\n```mswea_bash_command\npwd\n```")
    assert facts_in(text) == [("build_42", "slug")]
    # the same words stated in prose still count
    assert facts_in("the flag is example_response, and example_response stays on") == [("example_response", "slug")]


def test_a_sed_range_is_not_a_duration() -> None:
    from engine.evals.facts import facts_in

    # mini-swe-agent's template shows `sed -i '1,10s/old_string/new_string/g'`: "1,10s" is a line
    # range and a command, not 1,10 seconds
    assert facts_in("sed -i '1,10s/old_string/new_string/g' filename.py") == []
    assert facts_in("the build took 40s and the cache kept 30 days") == [("40", "number"), ("30", "number")]


def test_needles_a_person_would_pick_on_a_session_whose_stated_facts_all_recur() -> None:
    """Claude Code sessions name their task in every other message: the stated facts are too frequent, so the
    files and commands of the first calls are picked (never a bare `ls -la`), and without those the most
    specific stated facts, rarest first."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    from engine.thread.model import Thread

    ask = HumanMessage("Work on bead spotter-dov. Run bd show spotter-dov and start with the first task.", id="h0")
    messages = [ask]
    calls = [("Bash", {"command": "ls -la"}), ("Bash", {"command": "bd show spotter-dov.1"}),
             ("Read", {"file_path": "/w/lib/session_live.ex"})]
    for i, (name, args) in enumerate(calls):
        messages += [AIMessage("Working on spotter-dov.", id=f"a{i}", tool_calls=[{"name": name, "args": args, "id": f"c{i}"}]),
                     ToolMessage("spotter-dov: ok", tool_call_id=f"c{i}", id=f"t{i}")]
    thread = Thread(thread_id="recurring", messages=messages, source_format="test")
    assert pick_needles(thread) == ["/w/lib/session_live.ex", "bd show spotter-dov.1"]
    bare = Thread(thread_id="bare", messages=messages[:1] + [
        AIMessage("On spotter-dov.", id=f"b{i}") for i in range(4)], source_format="test")
    assert pick_needles(bare) == ["spotter-dov"]  # stated everywhere, but the only fact there is
