"""The Timeline's data: token series per step, threshold lines, event markers, the summarizer calls.

Plain data from a Run (no Streamlit, no Plotly); the CLI can print every number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.base.wording import plural
from engine.config.schema import EngineConfig
from engine.config.settings import layer_enabled
from engine.config.sizes import AllOf, ContextSize
from engine.policies import get_policy
from engine.run.run import Run, StepRecord
from engine.run.whatif import is_agent_summary_call
from engine.thread.events import LAYERS, Event
from engine.thread.kinds import CATEGORIES
from engine.thread.model import RecordedCompaction, Thread
from engine.tokens.windows import max_output_tokens


# -- timeline --------------------------------------------------------------------------------
@dataclass(frozen=True)
class TimelineSeries:
    """Per-step token series as numpy arrays (plotly sends them as compact binary)."""

    steps: np.ndarray
    by_category: dict[str, np.ndarray]  # CATEGORIES order; every category present, zeros included
    view_tokens: np.ndarray
    raw_tokens: np.ndarray
    state_tokens: np.ndarray
    recorded_input_tokens: np.ndarray | None  # NaN where the source recorded nothing
    event_counts: np.ndarray


def timeline_series(run: Run) -> TimelineSeries:
    n = len(run.steps)
    cats = np.zeros((len(CATEGORIES), n), dtype=np.int64)
    index = {c: i for i, c in enumerate(CATEGORIES)}
    for j, s in enumerate(run.steps):
        for cat, tokens in s.view_by_category.items():
            i = index.get(cat)
            if i is not None:
                cats[i, j] = tokens
    recorded = np.array([np.nan if s.recorded_input_tokens is None else s.recorded_input_tokens
                         for s in run.steps], dtype=np.float64)
    return TimelineSeries(
        steps=np.arange(n, dtype=np.int64),
        by_category={c: cats[i] for c, i in index.items()},
        view_tokens=np.array([s.view_tokens for s in run.steps], dtype=np.int64),
        raw_tokens=np.array([s.raw_tokens for s in run.steps], dtype=np.int64),
        state_tokens=np.array([s.state_tokens for s in run.steps], dtype=np.int64),
        recorded_input_tokens=recorded if n and not np.isnan(recorded).all() else None,
        event_counts=np.array([len(s.events) for s in run.steps], dtype=np.int64),
    )


# -- thresholds ------------------------------------------------------------------------------
@dataclass(frozen=True)
class ThresholdLine:
    """A horizontal level on the timeline; `tokens` is None when it is not a token level."""

    role: str  # window | trigger | keep
    label: str
    tokens: int | None
    note: str = ""
    # the quantity the level is on: "view" (the request) or a rule's own decided quantity (engine.views.decisions)
    series: str = "view"


def resolve_tokens(size: ContextSize, window_tokens: int) -> int | None:
    """A threshold as tokens: fractions resolve against the window as LangChain does (min 1)."""
    if size.type == "tokens":
        return int(size.value)
    if size.type == "fraction":
        return max(1, int(window_tokens * float(size.value)))
    return None


def _line(role: str, size: ContextSize, window_tokens: int, prefix: str = "") -> ThresholdLine:
    tokens = resolve_tokens(size, window_tokens)
    label = f"{role} {prefix}{size}"
    if tokens is None:
        return ThresholdLine(role, label, None, f"{role} {size} counts messages, so it cannot be drawn as a token level")
    if size.type == "fraction":
        label += f" = {tokens:,} tokens"
    return ThresholdLine(role, label, tokens)


def compaction_line(config: EngineConfig, window_tokens: int, model: str | None,
                    thread: Thread | None = None) -> ThresholdLine | None:
    """A coding-agent policy's compaction threshold as a token level (None when that layer is off)."""
    if not layer_enabled(config, "compaction"):
        return None
    policy = get_policy(config.compaction.policy)
    tokens = policy.threshold_tokens(window_tokens, max_output_tokens(config, model), config.compaction, thread=thread)
    if tokens is None:
        note = getattr(policy, "trigger_note", lambda c: "")(config.compaction)
        return ThresholdLine("trigger", f"{policy.name}: {note}", None, note)
    own = "" if config.compaction.trigger is None else f", set by {config.compaction.trigger}"
    return ThresholdLine("trigger", f"{policy.name} compacts at {tokens:,} tokens{own}", tokens)


def compaction_trigger_as(config: EngineConfig, kind: str, window_tokens: int, model: str | None,
                          thread: Thread | None = None) -> ContextSize | None:
    """The coding-agent policy's current threshold written as `kind` ("tokens" or "fraction"), at the same
    level: switching the sidebar's *Compaction threshold* from "policy default" (Claude Code: 167,000 of a
    200k window) to tokens must keep 167,000, not jump to half the window (issue 35). A fraction is of
    the policy's own base (Claude Code's effective window, window minus the output reserve), so it is
    found through the policy itself: the two-decimal fraction whose threshold lies closest. None when the
    policy's threshold is no token level."""
    line = compaction_line(config, window_tokens, model, thread)
    if line is None or line.tokens is None:
        return None
    if kind == "tokens":
        return ContextSize(type="tokens", value=max(1, line.tokens))
    policy = get_policy(config.compaction.policy)
    reserve = max_output_tokens(config, model)

    def level(fraction: float) -> int:
        section = config.compaction.model_copy(update={"trigger": ContextSize(type="fraction", value=fraction)})
        return policy.threshold_tokens(window_tokens, reserve, section, thread=thread) or 0

    target = line.tokens
    best = min((round(k / 100, 2) for k in range(1, 101)), key=lambda f: (abs(level(f) - target), f))
    return ContextSize(type="fraction", value=best)


