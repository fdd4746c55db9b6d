"""Decision records: what each policy measured at a step, against which threshold, and what it decided.

Every layer that compacts on a threshold records one `Decision` per model call, fired or not: the
quantity it compares (in its own units: provider tokens of the request, LangChain's approximate count
of the state messages, the previous request's recorded size, events), the threshold, and the verdict.
The Timeline draws the trigger line on that quantity (its own curve when it is not the view), so the
curve reaches the line where the policy fires; a policy that fires below its line, or does not fire
above it, says why in `reason` (another clause fired, nothing to cut, the summary would grow...).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any

# What a decision's measured value counts, as the legend and the Step page name it.
VIEW = "view"  # the request as the chart draws it (provider tokens, the agent's prompt included)


@dataclass(frozen=True)
class Decision:
    """One rule's verdict at one model call."""

    layer: str  # summarization | compaction | context_editing | filesystem
    rule: str  # the rule's name in the agent or framework: "autocompact", "trigger fraction:0.85", ...
    step: int
    measured: int | None
    threshold: int | None
    fired: bool
    quantity: str  # what `measured` counts, in words ("the request (provider tokens)")
    unit: str = "tokens"  # tokens | events | messages
    series: str = VIEW  # VIEW when `measured` is the view the chart draws, else the name of its own curve
    op: str = ">="  # how measured meets threshold: ">=", ">"
    expression: str = ""  # how the threshold is made: "200,000 − 20,000 − 13,000"
    reason: str = ""  # why the verdict is not what the comparison says, or what else decided
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def reached(self) -> bool | None:
        """Whether the measured quantity meets the threshold (None when either is missing)."""
        if self.measured is None or self.threshold is None:
            return None
        return self.measured > self.threshold if self.op == ">" else self.measured >= self.threshold

    def text(self) -> str:
        """One line, e.g. "autocompact: request 142,100 ≥ 200,000 − 20,000 − 13,000 = 167,000? no"."""
        unit = "" if self.unit == "tokens" else f" {self.unit}"
        sign = "≥" if self.op == ">=" else ">"
        if self.threshold is None:
            line = f"{self.rule}: {self.quantity} {self._n(self.measured)}{unit}"
        else:
            limit = f"{self.expression} = {self.threshold:,}" if self.expression else f"{self.threshold:,}"
            line = f"{self.rule}: {self.quantity} {self._n(self.measured)}{unit} {sign} {limit}{unit}?"
            line += " yes" if self.reached else " no"
        line += " → fired" if self.fired else (" → not fired" if self.reached else "")
        if self.reason:
            line += f" ({self.reason})"
        return line

    @staticmethod
    def _n(value: int | None) -> str:
        return "?" if value is None else f"{value:,}"

    def to_dict(self) -> dict[str, Any]:
        return {"layer": self.layer, "rule": self.rule, "step": self.step, "measured": self.measured,
                "threshold": self.threshold, "op": self.op, "reached": self.reached, "fired": self.fired,
                "quantity": self.quantity, "unit": self.unit, "series": self.series,
                "expression": self.expression or None, "reason": self.reason or None, "text": self.text(),
                **({"detail": self.detail} if self.detail else {})}


class DecisionLog:
    """Collects decisions; `step` is set by the driver (as engine.events' recorder's is).

    A rule may `defer` a decision it will never amend (a trigger that did not fire: the bulk of a run):
    its place in `decisions` holds None until `resolve` has the rule make all of them at once, which
    `deciding` does when its context ends (the replay reads the log after that)."""

    def __init__(self) -> None:
        self.step = 0
        self.decisions: list[Decision] = []
        # (index in `decisions`, the rule's maker, what it makes the decision from), in index order
        self.pending: list[tuple[int, Any, Any]] = []

    def resolve(self) -> list[Decision]:
        """`decisions` with every deferred one made (each maker called once, on all of its own)."""
        pending, decisions = self.pending, self.decisions
        if pending:
            by_maker: dict[int, tuple[Any, list[int], list[Any]]] = {}
            for index, maker, item in pending:
                entry = by_maker.get(id(maker))
                if entry is None:
                    entry = by_maker[id(maker)] = (maker, [], [])
                entry[1].append(index)
                entry[2].append(item)
            for maker, indices, items in by_maker.values():
                for index, decision in zip(indices, maker.decisions_for(items), strict=True):
                    decisions[index] = decision
            pending.clear()
        return decisions


_current: ContextVar[DecisionLog | None] = ContextVar("ctxi_decision_log", default=None)


@contextmanager
def deciding(log: DecisionLog | None = None) -> Iterator[DecisionLog]:
    """Route decisions layers record in this context to `log`."""
    log = log or DecisionLog()
    token = _current.set(log)
    try:
        yield log
    finally:
        _current.reset(token)
        log.resolve()


def record(layer: str, rule: str, *, measured: int | None, threshold: int | None, fired: bool, quantity: str,
           unit: str = "tokens", series: str = VIEW, op: str = ">=", expression: str = "", reason: str = "",
           step: int | None = None, **detail: Any) -> Decision | None:
    """Record a decision if anyone listens (a replay does; a live agent's observer may)."""
    log = _current.get()
    if log is None:
        return None
    decision = Decision(layer, rule, log.step if step is None else step, measured, threshold, fired, quantity, unit,
                        series, op, expression, reason, detail)
    log.decisions.append(decision)
    return decision


def defer(maker: Any, item: Any, step: int) -> bool:
    """Keep a place in the log for the decision `maker.decisions_for([item])[0]` at `step`, made at `resolve`
    (with the maker's other deferred items, in one call): for a decision nobody amends. False (record it
    now) when nobody listens or the log is at another step than the one the item carries."""
    log = _current.get()
    if log is None or log.step != step:
        return False
    log.pending.append((len(log.decisions), maker, item))
    log.decisions.append(None)  # type: ignore[arg-type]  # made at resolve
    return True


def amend(decision: Decision, **changes: Any) -> Decision:
    """`decision` with `changes` (a rule that fired but then kept the history: fired=False and why), in the
    log it was recorded in too."""
    new = replace(decision, **changes)
    log = _current.get()
    if log is not None:
        for i in range(len(log.decisions) - 1, -1, -1):
            if log.decisions[i] is decision:
                log.decisions[i] = new
                break
    return new
