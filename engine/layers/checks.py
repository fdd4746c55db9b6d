"""What a deciding layer measured at each step, kept so a changed threshold can be applied without a replay.

A resumed replay (engine/run/resume.py) starts at the first step where a new config can act
differently from the run it resumes. For a threshold that step is the first one where the decision
taken with the new threshold differs from the one the run took, and that needs every input of the
decision at every step: the summarization trigger compares the message count, the counted tokens and
the last AI message's reported total with each clause (LangChain's `_should_summarize`), and in view
mode Deep Agents' input budget; a compaction policy compares the request about to be sent, or the
previous one (Gemini CLI, Cline, OpenAI's server-side compaction). One record per check, appended by
the layer as it decides; nothing here changes what a layer decides.

`first_trigger_change` and `first_compaction_change` answer the question from those records; a rule
they cannot evaluate without the replay (a policy reading the history itself) answers at the first
check: the resume then starts at or before it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from engine.layers.thresholds import Clause, clause_label, fired_clause

NEVER = 1 << 62  # "no step": a first change after every step of any run


class TriggerCheck(NamedTuple):
    """One summarization trigger check: what it measured and the clause label it acted on."""

    step: int
    messages: int  # the message count the `messages` clauses compare
    tokens: int  # the count the `tokens` and `fraction` clauses compare (usage-scaled where LangChain scales)
    reported_tokens: int | None  # the last AI message's reported total, when LangChain reads it
    window: int | None  # what `fraction` clauses are taken of
    budget: int | None  # view mode: Deep Agents' input budget (95 % of the window minus the output), else None
    fired: str | None  # the label of the clause that fired, "input_budget", "overflow", or None
    request: bool = False  # the layer counted the whole request (Deep Agents' view mode), not the state


class CompactionCheck(NamedTuple):
    """One compaction policy decision: the request sizes it could read, and whether it compacted."""

    step: int
    request_tokens: int
    previous_request_tokens: int | None
    previous_output_tokens: int | None
    fired: bool


def trigger_label(clauses: Sequence[Clause], check: TriggerCheck, forced: bool = False) -> str | None:
    """The label the summarization layer acts on for `check`'s measures under `clauses` (see
    `SummarizationCore._fired`): a clause met, else Deep Agents' input budget passed, else the overflow."""
    label = fired_clause(clauses, message_count=check.messages, total_tokens=check.tokens, window=check.window,
                         reported_tokens=check.reported_tokens) if clauses else None
    if label is None and check.budget is not None and check.tokens > check.budget:
        label = "input_budget"
    if label is None and forced:
        label = "overflow"
    return label


def first_trigger_change(checks: Sequence[TriggerCheck], clauses: Sequence[Clause]) -> int:
    """The first step whose trigger label under `clauses` differs from the recorded one (a different
    label is a different event), else NEVER."""
    if all(len(c) == 1 and c[0][0] == "tokens" for c in clauses):  # the common case, inline (a check per step)
        levels = [(int(c[0][1]), clause_label(c)) for c in clauses]
        for check in checks:
            tokens, reported = check.tokens, check.reported_tokens
            label = None
            for level, name in levels:
                if tokens >= level or (reported is not None and reported >= level):
                    label = name
                    break
            if label is None:
                budget = check.budget
                if budget is not None and tokens > budget:
                    label = "input_budget"
                elif check.fired == "overflow":
                    label = "overflow"
            if label != check.fired:
                return check.step
        return NEVER
    for check in checks:
        if trigger_label(clauses, check, check.fired == "overflow") != check.fired:
            return check.step
    return NEVER


def first_fired(checks: Sequence[TriggerCheck] | Sequence[CompactionCheck]) -> int:
    """The first step where the layer acted on its decision (a summary or compaction was attempted)."""
    return next((c.step for c in checks if c.fired), NEVER)


class HistoryRead(Exception):
    """A policy read the history or its memory while deciding: its decision needs the replay."""


class _NoHistory(Sequence[Any]):
    """A stand-in for the history a policy decides on: reading it raises `HistoryRead`."""

    def __len__(self) -> int:
        raise HistoryRead

    def __getitem__(self, index: Any) -> Any:
        raise HistoryRead

    def __iter__(self) -> Iterator[Any]:
        raise HistoryRead


class _NoMemory(dict[str, Any]):
    def __getitem__(self, key: str) -> Any:
        raise HistoryRead

    def get(self, key: str, default: Any = None) -> Any:
        raise HistoryRead

    def __contains__(self, key: object) -> bool:
        raise HistoryRead


def _no_summary(messages: Any, prompt: str) -> str:
    raise HistoryRead


def no_history() -> Sequence[Any]:
    """A history that raises HistoryRead when read (a policy deciding on recorded sizes alone reads none)."""
    return _NoHistory()


def probe_context(ctx: Any) -> Any:
    """`ctx` without the history's summarizer and memory: reading them raises HistoryRead."""
    return replace(ctx, summarize=_no_summary, memory=_NoMemory())


def compaction_fires(policy: Any, ctx: Any, check: CompactionCheck, threshold: int | None) -> bool:
    """Whether `policy` compacts at `check` with `ctx`'s config (the layer's own rule: the policy's
    `should_compact`, else "the request reaches the threshold"); raises HistoryRead when the policy
    reads more than the recorded sizes."""
    decide = getattr(policy, "should_compact", None)
    if decide is None:
        return threshold is not None and check.request_tokens >= threshold
    probe = replace(ctx, step=check.step, request_tokens=check.request_tokens,
                    previous_request_tokens=check.previous_request_tokens,
                    previous_output_tokens=check.previous_output_tokens, summarize=_no_summary, memory=_NoMemory())
    return bool(decide(_NoHistory(), probe))


def first_compaction_change(checks: Sequence[CompactionCheck], policy: Any, ctx: Any, threshold: int | None) -> int:
    """The first step whose compaction decision under `ctx.config` differs from the recorded one,
    or where it cannot be told without the replay; else NEVER."""
    for check in checks:
        try:
            fires = compaction_fires(policy, ctx, check, threshold)
        except HistoryRead:
            return check.step
        if fires != check.fired:
            return check.step
    return NEVER


def changed_fields(old: Any, new: Any) -> set[str]:
    """The fields of two config sections (pydantic models of one class) whose values differ."""
    return {name for name in type(old).model_fields if getattr(old, name) != getattr(new, name)}


def checks_of(run: Any, layer: str) -> Sequence[Any]:
    """The checks a Run's `layer` recorded (empty when it recorded none)."""
    found: Mapping[str, Sequence[Any]] = getattr(run, "checks", None) or {}
    return found.get(layer, ())


__all__ = [
    "NEVER",
    "CompactionCheck",
    "HistoryRead",
    "TriggerCheck",
    "changed_fields",
    "checks_of",
    "compaction_fires",
    "first_compaction_change",
    "first_fired",
    "first_trigger_change",
    "no_history",
    "probe_context",
    "trigger_label",
]
