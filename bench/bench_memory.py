"""Replay memory (bench/harness.py conventions: >= 5 runs, median and range).

    python bench/bench_memory.py [--runs 5] [--only run,scale] [--steps 1000] [--sizes 20000,40000,80000,100000]
                                 [--preset deepagents|as-recorded|...] [--shape tools|chat|claude_code|eval|...]

run     What a Run of synthetic_thread(1000) holds beyond the thread (tracemalloc, after a full
        collection, the Run alive): the thread and its counts cached by an earlier run are the floor,
        measured in the same process. Stress and deepagents presets. Target <= 10 MB. The largest
        holders are listed by source line; and what the Run's checkpoints and ended driver hold (the
        memory `drop_checkpoints` gives back: engine/run/resume.py).
scale   Peak RSS (the child's own VmHWM: a forked child's ru_maxrss would count the parent's pages) of
        `ctxi replay FILE` (no JSON; `--preset NAME`, default the CLI's own choice: `deepagents` for
        these threads, which record no usage) on threads of 20k, 40k, 80k and 100k small messages
        written as native JSON, next to a child that only loads the same file (the floor:
        interpreter, libraries, the thread). Each child first imports the engine and loads the
        tokenizer, then notes its RSS (its start); `own` is the peak minus that start. Each size's
        runs are interleaved with the others'. Target: peak RSS 80k / 40k <= 2.2x, and the replay's
        own RSS as well; the children's CPU and wall time are shown too. `--shape` replays another
        shape (bench_inspect.py's: `chat`, `claude_code` with usage (as-recorded) or without, `eval`,
        `otel`, ...); per message the replay's own RSS and CPU are printed, and from a size to ten times
        it their growth per message (issues 38.4 / 39.6: linear within 1.3x per decade).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path
from typing import Any

from harness import MB, ROOT, machine_line

from engine.config.schema import preset
from engine.formats.native import dumps
from engine.run.replay import replay
from engine.thread.model import Thread
from engine.thread.synthetic import synthetic_thread
from engine.tokens.counters import TiktokenCounter, prime_thread

SECTIONS = ("run", "scale")
# Each child imports the engine and loads the tokenizer (a fixed cost every size pays alike), notes
# its RSS (its start), runs, then reports its high-water mark, its start, CPU and wall seconds.
START = ("import gc, sys, time; w0 = time.perf_counter(); from engine.cli.ctxi import main; "
         "from engine.formats import load_thread; from engine.tokens.counters import get_counter; "
         "get_counter().count_text('warm'); gc.collect(); "
         "base = next(l for l in open('/proc/self/status') if l.startswith('VmRSS')); "
         "c0, w0 = time.process_time(), time.perf_counter(); ")
REPORT = ("hwm = next(l for l in open('/proc/self/status') if l.startswith('VmHWM')); "
          "print('PROBE', int(hwm.split()[1]), int(base.split()[1]), time.process_time() - c0, "
          "time.perf_counter() - w0, file=sys.stderr)")
LOAD_ONLY = f"{START}load_thread(sys.argv[1]); {REPORT}"
REPLAY = f"{START}rc = main(['replay', *sys.argv[1:]]); {REPORT}; sys.exit(rc)"
# One child's figures: peak MB, start MB, CPU s, wall s.
PEAK, BASE, CPU, WALL = range(4)


def small_thread(messages: int) -> Thread:
    """`messages` messages: one request, then short tool calls and short results (a message-count stress)."""
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

    msgs: list[BaseMessage] = [HumanMessage("List the directory, one entry at a time.", id="h-0")]
    k = 0
    while len(msgs) < messages:
        msgs.append(AIMessage(f"Looking at entry {k}.", id=f"a-{k}",
                              tool_calls=[{"name": "ls", "args": {"path": f"/src/{k}"}, "id": f"c-{k}"}]))
        msgs.append(ToolMessage(f"/src/{k}: file, {k % 97} lines", tool_call_id=f"c-{k}", name="ls", id=f"t-{k}"))
        k += 1
    return Thread(thread_id=f"small-{messages}", messages=msgs[:messages], source_format="synthetic",
                  model="synthetic", max_input_tokens=200_000, title=f"{messages} small messages")


# -- run ---------------------------------------------------------------------------------------
def run_memory(steps: int, preset_name: str, runs: int) -> tuple[list[float], float, list[Any], list[float]]:
    """MB a Run holds beyond the thread, per run; the thread's own MB; the top holders of the last run; the
    MB its checkpoints and ended driver hold (freed by `drop_checkpoints`: engine/run/resume.py), per run."""
    tracemalloc.start(1)  # the holders are listed by their allocating line: one frame is enough, and far cheaper
    gc.collect()
    before = tracemalloc.get_traced_memory()[0]
    thread = synthetic_thread(steps, seed=0)
    thread_mb = (tracemalloc.get_traced_memory()[0] - before) / MB
    counter = TiktokenCounter("o200k_base")
    prime_thread(counter, thread)
    config = preset(preset_name)
    replay(thread, config, token_counter=counter)  # anything cached once per process is cached now
    held: list[float] = []
    checkpoints: list[float] = []
    top: list[Any] = []
    for _ in range(runs):
        gc.collect()
        floor = tracemalloc.get_traced_memory()[0]
        snap0 = tracemalloc.take_snapshot()
        run = replay(thread, config, token_counter=counter)
        gc.collect()
        held.append((tracemalloc.get_traced_memory()[0] - floor) / MB)
        top = tracemalloc.take_snapshot().compare_to(snap0, "lineno")[:6]
        with_checkpoints = tracemalloc.get_traced_memory()[0]
        run.drop_checkpoints()
        gc.collect()
        checkpoints.append((with_checkpoints - tracemalloc.get_traced_memory()[0]) / MB)
        del run
    tracemalloc.stop()
    return held, thread_mb, top, checkpoints


def bench_run(steps: int, runs: int) -> bool:
    ok = True
    for name in ("stress", "deepagents"):
        held, thread_mb, top, checkpoints = run_memory(steps, name, runs)
        met = statistics.median(held) <= 10
        ok &= met
        print(f"Run of synthetic_thread({steps}), {name} preset: holds {statistics.median(held):.2f} MB "
              f"[{min(held):.2f}–{max(held):.2f}] beyond the thread ({thread_mb:.1f} MB) and its counts; "
              f"{runs} runs; target <= 10 MB: {'met' if met else 'MISSED'}")
        print(f"    of which its checkpoints and ended driver (for re-runs that resume): "
              f"{statistics.median(checkpoints):.2f} MB [{min(checkpoints):.2f}–{max(checkpoints):.2f}]")
        for stat in top:
            frame = stat.traceback[0]
            print(f"    {stat.size_diff / MB:7.2f} MB  {Path(frame.filename).name}:{frame.lineno}")
    return ok


# -- scale -------------------------------------------------------------------------------------
def _child(code: str, path: Path, extra: list[str]) -> tuple[float, float, float, float]:
    """Peak RSS (MB), RSS at the child's start (MB), CPU and wall seconds of one child running `code` on `path`."""
    done = subprocess.run([sys.executable, "-c", code, str(path), *extra], cwd=ROOT, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    probe = [ln for ln in done.stderr.splitlines() if ln.startswith("PROBE ")]
    if done.returncode != 0 or not probe:
        raise RuntimeError(f"child on {path.name} failed ({done.returncode}): {done.stderr[-400:]}")
    _, kb, base_kb, cpu, wall = probe[-1].split()
    return int(kb) / 1024, int(base_kb) / 1024, float(cpu), float(wall)


def bench_scale(sizes: list[int], runs: int, preset_name: str | None, shape: str = "tools") -> bool:
    extra = ["--preset", preset_name] if preset_name else []
    rows: dict[int, dict[str, list[tuple[float, float, float, float]]]] = {
        n: {"load": [], "replay": []} for n in sizes}
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for n in sizes:
            if shape == "tools":
                paths[n] = Path(tmp) / f"small-{n}.json"
                paths[n].write_text(dumps(small_thread(n), indent=None), encoding="utf-8")
            else:
                from bench_inspect import shapes

                write, file_name = shapes()[shape]
                paths[n] = Path(tmp) / f"{n}-{file_name}"
                write(paths[n], n)
        for r in range(runs):
            for n in sizes:
                rows[n]["load"].append(_child(LOAD_ONLY, paths[n], []))
                rows[n]["replay"].append(_child(REPLAY, paths[n], extra))
                got = rows[n]["replay"][-1]
                print(f"  run {r + 1}/{runs} {n:,} messages: replay peak {got[PEAK]:.0f} MB, "
                      f"{got[CPU]:.1f} s CPU, {got[WALL]:.1f} s wall", file=sys.stderr, flush=True)

    def values(n: int, side: str, i: int) -> list[float]:
        if i == -1:  # own: peak minus start, run by run
            return [v[PEAK] - v[BASE] for v in rows[n][side]]
        return [v[i] for v in rows[n][side]]

    def med(n: int, side: str, i: int) -> float:
        return statistics.median(values(n, side, i))

    def cell(n: int, side: str, i: int, fmt: str = ".0f") -> str:
        v = values(n, side, i)
        return f"{statistics.median(v):{fmt}} [{min(v):{fmt}}–{max(v):{fmt}}]"

    print(f"`ctxi replay` ({preset_name or 'the CLI default'} preset, no JSON) on {shape} threads; "
          f"{runs} runs a size; MB, median [range]")
    print("| messages | replay peak MB | replay own MB | replay CPU s | replay wall s | load-only peak MB "
          "| load-only own MB | load CPU s |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in sizes:
        print(f"| {n:,} | {cell(n, 'replay', PEAK)} | {cell(n, 'replay', -1)} | {cell(n, 'replay', CPU, '.1f')} "
              f"| {cell(n, 'replay', WALL, '.1f')} | {cell(n, 'load', PEAK)} | {cell(n, 'load', -1)} "
              f"| {cell(n, 'load', CPU, '.1f')} |")
    ok = True
    print("| messages | replay own B/msg | replay CPU us/msg |\n|---:|---:|---:|")
    for n in sizes:
        own = [v * 2**20 / n for v in values(n, "replay", -1)]
        cpu = [v / n * 1e6 for v in values(n, "replay", CPU)]
        print(f"| {n:,} | {statistics.median(own):,.0f} [{min(own):,.0f}–{max(own):,.0f}] "
              f"| {statistics.median(cpu):,.1f} [{min(cpu):,.1f}–{max(cpu):,.1f}] |")
    for small in sizes:
        if small * 10 in rows:
            large = small * 10
            own_growth = (med(large, "replay", -1) / large) / (med(small, "replay", -1) / small)
            cpu_growth = (med(large, "replay", CPU) / large) / (med(small, "replay", CPU) / small)
            met = own_growth <= 1.3 and cpu_growth <= 1.3
            ok &= met
            print(f"{large:,} / {small:,} messages, per message: replay's own RSS {own_growth:.2f}x, CPU "
                  f"{cpu_growth:.2f}x; target <= 1.3x per decade: {'met' if met else 'MISSED'}")
    if 40_000 in rows and 80_000 in rows:
        peak = med(80_000, "replay", PEAK) / med(40_000, "replay", PEAK)
        own = med(80_000, "replay", -1) / med(40_000, "replay", -1)
        cpu = med(80_000, "replay", CPU) / med(40_000, "replay", CPU)
        ok &= peak <= 2.2 and own <= 2.2
        print(f"80k / 40k messages: peak RSS {peak:.2f}x, replay's own RSS {own:.2f}x, CPU {cpu:.2f}x; "
              f"target <= 2.2x (peak and own RSS): {'met' if ok else 'MISSED'}")
    return ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--sizes", default="20000,40000,80000,100000")
    ap.add_argument("--only", default=",".join(SECTIONS))
    ap.add_argument("--preset", default=None, help="scale: the replay's preset (default: the CLI's choice)")
    ap.add_argument("--shape", default="tools", help="scale: the thread shape (tools, or a bench_inspect.py shape)")
    args = ap.parse_args()
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    print(machine_line())
    results: dict[str, bool] = {}
    if "run" in only:
        results["run"] = bench_run(args.steps, args.runs)
        print()
    if "scale" in only:
        results["scale"] = bench_scale([int(s) for s in args.sizes.split(",")], args.runs, args.preset, args.shape)
    print("\n" + ", ".join(f"{k}: {'met' if v else 'MISSED'}" for k, v in results.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
