"""The cost views through AppTest: Timeline's cumulative cost, Step's bill, paybacks where compactions are listed,
Compare's cost table, the sweep's cost columns and cost axis. The numbers are engine.cost.run_cost's (tested by hand
computation in tests/engine/test_cost*.py); these tests check each page shows the same ones."""

from __future__ import annotations

import base64
import json
import re

import numpy as np

from engine.config.schema import preset
from engine.cost.run_cost import run_cost
from engine.cost.views import dollars, paid_back, paid_back_sentence, percent
from engine.evals.sweep import sweep
from engine.run.replay import replay
from tests.ui.builders import demo_thread
from ui.eval_figures import sweep_figure

PRICED = {"preset": "stress", "cost.model": "claude-sonnet-4-5"}


def plain(elements) -> str:  # noqa: ANN001
    return " ".join(re.sub(r"\\(.)", r"\1", e.value) for e in elements)


def chart(at, key: str) -> dict:  # noqa: ANN001
    for element in at.get("plotly_chart"):
        if element.proto.id and key in element.proto.id:
            return json.loads(element.proto.spec)
    raise AssertionError(f"no chart {key!r}")


def frames(at) -> list[list[dict]]:  # noqa: ANN001
    return [f.value.to_dict(orient="records") for f in at.dataframe]


def values(y) -> list[float]:  # noqa: ANN001
    """A plotly JSON array (a list, or numpy's {"dtype", "bdata"} encoding)."""
    if isinstance(y, dict):
        return np.frombuffer(base64.b64decode(y["bdata"]), dtype=y["dtype"]).tolist()
    return list(y)


def expected_cost(at):  # noqa: ANN001, ANN201
    return run_cost(replay(demo_thread(), at.session_state["config"]))


def open_section(at, key: str):  # noqa: ANN001, ANN201
    """Open one of a page's lazy expanders (its content runs only while open) and rerun."""
    at.session_state[key] = True
    at.run()
    assert not at.exception, at.exception
    return at


def test_timeline_shows_the_cumulative_cost_and_each_compactions_payback(start) -> None:  # noqa: ANN001
    at = open_section(start(**PRICED), "timeline_cost")
    cost = expected_cost(at)
    t = cost.totals()
    tiles = {m.label: m.value for m in at.metric}
    assert tiles["Dollars (modelled)"] == dollars(t["dollars"]) and tiles["Cache hit rate"] == percent(t["hit_rate"])
    assert tiles["Dollars (recorded usage)"] == "-"  # the synthetic thread recorded no usage
    spec = chart(at, "timeline_cost_chart")
    cumulative = next(d for d in spec["data"] if d["name"] == "cumulative (modelled)")
    assert values(cumulative["y"]) == [s.cumulative for s in cost.steps]
    notes = [a for a in spec["layout"]["annotations"] if a.get("hovertext")]
    assert [a["hovertext"] for a in notes] == [f"the compaction at step {c.step} {paid_back_sentence(c)}"
                                              for c in cost.compactions] and len(notes) == 6
    # each label says what it is beside its line: no lone "paid back after:" at the far left (issue 35)
    assert [a["text"] for a in notes] == ["never paid back" if c.paid_back_after is None
                                          else f"paid back in {c.paid_back_after} steps" for c in cost.compactions]
    assert not [a for a in spec["layout"]["annotations"] if a["text"] == "paid back after:"]
    table = next(rows for rows in frames(at) if rows and "paid back" in rows[0])
    assert [r["paid back"] for r in table] == [paid_back(c) for c in cost.compactions]
    assert [r["net"] for r in table] == [dollars(c.net_dollars) for c in cost.compactions]


