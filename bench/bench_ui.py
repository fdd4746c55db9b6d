"""Dashboard benchmark, server side only: what a sidebar change on a 1,000-step thread costs the
Streamlit script beyond the engine, for a new config and for one already computed.

Compares, in this process (Streamlit's AppTest: the whole script runs, no browser and no websocket;
what a user waits for in Chromium is bench/bench_browser.py's figure), three sides of `--changes`
runs each (>= 5), alternating change by change:
- floor: the same replay alone, outside Streamlit, token counts cached (what the engine must do);
- new config: AppTest re-running the script after the trigger is set to a fraction not seen before
  (frame, sidebar, engine re-run, figures, tables, cost);
- cached config: AppTest re-running after the trigger goes back to a fraction already computed
  (the run and its figures come from the cache: nothing is rebuilt).
Targets: the new-config rerun ≤ 1.5 s wall (median) and the cached one ≥ 3× faster than it;
the Timeline figure's JSON < 2 MB. CPU time counts this process's threads (the script thread too).

    python bench/bench_ui.py [--steps 1000] [--changes 5] [--json bench/results/ui.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harness import Samples, machine_line, timed  # noqa: E402

TARGET_RERENDER_S = 1.5
TARGET_CACHED_SPEEDUP = 3.0
TARGET_FIGURE_BYTES = 2_000_000


def _navigation_mode() -> None:
    """AppTest resets Streamlit's legacy pages/ flag per run; keep it in st.navigation mode (see tests/ui)."""
    from streamlit.runtime.pages_manager import PagesManager

    original = PagesManager.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    PagesManager.__init__ = init  # type: ignore[method-assign]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--changes", type=int, default=5, help="runs per side (>= 5 for the figures)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures as JSON here")
    args = parser.parse_args(argv)

    from streamlit.testing.v1 import AppTest

    from engine.config.schema import preset
    from engine.config.sizes import ContextSize
    from engine.formats.native import dumps
    from engine.run.replay import replay
    from engine.thread.synthetic import synthetic_thread
    from ui import controls
    from ui.figures import FIGURE_BUILDS

    print(machine_line())
    thread = synthetic_thread(args.steps, seed=0)
    folder = Path(tempfile.mkdtemp(prefix="ctxi-bench-ui-"))
    (folder / "bench.json").write_text(dumps(thread), encoding="utf-8")
    os.environ["CTXI_SAMPLES_DIR"] = str(folder)
    _navigation_mode()

    # The Timeline's chart is a custom component (ui/timeline_chart.py), not an st.plotly_chart: its
    # figure's size is what `figure_payload` made for the run shown (pages/timeline.py imports it per run).
    import ui.timeline_chart as timeline_chart

    made = timeline_chart.figure_payload
    shown: list[int] = []

    def recording(*a: Any, **k: Any) -> Any:
        payload = made(*a, **k)
        shown.append(payload.nbytes)
        return payload

    timeline_chart.figure_payload = recording  # type: ignore[assignment]
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    at.query_params["preset"] = "stress"
    at.query_params["thread"] = "sample:bench"
    cold_wall, _, _ = timed(at.run)
    assert not at.exception, at.exception
    replay(thread, preset("stress"))  # warm this process's token counts for the engine-only side

    new = [round(0.30 + 0.05 * i, 2) for i in range(args.changes)]
    back = [*new[:-1], 0.25][:args.changes]  # each computed before, each different from the one before
    sides = {name: Samples(name) for name in ("replay alone (floor)", "new config rerun", "cached config rerun")}
    figure_bytes: list[int] = []
    builds_before_cached = 0

    def rerun(fraction: float) -> None:
        at.sidebar.number_input(key="sb_trig_val_0_fraction").set_value(fraction)
        at.run()
        assert not at.exception, at.exception

    for phase, values in (("new", new), ("cached", back)):
        if phase == "cached":
            builds_before_cached = FIGURE_BUILDS["timeline"]
        for fraction in values:
            if phase == "new":
                config = controls.set_trigger_clause(preset("stress"), 0, ContextSize(type="fraction", value=fraction))
                wall, cpu, _ = timed(lambda config=config: replay(thread, config))
                sides["replay alone (floor)"].wall_s.append(wall)
                sides["replay alone (floor)"].cpu_s.append(cpu)
            wall, cpu, _ = timed(lambda fraction=fraction: rerun(fraction))
            side = sides["new config rerun" if phase == "new" else "cached config rerun"]
            side.wall_s.append(wall)
            side.cpu_s.append(cpu)
            figure_bytes.append(shown[-1])
            print(f"  {phase} {fraction:.2f}: {wall:.3f} s wall, {cpu:.3f} s CPU", file=sys.stderr, flush=True)
    rebuilt = FIGURE_BUILDS["timeline"] - builds_before_cached

    floor, fresh, cached = sides.values()
    print(f"AppTest reruns after a sidebar change, {args.steps}-step thread; {args.changes} runs a side, alternating")
    width = max(len(s.name) for s in sides.values()) + 2
    print(f"  {'':<{width}}{'CPU median [range]':>30}{'wall median [range]':>32}")
    for s in sides.values():
        print(f"  {s.name:<{width}}{s.describe('cpu'):>30}{s.describe('wall'):>32}")
    overhead = fresh.median("wall") / floor.median("wall")
    speedup = fresh.median("wall") / cached.median("wall")
    print(f"  new config rerun / replay alone: {overhead:.2f}x wall, "
          f"{fresh.median('cpu') / floor.median('cpu'):.2f}x CPU (the page's share on top of the engine)")
    print(f"  new / cached: {speedup:.1f}x wall (target >= {TARGET_CACHED_SPEEDUP}x); "
          f"figures rebuilt by the cached reruns: {rebuilt}")
    result = {
        "steps": args.steps, "machine": machine_line(), "cold_first_render_s": round(cold_wall, 3),
        "new_config_rerun_s": {"median": round(fresh.median("wall"), 3), "range": fresh.spread("wall")},
        "cached_config_rerun_s": {"median": round(cached.median("wall"), 3), "range": cached.spread("wall")},
        "replay_alone_s": {"median": round(floor.median("wall"), 3), "range": floor.spread("wall")},
        "new_over_replay": round(overhead, 2), "new_over_cached": round(speedup, 2),
        "cached_figure_rebuilds": rebuilt, "figure_bytes_max": max(figure_bytes),
        "targets": {"rerender_s": TARGET_RERENDER_S, "cached_speedup": TARGET_CACHED_SPEEDUP,
                    "figure_bytes": TARGET_FIGURE_BYTES},
    }
    result["rerender_ok"] = fresh.median("wall") < TARGET_RERENDER_S
    result["cached_ok"] = speedup >= TARGET_CACHED_SPEEDUP and rebuilt == 0
    result["figure_ok"] = result["figure_bytes_max"] < TARGET_FIGURE_BYTES
    for key in ("rerender_ok", "cached_ok", "figure_ok"):
        print(f"  {key.removesuffix('_ok')}: {'met' if result[key] else 'MISSED'}")
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0 if result["rerender_ok"] and result["cached_ok"] and result["figure_ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