def threshold_lines(config: EngineConfig, window_tokens: int, model: str | None = None,
                    thread: Thread | None = None) -> list[ThresholdLine]:
    """Window, summarization trigger clause(s) and keep, from the live settings."""
    lines = [ThresholdLine("window", f"window {window_tokens:,} tokens", window_tokens)]
    compaction = compaction_line(config, window_tokens, model, thread)
    if compaction is not None:
        lines.append(compaction)
    if not layer_enabled(config, "summarization"):
        return lines
    summ = config.summarization
    if summ.trigger is None:
        lines.append(ThresholdLine("trigger", "trigger none", None, "trigger is none: summarization never fires"))
    else:
        for clause in summ.trigger:
            if isinstance(clause, AllOf):
                for part in clause.all:
                    lines.append(_line("trigger", part, window_tokens, prefix=f"(AND {clause}) "))
            else:
                lines.append(_line("trigger", clause, window_tokens))
    lines.append(_line("keep", summ.keep, window_tokens))
    return lines


# -- events ----------------------------------------------------------------------------------
def describe_event(event: Event, message: str | None = None) -> str:
    """One line: what happened (`message` in place of the event's own, e.g. clipped) and the tokens before -> after."""
    text = f"{event.layer} · {event.kind}"
    said = event.message if message is None else message
    if said:
        text += f": {said}"
    if event.tokens_before is not None or event.tokens_after is not None:
        before = "?" if event.tokens_before is None else f"{event.tokens_before:,}"
        after = "?" if event.tokens_after is None else f"{event.tokens_after:,}"
        text += f" (tokens {before} → {after})"
    return text


@dataclass(frozen=True)
class EventMarker:
    step: int
    layer: str
    kind: str
    tokens: int  # the height to draw it at
    severity: str
    text: str


def event_markers(run: Run) -> list[EventMarker]:
    """Every event, placed at its step and at the tokens it saw (else the step's view tokens)."""
    out: list[EventMarker] = []
    last = len(run.steps) - 1
    for s in run.steps:
        for e in s.events:
            step = min(max(e.step, 0), last)
            height = e.tokens_before if e.tokens_before is not None else run.steps[step].view_tokens
            out.append(EventMarker(step, e.layer, e.kind, int(height), e.severity, describe_event(e)))
    return out


def layer_order(names: Sequence[str]) -> list[str]:
    """Layer names in the canonical order, unknown names last (sorted)."""
    known = [n for n in LAYERS if n in names]
    return known + sorted(set(names) - set(known))


def step_for_message_index(steps: Sequence[StepRecord], index: int) -> int | None:
    """The first step whose AI message comes at or after message position `index`."""
    for s in steps:
        if s.message_index >= index:
            return s.index
    return steps[-1].index if steps else None


def recorded_compactions(run: Run) -> list[tuple[int, RecordedCompaction]]:
    """Compactions the source agent performed, each at the step that followed it."""
    out = []
    for c in run.thread.compactions:
        step = step_for_message_index(run.steps, c.index)
        if step is not None:
            out.append((step, c))
    return out


def events_of(run: Run, layer: str) -> list[Event]:
    return [e for e in run.events if e.layer == layer]


def payload_value(event: Event, *names: str, default: Any = None) -> Any:
    """The first payload key present among `names` (layers name things slightly differently)."""
    for n in names:
        if n in event.payload and event.payload[n] not in (None, "", [], ()):
            return event.payload[n]
    return default


# -- summarizer calls ------------------------------------------------------------------------
def recorded_compaction_calls(run: Run) -> list[int]:
    """The steps before which the run replays a compaction call the source agent made: each recorded
    compaction that wrote a summary (a trim drops messages without calling a model), after the first request.

    The same calls engine.cost.run_cost prices as the recorded layer's summarizer calls (the Layers page's
    Summaries tab and the Timeline's Cost section), found without pricing the run.
    """
    return [s.index for s in run.steps for e in s.events if is_agent_summary_call(s.index, e)]


@dataclass(frozen=True)
class SummarizerCalls:
    """A run's summarizer calls: our summarizer's, and the source agent's own recorded compaction calls.

    An as-recorded run calls no summarizer of ours, yet the agent called its model to write each summary
    (priced on the Layers page): a tile that counted ours alone read 0 beside that call.
    """

    ours: int
    ours_name: str
    recorded: int

    @property
    def total(self) -> int:
        return self.ours + self.recorded

    @property
    def whose(self) -> str | None:
        """Whose calls the total counts, when the agent made some (None: ours alone, as before)."""
        if not self.recorded:
            return None
        if not self.ours:
            return "by the agent (recorded)"
        return f"{self.recorded:,} by the agent, {self.ours:,} ours"

    @property
    def help(self) -> str:
        ours = f"summarizer: {self.ours_name}"
        if not self.recorded:
            return ours
        each = "its summary" if self.recorded == 1 else "each summary"
        agent = (f"{plural(self.recorded, 'recorded compaction call')} by the source agent (the model call it made "
                 f"to write {each}, priced on the Layers page, Summaries tab, and in the Cost section)")
        theirs = f"{plural(self.ours, 'call')} of our summarizer ({self.ours_name})" if self.ours else \
            "no summarizer of ours ran"
        return f"{agent}; {theirs}"


def summarizer_calls(run: Run) -> SummarizerCalls:
    return SummarizerCalls(run.summarizer_calls, run.summarizer_name, len(recorded_compaction_calls(run)))
