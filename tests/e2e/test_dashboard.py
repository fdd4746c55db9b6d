"""The dashboard in Debian's Chromium: deep links, the live trigger, clicking a step, upload, hostile text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("playwright")
from playwright.sync_api import Page, expect  # noqa: E402

from engine.formats.native import dumps  # noqa: E402
from tests.ui.builders import build_thread  # noqa: E402

pytestmark = pytest.mark.e2e
TIMEOUT_MS = 120_000  # a ceiling, not a delay: the CI box may be shared by several suites
# the Timeline's chart (ui/timeline_chart.py): the graph on show, marked once plotly has drawn it
TIMELINE = "[data-testid=ctxiTimeline] .js-plotly-plot.ctxi-active"


def wait_for_app(page: Page) -> None:
    """Until the script run is over and every widget and chart has drawn."""
    page.wait_for_timeout(250)  # let a just-triggered rerun start
    page.locator("[data-testid='stApp'][data-test-connection-state='CONNECTED']").wait_for(state="attached",
                                                                                          timeout=TIMEOUT_MS)
    page.locator("[data-testid='stApp'][data-test-script-state='notRunning']").wait_for(state="attached",
                                                                                       timeout=TIMEOUT_MS)
    expect(page.get_by_test_id("stSkeleton")).to_have_count(0, timeout=TIMEOUT_MS)
    expect(page.get_by_test_id("stSpinner")).to_have_count(0, timeout=TIMEOUT_MS)  # "Replaying the thread…"
    page.locator("[data-testid='stApp'][data-test-script-state='notRunning']").wait_for(state="attached",
                                                                                       timeout=TIMEOUT_MS)
    page.wait_for_function("() => [...document.querySelectorAll('[data-testid=stPlotlyChart]')]"
                           ".every(c => c.querySelector('.main-svg'))", timeout=TIMEOUT_MS)
    page.wait_for_function("() => [...document.querySelectorAll('[data-testid=ctxiTimeline]')]"
                           ".every(c => c.querySelector('.js-plotly-plot.ctxi-active .main-svg'))", timeout=TIMEOUT_MS)
    page.wait_for_timeout(300)


def open_page(page: Page, url: str) -> None:
    page.goto(url)
    wait_for_app(page)
    expect(page.get_by_test_id("stException")).to_have_count(0, timeout=TIMEOUT_MS)


def lane_counts(page: Page) -> dict[str, int]:
    """Events per layer as the timeline's lane traces carry them (`meta`; their names are words)."""
    metas = page.evaluate("(sel) => document.querySelector(sel).data.map(t => t.meta || {})", TIMELINE)
    return {m["layer"]: int(m["events"]) for m in metas if "layer" in m}


def expect_lane_count(page: Page, layer: str, events: int) -> None:
    """Poll until the timeline's lane for `layer` holds `events` markers (the chart redraws after the run ends)."""
    page.wait_for_function("([layer, n, sel]) => { const gd = document.querySelector(sel);"
                           " return !!gd && !!gd.data && gd.data.some(t => t.meta && t.meta.layer === layer"
                           " && t.meta.events === n); }", arg=[layer, events, TIMELINE], timeout=TIMEOUT_MS)
    assert lane_counts(page)[layer] == events


def shot(page: Page, folder: Path, name: str) -> None:
    """The whole page: the app scrolls inside its own container, so grow the viewport to its height."""
    height = page.evaluate("() => Math.max(...[...document.querySelectorAll("
                           "'[data-testid=stMain], [data-testid=stAppViewContainer], [data-testid=stSidebarContent]')]"
                           ".map(e => e.scrollHeight), 1000)")
    size = page.viewport_size or {"width": 1500, "height": 1000}
    page.set_viewport_size({"width": size["width"], "height": min(int(height) + 40, 6000)})
    page.wait_for_timeout(600)  # charts re-layout to the new size
    page.screenshot(path=str(folder / f"{name}.png"))
    page.set_viewport_size(size)


def test_every_expect_waits_for_a_shared_machine_by_default() -> None:
    # tests/conftest.py sets Playwright's global expect timeout, so an expect without `timeout=` cannot
    # fall back to the 5 s default that flaked under load (Expect keeps it in `_timeout`, playwright 1.x)
    from tests.conftest import E2E_TIMEOUT_MS

    assert expect._timeout == E2E_TIMEOUT_MS >= TIMEOUT_MS  # noqa: SLF001


def test_a_deep_link_on_a_fresh_server_opens_the_page_inside_the_frame(page: Page, app_url: str) -> None:
    open_page(page, f"{app_url}/step?thread=sample:a_demo&step=12&preset=stress&summarization.trigger=fraction:0.5")
    expect(page.get_by_role("heading", name="Step 12")).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.get_by_test_id("stSidebar").get_by_text("Synthetic demo (120 steps)")).to_be_visible(timeout=TIMEOUT_MS)
    page.reload()
    wait_for_app(page)
    expect(page.get_by_role("heading", name="Step 12")).to_be_visible(timeout=TIMEOUT_MS)
    assert "summarization.trigger=fraction%3A0.5" in page.url or "summarization.trigger=fraction:0.5" in page.url


