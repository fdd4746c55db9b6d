"""The Timeline chart: one plotly.js graph per figure, kept drawn in the browser, shown again on a cached config.

Why not `st.plotly_chart`: Streamlit 1.67 gives a plotly chart an element id that hashes its spec
(`key_as_main_identity=False`, even with a `key`), so every changed figure is a new element and is
drawn from nothing with `Plotly.newPlot` — going back to a config computed a moment ago cost as
much in the browser as a bare page drawing the same figure (docs/benchmarks.md). This is a
Streamlit custom component (`st.components.v2.component`, mounted in the page's own DOM, no
iframe) that:

- draws each figure once, in its own graph div, and keeps the last `KEEP_DRAWN` of them drawn but
  hidden; a figure it already drew (the same content digest: a config served from the run cache,
  the Whole window toggle back) is shown again by swapping which div is visible — no new plot;
- is sent only the digest for a figure this browser session already holds (the server mirrors the
  browser's keep list in session state, `SENT_KEY`); if the browser no longer has it (it was
  evicted, or the page was reloaded into a new session) it asks for it with a `missing` trigger
  and the next run sends the figure again;
- reports a click on a step (the click layer or an event marker) as a `click` trigger, which opens
  that step on the Step page.

plotly.js is the copy that ships inside the installed `plotly` package (`plotly/package_data/
plotly.min.js`), served by this Streamlit server through a path-only v1 component declaration
(`st.components.v1.declare_component(path=...)`, route `/component/<name>/<file>`): never a CDN.
Everything from a thread reaches the browser as JSON data for plotly (hover texts escaped by
`ui.figures.esc`); the component's own HTML is fixed markup built by its script, never thread text.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import plotly
import streamlit as st
import streamlit.components.v1 as components_v1
from streamlit.runtime.runtime_util import MESSAGE_FLUSH_INTERVAL_SECS

from engine.run.run import Run
from ui.figures import FIGURE_BUILDS

# Figures kept drawn in the browser (the keep list), oldest evicted first. The server's mirror of
# the list holds fewer, so a figure the server thinks the browser has is always still there when
# both saw the same sequence; anything else is healed by the `missing` trigger. 20, like the reruns
# the browser keeps a large element for (`maxCachedMessageAge`, .streamlit/config.toml): with 8
# (6 mirrored), going back through the last ten configs in order evicted each figure just before it
# was wanted, so every "back" was a full newPlot. Cost in the browser, for a 1,000-step thread:
# ~1.3 MB of JS heap and ~1,100 DOM nodes (hidden, not laid out) per graph kept (CDP
# Performance.getMetrics after a GC, 2026-12-02: 20 kept, +27 MB, +24,000 nodes).
KEEP_DRAWN = 20
SENT_KEY = "timeline_chart_sent"
TEST_ID = "ctxiTimeline"  # the chart's container: tests and bench/bench_browser.py find it by this
PLOTLY_DIR = Path(plotly.__file__).resolve().parent / "package_data"
PLOTLY_FILE = "plotly.min.js"

# The script travels with the chart's element on every rerun: its comments are bytes on the wire,
# so they stay short. Why a graph's width is compared with the width plotly drew it at
# (`_fullLayout.width`) on the next animation frame, and never read right after showing or drawing
# it: read there, `offsetWidth` forced a layout of the whole page in the middle of Streamlit's render
# of the rerun's other elements (after a new figure's `newPlot`, 10-15 ms of a new config's path in a
# CPU profile, 2026-12-02), done again when they landed (docs/benchmarks.md).
_JS = r"""
const KEEP = %(keep)d;
const STORE = (window.__ctxiTimeline = window.__ctxiTimeline || {figures: new Map(), seq: 0, plotly: null});

function loadPlotly(url) {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!STORE.plotly) {
    STORE.plotly = new Promise((resolve, reject) => {
      const s = document.createElement('script');
      s.src = url;
      s.async = true;
      s.onload = () => resolve(window.Plotly);
      s.onerror = () => { STORE.plotly = null; reject(new Error('plotly.js did not load from ' + url)); };
      document.head.appendChild(s);
    });
  }
  return STORE.plotly;
}

function rootOf(parent) {
  let root = parent.querySelector(':scope > div[data-testid="%(testid)s"]');
  if (!root) {
    root = document.createElement('div');
    root.setAttribute('data-testid', '%(testid)s');
    root.style.width = '100%%';
    parent.appendChild(root);
  }
  return root;
}

