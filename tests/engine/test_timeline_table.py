"""The Timeline's table export: one row per step, CSV text that a spreadsheet never runs."""

from __future__ import annotations

from engine.config.schema import preset
from engine.run.replay import replay
from engine.thread.events import Event
from engine.thread.kinds import CATEGORIES
from engine.tokens.counters import get_counter
from engine.views.timeline_table import rows_csv, timeline_rows
from tests.ui.builders import build_thread


def test_one_row_per_step_with_the_categories_and_events() -> None:
    run = replay(build_thread(6), preset("stress"), token_counter=get_counter("approximate"), layers=[])
    run.steps[2].events.append(Event("summarization", "summarize", 2, 900, 200))
    rows = timeline_rows(run)
    assert [r["step"] for r in rows] == [0, 1, 2, 3, 4, 5]
    assert list(rows[0])[:7] == ["step", "message_id", "view_tokens", "raw_tokens", "state_tokens",
                                 "recorded_input_tokens", "percent_of_window"]
    assert list(rows[0])[7:] == [*CATEGORIES, "events"]
    for row, step in zip(rows, run.steps, strict=True):
        assert row["view_tokens"] == step.view_tokens == sum(row[c] for c in CATEGORIES)
        assert row["message_id"] == step.message_id
    assert rows[2]["events"] == "summarization:summarize" and rows[1]["events"] == ""
    assert rows[3]["percent_of_window"] == round(100 * run.steps[3].view_tokens / run.window_tokens, 1)


def test_csv_text_never_reads_as_a_formula() -> None:
    text = rows_csv([{"step": 0, "message_id": "=HYPERLINK(\"http://x\")", "tokens": None},
                     {"step": 1, "message_id": "-2+3", "tokens": 5}])
    assert text == ('step,message_id,tokens\n0,"\'=HYPERLINK(""http://x"")",\n1,\'-2+3,5\n')
    assert rows_csv([]) == ""