def test_the_cost_charts_ticks_are_written_as_money_and_the_cumulative_axis_has_its_own() -> None:
    """The walk-through read "$0.500" per step (three decimals) and "$1.98, $3.96, $5.95" on the cumulative
    axis (its ticks synced to the bars' axis) on a Claude Code session."""
    from ui.cost_figures import cost_figure, per_step_tickformat

    assert (per_step_tickformat(0.52), per_step_tickformat(0.02), per_step_tickformat(0.004)) == (
        "$,.2f", "$,.2f", "$,.2r")
    cost = run_cost(replay(demo_thread(), preset("stress").with_overrides(["cost.model=claude-sonnet-4-5"])))
    layout = cost_figure(cost).layout
    from engine.cost.views import cost_series

    series = cost_series(cost)
    top = max(map(sum, zip(series.input, series.cache_read, series.cache_write, series.output, series.summarizer,
                           strict=True)))
    assert layout.yaxis.tickformat == per_step_tickformat(top)
    assert layout.yaxis2.tickformat == "$,.2f" and layout.yaxis2.tickmode == "auto"


def test_the_timeline_prices_a_run_only_once_its_cost_section_is_opened(start) -> None:  # noqa: ANN001
    from engine.cost.run_cost import COST_KEY
    from ui import session

    # settings no other test uses: the run cache is the process's, shared by every test
    at = start(**PRICED, **{"summarization.trigger": "fraction:0.61"})
    assert [c.value for c in at.session_state["config"].summarization.trigger] == [0.61]
    assert "Dollars (modelled)" not in {m.label for m in at.metric}
    run = session.run_for(at.session_state["thread_key"], at.session_state["config"])
    assert COST_KEY not in run.derived  # a new config costs the replay and the chart, not the pricing
    open_section(at, "timeline_cost")
    assert "Dollars (modelled)" in {m.label for m in at.metric} and COST_KEY in run.derived


def test_an_unpriced_model_says_how_to_price_it(start) -> None:  # noqa: ANN001
    at = open_section(start(preset="stress"), "timeline_cost")
    assert "No price for the model synthetic" in plain(at.info)
    assert {m.label: m.value for m in at.metric}["Cache hit rate"] != "-"  # the cache is still modelled
    # the cost chart of an unpriced run draws the hit rate, never a flat "$0.00" cumulative line
    from ui.cost_figures import cost_figure

    names = [t.name for t in cost_figure(expected_cost(at)).data]
    assert "hit rate (modelled)" in names and "cumulative (modelled)" not in names


def test_an_unpriced_run_without_cache_hits_draws_no_empty_cost_chart(start, monkeypatch) -> None:  # noqa: ANN001
    """The landing sample's model has no price and its calls no prompt cache: the chart was a flat $0.00 line
    over a flat 0 % hit rate. It says why there is nothing to draw instead."""
    from pathlib import Path

    monkeypatch.setenv("CTXI_SAMPLES_DIR", str(Path(__file__).resolve().parents[2] / "sample_threads"))
    at = open_section(start(), "timeline_cost")
    assert at.session_state["thread_key"] == "sample:first-look"
    assert not [e for e in at.get("plotly_chart") if "timeline_cost_chart" in e.proto.id]
    assert "No chart: without a price there are no dollars to draw, and no call read the prompt cache." in plain(
        at.caption)
    # the config key reads as code, not with its backticks escaped into the text
    [note] = [c.value for c in at.caption if "cost.prices" in c.value]
    assert "add a `cost.prices` row" in note and "\\`" not in note


def test_step_shows_its_bill_and_the_summarizer_call_before_it(start) -> None:  # noqa: ANN001
    config = preset("stress").with_overrides(["cost.model=claude-sonnet-4-5"])
    c = run_cost(replay(demo_thread(), config)).compactions[0].step
    at = start("pages/step.py", step=str(c), **PRICED)
    assert not any("This step's bill**" in m.value for m in at.markdown)  # a lazy section: closed, not priced
    open_section(at, "step_bill")
    cost = expected_cost(at)
    assert [t.value for t in at.title] == [f"Step {c}"]
    s = cost.steps[c]
    text = plain(at.markdown)
    assert f"This step's bill**: {dollars(s.bill.total)} modelled" in text
    bill = next(rows for rows in frames(at) if rows and rows[0].get("kind") == "uncached input")
    assert [r["tokens"] for r in bill] == [s.cache.uncached, s.cache.read, s.cache.write, s.output_tokens,
                                           s.cache.total + s.output_tokens]
    [call] = [x for x in cost.summarizer_calls if x.step == c]
    assert f"Summarizer call before this step (summarization, separate): {call.input_tokens:,} input tokens" in text
    assert cost.compactions[0].headline in plain(at.info)