def summaries(e2e_samples: Path, *overrides: str) -> int:
    """The engine's own count of summaries for the page's run (the page is checked against it, not a constant)."""
    from engine.config.schema import preset
    from engine.formats import load_thread
    from engine.run.replay import replay

    run = replay(load_thread(e2e_samples / "a_demo.json"), preset("stress").with_overrides(list(overrides)))
    return sum(1 for e in run.events if e.layer == "summarization")  # the lane counts every event of its layer


def test_changing_the_trigger_changes_the_timeline_events(page: Page, app_url: str, screenshots: Path,
                                                          e2e_samples: Path) -> None:
    before, after = summaries(e2e_samples), summaries(e2e_samples, "summarization.trigger=fraction:0.5")
    assert before > after > 0
    open_page(page, f"{app_url}/?thread=sample:a_demo&preset=stress")
    expect_lane_count(page, "summarization", before)
    shot(page, screenshots, "timeline")
    value = page.get_by_test_id("stSidebar").get_by_label("trigger value 0")
    value.fill("0.5")
    value.press("Enter")
    wait_for_app(page)
    expect_lane_count(page, "summarization", after)
    expect(page.get_by_test_id("stSidebar").get_by_label("trigger value 0")).to_have_value("0.50", timeout=TIMEOUT_MS)


def test_hovering_and_clicking_anywhere_in_a_steps_column_opens_it(page: Page, app_url: str, screenshots: Path) -> None:
    """Not only within 20 px of the view curve's top (issue 35): near the bottom of the plot, far below it."""
    open_page(page, f"{app_url}/?preset=stress")
    point = page.evaluate("""(sel) => {
        const gd = document.querySelector(sel);
        const box = gd.getBoundingClientRect();
        const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
        // the stacked areas' top at step 40 (the view), and a point near the bottom of the plot
        const areas = gd._fullData.filter(t => t.stackgroup === 'view');
        const view = areas.reduce((sum, t) => sum + t.y[Array.from(t.x).indexOf(40)], 0);
        return {x: box.left + xa._offset + xa.l2p(40), y: box.top + ya._offset + ya._length * 0.97,
                curve: box.top + ya._offset + ya.l2p(view)};
    }""", TIMELINE)
    assert point["curve"] < point["y"] - 40  # well away from the view curve
    page.mouse.move(point["x"], point["y"])
    expect(page.locator(f"{TIMELINE} .hoverlayer .hovertext").first).to_contain_text("step 40:", timeout=TIMEOUT_MS)
    page.mouse.click(point["x"], point["y"])
    wait_for_app(page)
    expect(page.get_by_role("heading", name="Step 40")).to_be_visible(timeout=TIMEOUT_MS)
    assert "/step" in page.url
    shot(page, screenshots, "step")


def test_going_back_to_a_config_shows_the_figure_already_drawn_and_hover_names_the_step(
        page: Page, app_url: str, screenshots: Path, e2e_samples: Path) -> None:
    before, after = summaries(e2e_samples), summaries(e2e_samples, "summarization.trigger=fraction:0.5")
    open_page(page, f"{app_url}/?thread=sample:a_demo&preset=stress")
    expect_lane_count(page, "summarization", before)
    page.evaluate("(sel) => { window.__firstGraph = document.querySelector(sel); }", TIMELINE)
    value = page.get_by_test_id("stSidebar").get_by_label("trigger value 0")
    for fraction, events in (("0.5", after), ("0.25", before)):
        value.fill(fraction)
        value.press("Enter")
        wait_for_app(page)
        expect_lane_count(page, "summarization", events)
    # the same graph element, drawn once: shown again, not redrawn (ui/timeline_chart.py)
    assert page.evaluate("(sel) => document.querySelector(sel) === window.__firstGraph", TIMELINE) is True
    assert page.evaluate("() => document.querySelectorAll('[data-testid=ctxiTimeline] .js-plotly-plot').length") == 2
    # hover where the raw and view curves lie closest (the raw line does not hover): the step is named
    point = page.evaluate("""(sel) => {
        const gd = document.querySelector(sel);
        const cells = gd._fullData.find(t => t.name === 'steps (click to open)').customdata[0];
        const raw = gd._fullData.find(t => t.name === 'raw (no layers)');
        const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, box = gd.getBoundingClientRect();
        const view = (i) => cells[i][1];
        let k = 1;
        for (let i = 1; i < cells.length; i++) {
          if (Math.abs(raw.y[i] - view(i)) < Math.abs(raw.y[k] - view(k))) k = i;
        }
        return {k: cells[k][0], gap: Math.abs(ya.l2p(raw.y[k]) - ya.l2p(view(k))),
                x: box.left + xa._offset + xa.l2p(cells[k][0]), y: box.top + ya._offset + ya.l2p(view(k))};
    }""", TIMELINE)
    assert point["k"] > 0 and point["gap"] < 10  # closer than plotly's hover distance (20 px)
    page.mouse.move(point["x"], point["y"])
    expect(page.locator(f"{TIMELINE} .hoverlayer .hovertext").first).to_contain_text(f"step {point['k']}:",
                                                                                       timeout=TIMEOUT_MS)
    shot(page, screenshots, "timeline-hover")


