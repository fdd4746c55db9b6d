"""Differential: DeerFlow's own middleware files (v2.0-m0 and HEAD) in create_agent vs our presets.

The real stack is DeerFlow's lead-agent order, DanglingToolCall -> summarization -> Todo, built from
the files in ../shared/reference-code/deerflow (skipped when absent) with the summarization section
of a DeerFlow config.yaml; ours is that same config.yaml loaded by `EngineConfig.from_yaml`, which
picks the `deerflow` (v2.0-m0) or `deerflow-head` preset. Scripts add DeerFlow's own moves: todo
plans, calls the model left invalid, interrupted calls and (HEAD) the extra model calls its
completion reminder causes.
"""

from __future__ import annotations

import logging
import os
from collections import Counter

import pytest

from engine.run.replay import replay
from tests.differential import deerflow_side as df
from tests.differential.harness import Comparison, ScriptDoesNotFit, ScriptSummarizer, compare_steps, misfit
from tests.differential.script_files import scripts_for

# CTXI_DIFF_SCRIPTS=<file or folder> plays a reviewer's script files instead (script_files.py).
# The default suite plays 60 threads (every mechanism still reached, asserted below); the proof run is
# `CTXI_DIFF_THREADS=300 python -m pytest -n 2 tests/differential` (README, "Differential tests").
THREADS = int(os.environ.get("CTXI_DIFF_THREADS", "60"))
SEED = int(os.environ.get("CTXI_DIFF_SEED", "0"))
CHUNKS = 2
# Divergence classes we accept, each with its reason: none.
ALLOWED: dict[str, str] = {}
MIN_RATE = 0.995


def _chunk(i: int) -> range:
    size = -(-THREADS // CHUNKS)
    return range(SEED + i * size, SEED + min(THREADS, (i + 1) * size))


@pytest.mark.parametrize("chunk", range(CHUNKS))
@pytest.mark.parametrize("version", df.VERSIONS)
def test_deerflow_presets_agree_with_deerflow_middleware(version: str, chunk: int) -> None:
    df.reference_dir()
    logging.getLogger("deerflow_reference").setLevel(logging.ERROR)  # DeerFlow warns at every patch
    scripts, from_files = scripts_for(f"deerflow:{version}", chunk, CHUNKS,
                                      lambda: [df.make_script(s, version) for s in _chunk(chunk)])
    total = Comparison()
    seen: Counter[str] = Counter()
    for script in scripts:
        label = f"seed {script.seed}" if from_files is None else script.thread_id
        try:
            real, thread = df.run_real(script, version)
        except ScriptDoesNotFit as error:
            total.add(misfit(label, error))
            continue
        run = replay(thread, df.our_config(script, version), summarizer=ScriptSummarizer())
        total.add(compare_steps(real, run, thread, label=label))
        seen.update(f"{e.layer}.{e.kind}" for e in run.events)
        seen["invalid calls"] += sum(len(r.invalid_tool_calls) for r in script.replies())
    report = total.report(f"deerflow {version} chunk {chunk}") + "\n  reached: " + ", ".join(
        f"{k} {v}" for k, v in sorted(seen.items()))
    if from_files is not None:
        report = from_files + "\n" + report
    print(report)
    assert set(total.classes) <= set(ALLOWED), report
    assert total.rate >= MIN_RATE, report
    if from_files is not None:
        return  # a reviewer's scripts reach what they reach: agreement is the check
    n = len(_chunk(chunk))
    mechanisms = ["summarization.summarize", "dangling.patch", "todo.reminder", "invalid calls"]
    if version == "head":
        mechanisms += ["todo.completion_reminder", "durable_context.inject"]
    for mechanism in mechanisms:
        assert seen[mechanism] >= max(1, n // 20), f"{mechanism} not reached\n{report}"
