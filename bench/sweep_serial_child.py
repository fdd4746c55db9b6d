"""The sweep bench's serial side, in a process of its own (started by bench/bench_sweep.py for each run).

A serial sweep is run by a fresh process (`ctxi sweep --executor serial`): nothing cached from an earlier
sweep. Run in the bench's own process, each serial run after the first found the process-wide caches of
the runs before it warm (a counter's line cache, the evals' per-thread facts), and measured 12.9-13.5 s
of CPU for what took 14.2-14.4 s as the first sweep of a fresh process (2026-12-05, 100 threads x 2
points); the pool's workers start without them every sweep. Here, as in the forkserver the pool's
workers fork from (engine/evals/sweep_preload.py), the engine's modules are imported, its tables read
and the default encoding built before the clock starts, and the threads are rebuilt from their JSON (untimed); then one serial
sweep is timed. Prints one JSON line: wall and CPU seconds, and every point's metrics.

    python bench/sweep_serial_child.py DOCS.json PRESET GRID_JSON
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import engine.evals.sweep_preload  # noqa: E402,F401 - what the pool's forkserver holds before its workers fork
from engine.config.schema import preset  # noqa: E402
from engine.evals.sweep import sweep  # noqa: E402
from engine.formats.native import thread_from_dict  # noqa: E402


def main() -> int:
    docs = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    base = preset(sys.argv[2])
    grid = json.loads(sys.argv[3])
    built = [thread_from_dict(json.loads(d)) for d in docs]
    target = built[0] if len(built) == 1 else built
    w0, c0 = time.perf_counter(), time.process_time()
    result = sweep(target, base, grid, executor="serial")
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    print(json.dumps({"wall": wall, "cpu": cpu, "metrics": [p.metrics for p in result.points]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
