"""Several agents' policies on one thread (engine/evals/policy_compare.py) and `ctxi sweep --grid preset=…`."""

from __future__ import annotations

from engine import load_thread, preset, replay
from engine.evals.policy_compare import compare_policies, compare_thread, first_shift
from engine.evals.sweep import point_config, sweep
from engine.lessons.coding_session import coding_session_thread
from engine.run.whatif import compaction_steps
from tests.conftest import trace_path

COLUMNS = ["policy", "peak view tokens", "peak % of window", "compactions", "compaction steps", "tokens saved",
           "input tokens sent", "needle retention", "summarizer calls", "agent calls (recorded)", "summarizer input tokens", "facts kept",
           "re-fetches", "re-fetch tokens", "cache misses $", "cache misses by cause (tokens not read)"]


def test_a_preset_grid_point_starts_from_that_preset_and_keeps_the_base_settings() -> None:
    base = preset("deepagents").with_overrides(["tokens.counter=approximate"])
    config = point_config(base, ["preset=codex", "compaction.keep=tokens:5000"])
    assert (config.preset, config.order, config.compaction.policy) == ("codex", ("compaction",), "codex")
    assert (config.tokens.counter, str(config.compaction.keep)) == ("approximate", "tokens:5000")
    assert point_config(base, ["summarization.keep=messages:3"]).preset == "deepagents"


def test_policies_side_by_side_on_the_coding_session() -> None:
    rows = compare_thread(coding_session_thread(), ["claude-code", "codex", "cline", "deepagents"])
    assert list(rows[0]) == COLUMNS  # no recorded baseline: no "vs recorded" column
    got = [(r["policy"], r["peak view tokens"], r["compaction steps"], r["summarizer calls"]) for r in rows]
    assert got == [("claude-code", 29_856, "29, 52", 2), ("codex", 56_622, "55", 1), ("cline", 37_921, "36, 59", 0),
                   # Deep Agents sends its own tools too: a bigger request, its second summary a step earlier
                   ("deepagents", 37_228, "35, 67", 2)]
    # what each policy's compactions kept, and the re-reads the later steps would need (an estimate)
    kept = [(r["policy"], r["facts kept"], r["re-fetches"]) for r in rows]
    assert kept == [("claude-code", 0.359, 4), ("codex", 0.2143, 6), ("cline", None, 0), ("deepagents", 0.4091, 8)]


def test_a_sweep_over_presets_reports_what_single_replays_do() -> None:
    thread = coding_session_thread()
    result = sweep([thread], preset("deepagents"), {"preset": ["claude-code", "cline"]}, executor="serial")
    for point, name in zip(result.points, ["claude-code", "cline"], strict=True):
        run = replay(thread, preset(name))
        assert point.point.label == f"preset={name}"
        assert (point.metrics["peak_view_tokens"], point.metrics["compactions"]) == \
            (run.peak_view_tokens(), len(compaction_steps(run)))


def test_first_shift_in_words() -> None:
    assert first_shift([]) == "neither compacts"
    assert first_shift([(61, 61)]) == "same step (61)"
    assert first_shift([(61, 66)]) == "+5 steps (step 66 vs 61)"
    assert first_shift([(None, 4)]) == "step 4, where the agent never compacted"
    assert first_shift([(9, None)]) == "never (recorded at step 9)"


def test_on_a_real_claude_code_session_against_what_it_recorded() -> None:
    thread = load_thread(trace_path("claude-code", "4d5611e5-241a-462a-8d15-5122611a9569.jsonl"))
    rows = compare_thread(thread, ["claude-code", "codex"])
    got = [(r["policy"], r["peak view tokens"], r["compaction steps"], r["first compaction vs recorded"]) for r in rows]
    # Claude Code's rule compacts where the session did; Codex (90 % of 200k) five calls later
    assert got == [("as-recorded", 164_831, "61", "—"), ("claude-code", 164_831, "61", "same step (61)"),
                   ("codex", 175_444, "66", "+5 steps (step 66 vs 61)")]
    # what each policy's cache misses cost, by cause: the recorded compaction, and the session's two long pauses
    assert rows[0]["cache misses by cause (tokens not read)"] == "compaction 149,403 · ttl 164,821"
    assert compare_policies({}, None) == []
