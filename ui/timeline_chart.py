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
The figure travels packed (`wire_figure`: each array once, in its narrowest exact form) and the
script unpacks it into the arrays plotly would have decoded from its own JSON before drawing.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import time
import zlib
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

// the figure's data arrives packed (`wire_figure`): a table of arrays, deflated, and fields referring to
// it: {$a: k} array k (read at the positions array `at` holds, if it has one), {$c: [k...]} a customdata
// whose rows are read from those columns, {$s: k} the texts k (picked by array `$i`, if it has one)
const TYPES = {i1: Int8Array, u1: Uint8Array, i2: Int16Array, u2: Uint16Array, i4: Int32Array, u4: Uint32Array,
  f4: Float32Array, f8: Float64Array};
// a loop, not Uint8Array.from(atob(b), mapFn): ~10x faster (13 ms of a 2,000-step edit in a CPU profile)
function bytesOf(b64) {
  const s = atob(b64), a = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) a[i] = s.charCodeAt(i);
  return a;
}
async function table(packed) {
  if (!packed) return [];
  const inflated = new Blob([bytesOf(packed)]).stream().pipeThrough(new DecompressionStream('deflate'));
  return JSON.parse(await new Response(inflated).text()).map(column);
}
function column(e) {
  if (e.texts !== undefined) return e.texts;
  if (e.fill !== undefined) return new Array(e.n).fill(e.fill);
  if (e.range) return Array.from({length: e.n}, (_, i) => e.range[0] + i * e.range[1]);
  return new TYPES[e.dtype](bytesOf(e.bdata).buffer);
}
function nest(a, shape) {
  if (shape.length < 2) return a;
  const size = a.length / shape[0];
  return Array.from({length: shape[0]}, (_, i) => nest(a.slice(i * size, (i + 1) * size), shape.slice(1)));
}
function unpack(v, cols) {
  if (Array.isArray(v)) return v.map((x) => unpack(x, cols));
  if (!v || typeof v !== 'object') return v;
  if (v.at !== undefined) return Array.from(cols[v.at], (i) => cols[v.$a][i]);
  if (v.$a !== undefined) return nest(cols[v.$a].slice(), v.shape || []);  // a copy: traces may share an array
  if (v.$s !== undefined) return v.$i === undefined ? cols[v.$s].slice() : Array.from(cols[v.$i], (i) => cols[v.$s][i]);
  if (v.$c) {
    const c = v.$c.map((k) => cols[k]);
    return nest(Array.from(c[0], (_, i) => c.map((x) => x[i])), v.shape.slice(0, -1));
  }
  const out = {};
  for (const k in v) out[k] = unpack(v[k], cols);
  return out;
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
    await Plotly.newPlot(gd, unpack(fig.data, await table(fig.packed)), fig.layout, Object.assign({responsive: true}, data.config || {}));
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
_PLAIN = frozenset({str, int, bool, type(None)})
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
        if all(type(v) in _PLAIN for v in obj):  # texts, whole numbers: as they are
            return list(obj)
        return [plotly_json(v, typed=typed) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None  # plotly's encoder writes NaN and ±Infinity as null (PlotlyJSONEncoder.coerce_to_strict)
    return obj


# The chart's wire format (issue 37). plotly's JSON of a 2,000-step figure was ~370 KB, ~4x a bare
# page's figure of the same traces and points: the click layer's customdata, one int32 array because
# the raw column needs int32 (140 KB); the same step arrays sent once per trace (nine area traces
# share one x); whole-number float arrays as float64; lists of one repeated text ("no", "filesystem").
# `wire_figure` sends each array once, in a table, as its narrowest exact form, and the component's
# script (`unpack` in _JS) rebuilds the very arrays plotly would have decoded before `Plotly.newPlot`.
_WIRE_INTS = (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32)
_F4_EXACT = 2 ** 24  # float32 holds every whole number up to this exactly
MIN_PACKED_TEXTS = 16  # a shorter list of texts goes as it is
# zlib level 1: 1.4 ms for a 2,000-step stress run's table at trigger 0.5 (224 KB of JSON -> 51 KB),
# level 6 3.5 ms for 46 KB, level 9 7.2 ms for 46 KB
TABLE_DEFLATE_LEVEL = 1


class _Wire:
    """The table of arrays a packed figure's data refers to, each sent once."""

    def __init__(self) -> None:
        self.arrays: list[dict[str, Any]] = []
        self._index: dict[tuple[Any, ...], int] = {}
        self.unpacked_bytes = 0  # what the fields that refer to the table would take in plotly's JSON, less the refs

    def _ref(self, ref: dict[str, Any], plotly_bytes: int) -> dict[str, Any]:
        self.unpacked_bytes += plotly_bytes - len(json.dumps(ref, separators=(",", ":")))
        return ref

    def _put(self, key: tuple[Any, ...], entry: dict[str, Any]) -> int:
        if key not in self._index:
            self._index[key] = len(self.arrays)
            self.arrays.append(entry)
        return self._index[key]

    def flat(self, v: np.ndarray) -> int | None:
        """The table index of 1-D array `v`: a constant, an arithmetic range, or base64 of its narrowest
        exact dtype; None for what this does not pack (texts, booleans, integers beyond 32 bits)."""
        n = int(v.size)
        if v.dtype.kind == "f":
            finite = v[np.isfinite(v)]
            whole = bool((finite == np.rint(finite)).all()) and (not finite.size or np.abs(finite).max() <= _F4_EXACT)
            if not whole:
                return self._bytes(v.astype(np.float64), "f8")
            if finite.size < n:  # a gap (NaN) stays a gap: float32, exact for these whole numbers
                return self._bytes(v.astype(np.float32), "f4")
            v = v.astype(np.int64)
        if v.dtype.kind not in "iu" or n == 0:
            return None
        lo, hi = int(v.min()), int(v.max())
        if n >= 2 and lo == hi:
            return self._put(("fill", lo, n), {"fill": lo, "n": n})
        first, step = int(v[0]), int(v[1]) - int(v[0]) if n >= 3 else 0
        if step and (np.diff(v) == step).all():
            return self._put(("range", first, step, n), {"range": [first, step], "n": n})
        fit = next((t for t in _WIRE_INTS if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max), None)
        return None if fit is None else self._bytes(v.astype(fit), _TYPED[np.dtype(fit).name])

    def _bytes(self, v: np.ndarray, dtype: str) -> int:
        bdata = base64.b64encode(np.ascontiguousarray(v).data).decode("ascii")
        return self._put(("bytes", dtype, bdata), {"dtype": dtype, "bdata": bdata})

    def array(self, v: np.ndarray) -> Any:
        """A numpy array field: a reference into the table (3-D integers by column), else plotly's own form."""
        if v.ndim == 1 and (k := self.flat(v)) is not None:
            return self._ref({"$a": k}, _plotly_bytes(v))
        if v.ndim == 3 and v.dtype.kind in "iu" and v.size:  # customdata: one column per number a row carries
            cols = [self.flat(np.ascontiguousarray(v[..., j]).ravel()) for j in range(v.shape[-1])]
            if None not in cols:
                return self._ref({"$c": cols, "shape": list(v.shape)}, _plotly_bytes(v))
        if v.ndim == 2 and v.size and (k := self.flat(v.ravel())) is not None:
            return self._ref({"$a": k, "shape": list(v.shape)}, _plotly_bytes(v))
        return _typed_array(v)

    def texts(self, texts: list[str]) -> Any:
        """A long list of texts, in the table (deflated with it); with many repeats, each distinct text
        once and which one each point shows."""
        if len(texts) < MIN_PACKED_TEXTS:
            return texts
        distinct = list(dict.fromkeys(texts))
        plotly_bytes = len(json.dumps(texts, separators=(",", ":")))
        if len(distinct) > len(texts) // 2:
            return self._ref({"$s": self._put(("texts", *texts), {"texts": texts})}, plotly_bytes)
        at = {t: i for i, t in enumerate(distinct)}
        return self._ref({"$s": self._put(("texts", *distinct), {"texts": distinct}),
                          "$i": self.flat(np.array([at[t] for t in texts], dtype=np.int64))}, plotly_bytes)

    def pack(self, obj: Any, typed: bool = True) -> Any:
        if isinstance(obj, dict):
            return {k: self.pack(v, typed and k not in _NOT_TYPED) for k, v in obj.items()}
        if isinstance(obj, np.ndarray) and typed:
            return self.array(obj)
        if isinstance(obj, list) and typed and obj and all(type(t) is str for t in obj):
            return self.texts(obj)
        if isinstance(obj, list | tuple):
            return [self.pack(v, typed) for v in obj]
        return plotly_json(obj, typed=typed)

    def pick(self, trace: dict[str, Any], columns: list[np.ndarray]) -> Any:
        """A trace's `y` as one of `columns` read at the trace's `x` (a line drawn at some of the steps
        whose every number the click layer's customdata already carries), else None."""
        x, y = trace.get("x"), trace.get("y")
        if not (isinstance(x, np.ndarray) and isinstance(y, np.ndarray) and x.ndim == y.ndim == 1
                and x.size == y.size and x.size >= 2 and x.dtype.kind in "iu" and y.dtype.kind in "iuf"):
            return None
        lo, hi = x.min(), x.max()
        for column in columns:
            if 0 <= lo and hi < column.size and column[x[0]] == y[0] and np.array_equal(column[x], y):
                at = self.flat(x)
                return None if at is None else self._ref({"$a": self.flat(column), "at": at}, _plotly_bytes(y))
        return None


def _plotly_bytes(v: np.ndarray) -> int:
    """About the bytes plotly's JSON takes for array `v` (`_typed_array`), without encoding it."""
    name, itemsize = str(v.dtype), v.dtype.itemsize
    if name in _NARROW and v.size:
        lo, hi = v.min(), v.max()
        fit = next((t for t in _NARROW[name] if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max), None)
        if fit is None:
            return 12 * v.size  # a list of big numbers
        itemsize = np.dtype(fit).itemsize
    elif name not in _TYPED:
        return 8 * v.size  # a list
    shape = 12 + 7 * v.ndim if v.ndim > 1 else 0  # ,"shape":"1, 2013, 13"
    return 4 * -(-v.size * itemsize // 3) + len('{"dtype":"i2","bdata":""}') + shape


def wire_figure(spec: dict[str, Any]) -> dict[str, Any]:
    """The figure as the component receives it: its layout as plotly sends it (`plotly_json`), its
    traces packed (`_Wire`) with the table they refer to, deflated, in `packed`; `unpack_figure` is the
    inverse."""
    return _wire_figure(spec)[0]


def _wire_figure(spec: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """`wire_figure`, and how many bytes more plotly's JSON of the figure takes than the packed one
    without its table (`_Wire.unpacked_bytes`)."""
    wire = _Wire()
    traces = spec.get("data", [])
    # the columns of a 3-D customdata (the click layer's numbers, one row a step)
    columns = [np.ascontiguousarray(cd[0, :, j]) for t in traces
               if isinstance(cd := t.get("customdata"), np.ndarray) and cd.ndim == 3 and cd.shape[0] == 1
               and cd.dtype.kind in "iu" for j in range(cd.shape[-1])]
    data = []
    for trace in traces:
        picked = wire.pick(trace, columns)
        packed = wire.pack({k: v for k, v in trace.items() if not (picked and k == "y")})
        data.append({**packed, "y": picked} if picked else packed)
    out = {"data": data, "layout": plotly_json(spec.get("layout", {}))}
    if not wire.arrays:
        return out, wire.unpacked_bytes
    # deflated: most of the table is hover text (whole lines repeated with other numbers); the
    # browser inflates it with its own DecompressionStream('deflate') (zlib's format, RFC 1950)
    table = json.dumps(wire.arrays, separators=(",", ":"), allow_nan=False).encode("utf-8")
    out["packed"] = base64.b64encode(zlib.compress(table, TABLE_DEFLATE_LEVEL)).decode("ascii")
    return out, wire.unpacked_bytes


def unpack_figure(wire: dict[str, Any]) -> dict[str, Any]:
    """`wire_figure`'s figure with every array as a list: what the component's script (`unpack`) gives
    plotly.js, and what plotly.js decodes from `plotly_json`'s typed arrays (tests compare the two)."""
    packed = wire.get("packed")
    cols = [_column(e) for e in (json.loads(zlib.decompress(base64.b64decode(packed))) if packed else [])]

    def nest(a: list[Any], shape: list[int]) -> list[Any]:
        if len(shape) < 2:
            return a
        size = len(a) // shape[0]
        return [nest(a[i * size:(i + 1) * size], shape[1:]) for i in range(shape[0])]

    def unpack(v: Any) -> Any:
        if isinstance(v, list):
            return [unpack(x) for x in v]
        if not isinstance(v, dict):
            return v
        if "at" in v:
            return [cols[v["$a"]][i] for i in cols[v["at"]]]
        if "$a" in v:
            return nest(list(cols[v["$a"]]), v.get("shape") or [])
        if "$s" in v:
            return list(cols[v["$s"]]) if "$i" not in v else [cols[v["$s"]][i] for i in cols[v["$i"]]]
        if "$c" in v:
            rows = [list(row) for row in zip(*(cols[k] for k in v["$c"]), strict=True)]
            return nest(rows, v["shape"][:-1])
        if "bdata" in v:  # plotly's own typed array, which plotly.js decodes itself
            return _column(v) if "shape" not in v else nest(
                _column(v), [int(d) for d in str(v["shape"]).split(",")])
        return {k: unpack(x) for k, x in v.items()}

    return {"data": unpack(wire["data"]), "layout": wire.get("layout", {})}


def _column(entry: dict[str, Any]) -> list[Any]:
    """One array of the table (or one of plotly's typed arrays) as a list: `column` in the script."""
    if "texts" in entry:
        return list(entry["texts"])
    if "fill" in entry:
        return [entry["fill"]] * entry["n"]
    if "range" in entry:
        start, step = entry["range"]
        return [start + i * step for i in range(entry["n"])]
    dtype = {v: k for k, v in _TYPED.items()}[entry["dtype"]]
    return np.frombuffer(base64.b64decode(entry["bdata"]), dtype=dtype).tolist()


class ChartPayload(NamedTuple):
    """What `timeline_chart` sends for a figure: its JSON data, its content digest, and its size."""

    figure: dict[str, Any]
    digest: str
    # plotly's JSON of the figure in bytes (estimated from the packed one): the browser's time to draw the
    # figure grows with it, as measured against that size (draw_pause_s)
    nbytes: int
    sent_bytes: int  # the packed figure's JSON text as sent


def figure_payload(run: Run, key: str, build: Callable[[], dict[str, Any]]) -> ChartPayload:
    """The figure as plain JSON data (packed: `wire_figure`), its content digest and size, made once
    per run and options and kept on the run (`Run.derived`, like its figures).

    `build` gives the figure's dict (`ui.figures.timeline_spec`), packed here (`wire_figure`: its
    layout as plotly's own `to_json` would encode it, its arrays each once in their narrowest exact
    form): no Figure, no second deep copy, no JSON text parsed back.
    Plain data, not a JSON string inside the component's JSON: a string's quotes are escaped on the
    wire (+10 %) and the browser would parse it twice.
    """
    store = run.derived.setdefault("ui.timeline_chart", {})
    if key not in store:
        FIGURE_BUILDS[key.split(":", 1)[0]] += 1  # counted like ui.figures.cached_figure: tests see rebuilds
        payload, unpacked_bytes = _wire_figure(build())
        text = json.dumps(payload, separators=(",", ":"), allow_nan=False).encode("utf-8")
        table = len(',"packed":""') + len(payload["packed"]) if "packed" in payload else 0
        store[key] = ChartPayload(payload, hashlib.sha256(text).hexdigest()[:20],
                                  len(text) - table + unpacked_bytes, len(text))
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