def test_slash_timeline_opens_the_timeline_with_its_link(page: Page, app_url: str, e2e_samples: Path) -> None:
    # the Timeline is the default page, served at "/": a typed or bookmarked /timeline reaches it too
    open_page(page, f"{app_url}/timeline?thread=sample:a_demo&preset=stress")
    expect(page.get_by_role("heading", name="Timeline")).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.get_by_text("Page not found")).to_have_count(0, timeout=TIMEOUT_MS)
    expect_lane_count(page, "summarization", summaries(e2e_samples))
    assert "thread=sample" in page.url and "preset=stress" in page.url


def test_upload_a_thread(page: Page, app_url: str, screenshots: Path, tmp_path: Path) -> None:
    open_page(page, f"{app_url}/threads")
    thread = build_thread(9, thread_id="browser-upload")
    thread.title = "Uploaded in the browser"
    path = tmp_path / "uploaded.json"
    path.write_text(dumps(thread), encoding="utf-8")
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(path))
    wait_for_app(page)
    expect(page.get_by_test_id("stSidebar").get_by_text("Uploaded in the browser")).to_be_visible(timeout=TIMEOUT_MS)
    shot(page, screenshots, "threads")
    bad = tmp_path / "notes.json"
    bad.write_text('{"hello": "world"}', encoding="utf-8")
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(bad))
    wait_for_app(page)
    expect(page.get_by_test_id("stAlertContentError")).to_contain_text("unrecognised thread format", timeout=TIMEOUT_MS)


def test_hostile_text_shows_literally_and_runs_nothing(page: Page, app_url: str, screenshots: Path) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    for path in ("step?thread=sample:hostile&step=2", "layers?thread=sample:hostile&tab=All+events"):
        open_page(page, f"{app_url}/{path}")
        if path.startswith("step"):
            expect(page.get_by_text("<script>alert(1)</script>", exact=False).first).to_be_visible(timeout=TIMEOUT_MS)
            shot(page, screenshots, "step-hostile")
        assert page.locator("img[src='x']").count() == 0
        assert page.evaluate("() => [...document.querySelectorAll('script')].some(s => s.text.includes('alert(1)'))") is False
        assert page.locator("a[href^='javascript']").count() == 0
    page.wait_for_timeout(500)
    assert dialogs == []


def test_screenshots_of_the_other_pages(page: Page, app_url: str, screenshots: Path) -> None:
    for name, path in (("layers", "layers?preset=stress"), ("layers-summaries", "layers?preset=stress&tab=Summaries"),
                       ("config", "config?preset=stress"), ("config-yaml", "config?preset=stress&tab=YAML")):
        open_page(page, f"{app_url}/{path}")
        shot(page, screenshots, name)
    open_page(page, f"{app_url}/config?preset=stress&tab=Compare+runs")
    page.get_by_role("button", name="Pin current run as A").click()
    wait_for_app(page)
    value = page.get_by_test_id("stSidebar").get_by_label("trigger value 0")
    value.fill("0.5")
    value.press("Enter")
    wait_for_app(page)
    expect(page.get_by_text("Settings A → B")).to_be_visible(timeout=TIMEOUT_MS)
    # the tab draws the agents' policies chart first; the A/B chart follows it (then, for a priced model, cost)
    expect(page.get_by_test_id("stPlotlyChart").nth(1)).to_be_visible(timeout=TIMEOUT_MS)
    shot(page, screenshots, "config-compare")


def test_open_a_langgraph_postgres_thread(page: Page, app_url: str, screenshots: Path, postgres_cluster) -> None:  # noqa: ANN001
    from langgraph.checkpoint.postgres import PostgresSaver

    from tests.formats.langgraph_agents import write_threads

    url = postgres_cluster.create_database("lg_e2e")
    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
        write_threads(saver)
    open_page(page, f"{app_url}/threads")
    box = page.get_by_label("PostgreSQL URL")
    box.fill(url)
    box.press("Enter")  # submits the form, as the "List threads" button does
    wait_for_app(page)
    expect(page.get_by_text("5 thread(s) in postgresql://postgres:***@127.0.0.1")).to_be_visible(timeout=TIMEOUT_MS)
    page.get_by_role("button", name="Open this thread").click()  # the picker starts on the first thread, alpha
    wait_for_app(page)
    expect(page.get_by_test_id("stSidebar").get_by_text("read a.py").first).to_be_visible(timeout=TIMEOUT_MS)
    # the URL is rewritten by a message that may arrive after the sidebar is drawn: poll for it
    expect(page).to_have_url(re.compile(r"thread=pg(%3A|:)"), timeout=TIMEOUT_MS)
    assert postgres_cluster.password not in page.url
    assert postgres_cluster.password not in page.locator("body").inner_text()
    shot(page, screenshots, "threads-postgres")
