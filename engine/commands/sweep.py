"""`ctxi sweep FILE... --grid KEY=V1,V2 ...`: replay threads over a grid of settings, in parallel."""

from __future__ import annotations

import argparse
import json
import sys

from engine.config import PRESETS, load_config
from engine.formats import load_thread
from engine.sweep import EXECUTORS, SweepResult, grid_from_args, sweep

NAME = "sweep"
HELP = "Replay threads over a grid of settings; peak view tokens vs retention vs cost."


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE", help="thread files (any supported format)")
    p.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2",
                   help="a config key and its values (repeatable; the points are the cartesian product). "
                        "Values are comma-separated; if any ';' is present, ';' separates them instead, so "
                        "summarization.trigger='tokens:30000,messages:50;tokens:60000' is two points")
    p.add_argument("--config", help="base engine config YAML")
    p.add_argument("--preset", choices=PRESETS, help="base preset (default: deepagents)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a base config key")
    p.add_argument("--needle", dest="needles", action="append", default=[], metavar="TEXT",
                   help="a fact to track for retention (repeatable); default: picked from each thread")
    p.add_argument("--workers", type=int, help="worker processes (default: all cores)")
    p.add_argument("--executor", choices=EXECUTORS, default="process",
                   help="process pool (default), serial, or ray (needs the ray extra)")
    p.add_argument("--ray-address", help="connect the ray executor to this cluster address")
    p.add_argument("--json", dest="json_out", action="store_true", help="print the sweep as JSON")
    p.add_argument("--max-bytes", type=int, help="refuse files larger than this (default 512 MiB)")


def table(result: SweepResult) -> list[str]:
    lines = [f"{len(result.points)} points x {len(result.thread_ids)} threads = {result.replays} replays "
             f"({result.executor}, {result.workers} workers, {result.elapsed_s:.1f} s); * = Pareto front",
             f"  {'point':46} {'peak view':>10} {'retention':>9} {'drift':>6} {'calls':>6} {'summ. tokens':>13} "
             f"{'dollars':>10} {'hit rate':>8}"]
    for p in result.points:
        m = p.metrics
        ret = "n/a" if m["retention"] is None else f"{m['retention']:.3f}"
        drift = "n/a" if m["drift"] is None else f"{m['drift']:.3f}"
        hit = "n/a" if m["hit_rate"] is None else f"{100 * m['hit_rate']:.1f}%"
        lines.append(f"{'*' if p.pareto else ' '} {p.point.label[:46]:46} {m['peak_view_tokens']:>10,} {ret:>9} "
                     f"{drift:>6} {m['summarizer_calls']:>6} {m['summarizer_input_tokens']:>13,} "
                     f"{'$' + format(m['dollars'], ',.4f'):>10} {hit:>8}")
    return lines


def run(args: argparse.Namespace) -> int:
    base = load_config(args.config, preset_name=args.preset, overrides=args.overrides)
    grid = grid_from_args(args.grid)
    threads = [load_thread(f, max_bytes=args.max_bytes) for f in args.files]
    result = sweep(threads, base, grid, executor=args.executor, workers=args.workers,
                   needles=args.needles or None, ray_address=args.ray_address)
    if args.json_out:
        sys.stdout.write(json.dumps(result.to_dict(), ensure_ascii=False, indent=1) + "\n")
    else:
        print("\n".join(table(result)))
    return 0
