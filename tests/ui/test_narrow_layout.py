"""Layouts that must hold on a 1024×768 projector, and the words of the Timeline's hover and the Compare table."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from engine.config.schema import preset
from engine.run.replay import replay
from engine.tokens.counters import get_counter
from engine.views.decisions import decision_series
from engine.views.timeline import timeline_series
from tests.ui.builders import build_thread
from tests.ui.test_forensics_pages import PRICED, frames
from ui import figures
from ui.figures import timeline_spec

COUNTER = get_counter("approximate")


@pytest.fixture(scope="module")
def run():  # noqa: ANN201
    return replay(build_thread(30, result_words=900, recorded_compaction_at=20), preset("stress"),
                  token_counter=COUNTER)


def test_the_hover_answers_each_rules_question(run) -> None:  # noqa: ANN001
    """The hover asked "… ≥ 10,000?" and left the answer out; the Step page says "? no" (walk-through, 1024 px)."""
    hit = timeline_spec(run)["data"][-1]
    (rule,) = [d for d in decision_series(run) if d.threshold is not None]
    assert hit["hovertemplate"].endswith(f"{rule.threshold:,}? %{{hovertext}}<extra>click to open</extra>")
    answers = [text.split("<br>")[0] for text in hit["hovertext"][0]]
    expected = ["-" if dec is None or dec.reached is None else "yes" if dec.reached else "no" for dec in rule.decisions]
    assert answers == expected
    assert "yes" in answers and "no" in answers  # this thread crosses the trigger


def test_the_timeline_leaves_the_plot_most_of_a_narrow_chart(run) -> None:  # noqa: ANN001
    """At 1024×768 the chart is ~560 px wide: the side legend and the lane names took 344 px of it and left the
    plot 220 px, narrower than its legend (a real Claude Code session). Both wrap shorter now, and so do the notes above the plot (a long
    one ran over the legend's first entries)."""
    layout = timeline_spec(run)["layout"]
    assert layout["yaxis2"]["ticktext"][0] == "compaction in the<br>source"
    plot_px = 560 - layout["margin"]["l"] - layout["margin"]["r"]
    assert plot_px >= 280 and plot_px > 1.5 * layout["margin"]["r"]
    note = next(a for a in layout["annotations"] if a.get("name") == "notes")
    assert max(map(len, note["text"].split("<br>"))) <= 50, note["text"]
    assert layout["yaxis"]["title"]["text"] == "tokens in the view<br>(approximate estimate)"
    assert figures.LABEL_LINE_CHARS == 18


def test_the_compare_table_says_the_dollars_row_is_a_share(start) -> None:  # noqa: ANN001
    """The row "input dollars re-sending history" showed 84.8%: a percentage in a dollars row."""
    at = start("pages/compare.py", **PRICED)
    assert not at.exception, at.exception
    facts = {r[""]: r for r in next(rows for rows in frames(at) if rows and rows[0].get("") == "format")}
    assert "input dollars re-sending history" not in facts
    assert re.fullmatch(r"\d+\.\d%|-", facts["share of input dollars re-sending history"]["A"])


def test_a_second_rules_question_is_answered_on_its_own_line(run) -> None:  # noqa: ANN001
    """Only the first rule's question fits the template (its answer travels in the step's hovertext); a
    further rule's line is written out whole, answer included."""
    (rule,) = [d for d in decision_series(run) if d.threshold is not None]
    other = replace(rule, rule="other", op=">", threshold=5,
                    decisions=tuple(dec and replace(dec, op=">", threshold=5) for dec in rule.decisions))
    series = timeline_series(run)
    template, _, _, texts = figures._step_hover(series, run.window_tokens, [rule, other])
    assert template.count("?") == 1
    i = next(i for i, dec in enumerate(rule.decisions) if dec is not None)
    measured = int(rule.measured[i])
    first = "yes" if rule.decisions[i].reached else "no"
    assert texts[i].startswith(f"{first}<br>other: {other.series_label} {measured:,} > 5? "
                               + ("yes" if measured > 5 else "no"))
