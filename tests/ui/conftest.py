"""AppTest fixtures: a folder of test threads the app reads instead of sample_threads/."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from tests.ui.builders import build_thread, demo_thread, write_samples
from ui.timeline_chart import unpack_figure

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture(scope="session")
def samples_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = write_samples(tmp_path_factory.mktemp("samples"), a_demo=demo_thread(), b_small=build_thread(20),
                           hostile=build_thread(12, hostile=True, thread_id="hostile", recorded_compaction_at=9))
    old = os.environ.get("CTXI_SAMPLES_DIR")
    os.environ["CTXI_SAMPLES_DIR"] = str(folder)
    yield folder
    if old is None:
        os.environ.pop("CTXI_SAMPLES_DIR", None)
    else:
        os.environ["CTXI_SAMPLES_DIR"] = old


@pytest.fixture
def navigation_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep AppTest in st.navigation mode.

    AppTest resets `PagesManager.uses_pages_directory` before every run, so with a `pages/` folder
    every run after the first would execute the page file alone (Streamlit's legacy mode);
    `ui.frame.require_frame` recovers from that with a rerun, but the detour drops widget state.
    """
    from streamlit.runtime.pages_manager import PagesManager

    original = PagesManager.__init__

    def init(self, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    monkeypatch.setattr(PagesManager, "__init__", init)


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace of the test's own: uploads are saved in its library, never in ~/.context-inspector."""
    folder = tmp_path / "workspace"
    monkeypatch.setenv("CTXI_WORKSPACE", str(folder))
    return folder


@pytest.fixture
def start(samples_dir: Path, navigation_mode: None, workspace: Path):  # noqa: ANN201 - a factory
    def _start(page: str | None = None, **query: str) -> AppTest:
        at = AppTest.from_file(APP, default_timeout=120)
        for k, v in query.items():
            at.query_params[k] = v
        at.run()
        assert not at.exception, at.exception
        if page is not None:
            at.switch_page(page).run()
            assert not at.exception, at.exception
        return at

    return _start


def timeline_payload(at: AppTest) -> dict[str, Any] | None:
    """What the Timeline's chart component was sent on the last run (ui/timeline_chart.py), if shown."""
    for element in at.get("bidi_component"):
        data = json.loads(element.proto.json or element.proto.mixed.json or "null")
        if isinstance(data, dict) and "digest" in data:
            return data
    return None


def figure(at: AppTest, index: int = 0) -> dict[str, Any]:
    """The page's `index`-th figure: the Timeline chart first (when shown), then its plotly charts.

    The Timeline chart is sent only its digest once this session's browser holds the figure; the
    helper then forgets what was sent and reruns, so the figure itself comes (an idempotent rerun).
    """
    timeline = timeline_payload(at)
    if timeline is not None and index == 0:
        if timeline["figure"] is None:
            at.session_state["timeline_chart_sent"] = []
            at.run()
            timeline = timeline_payload(at)
            assert timeline is not None and timeline["figure"] is not None
        return unpack_figure(timeline["figure"])  # packed on the wire (ui/timeline_chart.py `wire_figure`)
    return json.loads(at.get("plotly_chart")[index - (timeline is not None)].proto.spec)


def layer_event_counts(at: AppTest) -> dict[str, int]:
    """Events per layer as the timeline's lane traces carry them (`meta`; their names are words)."""
    out = {}
    for trace in figure(at)["data"]:
        meta = trace.get("meta") or {}
        if trace.get("yaxis") == "y2" and "layer" in meta:
            out[meta["layer"]] = int(meta["events"])
    return out


def hline_levels(at: AppTest) -> dict[str, list[float]]:
    """Horizontal threshold lines of the timeline by role (legendgroup)."""
    out: dict[str, list[float]] = {}
    for shape in figure(at)["layout"].get("shapes", []):
        if shape.get("xref") == "paper" and shape.get("legendgroup"):
            out.setdefault(shape["legendgroup"], []).append(shape["y0"])
    return out
