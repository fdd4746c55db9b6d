"""Differential: Deep Agents 0.7.32's own `create_deep_agent` vs our `deepagents` preset.

Seeded scripts reach every mechanism of the default stack: summaries (view mode, history file,
chained events), argument truncation of old write_file/edit_file calls, large-result offload, the
input-budget clip, human messages over 200,000 characters, thinking blocks dropped after a summary,
reported usage (scaling and triggers), interrupted calls patched at the next turn. The real agent
and our replay of the thread it recorded agree on every step's state, request, system prompt and
summary position, and on the files the layers wrote.
"""

from __future__ import annotations

import os
from collections import Counter

import pytest

from engine.replay import replay
from tests.differential.harness import Comparison, ScriptSummarizer, compare_steps

da = pytest.importorskip("tests.differential.deepagents_side", reason="deepagents==0.7.32 is a test dependency")

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


def _dropped_thinking(run: object, thread: object) -> int:
    """Steps whose view shows an AI message without the thinking block the thread recorded."""
    recorded = {m.id: m for m in thread.messages if m.type == "ai" and isinstance(m.content, list)}  # type: ignore[attr-defined]
    return sum(1 for step in run.steps  # type: ignore[attr-defined]
               if any(m.type == "ai" and m.id in recorded and m.content != recorded[m.id].content for m in step.view))


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_deepagents_preset_agrees_with_create_deep_agent(chunk: int) -> None:
    total = Comparison()
    seen: Counter[str] = Counter()
    for seed in _chunk(chunk):
        script = da.make_script(seed)
        real, thread, files, observer = da.run_real(script)
        run = replay(thread, da.our_config(script), summarizer=ScriptSummarizer())
        total.add(compare_steps(real, run, thread, label=f"seed {seed}",
                                summary_position=da.summary_positions(real, observer.final_event, run),
                                files=(files, da.our_files(run))))
        seen.update(f"{e.layer}.{e.kind}" for e in run.events)
        seen["steps showing dropped thinking"] += _dropped_thinking(run, thread)
        seen["real run stopped (ContextOverflowError)"] += observer.stopped is not None
        seen["replies with usage"] += sum(1 for r in script.replies() if r.usage_metadata)
    report = total.report(f"deepagents chunk {chunk}") + "\n  reached: " + ", ".join(
        f"{k} {v}" for k, v in sorted(seen.items()))
    print(report)
    assert set(total.classes) <= set(ALLOWED), report
    assert total.rate >= MIN_RATE, report
    n = len(_chunk(chunk))
    for mechanism in ("summarization.summarize", "filesystem.truncate_args", "filesystem.offload",
                      "filesystem.evict_human", "dangling.patch", "steps showing dropped thinking"):
        assert seen[mechanism] >= max(1, n // 20), f"{mechanism} not reached\n{report}"
    assert seen["replies with usage"] >= n, report