def test_layers_and_evals_list_each_compaction_with_its_payback(start) -> None:  # noqa: ANN001
    at = start("pages/layers.py", **PRICED)
    cost = expected_cost(at)
    table = next(rows for rows in frames(at) if rows and "paid back" in rows[0])
    assert [r["step"] for r in table] == [c.step for c in cost.compactions]
    at = start("pages/evals.py", **PRICED)
    rows = next(rows for rows in frames(at) if rows and "paid back" in rows[0])
    assert [r["paid back"] for r in rows] == [paid_back(c) for c in cost.compactions]


def test_compare_adds_a_cost_table(start) -> None:  # noqa: ANN001
    at = start("pages/config.py", **PRICED)
    at.session_state["tab"] = "Compare runs"  # drawn only while open (pages/config.py)
    at.run().button(key="pin").click().run()
    a = expected_cost(at)
    at.sidebar.number_input(key="sb_trig_val_0_fraction").set_value(0.5).run()
    assert not at.exception
    b = expected_cost(at)
    rows = {r["metric"]: r for r in next(t for t in frames(at) if t and t[0].get("metric") == "dollars (calls + summarizer)")}
    assert rows["dollars (calls + summarizer)"]["A"] == dollars(a.totals()["dollars"])
    assert rows["dollars (calls + summarizer)"]["B"] == dollars(b.totals()["dollars"])
    spec = chart(at, "compare_cost_chart")
    assert [d["name"] for d in spec["data"] if d.get("showlegend") is not False] == ["A: cumulative dollars",
                                                                                   "B: cumulative dollars"]


def test_the_sweep_figure_puts_dollars_on_the_pareto_cost_axis() -> None:
    thread = demo_thread()
    base = preset("stress").with_overrides(["cost.model=claude-sonnet-4-5"])
    result = sweep([thread], base, {"summarization.trigger": ["fraction:0.25", "fraction:0.5"]}, executor="serial")
    assert result.to_dict()["pareto_cost"] == "dollars"
    fig = json.loads(sweep_figure(result).to_json())
    assert "marker size: dollars" in fig["layout"]["xaxis"]["title"]["text"]
    by_dollars = json.loads(sweep_figure(result, x_axis="dollars").to_json())
    xs = sorted(x for d in by_dollars["data"] if d.get("mode") == "markers" for x in values(d["x"]))
    assert xs == sorted(p.metrics["dollars"] for p in result.points)
    assert by_dollars["layout"]["xaxis"]["title"]["text"].startswith("dollars (lower is better)")
    # the hover writes dollars in the pages' one format (it wrote four decimals: "$0.1234")
    from engine.base.wording import money

    hovers = [h for d in by_dollars["data"] if d.get("mode") == "markers" for h in d["hovertext"]]
    assert sorted(h.split("<br>cost ")[1].split(" ")[0] for h in hovers) == sorted(
        money(p.metrics["dollars"]) for p in result.points)
    # unpriced runs: the cost axis falls back to the summarizer's input tokens, and dollars cannot be the x axis
    plain_result = sweep([thread], preset("stress"), {"summarization.trigger": ["fraction:0.25"]}, executor="serial")
    unpriced = json.loads(sweep_figure(plain_result, x_axis="dollars").to_json())
    assert "peak view tokens" in unpriced["layout"]["xaxis"]["title"]["text"]
    assert "marker size: summarizer input tokens" in unpriced["layout"]["xaxis"]["title"]["text"]

