"""`ctxi inspect` at growing sizes: time and peak RSS per message, vs the parse of the same file.

Issue 11 found that 1M tiny messages took minutes and over 2 GB to inspect; issues 38.4 / 39.6 that a
Claude Code chain with recorded usage, OpenTelemetry spans and `.eval` archives were superlinear. Each
figure here comes from a fresh child process (peak RSS is per process), which first loads the tokenizer
(a fixed cost every size pays alike), then runs the floor, the parse of the same file, and frees it,
then runs `ctxi inspect FILE --json` (stdout to /dev/null) in the same process. A child reports:

- `inspect CPU`: CPU seconds of the whole `ctxi inspect --json` (load, count, write the JSON);
- `floor CPU`: CPU seconds of parsing the file (`json.loads` of a JSON file, of each line of a JSONL
  file, of each member of a zip after inflating it);
- `peak RSS`: the child's high-water mark (VmHWM), and `own`, that mark minus the RSS before the
  floor ran (interpreter, imports and tokenizer are not the thread's);
- `floor MB`: what the parsed file held (RSS after the parse minus before).

Per message: `us/msg` is inspect CPU per message, `B/msg` own RSS per message. Sizes alternate within
each round (a burst of load hits all of them); a figure is the median with its range over the runs.
Targets: from 40k to 80k messages peak RSS, own RSS and CPU grow at most 2.2x (issue 11); from one
size to ten times it, CPU and own RSS per message grow at most 1.3x (issues 38.4, 39.6: linear within
1.3x per decade), each printed `met` or `MISSED`.

Shapes: `chat` (a JSON list of alternating user/assistant {role, content} messages, issue 11's repro),
`tools` (bench_memory's short tool calls and results, as native JSON), and the hostile shapes of
tests/formats/sized.py: `claude_code` / `claude_code_no_usage` (one parent chain of tool_use /
tool_result records, with or without usage), `otel` / `otel_no_usage` / `otel_nested` (any-agent
spans), `eval` (an Inspect `.eval` zip of one sample of tiny messages), `codex`, `gemini`,
`gemini_rewinds`, `openai_messages`, and the later importers' `request_log` / `lhar` (every request trims
the history), `sse_anthropic` / `openai_chunks` (one streamed response of that many chunks), `openhands`
(V1 events condensed every 50 calls). docs/benchmarks.md has the figures at 10k / 100k / 1M.

    python bench/bench_inspect.py [--runs 5] [--sizes 20000,40000,80000] [--shape chat|tools|claude_code|...]
    python bench/bench_inspect.py --runs 3 --shape claude_code --sizes 10000,100000,1000000
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

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
    raw = fh.read()
if raw[:4] == b'PK\x03\x04':
    import zipfile
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        doc = [json.loads(zf.read(n)) for n in zf.namelist() if n.endswith('.json')]
elif sys.argv[1].endswith('.jsonl'):
    doc = [json.loads(line) for line in raw.splitlines() if line.strip()]
else:
    doc = json.loads(raw)
del raw
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


def shapes() -> dict[str, tuple[Any, str]]:
    """Every shape: a writer (path, messages) and the file name it is written as."""
    from tests.formats.sized import SIZED

    out: dict[str, tuple[Any, str]] = {"chat": (write_chat, "chat.json"), "tools": (write_tools, "tools.json")}
    for name, (generate, file_name, _fmt) in SIZED.items():
        out[name] = ((lambda path, n, generate=generate: path.write_bytes(generate(n))), file_name)
    return out


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
    ap.add_argument("--shape", choices=sorted(shapes()), default="chat")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(machine_line())
    rows: dict[int, list[dict[str, float]]] = {n: [] for n in sizes}
    write, file_name = shapes()[args.shape]
    with tempfile.TemporaryDirectory() as tmp:
        paths = {n: Path(tmp) / f"{n}-{file_name}" for n in sizes}
        for n, path in paths.items():
            write(path, n)
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
    print(f"per message: {'messages':>10}{'us/msg CPU':>20}{'B/msg own RSS':>24}")
    for n in sizes:
        cpu = [v["cpu"] / n * 1e6 for v in rows[n]]
        own = [v["own"] * 2**20 / n for v in rows[n]]
        print(f"             {n:>10,}{statistics.median(cpu):>9.1f} [{min(cpu):.1f}–{max(cpu):.1f}]"
              f"{statistics.median(own):>11,.0f} [{min(own):,.0f}–{max(own):,.0f}]")
    for small in sizes:
        large = small * 10
        if large in rows:
            cpu_growth = (med(large, "cpu") / large) / (med(small, "cpu") / small)
            own_growth = (med(large, "own") / large) / (med(small, "own") / small)
            ok = cpu_growth <= 1.3 and own_growth <= 1.3
            print(f"{large:,} / {small:,} messages, per message: CPU {cpu_growth:.2f}x, own RSS {own_growth:.2f}x; "
                  f"target <= 1.3x per decade: {'met' if ok else 'MISSED'}")
    if 40_000 in rows and 80_000 in rows:
        growth = {key: med(80_000, key) / med(40_000, key) for key in ("peak", "own", "cpu")}
        ok = all(g <= 2.2 for g in growth.values())
        print(f"80k / 40k messages: peak RSS {growth['peak']:.2f}x, own RSS {growth['own']:.2f}x, "
              f"CPU {growth['cpu']:.2f}x (json.loads floor: CPU {med(80_000, 'floor_cpu') / med(40_000, 'floor_cpu'):.2f}x); "
              f"target <= 2.2x: {'met' if ok else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
