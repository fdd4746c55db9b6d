"""What the chart draws for a run's policies: each rule's decided quantity as a curve, its threshold and
keep as lines on that curve, and what is reserved above the threshold (the Step page's `/context` row).

A rule decides on its own quantity (engine.thread.decisions): the request about to be sent, before the
rule acts (so a compaction's step shows the request that triggered it, not the compacted view), the
previous request (Gemini CLI, Cline), LangChain's or Deep Agents' own count, events (OpenHands). The
trigger line is drawn at the rule's threshold on that curve, so the curve reaches the line at the step
the rule fires; where it fires without reaching it, or reaches it without firing, the decision says why
(`crossing_mismatches` finds the steps that say nothing).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.config.presets import AGENT_PRESET_OF_FORMAT
from engine.config.sections import CompactionConfig
from engine.policies import get_policy
from engine.run.run import Run
from engine.thread.decisions import VIEW, Decision
from engine.tokens.windows import max_output_tokens
from engine.views.timeline import ThresholdLine, threshold_lines

# What a series of each kind is called in the legend.
SERIES_NAMES = {
    VIEW: "the request before {rule} (what it decides on)",
    "summarization": "{quantity}",
    "previous request": "the previous request (what {rule} decides on)",
    "previous request + output": "the previous request and its answer (what {rule} decides on)",
    "context editing": "{quantity} (what {rule} decides on)",
    "total usage": "{quantity} (what {rule} decides on)",
}


@dataclass(frozen=True)
class DecisionSeries:
    """One rule's decisions over a run: what it measured at each step, and its threshold."""

    layer: str
    rule: str
    quantity: str
    unit: str
    series: str  # VIEW, or the name of the quantity's own curve
    op: str
    measured: np.ndarray  # float, NaN where the rule measured nothing at that step
    threshold: int | None  # the last threshold recorded (constant unless `varies`)
    varies: bool
    expression: str
    keep: int | None  # the keep level, where the rule keeps a token amount (summarization)
    fired: tuple[int, ...]  # steps where it fired
    decisions: tuple[Decision | None, ...]  # per step

    @property
    def drawable(self) -> bool:
        """A token quantity with a threshold: a curve and a line on the chart's axis."""
        return self.unit == "tokens" and self.threshold is not None

    @property
    def name(self) -> str:
        template = SERIES_NAMES.get(self.series, "{quantity}")
        return template.format(rule=self.rule, quantity=self.quantity)

    @property
    def line_label(self) -> str:
        sign = "≥" if self.op == ">=" else ">"
        at = f"{self.expression} = {self.threshold:,}" if self.expression and self.threshold is not None \
            else f"{self.threshold:,}" if self.threshold is not None else "none"
        return f"{self.rule}: fires when {self.series_label} {sign} {at}"

    @property
    def series_label(self) -> str:
        if self.series == VIEW:
            return "the request"
        if self.series in ("summarization", "context editing"):
            return self.quantity.split(" (")[0]
        return self.series

    def first_reached(self) -> int | None:
        for i, d in enumerate(self.decisions):
            if d is not None and d.reached:
                return i
        return None

    def first_fired(self) -> int | None:
        return self.fired[0] if self.fired else None


DECISION_SERIES = "decision_series"  # Run.derived key


def decision_series(run: Run) -> list[DecisionSeries]:
    """Each rule of the run with decisions, in the order they were first recorded (made once per run: the
    Timeline's figure reads them for its lines and its hover)."""
    made = run.derived.get(DECISION_SERIES)
    if made is None:
        made = run.derived[DECISION_SERIES] = _decision_series(run)
    return list(made)


def _decision_series(run: Run) -> list[DecisionSeries]:
    n = len(run.steps)
    groups: dict[tuple[str, str], list[Decision]] = {}
    for d in run.decisions:
        groups.setdefault((d.layer, d.rule), []).append(d)
    out: list[DecisionSeries] = []
    for (layer, rule), ds in groups.items():
        per_step: list[Decision | None] = [None] * n
        for d in ds:
            if 0 <= d.step < n:
                per_step[d.step] = d  # the last decision of a step (a rule decides once per call)
        measured = np.array([np.nan if d is None or d.measured is None else float(d.measured) for d in per_step],
                            dtype=np.float64)
        thresholds = [d.threshold for d in ds if d.threshold is not None]
        last = ds[-1]
        keep = next((d.detail.get("keep_tokens") for d in reversed(ds) if d.detail.get("keep_tokens")), None)
        out.append(DecisionSeries(layer, rule, last.quantity, last.unit, last.series, last.op, measured,
                                  thresholds[-1] if thresholds else None, len(set(thresholds)) > 1, last.expression,
                                  keep, tuple(i for i, d in enumerate(per_step) if d is not None and d.fired),
                                  tuple(per_step)))
    return out