function show(root, gd) {
  for (const el of root.children) {
    if (el !== gd) { el.style.display = 'none'; el.classList.remove('ctxi-active'); }
  }
  gd.style.display = '';
}

function stepOf(point) {
  const cd = point.customdata;
  if (Array.isArray(cd)) return cd[0];
  if (cd !== undefined && cd !== null && typeof cd !== 'object') return cd;
  return point.x;
}

export default async function (component) {
  const { data, parentElement, setTriggerValue } = component;
  STORE.trigger = setTriggerValue;  // handlers bound at draw time call the latest mount's trigger
  if (!data || !data.digest) return;
  const seq = ++STORE.seq;
  const root = rootOf(parentElement);
  // hold the chart's place while plotly.js loads (4.8 MB, once per page load) or the figure draws
  const height = data.figure && data.figure.layout && data.figure.layout.height;
  if (height && !root.style.minHeight) root.style.minHeight = height + 'px';
  const Plotly = await loadPlotly(data.plotly_url);
  let entry = STORE.figures.get(data.digest);
  if (!entry) {
    if (!data.figure) { setTriggerValue('missing', data.digest); return; }
    const fig = data.figure;
    const gd = document.createElement('div');
    gd.setAttribute('data-digest', data.digest);
    root.appendChild(gd);
    show(root, gd);
    await Plotly.newPlot(gd, fig.data, fig.layout, Object.assign({responsive: true}, data.config || {}));
    gd.on('plotly_click', (ev) => {
      const point = ev && ev.points && ev.points[0];
      const step = point ? Number(stepOf(point)) : NaN;
      if (Number.isInteger(step) && step >= 0 && STORE.trigger) STORE.trigger('click', step);
    });
    entry = {gd};
    STORE.figures.set(data.digest, entry);
  } else {
    STORE.figures.delete(data.digest);  // re-inserted below: the Map's order is the keep list's
    STORE.figures.set(data.digest, entry);
  }
  for (const [digest, old] of STORE.figures) {
    if (STORE.figures.size <= KEEP) break;
    if (old === entry) continue;
    STORE.figures.delete(digest);
    Plotly.purge(old.gd);
    old.gd.remove();
  }
  if (seq !== STORE.seq) return;  // a later edit came in while this one drew: it decides what shows
  const gd = entry.gd;
  if (gd.parentNode !== root) root.appendChild(gd);  // the page was left and opened again
  show(root, gd);
  gd.classList.add('ctxi-active');
  requestAnimationFrame(() => {  // drawn at another width (a resize while it was hidden)?
    const drawn = gd._fullLayout && gd._fullLayout.width;
    if (gd.style.display === 'none' || !drawn || Math.abs(gd.offsetWidth - drawn) < 1) return;
    Plotly.Plots.resize(gd);
  });
}
"""


def compact_js(js: str) -> str:
    """`js` without its indentation, blank lines and `  // ` comments: the script is sent with the
    chart's element on every rerun (a cached config's whole message is ~17 KB). Only for our own
    script, whose strings hold no `//`."""
    lines = (line.split("  // ", 1)[0].strip() for line in js.splitlines())
    return "\n".join(line for line in lines if line and not line.startswith("//"))


_SCRIPT = compact_js(_JS % {"keep": KEEP_DRAWN, "testid": TEST_ID})


def _component() -> Callable[..., Any]:
    # registered on each call: AppTest and a fresh runtime each keep their own registry
    return st.components.v2.component("ctxi_timeline_chart", js=_SCRIPT, isolate_styles=False)


def plotly_url() -> str:
    """Where this server serves plotly.js from (the installed plotly package's own copy)."""
    served = components_v1.declare_component("plotly_js", path=str(PLOTLY_DIR))
    base = str(st.get_option("server.baseUrlPath") or "").strip("/")
    return f"{'/' + base if base else ''}/component/{served.name}/{PLOTLY_FILE}"


# plotly 7.1's names for the numpy dtypes plotly.js reads as typed arrays (_plotly_utils/utils.py
# `plotlyjsShortTypes`), and the keys whose values it never converts (`is_skipped_key`).
_TYPED = {"int8": "i1", "uint8": "u1", "int16": "i2", "uint16": "u2", "int32": "i4", "uint32": "u4",
          "float32": "f4", "float64": "f8"}
_NOT_TYPED = frozenset({"geojson", "layer", "layers", "range"})
_NARROW = {"int64": (np.int8, np.int16, np.int32), "uint64": (np.uint8, np.uint16, np.uint32)}


def _typed_array(v: np.ndarray) -> Any:
    """`v` as plotly.py 7.1 sends it (`_plotly_utils.utils.to_typed_array_spec`): a 64-bit integer
    array narrowed to the smallest integer type that holds it, then base64 with its dtype (and
    shape when 2-D); anything plotly.js cannot type (text, objects, too-big integers) as a list."""
    if v.size == 0:
        return v.tolist()
    name = str(v.dtype)
    if name in _NARROW:
        lo, hi = v.min(), v.max()
        fit = next((t for t in _NARROW[name] if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max), None)
        if fit is None:
            return v.tolist()
        v = v.astype(fit)
        name = str(v.dtype)
    if name not in _TYPED:
        return v.tolist()
    spec = {"dtype": _TYPED[name], "bdata": base64.b64encode(np.ascontiguousarray(v).data).decode("ascii")}
    if v.ndim > 1:
        spec["shape"] = str(v.shape)[1:-1]
    return spec


def plotly_json(obj: Any, *, typed: bool = True) -> Any:
    """A figure dict of plain Python and numpy values as the JSON-ready data `go.Figure(obj).to_json()`
    gives (numpy arrays as typed arrays, numpy scalars as numbers), without building the Figure."""
    if isinstance(obj, dict):
        return {k: plotly_json(v, typed=typed and k not in _NOT_TYPED) for k, v in obj.items()}
    if isinstance(obj, np.ndarray):
        return _typed_array(obj) if typed else obj.tolist()
    if isinstance(obj, list | tuple):
        return [plotly_json(v, typed=typed) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None  # plotly's encoder writes NaN and ±Infinity as null (PlotlyJSONEncoder.coerce_to_strict)
    return obj


class ChartPayload(NamedTuple):
    """What `timeline_chart` sends for a figure: its JSON data, its content digest, and its size."""

    figure: dict[str, Any]
    digest: str
    nbytes: int  # the figure's JSON text in bytes: the browser's time to draw it grows with it (draw_pause_s)


def figure_payload(run: Run, key: str, build: Callable[[], dict[str, Any]]) -> ChartPayload:
    """The figure as plain JSON data (numpy arrays as plotly's base64 typed arrays), its content
    digest and size, made once per run and options and kept on the run (`Run.derived`, like its figures).

    `build` gives the figure's dict (`ui.figures.timeline_spec`), encoded here as plotly's own
    `to_json` would (`plotly_json`): no Figure, no second deep copy, no JSON text parsed back.
    Plain data, not a JSON string inside the component's JSON: a string's quotes are escaped on the
    wire (+10 %) and the browser would parse it twice.
    """
    store = run.derived.setdefault("ui.timeline_chart", {})
    if key not in store:
        FIGURE_BUILDS[key.split(":", 1)[0]] += 1  # counted like ui.figures.cached_figure: tests see rebuilds
        payload = plotly_json(build())
        text = json.dumps(payload, separators=(",", ":"), allow_nan=False).encode("utf-8")
        store[key] = ChartPayload(payload, hashlib.sha256(text).hexdigest()[:20], len(text))
    return store[key]


def clicked_step(value: Any) -> int | None:
    """The step a `click` trigger names: a whole number ≥ 0 from the browser, anything else ignored."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value or value < 0:
        return None
    return int(value) if float(value).is_integer() else None


# After the chart's element is queued, the script pauses for two of the server's flush cycles, so
# the chart leaves now, not with the rest of the page: the script thread holds the GIL while it
# builds the next ~60 elements (the sidebar's, the metrics'), the event loop that writes the
# queue to the websocket then ran only after them, and the browser applied every delta in one
# render before it mounted the chart (a cached config's chart was drawn ~100 ms after its message
# was queued; docs/benchmarks.md). Streamlit does the same before a page switch so its query
# params are delivered: `time.sleep(2 * MESSAGE_FLUSH_INTERVAL_SECS)` (streamlit/commands/
# execution_control.py, 1.67; the runtime flushes every MESSAGE_FLUSH_INTERVAL_SECS, runtime.py).
FLUSH_PAUSE_S = 2 * MESSAGE_FLUSH_INTERVAL_SECS
# A new figure: the server then waits while the browser draws it, and builds the rest of the page
# (the metrics, the sidebar's ~40 unchanged widgets: ~40 ms of CPU, and ~70 messages the browser
# takes in) only after. Built at once, all of that ran during the browser's Plotly.newPlot and
# competed with it for the machine's cores: in the page, newPlot of a 1,000-step figure took
# 81-128 ms, against 36-59 ms for the same figure drawn alone in a bare page (CPU profiles: every
# plotly function ~2-3x slower, not more work; probe, 2026-12-03). How long the browser draws
# grows with the figure (plotly.js 4.1 in headless Chromium, bare page, to the painted frame: 32 ms
# at 19 KB of JSON (50 steps), 45 ms at 175 KB (1,000 steps), 77 ms at 405 KB (3,000 steps)), so
# the pause does too: 0.4 ms per KB, from two flush cycles (a small figure's rest is not held back)
# up to DRAW_PAUSE_MAX_S. bench/bench_browser.py, three rounds of 10 edits a side, the pause
# alternating (2026-12-03): chart drawn 0.305 / 0.309 / 0.305 s with the 10 ms pause, 0.297 /
# 0.258 / 0.265 s at 80 ms and 0.275 / 0.275 / 0.275 s at 120 ms; the page settled within the
# spread at 80 ms (0.368 / 0.364 / 0.355 -> 0.376 / 0.351 / 0.336 s), 10-25 ms later at 120 ms.
DRAW_PAUSE_S_PER_KB = 0.0004
DRAW_PAUSE_MAX_S = 0.12
# When only the digest of a figure the browser holds is sent (a config from the run cache, the
# Whole window toggle back), the browser's whole job is to show the graph it kept: one React
# render of one element and one frame. Sent 10 ms after it, the rest of the fragment's ~70
# elements reached the browser while it was still on that element, and it rendered them (~80 ms of
# React a rerun, mostly the sidebar's widgets: CDP CPU profile, 2026-12-02) before it painted a
# frame: the kept graph was shown, then painted 25-40 ms later. Pausing ~3 frames instead lets that
# frame come first; the rest lands up to that much later and then takes the same work (a probe
# of 12 cached edits, 2026-12-02: chart 0.082 -> 0.058 s, page settled 0.108 -> 0.137 s).
KEPT_PAUSE_S = 10 * MESSAGE_FLUSH_INTERVAL_SECS


def draw_pause_s(nbytes: int) -> float:
    """How long the script waits after sending a new figure of `nbytes` of JSON (see DRAW_PAUSE_S_PER_KB)."""
    return min(DRAW_PAUSE_MAX_S, max(FLUSH_PAUSE_S, nbytes / 1024 * DRAW_PAUSE_S_PER_KB))


def _let_it_leave(kept: bool, nbytes: int) -> None:
    time.sleep(KEPT_PAUSE_S if kept else draw_pause_s(nbytes))


def _forget(digest: str) -> None:
    sent = st.session_state.get(SENT_KEY) or []
    st.session_state[SENT_KEY] = [d for d in sent if d != digest]


def _on_missing(key: str) -> None:
    # the browser did not hold a figure the server thought it had: send it on this run
    result = st.session_state.get(key)
    digest = getattr(result, "missing", None) if result is not None else None
    if isinstance(digest, str):
        _forget(digest)


def timeline_chart(payload: ChartPayload, *, key: str, config: dict[str, Any],
                   on_click: Callable[[int], None]) -> None:
    """Show the figure (`figure_payload`); `on_click(step)` runs as a callback when a step is clicked."""
    figure, digest = payload.figure, payload.digest
    sent: list[str] = list(st.session_state.get(SENT_KEY) or [])
    known = digest in sent
    sent = [d for d in sent if d != digest] + [digest]
    st.session_state[SENT_KEY] = sent[-(KEEP_DRAWN - 2):]

    def _clicked() -> None:
        result = st.session_state.get(key)
        step = clicked_step(getattr(result, "click", None) if result is not None else None)
        if step is not None:
            on_click(step)

    _component()(key=key, data={"digest": digest, "figure": None if known else figure,
                                "plotly_url": plotly_url(), "config": config},
                 height="content", on_click_change=_clicked,
                 on_missing_change=lambda: _on_missing(key))
    _let_it_leave(known, payload.nbytes)
