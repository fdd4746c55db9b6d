"""Dashboard benchmark, server side only: a sidebar change on a 1,000-step thread re-renders the
Timeline page in < 1.5 s.

Compares Streamlit's AppTest running the whole script after a sidebar change (frame, sidebar,
engine re-run, figure; in this process, no browser and no websocket: what a user waits for in
Chromium is the browser bench's figure) with the floor, the same replay run alone outside Streamlit
with the same token counts cached, each change once on each side (`--changes` >= 5 for the
figures: median and range). The figure's size is the plotly JSON Streamlit would send (< 2 MB).

    python bench/bench_ui.py [--steps 1000] [--changes 5] [--json bench/results/ui.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGET_RERENDER_S = 1.5
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
    parser.add_argument("--changes", type=int, default=5, help="sidebar changes to time (each a new config)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures as JSON here")
    args = parser.parse_args(argv)

    from streamlit.testing.v1 import AppTest

    from engine.config import preset
    from engine.formats.native import dumps
    from engine.replay import replay
    from engine.synthetic import synthetic_thread

    thread = synthetic_thread(args.steps, seed=0)
    folder = Path(tempfile.mkdtemp(prefix="ctxi-bench-ui-"))
    (folder / "bench.json").write_text(dumps(thread), encoding="utf-8")
    os.environ["CTXI_SAMPLES_DIR"] = str(folder)
    _navigation_mode()

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    at.query_params["preset"] = "stress"
    t0 = time.perf_counter()
    at.run()
    cold_s = time.perf_counter() - t0
    assert not at.exception, at.exception

    replay(thread, preset("stress"))  # warm this process's token counts for the engine-only timing
    fractions = [round(0.30 + 0.05 * i, 2) for i in range(args.changes)]
    rerender_s: list[float] = []
    engine_s: list[float] = []
    figure_bytes: list[int] = []
    for fraction in fractions:
        at.sidebar.number_input(key="sb_trig_val_0_fraction").set_value(fraction)
        t0 = time.perf_counter()
        at.run()
        rerender_s.append(time.perf_counter() - t0)
        assert not at.exception, at.exception
        figure_bytes.append(len(at.get("plotly_chart")[0].proto.spec.encode()))
        # the engine's share of that re-render: the same replay outside Streamlit (token counts cached)
        t0 = time.perf_counter()
        replay(thread, at.session_state["config"])
        engine_s.append(time.perf_counter() - t0)

    # back to a setting seen before: served from the run cache
    at.sidebar.number_input(key="sb_trig_val_0_fraction").set_value(fractions[0])
    t0 = time.perf_counter()
    at.run()
    cached_s = time.perf_counter() - t0

    result = {
        "steps": args.steps,
        "cold_first_render_s": round(cold_s, 3),
        "sidebar_change_rerender_s": [round(x, 3) for x in rerender_s],
        "sidebar_change_rerender_median_s": round(statistics.median(rerender_s), 3),
        "sidebar_change_rerender_max_s": round(max(rerender_s), 3),
        "engine_replay_alone_median_s": round(statistics.median(engine_s), 3),
        "cached_setting_rerender_s": round(cached_s, 3),
        "figure_bytes_max": max(figure_bytes),
        "targets": {"rerender_s": TARGET_RERENDER_S, "figure_bytes": TARGET_FIGURE_BYTES},
    }
    lo, hi = min(rerender_s), max(rerender_s)
    elo, ehi = min(engine_s), max(engine_s)
    print(f"AppTest re-render after a sidebar change: {statistics.median(rerender_s):.3f} s [{lo:.3f}–{hi:.3f}]; "
          f"the replay alone: {statistics.median(engine_s):.3f} s [{elo:.3f}–{ehi:.3f}]; "
          f"{statistics.median(rerender_s) / statistics.median(engine_s):.2f}x; {len(rerender_s)} changes (wall time)")
    result["rerender_ok"] = result["sidebar_change_rerender_median_s"] < TARGET_RERENDER_S
    result["figure_ok"] = result["figure_bytes_max"] < TARGET_FIGURE_BYTES
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0 if result["rerender_ok"] and result["figure_ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
