"""Evals › Stress mode through AppTest: the caption says what run B is, and B differs from the as-recorded A.

On a recorded session the as-recorded run has no trigger to lower; B is the recording agent's preset
with its trigger at the slider's fraction (engine.evals.stress.stress_plan, tested in
tests/evals/test_stress_recorded.py). Real sessions from ../shared/traces (skipped when absent).
"""

from __future__ import annotations

import re

import pytest

from tests.conftest import trace_path


def plain(elements) -> str:  # noqa: ANN001
    """The text of Markdown elements with our backslash escapes removed."""
    return " ".join(re.sub(r"\\(.)", r"\1", e.value) for e in elements)


def _stress_tab(start, monkeypatch: pytest.MonkeyPatch, *parts: str):  # noqa: ANN001, ANN202
    monkeypatch.setenv("CTXI_OPEN", str(trace_path(*parts)))  # what `ctxi ui FILE` sets
    at = start("pages/evals.py", tab="Stress mode")
    assert not at.exception, at.exception
    return at


def _rows(at) -> list[dict]:  # noqa: ANN001
    return next(rows for f in at.dataframe if (rows := f.value.to_dict(orient="records")) and "run" in rows[0])


def test_stress_mode_on_a_recorded_claude_code_session_replays_claude_codes_policy(start, monkeypatch) -> None:  # noqa: ANN001
    at = _stress_tab(start, monkeypatch, "claude-code", "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl")
    assert at.session_state["config"].preset == "as-recorded"
    assert ("A: the current settings (as-recorded). B: stress mode at 25% of the 200,000-token window on the "
            "claude-code preset (the compaction policy of the agent that recorded this thread), replayed instead of "
            "its recorded compactions: the claude-code compaction trigger at 50,000 tokens.") in plain(at.caption)
    a, b = _rows(at)
    assert (a["run"], a["compactions"], a["peak view"]) == ("current settings", 1, 166_874)
    assert (b["run"], b["compactions"]) == ("stress 25% (claude-code)", 7)
    assert b["peak view"] < 50_000
    assert "every trigger at" not in plain(at.caption)
    # the slider moves B's trigger, and the caption with it
    at.slider(key="ev_stress_pct").set_value(10).run()
    assert not at.exception
    assert "the claude-code compaction trigger at 20,000 tokens." in plain(at.caption)
    # B opens in the dashboard as what the caption says it is
    at.button(key="ev_stress_open").click().run()
    assert not at.exception, at.exception
    config = at.session_state["config"]
    assert (config.preset, str(config.compaction.trigger), config.order) == (
        "claude-code", "tokens:20000", ("context_editing", "compaction"))


def test_stress_mode_says_plainly_when_there_is_no_trigger_to_lower(start, monkeypatch) -> None:  # noqa: ANN001
    at = _stress_tab(start, monkeypatch, "nilenso-context-viewer", "ask_github_gc.completions.json")
    assert at.session_state["config"].preset == "as-recorded"
    assert "Stress mode has no trigger to lower: the current settings (as-recorded) replay what the openai_chat agent " \
           "recorded" in plain(at.info)
    assert "B: " not in plain(at.caption)
    assert not [f for f in at.dataframe if "run" in f.value.columns]


def test_stress_mode_on_a_preset_names_the_triggers_it_lowers(start) -> None:  # noqa: ANN001
    at = start("pages/evals.py", tab="Stress mode", preset="deepagents")
    assert not at.exception, at.exception
    assert re.search(r"A: the current settings \(deepagents\)\. B: stress mode at 25% of the [\d,]+-token window on "
                     r"the current settings \(deepagents\): the summarization trigger at [\d,]+ tokens and the "
                     r"argument-truncation trigger at [\d,]+ tokens\.", plain(at.caption)), plain(at.caption)


def test_stress_mode_on_a_codex_rollout_says_when_b_never_reaches_its_trigger(start, monkeypatch) -> None:  # noqa: ANN001
    at = _stress_tab(start, monkeypatch, "codex", "vibecodingtracker-codex.jsonl")
    assert "on the codex preset (the compaction policy of the agent that recorded this thread), replayed instead " \
           "of its recorded compactions: the codex compaction trigger at 50,000 tokens." in plain(at.caption)
    assert "B did not compact: this thread never reaches B's trigger (B's peak view: 22,279 tokens). Lower the " \
           "slider to compact earlier." in plain(at.info)
    at.slider(key="ev_stress_pct").set_value(10).run()
    assert not at.exception
    assert [r["compactions"] for r in _rows(at)] == [0, 1]
    assert "B did not compact" not in plain(at.info)
