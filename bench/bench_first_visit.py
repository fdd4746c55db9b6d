"""A page's first visit in a fresh server and browser tab, against its second visit in the same run.

The first time a page opens, the server compiles its script and imports what it uses lazily, and
the browser fetches the code of every kind of element it has not drawn yet (Streamlit loads each
element's code on first use); a page may also run work for tabs nobody opened. Each run here
starts a new dashboard server on `synthetic_thread(1000, seed=0)` (`langchain` preset) and a new
Chromium page, lands on the Timeline, waits `--idle` seconds (a user reading the chart), then opens
every page from the sidebar's navigation once (first visits) and then once more (second visits).
A visit is timed in the page from the link's mousedown to the script being idle with every chart
drawn (bench_browser's `settled`). The floor is the second visit of the same page in the same
run: what the page costs once nothing is loaded for the first time.

    python bench/bench_first_visit.py [--runs 3] [--idle 3] [--json bench/results/first_visit.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.bench_browser import CHROMIUM, SETTLED_JS, TIMEOUT_MS, Meter, serve  # noqa: E402
from bench.harness import machine_line  # noqa: E402

PAGES = ("Step", "Layers", "Evals", "Compare sessions", "Threads", "Config", "Workshop")


def _visit(page: Any, label: str) -> float:
    page.evaluate("() => { window.__t0 = window.__t2 = null; }")
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=label, exact=True).click()
    page.wait_for_timeout(200)  # the switch's rerun has started
    page.wait_for_function(SETTLED_JS, arg=False, timeout=TIMEOUT_MS, polling="raf")
    page.wait_for_timeout(300)
    t = page.evaluate("() => [window.__t0, window.__t2]")
    return (t[1] - t[0]) / 1000


def one_run(idle_s: float) -> dict[str, list[float]]:
    from playwright.sync_api import sync_playwright

    from engine.formats.native import dumps
    from engine.thread.synthetic import synthetic_thread

    scratch = Path(tempfile.mkdtemp(prefix="ctxi-first-visit-"))
    (scratch / "samples").mkdir()
    (scratch / "samples" / "bench.json").write_text(dumps(synthetic_thread(1000, seed=0)), encoding="utf-8")
    env = {"CTXI_SAMPLES_DIR": str(scratch / "samples"), "CTXI_WORKSPACE": str(scratch / "workspace")}
    out: dict[str, list[float]] = {}
    with serve(ROOT / "app.py", env, scratch / "app.log") as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True)
        page = browser.new_page(viewport={"width": 1500, "height": 1000})
        meter = Meter(page, "")
        page.goto(f"{url}/?thread=sample:bench&preset=langchain")
        meter.settle()
        page.wait_for_timeout(int(idle_s * 1000))
        for label in (*PAGES, "Timeline", *PAGES):
            out.setdefault(label, []).append(_visit(page, label))
        browser.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--idle", type=float, default=3.0, help="seconds on the Timeline before the first page opens")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    print(machine_line())
    first: dict[str, list[float]] = {p: [] for p in PAGES}
    later: dict[str, list[float]] = {p: [] for p in PAGES}
    for i in range(args.runs):
        visits = one_run(args.idle)
        for p in PAGES:
            first[p].append(visits[p][0])
            later[p].append(visits[p][1])
        print(f"run {i + 1}: " + ", ".join(f"{p} {visits[p][0]:.2f}/{visits[p][1]:.2f} s" for p in PAGES))
    rows = {}
    print(f"\n{'page':18} {'first visit':>24} {'second visit':>24} {'first / second':>15}")
    for p in PAGES:
        ratio = [f / s for f, s in zip(first[p], later[p], strict=True)]
        rows[p] = {"first_s": first[p], "second_s": later[p], "ratio_median": round(statistics.median(ratio), 2)}
        print(f"{p:18} {statistics.median(first[p]):8.3f} s [{min(first[p]):.3f}–{max(first[p]):.3f}]"
              f" {statistics.median(later[p]):8.3f} s [{min(later[p]):.3f}–{max(later[p]):.3f}]"
              f" {statistics.median(ratio):10.2f}x")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"idle_s": args.idle, "runs": args.runs, "pages": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