def crossing_mismatches(series: Sequence[DecisionSeries]) -> list[str]:
    """Where a rule's first firing step is not the first step its curve reaches its line, and no decision
    between the two says why: one line each (empty when the chart can be trusted)."""
    problems: list[str] = []
    for s in series:
        reached, fired = s.first_reached(), s.first_fired()
        if reached == fired:
            continue
        lo = min(x for x in (reached, fired) if x is not None)
        hi = max(x for x in (reached, fired) if x is not None)
        explained = any(d is not None and d.reason for d in s.decisions[lo:hi + 1])
        if not explained:
            problems.append(f"{s.rule}: first reaches its line at step {reached}, first fires at step {fired}, "
                            "and no decision says why")
    return problems


@dataclass(frozen=True)
class Reserved:
    """What a policy keeps free above its threshold: Claude Code's /context "Autocompact buffer"."""

    label: str
    tokens: int
    # the quantity the threshold compares, when not the view's tokens (said under the table: in the label
    # it cut the Step page's category column to "…in Lar…")
    measured_in: str = ""


def reserved(run: Run) -> Reserved | None:
    """The room above the run's first token threshold: what its policy keeps free.

    Claude Code's `/context` shows it as "Autocompact buffer" (window − effective window + 13,000 = 33,000 on
    a 200k window: MAX_OUTPUT_TOKENS_FOR_SUMMARY 20,000 + AUTOCOMPACT_BUFFER_TOKENS 13,000); every other rule
    has its room between its threshold and the window, in the quantity it decides on (said in the label).
    """
    for s in decision_series(run):
        if s.drawable and run.window_tokens:
            room = max(0, run.window_tokens - (s.threshold or 0))
            if s.rule.startswith("claude-code compaction"):
                return Reserved("autocompact buffer (Claude Code)", room)
            return Reserved(f"reserved above {s.rule}", room, "" if s.series == VIEW else s.series_label)
    # a recorded run (nothing of ours decides): what the source agent's own policy keeps free
    name = AGENT_PRESET_OF_FORMAT.get(run.thread.source_format or "")
    if name is None or not run.window_tokens or "recorded" not in run.config.order:
        return None
    policy = get_policy(name)
    threshold = policy.threshold_tokens(run.window_tokens, max_output_tokens(run.config, run.thread.model),
                                        CompactionConfig(policy=name), thread=run.thread)  # type: ignore[arg-type]
    if threshold is None:
        return None
    room = max(0, run.window_tokens - threshold)
    return Reserved("autocompact buffer (Claude Code)" if name == "claude-code"
                    else f"reserved above {name}'s compaction threshold", room)




def run_lines(run: Run) -> list[ThresholdLine]:
    """The chart's levels: the window, then each rule's trigger (and keep) at the threshold it decided on,
    labelled with the quantity it compares; a rule whose quantity is not tokens is a note, not a level.
    A run without decisions (as-recorded) gets the levels its settings describe."""
    series = decision_series(run)
    if not series:
        return threshold_lines(run.config, run.window_tokens, run.thread.model, run.thread)
    lines = [ThresholdLine("window", f"window {run.window_tokens:,} tokens", run.window_tokens)]
    for s in series:
        if s.threshold is None:
            reason = next((d.reason for d in s.decisions if d is not None and d.reason), "")
            lines.append(ThresholdLine("trigger", f"{s.rule}: {reason or 'no threshold'}", None,
                                       f"{s.rule}: {reason or 'no threshold'}"))
            continue
        if s.unit != "tokens":
            note = f"{s.rule} decides on {s.quantity} ({s.op} {s.threshold:,} {s.unit}): not a token level"
            lines.append(ThresholdLine("trigger", note, None, note))
            continue
        note = "the threshold changes from step to step: the last one is drawn" if s.varies else ""
        lines.append(ThresholdLine("trigger", s.line_label, s.threshold, note, series=s.series))
        last = next((d for d in reversed(s.decisions) if d is not None), None)
        for clause in (last.detail.get("message_clauses", ()) if last is not None else ()):
            text = f"trigger {clause} counts messages, so it cannot be drawn as a token level"
            lines.append(ThresholdLine("trigger", text, None, text))
        if s.keep is not None:
            lines.append(ThresholdLine("keep", f"{s.rule}: keeps {s.keep:,} ({s.series_label})", s.keep,
                                       series=s.series))
    return lines
