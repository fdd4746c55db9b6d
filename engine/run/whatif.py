"""A what-if run against the as-recorded baseline: peak, tokens sent, where compactions moved.

The baseline is what the source agent really sent (`preset("as-recorded")`); any other run is a
what-if over the same calibrated counts. `against_baseline` says, in numbers and in one sentence,
what the what-if changes: "with these settings you would have compacted 40 steps earlier and
peaked at 120,000 instead of 167,094 tokens".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.run.run import Run
from engine.thread.events import Event
from engine.thread.model import Thread

# (layer, event kind) of the events that replace the history: a run's compactions.
COMPACTION_EVENTS: frozenset[tuple[str, str]] = frozenset({
    ("summarization", "summarize"),
    ("compaction", "compact"),
    ("compaction", "trim"),
    ("recorded", "compaction"),
})


def has_recorded_baseline(thread: Thread) -> bool:
    """A thread whose source recorded what it sent: usage per call, compactions or context edits."""
    return bool(thread.usage or thread.compactions or thread.edits)


def is_compaction(event: Event) -> bool:
    """Whether `event` replaced the history: one of the kinds above, and nothing else. The one rule for every
    count of a run's compactions (engine.evals.compactions, compaction_steps, the cost model, the Timeline).

    Not a payload flag (a "compacts" key: no layer ever set it), nor a summarization event for carrying a
    summary's text: `summarize_empty` carries one but is the warning beside its step's `summarize`, and
    `compact_rejected` or `thrashing` replaced nothing (tests/engine/test_one_compaction_rule.py)."""
    return (event.layer, event.kind) in COMPACTION_EVENTS


def is_agent_summary_call(step_index: int, event: Event) -> bool:
    """Whether `event` replays a model call the source agent made to write a summary: a recorded compaction
    that is not a trim (a trim drops messages, calling no model), after the first request. engine.cost.run_cost
    prices these as the recorded layer's summarizer calls; engine.views.timeline counts them."""
    return (event.layer == "recorded" and step_index > 0 and is_compaction(event)
            and event.payload.get("compaction_kind") != "trim")


def compaction_steps(run: Run) -> list[int]:
    """The steps whose view is the first after a compaction, in order (one per compaction)."""
    return [e.step for e in run.events if is_compaction(e)]


@dataclass
class WhatIf:
    """How a run differs from the baseline run of the same thread."""

    peak_tokens: int
    baseline_peak_tokens: int
    sent_tokens: int  # input tokens over all steps
    baseline_sent_tokens: int
    compactions: list[int]
    baseline_compactions: list[int]
    # (baseline step, what-if step) for compactions paired in order; None where one side has none
    shifts: list[tuple[int | None, int | None]] = field(default_factory=list)
    window_tokens: int = 0
    headline: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "peak_tokens": self.peak_tokens,
            "baseline_peak_tokens": self.baseline_peak_tokens,
            "peak_delta": self.peak_tokens - self.baseline_peak_tokens,
            "sent_tokens": self.sent_tokens,
            "baseline_sent_tokens": self.baseline_sent_tokens,
            "sent_delta": self.sent_tokens - self.baseline_sent_tokens,
            "compaction_steps": self.compactions,
            "baseline_compaction_steps": self.baseline_compactions,
            "shifts": [{"baseline_step": a, "step": b, "moved": (b - a) if a is not None and b is not None else None}
                       for a, b in self.shifts],
            "headline": self.headline,
        }


def against_baseline(run: Run, baseline: Run) -> WhatIf:
    """Compare `run` with `baseline` (the as-recorded run of the same thread)."""
    mine, theirs = compaction_steps(run), compaction_steps(baseline)
    n = max(len(mine), len(theirs))
    shifts = [(theirs[k] if k < len(theirs) else None, mine[k] if k < len(mine) else None) for k in range(n)]
    result = WhatIf(
        peak_tokens=run.peak_view_tokens(), baseline_peak_tokens=baseline.peak_view_tokens(),
        sent_tokens=sum(s.view_tokens for s in run.steps), baseline_sent_tokens=sum(s.view_tokens for s in baseline.steps),
        compactions=mine, baseline_compactions=theirs, shifts=shifts, window_tokens=run.window_tokens,
    )
    result.headline = headline(result)
    return result


def _first_shift(w: WhatIf) -> str:
    if not w.shifts:
        return "neither run compacted"
    base, step = w.shifts[0]
    if base is None:
        return f"you would have compacted at step {step}, where the agent never compacted"
    if step is None:
        return f"you would never have compacted (the agent compacted at step {base})"
    moved = step - base
    if moved == 0:
        return f"you would have compacted at the same step as the agent ({step})"
    when = "earlier" if moved < 0 else "later"
    return f"you would have compacted {abs(moved)} step{'s' if abs(moved) != 1 else ''} {when} (step {step} instead of {base})"


def headline(w: WhatIf) -> str:
    """One sentence: where the first compaction moved and how the peak changed."""
    text = "With these settings " + _first_shift(w)
    if w.peak_tokens == w.baseline_peak_tokens:
        text += f" and peaked at the same {w.peak_tokens:,} tokens"
    else:
        text += f" and peaked at {w.peak_tokens:,} instead of {w.baseline_peak_tokens:,} tokens"
    if w.window_tokens and w.peak_tokens > w.window_tokens:
        text += f" (over the {w.window_tokens:,}-token window)"
    extra = len(w.compactions) - len(w.baseline_compactions)
    if extra:
        text += f"; {len(w.compactions)} compaction{'s' if len(w.compactions) != 1 else ''} instead of {len(w.baseline_compactions)}"
    return text + "."
