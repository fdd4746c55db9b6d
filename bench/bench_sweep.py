"""Sweep speed (issue 6): a 10 x 10 grid over a 1,000-step synthetic thread on 2 cores, target < 60 s.

    python bench/bench_sweep.py [--steps 1000] [--workers 2] [--executor process|ray] [--runs 5] [--grid K=V,...]
    python bench/bench_sweep.py --sessions 100 --steps 200 --executor process,ray --grid summarization.trigger=...

With `--sessions N` the sweep runs over N threads (`synthetic_thread(steps, seed=i)`, i < N: a folder of
sessions, each replayed at every grid point: issue 37's "policy sweep over 100 sessions"), and
`--executor` may name several executors, each interleaved with the serial floor (Ray: a local cluster of
`--workers` CPUs, started once before the timed runs as a long-lived cluster is — its start is printed
on its own — by `engine.evals.sweep.ray_init`, as a process joining a cluster for several sweeps should,
and joined by every sweep; `--ray-per-sweep` lets each sweep start and stop its own).

Every timed run of every side gets threads freshly rebuilt from their native JSON (untimed), as
`ctxi sweep FILES` loads them: no side reuses the token counts an earlier run cached on the messages.

Compares the sweep on `--executor` with `--workers` workers against the same sweep run serially (the
floor: one replay after another, nothing in parallel), each serial run in a fresh process as a serial
`ctxi sweep` is (bench/sweep_serial_child.py: the engine imported and the encoding built before its
clock starts, as in the pool's forkserver; `--serial-here` runs it in this process, where each run after
the first finds the caches of the runs before it warm), the sides interleaved,
`--runs` runs each (bench/harness.py conventions: median and range). Figures are wall time (the
pool's CPU is spent in its workers, so this process's CPU time would not measure it); the workers'
own CPU seconds, as they report them, are printed next to it. The default grid is 10
summarization triggers (fractions 0.30-0.85 of the 200,000-token window) x 10 keeps (2-20
messages), on the deepagents preset: 100 replays plus needle and drift evals. Agreement: both
sides give every point the same metrics. The Pareto front is printed last.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness import Samples, interleaved, machine_line

from engine.config.schema import preset
from engine.evals.sweep import SweepResult, grid_from_args, ray_init, sweep
from engine.formats.native import thread_from_dict, thread_to_dict
from engine.thread.synthetic import synthetic_thread

TRIGGERS = [f"fraction:{f:.2f}" for f in (0.30, 0.36, 0.42, 0.48, 0.54, 0.60, 0.66, 0.72, 0.78, 0.85)]
KEEPS = [f"messages:{n}" for n in range(2, 21, 2)]
TARGET_S = 60.0
TARGET_SPEEDUP = 1.8  # issue 37: a sweep over 100 sessions on 2 cores, pool and Ray vs serial


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--sessions", type=int, default=1, help="sweep over this many threads (seeds 0..N-1)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--executor", default="process")
    ap.add_argument("--preset", default="deepagents")
    ap.add_argument("--runs", type=int, default=5, help="timed runs of each side (>= 5 for the figures)")
    ap.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2")
    ap.add_argument("--json", dest="json_path", help="write the sweep result JSON here")
    ap.add_argument("--ray-per-sweep", action="store_true", help="each Ray sweep starts and stops its own cluster")
    ap.add_argument("--serial-here", action="store_true",
                    help="run the serial side in this process (each run after the first finds the earlier runs' "
                         "caches warm), not in a fresh process per run as a serial `ctxi sweep` is")
    args = ap.parse_args()
    print(machine_line())
    grid = grid_from_args(args.grid) if args.grid else {"summarization.trigger": TRIGGERS, "summarization.keep": KEEPS}
    threads = [synthetic_thread(args.steps, seed=i) for i in range(args.sessions)]
    # kept as text, not dicts: 100 MB of dicts is millions of objects every collection in this process
    # would walk, slowing the serial side (run here) and not the workers
    docs = [json.dumps(thread_to_dict(t)) for t in threads]
    n_messages = len(threads[0].messages)
    del threads

    def fresh() -> object:
        built = [thread_from_dict(json.loads(d)) for d in docs]
        return built[0] if args.sessions == 1 else built

    base = preset(args.preset)
    executors = [e.strip() for e in args.executor.split(",") if e.strip()]
    if "ray" in executors and not args.ray_per_sweep:
        t0 = time.perf_counter()
        ray_init(num_cpus=args.workers)  # as a process joining a cluster for several sweeps should (docs/evals.md)
        print(f"a local Ray cluster of {args.workers} CPUs started in {time.perf_counter() - t0:.1f} s "
              "(not in the figures: every sweep joins it)")
    pools = {f"{e}, {args.workers} workers": e for e in executors}
    serial_runs: list[dict] = []  # what each serial run's own process measured (`--serial-here`: none)
    if args.serial_here:
        sides = {"serial": lambda target: sweep(target, base, grid, executor="serial")}
    else:
        docs_file = Path(tempfile.mkdtemp()) / "threads.json"
        docs_file.write_text(json.dumps(docs), encoding="utf-8")

        def serial_child(_: object = None) -> None:
            out = subprocess.run([sys.executable, str(Path(__file__).with_name("sweep_serial_child.py")), str(docs_file),
                                  args.preset, json.dumps(grid)], capture_output=True, text=True, check=True)
            serial_runs.append(json.loads(out.stdout.strip().splitlines()[-1]))

        sides = {"serial": serial_child}
    for name, e in pools.items():
        sides[name] = lambda target, e=e: sweep(target, base, grid, executor=e, workers=args.workers)
    setup: dict[str, Any] = dict.fromkeys(sides, fresh)
    if not args.serial_here:
        setup.pop("serial")  # the child rebuilds its threads itself, untimed
    res = interleaved(sides, args.runs, setup=setup)
    if serial_runs:  # the serial side's figures are its own process's clock, not the child's start and exit
        res["serial"].wall_s = [r["wall"] for r in serial_runs]
        res["serial"].cpu_s = [r["cpu"] for r in serial_runs]
        serial_metrics = serial_runs[-1]["metrics"]
    else:
        serial_metrics = [p.metrics for p in res["serial"].result.points]
    for pool in pools:
        result: SweepResult = res[pool].result
        n = len(result.points)
        same = serial_metrics == json.loads(json.dumps([p.metrics for p in result.points]))
        print(f"{pool}: {args.sessions} thread(s) of {args.steps} steps ({n_messages} messages each); "
              "grid: " + " x ".join(f"{len(v)} {k}" for k, v in result.grid.items())
              + f" = {n} points, {n * args.sessions} replays; both sides give every point the same metrics: {same}")
        assert same, "the pool must give the same numbers as serial replays"
    pool = next(iter(pools))
    result = res[pool].result
    n = len(result.points) * args.sessions

    def line(s: Samples) -> str:
        return f"{s.median('wall'):7.1f} s wall [{s.spread('wall')[0]:.1f}–{s.spread('wall')[1]:.1f}], {len(s.wall_s)} runs"

    where = "in this process" if args.serial_here else "each run in a fresh process"
    print(f"  serial, {where}: {line(res['serial'])}; CPU {res['serial'].describe('cpu')}")
    for name in pools:
        r: SweepResult = res[name].result
        wall = res[name].median("wall")
        ratios = sorted(s / p for s, p in zip(res["serial"].wall_s, res[name].wall_s, strict=True))
        print(f"  {name}: {line(res[name])}; the workers' CPU in the last run {r.cpu_s:.1f} s")
        print(f"  serial / {name}: {res['serial'].median('wall') / wall:.2f}x wall (per interleaved pair "
              f"{ratios[0]:.2f}–{ratios[-1]:.2f}x); {n / wall:.2f} replays/s; "
              + (f"target >= {TARGET_SPEEDUP}x: " + ("met" if res['serial'].median('wall') / wall >= TARGET_SPEEDUP
                                                    else "MISSED")
                 if args.sessions > 1 else f"target < {TARGET_S:.0f} s wall: " + ("met" if wall < TARGET_S else "MISSED")))
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
