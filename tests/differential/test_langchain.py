"""Differential: LangChain 1.5's own SummarizationMiddleware in create_agent vs our `langchain` preset.

Each seeded script draws a trigger (none, one threshold, an AND dict, an OR list), a keep and a trim
budget, AI messages that sometimes report usage (sometimes from another provider), parallel and
interrupted tool calls. The real agent and our replay of the thread it recorded must agree on every
step's state, request and system prompt.
"""

from __future__ import annotations

import os
from collections import Counter

import pytest

from engine.run.replay import replay
from tests.differential import langchain_side as lc
from tests.differential.harness import Comparison, ScriptDoesNotFit, ScriptSummarizer, compare_steps, misfit
from tests.differential.script_files import scripts_for

# CTXI_DIFF_SCRIPTS=<file or folder> plays a reviewer's script files instead (script_files.py).
# The default suite plays 60 threads (every mechanism is still reached, asserted below); the proof
# run is `CTXI_DIFF_THREADS=300 python -m pytest -n 2 tests/differential` (README, "Differential tests").
THREADS = int(os.environ.get("CTXI_DIFF_THREADS", "60"))
SEED = int(os.environ.get("CTXI_DIFF_SEED", "0"))
CHUNKS = 2
# Divergence classes we accept, each with its reason. LangChain's rules are mirrored exactly: none.
ALLOWED: dict[str, str] = {}
MIN_RATE = 0.995


def _chunk(i: int) -> range:
    size = -(-THREADS // CHUNKS)
    return range(SEED + i * size, SEED + min(THREADS, (i + 1) * size))


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_langchain_preset_agrees_with_summarization_middleware(chunk: int) -> None:
    scripts, from_files = scripts_for("langchain", chunk, CHUNKS, lambda: [lc.make_script(s) for s in _chunk(chunk)])
    total = Comparison()
    seen: Counter[str] = Counter()
    for script in scripts:
        label = f"seed {script.seed}" if from_files is None else script.thread_id
        try:
            real, thread = lc.run_real(script)
        except ScriptDoesNotFit as error:
            total.add(misfit(label, error))
            continue
        run = replay(thread, lc.our_config(script), summarizer=ScriptSummarizer())
        total.add(compare_steps(real, run, thread, label=label))
        trigger = lc.params(script)["trigger"]
        seen["trigger " + ("none" if trigger is None else type(trigger).__name__)] += 1
        seen.update(f"{e.layer}.{e.kind}" for e in run.events)
        seen["replies with usage"] += sum(1 for r in script.replies() if r.usage_metadata)
        seen["interrupted turns"] += sum(t.interrupted for t in script.turns)
    report = total.report(f"langchain chunk {chunk}") + "\n  reached: " + ", ".join(f"{k} {v}" for k, v in sorted(seen.items()))
    if from_files is not None:
        report = from_files + "\n" + report
    print(report)
    assert set(total.classes) <= set(ALLOWED), report
    assert total.rate >= MIN_RATE, report
    if from_files is not None:
        return  # a reviewer's scripts reach what they reach: agreement is the check
    # the scripts reach every mechanism (a test that summarizes nothing proves nothing)
    n = len(_chunk(chunk))
    assert seen["summarization.summarize"] >= n // 2, report
    assert seen["summarization.summarize_empty"] >= 1, report
    assert min(seen["trigger none"], seen["trigger tuple"], seen["trigger dict"], seen["trigger list"]) >= 1, report
    assert seen["replies with usage"] >= n and seen["interrupted turns"] >= 1, report


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_langchain_preset_agrees_with_context_editing_middleware(chunk: int) -> None:
    # LangChain's ContextEditingMiddleware (ClearToolUsesEdit with drawn settings) next to its
    # SummarizationMiddleware in create_agent, against the `langchain` preset with that middleware added
    # (`order: [summarization, context_editing]`) and the edit's settings as context_editing.* keys
    if scripts_for("langchain", chunk, CHUNKS, lambda: [])[1] is not None:
        pytest.skip("a reviewer's scripts play the summarization test")
    total = Comparison()
    seen: Counter[str] = Counter()
    for script in [lc.make_script(s) for s in _chunk(chunk)]:
        label = f"seed {script.seed}"
        edit = lc.draw_edit(script.seed, script.window)
        try:
            real, thread = lc.run_real(script, edit)
        except ScriptDoesNotFit as error:
            total.add(misfit(label, error))
            continue
        run = replay(thread, lc.our_config(script, edit), summarizer=ScriptSummarizer())
        total.add(compare_steps(real, run, thread, label=label))
        seen.update(f"{e.layer}.{e.kind}" for e in run.events)
    report = total.report(f"langchain context editing chunk {chunk}") + "\n  reached: " + ", ".join(
        f"{k} {v}" for k, v in sorted(seen.items()))
    print(report)
    assert set(total.classes) <= set(ALLOWED), report
    assert total.rate >= MIN_RATE, report
    n = len(_chunk(chunk))
    assert seen["context_editing.clear"] >= max(1, n // 4) and seen["summarization.summarize"] >= 1, report
