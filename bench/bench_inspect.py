"""`ctxi inspect` on many tiny messages: time and peak RSS at 20k/40k/80k (and 1M) messages, vs json.loads.

Issue 11 found that 1M tiny messages took minutes and over 2 GB to inspect. Each figure here comes
from a fresh child process (peak RSS is per process), which first loads the tokenizer (a fixed cost
every size pays alike), then runs the floor, `json.loads` of the same file, and frees it, then runs
`ctxi inspect FILE --json` (stdout to /dev/null) in the same process. A child reports:

- `inspect CPU`: CPU seconds of the whole `ctxi inspect --json` (load, count, write the JSON);
- `floor CPU`: CPU seconds of `json.loads` of the file;
- `peak RSS`: the child's high-water mark (VmHWM), and `own`, that mark minus the RSS before the
  floor ran (interpreter, imports and tokenizer are not the thread's);
- `floor MB`: what the parsed JSON held (RSS after `json.loads` minus before).

Sizes alternate within each round (20k, 40k, 80k, 20k, …) so a burst of load hits all of them; a
figure is the median with its range over the runs. The target (issue 11): from 40k to 80k messages
the peak RSS, the own RSS and the CPU time grow at most 2.2x; it is printed `met` or `MISSED`.
The threads are `--shape chat` (a JSON list of alternating user/assistant {role, content}
messages, the issue's repro) or `--shape tools` (bench_memory's short tool calls and results, as
native JSON).

    python bench/bench_inspect.py [--runs 5] [--sizes 20000,40000,80000] [--shape chat|tools]
    python bench/bench_inspect.py --runs 3 --sizes 40000,80000,1000000
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from harness import ROOT, machine_line

# The child: tokenizer first (fixed cost), then the floor, then the inspect, each probed.
CHILD = """
import gc, io, json, os, sys, time
def rss(field):
    return next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith(field)) / 1024
from engine.cli.ctxi import main
from engine.tokens.counters import get_counter
get_counter().count_text('warm')
gc.collect()
base = rss('VmRSS')
c0 = time.process_time()
with open(sys.argv[1], 'rb') as fh:
    doc = json.loads(fh.read())
floor_cpu = time.process_time() - c0
floor_mb = rss('VmRSS') - base
del doc
gc.collect()
c0 = time.process_time()
with open(os.devnull, 'w') as null:
    old, sys.stdout = sys.stdout, null
    try:
        rc = main(['inspect', sys.argv[1], '--json'])
    finally:
        sys.stdout = old
inspect_cpu = time.process_time() - c0
print('PROBE', rc, rss('VmHWM'), base, inspect_cpu, floor_cpu, floor_mb, file=sys.stderr)
"""

FIELDS = ("peak", "base", "cpu", "floor_cpu", "floor_mb")


def write_chat(path: Path, messages: int) -> None:
    """A JSON list of tiny alternating user/assistant messages (the issue's 1M-message repro)."""
    with path.open("w", encoding="utf-8") as fh:
        fh.write("[")
        for i in range(messages):
            role = "user" if i % 2 == 0 else "assistant"
            fh.write(("," if i else "") + json.dumps({"role": role, "content": f"m{i}"}))
        fh.write("]")


def write_tools(path: Path, messages: int) -> None:
    from bench_memory import small_thread

    from engine.formats.native import dumps

    path.write_text(dumps(small_thread(messages), indent=None), encoding="utf-8")


def child(path: Path) -> dict[str, float]:
    done = subprocess.run([sys.executable, "-c", CHILD, str(path)], cwd=ROOT, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    probe = [ln for ln in done.stderr.splitlines() if ln.startswith("PROBE ")]
    if done.returncode != 0 or not probe:
        raise RuntimeError(f"child on {path.name} failed ({done.returncode}): {done.stderr[-600:]}")
    rc, *values = probe[-1].split()[1:]
    if rc != "0":
        raise RuntimeError(f"ctxi inspect {path.name} exited {rc}: {done.stderr[-600:]}")
    out = dict(zip(FIELDS, map(float, values), strict=True))
    out["own"] = out["peak"] - out["base"]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--sizes", default="20000,40000,80000")
    ap.add_argument("--shape", choices=("chat", "tools"), default="chat")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(machine_line())
    rows: dict[int, list[dict[str, float]]] = {n: [] for n in sizes}
    with tempfile.TemporaryDirectory() as tmp:
        paths = {n: Path(tmp) / f"{args.shape}-{n}.json" for n in sizes}
        for n, path in paths.items():
            (write_chat if args.shape == "chat" else write_tools)(path, n)
        for r in range(args.runs):
            for n in sizes:
                rows[n].append(child(paths[n]))
                last = rows[n][-1]
                print(f"  run {r + 1}/{args.runs} {n:,}: inspect {last['cpu']:.2f} s CPU, peak {last['peak']:.0f} MB",
                      file=sys.stderr, flush=True)
        file_mb = {n: p.stat().st_size / 2**20 for n, p in paths.items()}

    def med(n: int, key: str) -> float:
        return statistics.median(v[key] for v in rows[n])

    def rng(n: int, key: str, fmt: str = ".0f") -> str:
        values = [v[key] for v in rows[n]]
        return f"[{min(values):{fmt}}–{max(values):{fmt}}]"

    print(f"`ctxi inspect FILE --json` on {args.shape} threads; {args.runs} runs a size; "
          "CPU seconds and MB, median [range]")
    print(f"{'messages':>10}{'file MB':>9}{'inspect CPU s':>22}{'floor CPU s':>20}{'x floor':>9}"
          f"{'peak RSS MB':>20}{'own MB':>18}{'floor MB':>10}{'own/floor':>11}")
    for n in sizes:
        print(f"{n:>10,}{file_mb[n]:>9.1f}{med(n, 'cpu'):>8.2f} {rng(n, 'cpu', '.2f'):>13}"
              f"{med(n, 'floor_cpu'):>7.3f} {rng(n, 'floor_cpu', '.3f'):>12}{med(n, 'cpu') / med(n, 'floor_cpu'):>9.1f}"
              f"{med(n, 'peak'):>8.0f} {rng(n, 'peak'):>11}{med(n, 'own'):>7.0f} {rng(n, 'own'):>10}"
              f"{med(n, 'floor_mb'):>10.0f}{med(n, 'own') / max(med(n, 'floor_mb'), 1):>11.1f}")
    if 40_000 in rows and 80_000 in rows:
        growth = {key: med(80_000, key) / med(40_000, key) for key in ("peak", "own", "cpu")}
        ok = all(g <= 2.2 for g in growth.values())
        print(f"80k / 40k messages: peak RSS {growth['peak']:.2f}x, own RSS {growth['own']:.2f}x, "
              f"CPU {growth['cpu']:.2f}x (json.loads floor: CPU {med(80_000, 'floor_cpu') / med(40_000, 'floor_cpu'):.2f}x); "
              f"target <= 2.2x: {'met' if ok else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
