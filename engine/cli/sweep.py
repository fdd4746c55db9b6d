"""`ctxi sweep FILE... --grid KEY=V1,V2 ...`: replay threads over a grid of settings, in parallel."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from engine.base.wording import plural
from engine.cli.arguments import (
    MAX_BYTES_HELP,
    add_config_arguments,
    add_json_argument,
    check_middleware_allowed,
)

if TYPE_CHECKING:
    from engine.evals.sweep import SweepResult
# engine.evals.sweep.EXECUTORS, named here so `ctxi sweep --help` needs no engine (tests/cli/test_cli.py checks they agree)
EXECUTORS: tuple[str, ...] = ("process", "serial", "ray")

NAME = "sweep"
HELP = "Replay threads over a grid of settings; peak view tokens vs retention vs cost."


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE", help="thread files (any supported format)")
    p.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2",
                   help="a config key and its values (repeatable; the points are the cartesian product). "
                        "Values are comma-separated; if any ';' is present, ';' separates them instead, so "
                        "summarization.trigger='tokens:30000,messages:50;tokens:60000' is two points. "
                        "preset=claude-code,codex,gemini-cli,deepagents puts agents' policies side by side: each "
                        "point starts from that preset, with the base's --set values on top")
    add_config_arguments(p, default="deepagents")
    p.add_argument("--needle", dest="needles", action="append", default=[], metavar="TEXT",
                   help="a fact to track for retention (repeatable); default: picked from each thread")
    p.add_argument("--workers", type=int, help="worker processes (default: all cores)")
    p.add_argument("--executor", choices=EXECUTORS, default="process",
                   help="process pool (default), serial, or ray (needs the ray extra)")
    p.add_argument("--ray-address", help="connect the ray executor to this cluster address")
    p.add_argument("--pareto", metavar="AXIS,AXIS", default="peak_view_tokens,retention,cost",
                   help="the Pareto front's axes (default: peak_view_tokens,retention,cost); any of peak_view_tokens, "
                        "retention, recovery, drift, survival, recovery_calls, recovery_tokens, recovery_dollars, "
                        "cache_lost_dollars, dollars, summarizer_input_tokens, compactions, tokens_saved, cost "
                        "(dollars when priced, else summarizer input tokens)")
    add_json_argument(p, "the sweep")
    p.add_argument("--max-bytes", type=int, metavar="N", help=MAX_BYTES_HELP)


def table(result: SweepResult) -> list[str]:
    lines = [f"{plural(len(result.points), 'point')} x {plural(len(result.thread_ids), 'thread')} = "
             f"{plural(result.replays, 'replay')} "
             f"({result.executor}, {plural(result.workers, 'worker')}, {result.elapsed_s:.1f} s); * = Pareto front",
             f"  {'point':40} {'peak view':>10} {'compactions':>11} {'saved':>11} {'retention':>9} {'drift':>6} "
             f"{'calls':>6} {'agent calls':>11} {'summ. tokens':>13} {'dollars':>10} {'hit rate':>8} {'survival':>8} "
             f"{'refetches':>9}"]
    for p in result.points:
        m = p.metrics
        ret = "n/a" if m["retention"] is None else f"{m['retention']:.3f}"
        drift = "n/a" if m["drift"] is None else f"{m['drift']:.3f}"
        hit = "n/a" if m["hit_rate"] is None else f"{100 * m['hit_rate']:.1f}%"
        money = "n/a" if m["dollars"] is None else "$" + format(m["dollars"], ",.4f")  # an unpriced model
        kept = "n/a" if m["survival"] is None else f"{100 * m['survival']:.1f}%"
        lines.append(f"{'*' if p.pareto else ' '} {p.point.label[:40]:40} {m['peak_view_tokens']:>10,} "
                     f"{m['compactions']:>11,} {m['tokens_saved']:>11,} {ret:>9} {drift:>6} {m['summarizer_calls']:>6,} "
                     f"{m['recorded_summarizer_calls']:>11,} {m['summarizer_input_tokens']:>13,} {money:>10} {hit:>8} "
                     f"{kept:>8} {m['recovery_calls']:>9,}")
    if any(p.metrics["recorded_summarizer_calls"] for p in result.points):
        lines.append("calls: our summarizer's; agent calls: the source agent's own compaction calls (recorded)")
    return lines


def run(args: argparse.Namespace) -> int:
    from engine.config.loading import load_config
    from engine.evals.sweep import check_pareto_axes, grid_from_args, grid_points, point_config, sweep
    from engine.formats import load_thread

    base = load_config(args.config, preset_name=args.preset, overrides=args.overrides)
    grid = grid_from_args(args.grid)
    check_pareto_axes([a.strip() for a in str(args.pareto).split(",") if a.strip()])  # before reading any thread
    # a grid may name middleware too (`--grid 'middleware=[...];[]'`): every point's is checked
    points = [point_config(base, p.overrides) for p in grid_points(grid)] if any(
        k.partition(".")[0] == "middleware" for k in grid) else []
    check_middleware_allowed(args, base, *points)
    threads = [load_thread(f, max_bytes=args.max_bytes) for f in args.files]
    axes = [a.strip() for a in str(args.pareto).split(",") if a.strip()]
    result = sweep(threads, base, grid, executor=args.executor, workers=args.workers,
                   needles=args.needles or None, ray_address=args.ray_address, pareto=axes)
    if args.json:
        sys.stdout.write(json.dumps(result.to_dict(), ensure_ascii=False, indent=1) + "\n")
    else:
        print("\n".join(table(result)))
    return 0
