"""Sweep speed (issue 6): a 10 x 10 grid over a 1,000-step synthetic thread on 2 cores, target < 60 s.

    python bench/bench_sweep.py [--steps 1000] [--workers 2] [--executor process|serial|ray] [--grid K=V,...]

The default grid is 10 summarization triggers (fractions 0.30-0.85 of the 200,000-token window)
x 10 keeps (2-20 messages), on the deepagents preset: 100 replays plus needle and drift evals.
It prints the wall time, replays per second and the Pareto front.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.config import preset  # noqa: E402
from engine.sweep import grid_from_args, sweep  # noqa: E402
from engine.synthetic import synthetic_thread  # noqa: E402

TRIGGERS = [f"fraction:{f:.2f}" for f in (0.30, 0.36, 0.42, 0.48, 0.54, 0.60, 0.66, 0.72, 0.78, 0.85)]
KEEPS = [f"messages:{n}" for n in range(2, 21, 2)]
TARGET_S = 60.0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--executor", default="process")
    ap.add_argument("--preset", default="deepagents")
    ap.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2")
    ap.add_argument("--json", dest="json_path", help="write the sweep result JSON here")
    args = ap.parse_args()
    grid = grid_from_args(args.grid) if args.grid else {"summarization.trigger": TRIGGERS, "summarization.keep": KEEPS}
    thread = synthetic_thread(args.steps, seed=0)
    t0 = time.perf_counter()
    result = sweep(thread, preset(args.preset), grid, executor=args.executor, workers=args.workers)
    wall = time.perf_counter() - t0
    n = len(result.points)
    print(f"thread: {args.steps} steps ({len(thread.messages)} messages); grid: "
          + " x ".join(f"{len(v)} {k}" for k, v in result.grid.items()) + f" = {n} points")
    print(f"executor {result.executor} with {result.workers} workers: {wall:.1f} s wall "
          f"({result.elapsed_s:.1f} s in the executor), {n / wall:.2f} replays/s; target < {TARGET_S:.0f} s: "
          + ("met" if wall < TARGET_S else "MISSED"))
    print(f"worker CPU: {result.cpu_s:.1f} s in all, {result.cpu_s / n:.2f} s per replay + evals; "
          f"CPU / workers = {result.cpu_s / result.workers:.1f} s (the wall time on otherwise idle cores, "
          "less start-up)")
    print("Pareto front (peak view tokens, retention, summarizer input tokens):")
    for p in result.pareto_front:
        m = p.metrics
        print(f"  {p.point.label:44} peak {m['peak_view_tokens']:>7,}  retention {m['retention']}  "
              f"summarizer {m['summarizer_calls']} calls / {m['summarizer_input_tokens']:,} tokens")
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(result.to_dict(), indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
