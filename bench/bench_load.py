"""Load speed and memory figures (issue 2).

    python bench/bench_load.py [--repeat 7] [--messages 10000]

1. Loading and exact counting (o200k_base) of the two large Claude Code sessions in the shared
   traces vs tiktoken alone encoding the same texts, in the same run: target <= 1.5x.
   "The same texts" are exactly what the thread's counter encodes (content parts, and tool calls
   and results as Claude's rendered markup: the framing `ctxi inspect` uses), of the session and its
   sub-agents; the two token totals are
   checked to agree. Each figure is the best of `--repeat` runs, in wall-clock and CPU time
   (CPU time is steadier on a busy machine).
2. Peak memory of loading a generated 10,000-message native thread, in a fresh subprocess:
   `ru_maxrss` of the whole process (interpreter and libraries included) and the tracemalloc peak
   of the load call alone: target < 500 MB.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


from engine.formats import load_thread  # noqa: E402
from engine.formats.native import dumps  # noqa: E402
from engine.thread import Thread  # noqa: E402
from engine.tokens import TiktokenCounter, framing_for_thread, load_encoding, prime_thread  # noqa: E402

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


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, float, Any]:
    """Best wall-clock and best CPU seconds over `repeat` runs, and the last result."""
    walls, cpus, out = [], [], None
    for _ in range(repeat):
        gc.collect()
        w0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return min(walls), min(cpus), out


def load_and_count(path: Path) -> int:
    thread = load_thread(path)
    counter = TiktokenCounter("o200k_base", framing_for_thread(thread))  # fresh: nothing cached
    prime_thread(counter, thread)  # as `ctxi inspect` and replay do: one batch on all cores
    return counter(thread.messages) + sum(counter(s.messages) for s in thread.subagents.values())


def speed_rows(repeat: int) -> list[tuple[str, float, float, float, float]]:
    encoding = load_encoding("o200k_base")
    rows = []
    for name in SESSIONS:
        path = TRACES / "claude-code" / name
        if not path.exists():
            print(f"skipped {name}: not found under {TRACES}")
            continue
        texts = counted_texts(load_thread(path))
        tik_wall, tik_cpu, raw = best(
            lambda texts=texts: sum(len(encoding.encode(t, disallowed_special=())) for t in texts), repeat)
        ours_wall, ours_cpu, total = best(lambda p=path: load_and_count(p), repeat)
        thread = load_thread(path)
        fixed = sum(TiktokenCounter("o200k_base", framing_for_thread(thread))(t.messages)
                    for t in (thread, *thread.subagents.values())) - raw
        assert total == raw + fixed and fixed >= 0, "counter and baseline must encode the same texts"
        rows.append((name[:8], tik_wall, ours_wall, tik_cpu, ours_cpu))
    return rows


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
    from engine.synthetic import synthetic_thread

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
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--messages", type=int, default=10_000)
    args = ap.parse_args()

    print("load + exact count (o200k_base) vs tiktoken alone on the same texts; best of", args.repeat)
    print(f"{'session':<10}{'tiktoken s':>12}{'load+count s':>14}{'ratio':>7}{'cpu: tiktoken':>15}{'load+count':>12}{'ratio':>7}")
    for name, tik_wall, ours_wall, tik_cpu, ours_cpu in speed_rows(args.repeat):
        print(f"{name:<10}{tik_wall:>12.3f}{ours_wall:>14.3f}{ours_wall / tik_wall:>7.2f}"
              f"{tik_cpu:>15.3f}{ours_cpu:>12.3f}{ours_cpu / tik_cpu:>7.2f}")
    print("target: ratio <= 1.5")
    mem = memory_figures(args.messages)
    print(f"\nload a generated native thread: {mem['messages']:,} messages, {mem['subagents']} sub-agents, "
          f"{mem['file_bytes'] / MB:.1f} MB file")
    print(f"{'peak RSS of the process':<32}{mem['maxrss_kb'] / 1024:>8.1f} MB  (interpreter and libraries included)")
    print(f"{'tracemalloc peak of the load':<32}{mem['tracemalloc_peak'] / MB:>8.1f} MB")
    print("target: < 500 MB")


if __name__ == "__main__":
    main()
