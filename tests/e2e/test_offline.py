"""Nothing is fetched from outside the server, and the upload box states the importers' limit (issue 35:
the favicon was an SVG from fonts.gstatic.com, 12 console errors offline; the box said "1GB per file")."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page, expect  # noqa: E402

from tests.e2e.test_dashboard import TIMEOUT_MS, open_page, shot  # noqa: E402

pytestmark = pytest.mark.e2e

PAGES = ("", "threads", "step?step=3", "layers", "compare", "config", "evals", "workshop",
         "workshop?lesson=summarization&presenter=true&slide=5")


def test_a_walk_through_every_page_fetches_nothing_from_outside(page: Page, app_url: str, screenshots: Path) -> None:
    requested: list[str] = []
    page.on("request", lambda r: requested.append(r.url))
    for path in PAGES:
        sep = "&" if "?" in path else "?"
        open_page(page, f"{app_url}/{path}{sep}thread=sample:a_demo")
    hosts = {urlparse(u).hostname for u in requested if urlparse(u).scheme in ("http", "https")}
    assert hosts == {"127.0.0.1"}, sorted(u for u in requested if urlparse(u).hostname != "127.0.0.1")[:5]
    favicon = page.evaluate("() => document.querySelector(\"link[rel='shortcut icon']\").href")
    assert urlparse(favicon).scheme == "data" or urlparse(favicon).hostname == "127.0.0.1"  # ours, inlined


def test_the_upload_box_says_512_mib(page: Page, app_url: str, screenshots: Path) -> None:
    open_page(page, f"{app_url}/threads?thread=sample:a_demo")
    box = page.get_by_test_id("stFileUploader")
    expect(box).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.get_by_text("Up to 512 MiB per file.")).to_be_visible(timeout=TIMEOUT_MS)
    assert "1GB" not in box.inner_text()
    assert "per file" not in box.inner_text()  # Streamlit's own rounded line is hidden
    shot(page, screenshots, "threads-upload-limit")
