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
# Divergence classes we accept, each with its reason (the report names each one it saw).
STOPPED_FILES = "files differ after the real run stopped (ContextOverflowError)"
ALLOWED: dict[str, str] = {
    # Deep Agents raises when the request stays over its input budget after compacting, but the
    # aborted call's own compaction (a history section, the tail clip to /large_tool_results/) is
    # already in its state: a model call the recorded thread does not hold, so no replay of that
    # thread can make it (seed 7959 of CTXI_DIFF_SEED=7777). Every step still compares exactly.
    STOPPED_FILES: "the aborted call's files are not in the thread",
}
MIN_RATE = 0.995


def _chunk(i: int) -> range:
    size = -(-THREADS // CHUNKS)
    return range(SEED + i * size, SEED + min(THREADS, (i + 1) * size))


def _dropped_thinking(run: object, thread: object) -> int:
    """Steps whose view shows an AI message without the thinking block the thread recorded."""
    recorded = {m.id: m for m in thread.messages if m.type == "ai" and isinstance(m.content, list)}  # type: ignore[attr-defined]
    return sum(1 for step in run.steps  # type: ignore[attr-defined]
               if any(m.type == "ai" and m.id in recorded and m.content != recorded[m.id].content for m in step.view))


def _probe(seed: int, first: Comparison) -> Comparison:
    """A diverging thread played again on a freshly built agent and replayed again: if the second
    comparison differs from the first, the divergence is not a rule of ours or theirs but a
    nondeterminism (the shared agent's history, the process, the clock), and the report says so.
    The first result still counts: this names the class, it never turns a failure green."""
    script = da.make_script(seed)
    real, thread, files, observer = da.run_real(script, fresh=True)
    run = replay(thread, da.our_config(script), summarizer=ScriptSummarizer())
    again = compare_steps(real, run, thread, label=f"seed {seed} (rerun)",
                          summary_position=da.summary_positions(real, observer.final_event, run),
                          files=(files, da.our_files(run)))
    if again.classes == first.classes:
        return first
    named = Comparison(steps=first.steps, agreeing=first.agreeing, threads=first.threads,
                       threads_agreeing=first.threads_agreeing)
    for cls, n in first.classes.items():
        tag = f"nondeterministic (rerun on a fresh agent: {again.agreeing}/{again.steps} agree): {cls}"
        named.classes[tag] += n
        named.examples[tag] = first.examples[cls]
    return named


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_deepagents_preset_agrees_with_create_deep_agent(chunk: int) -> None:
    total = Comparison()
    seen: Counter[str] = Counter()
    for seed in _chunk(chunk):
        script = da.make_script(seed)
        real, thread, files, observer = da.run_real(script)
        run = replay(thread, da.our_config(script), summarizer=ScriptSummarizer())
        result = compare_steps(real, run, thread, label=f"seed {seed}",
                               summary_position=da.summary_positions(real, observer.final_event, run),
                               files=(files, da.our_files(run)))
        if observer.stopped is not None and "files differ" in result.classes:
            result.classes[STOPPED_FILES] = result.classes.pop("files differ")
            result.examples[STOPPED_FILES] = result.examples.pop("files differ")
        if result.classes and set(result.classes) - set(ALLOWED):
            result = _probe(seed, result)
        total.add(result)
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


def test_a_divergence_that_does_not_reproduce_is_named_nondeterministic() -> None:
    # a made-up first result for seed 0 (which agrees when played): the probe's rerun agrees, so the
    # class is reported as nondeterministic, with its count and example kept
    first = Comparison(steps=3, agreeing=2, threads=1)
    first.classes["view: message N (ai) differs in content"] = 1
    first.examples["view: message N (ai) differs in content"] = "seed 0 step 2: ..."
    named = _probe(0, first)
    [(cls, n)] = named.classes.items()
    assert cls.startswith("nondeterministic (rerun on a fresh agent: ") and cls.endswith(
        ": view: message N (ai) differs in content") and n == 1
    assert (named.steps, named.agreeing, named.examples[cls]) == (3, 2, "seed 0 step 2: ...")
