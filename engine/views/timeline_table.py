"""The Timeline as a table: one row per step (what the page exports as CSV)."""

from __future__ import annotations

import csv
import io
from typing import Any

from engine.run.run import Run
from engine.thread.kinds import CATEGORIES


def timeline_rows(run: Run) -> list[dict[str, Any]]:
    """Per step: view, raw, state and recorded input tokens, tokens by category, and the events."""
    rows = []
    for s in run.steps:
        row: dict[str, Any] = {"step": s.index, "message_id": s.message_id, "view_tokens": s.view_tokens,
                               "raw_tokens": s.raw_tokens, "state_tokens": s.state_tokens,
                               "recorded_input_tokens": s.recorded_input_tokens,
                               "percent_of_window": round(100 * s.view_tokens / run.window_tokens, 1)
                               if run.window_tokens else None}
        row.update({c: s.view_by_category.get(c, 0) for c in CATEGORIES})
        row["events"] = "; ".join(f"{e.layer}:{e.kind}" for e in s.events)
        rows.append(row)
    return rows


# A spreadsheet runs a cell that starts with one of these as a formula (OWASP "CSV Injection");
# message ids come from the transcript, so such a cell gets a leading apostrophe.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def rows_csv(rows: list[dict[str, Any]]) -> str:
    """Rows as CSV text (header from the first row; empty cells for None; text never read as a formula)."""
    if not rows:
        return ""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: _cell(v) for k, v in row.items()} for row in rows)
    return out.getvalue()
