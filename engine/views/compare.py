"""Two runs side by side: the table of what differs (Config › Compare).
"""

from __future__ import annotations

from typing import Any

from engine.run.run import Run
from engine.views.timeline import layer_order


# -- compare ---------------------------------------------------------------------------------
def compare_runs(a: Run, b: Run) -> list[dict[str, Any]]:
    """Run A vs run B: peak view tokens, tokens saved, events per layer, summarizer calls."""
    ta, tb = a.totals(), b.totals()
    rows: list[tuple[str, Any, Any]] = [
        ("steps", ta["steps"], tb["steps"]),
        ("window tokens", ta["window_tokens"], tb["window_tokens"]),
        ("peak view tokens", ta["peak_view_tokens"], tb["peak_view_tokens"]),
        ("total view tokens (billed input)", sum(s.view_tokens for s in a.steps), sum(s.view_tokens for s in b.steps)),
        ("tokens saved", ta["tokens_saved"], tb["tokens_saved"]),
        ("events", ta["events"], tb["events"]),
    ]
    for layer in layer_order([*ta["events_by_layer"], *tb["events_by_layer"]]):
        rows.append((f"events: {layer}", ta["events_by_layer"].get(layer, 0), tb["events_by_layer"].get(layer, 0)))
    rows += [("warnings", ta["warnings"], tb["warnings"]),
             ("summarizer calls", ta["summarizer_calls"], tb["summarizer_calls"]),
             ("files written", ta["files"], tb["files"])]
    return [{"metric": m, "A": x, "B": y, "B − A": y - x} for m, x, y in rows]
