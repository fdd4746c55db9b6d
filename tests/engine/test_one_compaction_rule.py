"""One compaction rule (engine/run/whatif.py `is_compaction`): the evals' compactions (engine/evals/compactions.py)
and whatif's `compaction_steps` name the same steps.

They had two predicates: whatif also counted any event whose payload said "compacts", the evals any summarization
event carrying a `summary_text`. On every preset over the samples and real traces both accepted exactly the
history-replacing kinds (`summarize`, `compact`, `trim`, recorded `compaction`); the extra clauses matched no event a
layer emits, so they could only make the two counts disagree.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from engine.config.presets import PRESETS
from engine.config.schema import preset
from engine.evals.compactions import compactions
from engine.formats import load_thread
from engine.run.replay import replay
from engine.run.run import Run
from engine.run.whatif import COMPACTION_EVENTS, compaction_steps, is_compaction
from engine.thread.events import Event
from tests.conftest import SAMPLES, TRACES

SAMPLE_FILES = sorted(p.name for p in SAMPLES.glob("*.json"))
# real sessions: recorded compactions (Claude Code fa812bfe…, the providers' compaction fixtures), a Codex rollout and
# a Gemini CLI session the coding-agent policies compact, an OpenHands and a mini-swe-agent run
TRACE_FILES = ("claude-code/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl", "claude-code/tool_heavy.jsonl",
               "codex/vibecodingtracker-codex.jsonl", "gemini/vibecodingtracker-session.jsonl",
               "openhands/basic.json", "mini-swe-agent/github_issue.traj.json",
               "anthropic-compaction/test_anthropic_compaction_end_to_end.yaml",
               "openai-responses-compaction/test_openai_responses_compact_messages.yaml")


def _same_steps(run: Run) -> tuple[list[int], list[int]]:
    return sorted(c.step for c in compactions(run)), sorted(compaction_steps(run))


def _check_every_preset(path: Path) -> int:
    thread = load_thread(path)
    found = 0
    for name in PRESETS:
        run = replay(thread, preset(name))
        evals_steps, whatif_steps = _same_steps(run)
        assert evals_steps == whatif_steps, (path.name, name)
        found += len(whatif_steps)
    return found


@pytest.mark.parametrize("name", SAMPLE_FILES)
def test_on_every_preset_over_the_samples_both_name_the_same_steps(name: str) -> None:
    _check_every_preset(SAMPLES / name)


@pytest.mark.parametrize("name", TRACE_FILES)
def test_on_every_preset_over_real_traces_both_name_the_same_steps(name: str) -> None:
    path = TRACES / name
    if not path.exists():
        pytest.skip(f"shared trace {path} not present")
    _check_every_preset(path)


def test_the_runs_compact_at_all() -> None:
    """The comparison above is not vacuous: the samples' runs compact, in every layer that can."""
    thread = load_thread(SAMPLES / "first-look.json")
    kinds = {(e.layer, e.kind) for name in ("stress", "gemini-cli", "cline") for e in replay(thread, preset(name)).events
             if is_compaction(e)}
    assert kinds == {("summarization", "summarize"), ("compaction", "compact"), ("compaction", "trim")}


def test_the_evals_use_whatifs_predicate() -> None:
    evals_compactions = importlib.import_module("engine.evals.compactions")  # engine.evals.compactions is its function
    assert evals_compactions.is_compaction is is_compaction
    assert not hasattr(evals_compactions, "is_compaction_event")


def test_only_history_replacing_kinds_count() -> None:
    """The events the old predicates disagreed on: neither is a compaction now, in either count."""
    run = replay(load_thread(SAMPLES / "first-look.json"), preset("langchain"))  # compacts nothing
    assert compaction_steps(run) == [] and compactions(run) == []
    extra = [
        Event("summarization", "summarize_empty", 3, payload={"summary_text": "Previous conversation was too long"}),
        Event("summarization", "summary_note", 4, payload={"summary_text": "a note"}),  # evals counted it
        Event("compaction", "compact_rejected", 5, payload={"rejected": "larger"}),
        Event("compaction", "thrashing", 6),
        Event("custom", "pruned", 7, payload={"compacts": True}),  # whatif counted it
    ]
    for event in extra:
        run.steps[event.step].events.append(event)
    assert not any(is_compaction(e) for e in extra)
    assert _same_steps(run) == ([], [])
    for layer, kind in sorted(COMPACTION_EVENTS):
        run.steps[9].events.append(Event(layer, kind, 9))
    assert _same_steps(run) == ([9] * len(COMPACTION_EVENTS), [9] * len(COMPACTION_EVENTS))
