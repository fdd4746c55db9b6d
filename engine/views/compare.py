"""Two runs side by side: the table of what differs (Config › Compare).
"""

from __future__ import annotations

from typing import Any

from engine.run.run import Run
from engine.views.timeline import layer_order, summarizer_calls


# -- compare ---------------------------------------------------------------------------------
def compare_runs(a: Run, b: Run) -> list[dict[str, Any]]:
    """Run A vs run B: peak view tokens, tokens saved, events per layer, summarizer calls (ours and the agent's)."""
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
    rows.append(("warnings", ta["warnings"], tb["warnings"]))
    # an as-recorded run calls no summarizer of ours, yet its agent called its model for each summary it
    # wrote (priced on the Layers page): the total counts both, and the rows under it say whose is whose
    ca, cb = summarizer_calls(a), summarizer_calls(b)
    rows.append(("summarizer calls", ca.total, cb.total))
    if ca.recorded or cb.recorded:
        rows += [("summarizer calls: by the agent (recorded)", ca.recorded, cb.recorded),
                 ("summarizer calls: ours", ca.ours, cb.ours)]
    rows.append(("files written", ta["files"], tb["files"]))
    return [{"metric": m, "A": x, "B": y, "B − A": y - x} for m, x, y in rows]


def summarizer_calls_text(run: Run) -> str:
    """A run's summarizer calls in one cell (Compare sessions): the total, and whose when the agent made some.

    "2" (ours alone), "1 (recorded, by the agent)", "3 (1 recorded, by the agent; 2 ours)".
    """
    calls = summarizer_calls(run)
    if not calls.recorded:
        return f"{calls.total:,}"
    if not calls.ours:
        return f"{calls.total:,} (recorded, by the agent)"
    return f"{calls.total:,} ({calls.recorded:,} recorded, by the agent; {calls.ours:,} ours)"
