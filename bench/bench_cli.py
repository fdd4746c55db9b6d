"""CLI start-up: `ctxi --help` within 2x `python -c "import yaml, pydantic"`, timed interleaved.

The machine is shared and noisy, so the floor and each command alternate run by run and the report
gives the median and spread of each, and the ratio of medians.

    python bench/bench_cli.py [--runs 10] [--file THREAD] [--json bench/results/cli.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_RATIO = 2.0
FLOOR = [sys.executable, "-c", "import yaml, pydantic"]


def _time(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t0


def _stats(xs: list[float]) -> dict[str, float]:
    return {"median_s": round(statistics.median(xs), 3), "min_s": round(min(xs), 3), "max_s": round(max(xs), 3)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--file", help="also time `ctxi inspect FILE` (e.g. a Claude Code session)")
    parser.add_argument("--json", type=Path, help="also write the result here")
    args = parser.parse_args(argv)

    ctxi = [sys.executable, "-m", "engine.cli"]
    commands = {"ctxi --help": [*ctxi, "--help"], "ctxi inspect --help": [*ctxi, "inspect", "--help"],
                "ctxi replay --help": [*ctxi, "replay", "--help"]}
    if args.file:
        commands[f"ctxi inspect {Path(args.file).name}"] = [*ctxi, "inspect", args.file]
    times: dict[str, list[float]] = {"floor (import yaml, pydantic)": [], **{k: [] for k in commands}}
    _time(FLOOR)  # warm the file cache
    for _ in range(args.runs):
        times["floor (import yaml, pydantic)"].append(_time(FLOOR))
        for name, cmd in commands.items():
            times[name].append(_time(cmd))
    floor = statistics.median(times["floor (import yaml, pydantic)"])
    result: dict[str, object] = {"runs": args.runs, "target_ratio": TARGET_RATIO,
                                 "times": {k: _stats(v) for k, v in times.items()},
                                 "ratio_to_floor": {k: round(statistics.median(v) / floor, 2)
                                                    for k, v in times.items() if k in commands}}
    help_ratio = statistics.median(times["ctxi --help"]) / floor
    result["help_ok"] = help_ratio <= TARGET_RATIO
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0 if result["help_ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
