"""A real Claude Code session's compaction account in Chromium: the card on Layers › Summaries and the Evals
survival tab, with the numbers engine.evals.account computes; a fact's row opens the step that introduced it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page, expect  # noqa: E402

from engine.formats import load_thread  # noqa: E402
from tests.conftest import trace_path  # noqa: E402
from tests.e2e.conftest import serve  # noqa: E402
from tests.e2e.test_dashboard import TIMEOUT_MS, open_page, shot, wait_for_app  # noqa: E402
from tests.ui.builders import write_samples  # noqa: E402

pytestmark = pytest.mark.e2e
SESSION = "4d5611e5-241a-462a-8d15-5122611a9569.jsonl"


@pytest.fixture(scope="module")
def cc_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    thread = load_thread(trace_path("claude-code", SESSION))
    folder = tmp_path_factory.mktemp("forensics")
    samples = write_samples(folder / "samples", cc=thread)
    with serve({"CTXI_SAMPLES_DIR": str(samples), "CTXI_WORKSPACE": str(folder / "workspace")},
               folder / "streamlit.log") as url:
        yield url


def test_the_compaction_card_and_the_survival_tab(page: Page, cc_url: str, screenshots: Path) -> None:
    open_page(page, f"{cc_url}/layers?thread=sample:cc&tab=Summaries")
    card = page.get_by_text("Compaction account · step 61", exact=False)
    expect(card).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.get_by_text("lost 5 of 20 file paths and cost 5 re-fetches", exact=False)).to_be_visible(
        timeout=TIMEOUT_MS)
    metrics = dict(zip(page.get_by_test_id("stMetricLabel").all_inner_texts(),
                       page.get_by_test_id("stMetricValue").all_inner_texts(), strict=False))
    assert metrics["facts kept"] == "50 of 128" and metrics["re-fetches"] == "5"
    assert metrics["cache written again (tokens)"] == "14,603"
    shot(page, screenshots, "layers-compaction-account")

    open_page(page, f"{cc_url}/evals?thread=sample:cc&tab=Compaction+survival")
    expect(page.get_by_text("After each compaction")).to_be_visible(timeout=TIMEOUT_MS)
    metrics = dict(zip(page.get_by_test_id("stMetricLabel").all_inner_texts(),
                       page.get_by_test_id("stMetricValue").all_inner_texts(), strict=False))
    assert metrics["Facts kept"] == "39.1%" and metrics["File paths kept"] == "75.0%"
    assert metrics["Re-fetches"] == "5" and metrics["Fresh start: first edit"] == "step 8"
    expect(page.get_by_text("Why the prompt cache missed")).to_be_visible(timeout=TIMEOUT_MS)
    shot(page, screenshots, "evals-compaction-survival")
    # a row of the compactions table opens its step (the row's checkbox cell, drawn in a canvas)
    grid = page.get_by_test_id("stDataFrame").first
    box = grid.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + 12, box["y"] + 35 + 17)  # the first data row's selection cell
    wait_for_app(page)
    expect(page.get_by_role("heading", name=re.compile(r"^Step 61"))).to_be_visible(timeout=TIMEOUT_MS)
