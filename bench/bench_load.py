"""Load speed and memory figures (issue 2; bench/harness.py conventions: interleaved runs, the same
number on each side, median and range, CPU and wall time).

    python bench/bench_load.py [--runs 5] [--messages 10000]

1. Compares loading a large Claude Code session (the two in the shared traces) and counting it
   exactly (o200k_base, a fresh counter, batched as `ctxi inspect` does) with tiktoken alone loading
   the encoding its own way (bench/harness.py `tiktoken_own_loader`) and encoding exactly the texts that counter encodes (content parts, tool calls and
   results as Claude's rendered markup, of the session and its sub-agents), in this process.
   Target <= 1.5x. Agreement, computed independently: every message's count equals tiktoken's
   lengths of its texts plus the framing's fixed tokens per message (a counter whose batch
   assigned a length to the wrong text, or dropped one, disagrees).
2. Peak memory of loading a generated 10,000-message native thread, in a fresh subprocess:
   `ru_maxrss` of the whole process (interpreter and libraries included) and the tracemalloc peak
   of the load call alone: target < 500 MB (a single measurement of each, not a ratio).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from harness import ROOT, interleaved, machine_line, report, tiktoken_own_loader  # puts ROOT on sys.path

from engine.formats import load_thread  # noqa: E402
from engine.formats.native import dumps  # noqa: E402
from engine.thread.model import Thread  # noqa: E402
from engine.tokens import counters as tokens  # noqa: E402
from engine.tokens import encodings  # noqa: E402
from engine.tokens.counters import TiktokenCounter, framing_for_thread, prime_thread  # noqa: E402

TRACES = Path(os.environ.get("CTXI_TRACES", ROOT.parent / "shared" / "traces"))
SESSIONS = ("4d5611e5-241a-462a-8d15-5122611a9569.jsonl", "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl")
MB = 1024 * 1024


def counted_texts(thread: Thread) -> list[str]:
    """Every text the thread's counter encodes for the thread and its sub-agents.

    The counter is the one `ctxi inspect` uses (`framing_for_thread`: Claude Code sessions get
    Anthropic framing, so tool calls and results are encoded as Claude's rendered markup).
    """
    counter = TiktokenCounter("o200k_base", framing_for_thread(thread))
    texts: list[str] = []
    for t in (thread, *thread.subagents.values()):
        for m in t.messages:
            pieces, _ = counter._layout(m)  # the exact texts `count_message` encodes
            texts.extend(text for _, text in pieces if text)
    return texts


def _forget_encodings() -> None:
    """Nothing loaded: the next counter (or load_encoding) reads and parses the encoding file again."""
    encodings._mergeable_ranks.cache_clear()
    encodings.load_encoding.cache_clear()
    tokens._shared_counter.cache_clear()


def load_and_count(path: Path) -> tuple[int, Thread, TiktokenCounter]:
    _forget_encodings()
    thread = load_thread(path)
    counter = TiktokenCounter("o200k_base", framing_for_thread(thread))  # fresh: nothing cached
    prime_thread(counter, thread)  # as `ctxi inspect` and replay do: one batch on all cores
    total = counter(thread.messages) + sum(counter(s.messages) for s in thread.subagents.values())
    return total, thread, counter


def independent_total(thread: Thread, counter: TiktokenCounter) -> int:
    """Per message: tiktoken's lengths of the texts the layout names, plus the layout's fixed tokens."""
    encode = encodings.load_encoding("o200k_base").encode_ordinary
    total = 0
    for t in (thread, *thread.subagents.values()):
        for m in t.messages:
            pieces, fixed = counter._layout(m)
            expected = sum(len(encode(text)) for _, text in pieces if text) + sum(fixed.values())
            ours = counter.count_message(m)  # served from the batch that primed the counter
            assert ours == expected, f"message {m.id}: counter {ours} != tiktoken + fixed {expected}"
            total += expected
    return total


def speed(runs: int) -> bool:
    ok = True
    load_tiktoken = tiktoken_own_loader("o200k_base")
    for name in SESSIONS:
        path = TRACES / "claude-code" / name
        if not path.exists():
            print(f"skipped {name}: not found under {TRACES}")
            continue
        texts = counted_texts(load_thread(path))

        def tiktoken_alone(texts: list[str] = texts) -> int:
            encode = load_tiktoken().encode_ordinary
            return sum(len(encode(t)) for t in texts)

        res = interleaved({"tiktoken": tiktoken_alone, "load + count": lambda p=path: load_and_count(p)}, runs)
        total, thread, counter = res["load + count"].result
        expected = independent_total(thread, counter)
        assert total == expected, f"{name}: total {total} != independent {expected}"
        print(f"{name[:8]}: {len(texts):,} texts, {res['tiktoken'].result:,} tokens from tiktoken; our total "
              f"{total:,} = tiktoken per message + fixed tokens, checked message by message")
        ok &= report(f"load + exact count vs tiktoken alone on the same texts ({name[:8]}; encoding load on both sides)",
                     res["tiktoken"], res["load + count"], target_line="target <= 1.5x", faster=False, limit=1.5)
    return ok


MEMORY_PROBE = """
import json, resource, sys, tracemalloc
from engine.formats import load_thread
trace = sys.argv[2] == "trace"
if trace:
    tracemalloc.start()
thread = load_thread(sys.argv[1])
peak = tracemalloc.get_traced_memory()[1] if trace else None
print(json.dumps({"messages": len(thread.messages), "subagents": len(thread.subagents), "tracemalloc_peak": peak,
                  "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def generated_thread(messages: int) -> Thread:
    """A synthetic thread cut to exactly `messages` messages, with the sub-agents of the calls it keeps."""
    from engine.thread.synthetic import synthetic_thread

    thread = synthetic_thread(messages // 2 + 1)
    thread.messages = thread.messages[:messages]
    calls = {tc["id"] for tc in thread.tool_calls()}
    thread.subagents = {k: v for k, v in thread.subagents.items() if k in calls}
    return thread


def memory_figures(messages: int) -> dict[str, Any]:
    """Load in fresh interpreters: once plain (peak RSS), once under tracemalloc (the load's own peak)."""
    thread = generated_thread(messages)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "thread.json"
        path.write_text(dumps(thread, indent=None), encoding="utf-8")

        def probe(mode: str) -> dict[str, Any]:
            done = subprocess.run([sys.executable, "-c", MEMORY_PROBE, str(path), mode], capture_output=True,
                                  text=True, cwd=ROOT, check=True)
            return json.loads(done.stdout)

        figures = probe("plain")
        figures["tracemalloc_peak"] = probe("trace")["tracemalloc_peak"]
        figures["file_bytes"] = path.stat().st_size
    return figures


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="timed runs of each side (>= 5 for the figures)")
    ap.add_argument("--messages", type=int, default=10_000)
    args = ap.parse_args()
    print(machine_line())
    speed(args.runs)
    mem = memory_figures(args.messages)
    print(f"\nload a generated native thread: {mem['messages']:,} messages, {mem['subagents']} sub-agents, "
          f"{mem['file_bytes'] / MB:.1f} MB file (one run)")
    print(f"{'peak RSS of the process':<32}{mem['maxrss_kb'] / 1024:>8.1f} MB  (interpreter and libraries included)")
    print(f"{'tracemalloc peak of the load':<32}{mem['tracemalloc_peak'] / MB:>8.1f} MB")
    print("target: < 500 MB")


if __name__ == "__main__":
    main()
