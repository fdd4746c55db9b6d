"""When to compact: trigger and keep thresholds as data, LangChain's rules for when they are met.

`ContextSize` = `("fraction", float) | ("tokens", int) | ("messages", int)`; a trigger is one
threshold, a dict (AND) or a list (OR) of them; `None` never fires. Wording and comparisons are
LangChain's (langchain 1.5.2, `libs/langchain_v1/langchain/agents/middleware/summarization.py`:
`_validate_context_size`, `_normalize_trigger`, `_should_summarize`); every comparison is `>=`.
Pure functions, shared by every layer or policy that compacts at a threshold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine.base.errors import ConfigError
from engine.config.sections import SummarizationConfig
from engine.config.sizes import AllOf, ContextSize

Threshold = tuple[str, int | float]
Clause = tuple[Threshold, ...]

DEFAULT_KEEP: Threshold = ("messages", 20)  # LangChain's _DEFAULT_MESSAGES_TO_KEEP


class ThresholdError(ConfigError, ValueError):
    """A bad trigger or keep value; LangChain's wording, and a ValueError like LangChain's."""


def validate_threshold(kind: Any, value: Any, param: str) -> Threshold:
    if kind == "fraction":
        if not 0 < value <= 1:
            raise ThresholdError(f"Fractional {param} values must be between 0 and 1, got {value}.")
    elif kind in ("tokens", "messages"):
        if value <= 0:
            raise ThresholdError(f"{param} thresholds must be greater than 0, got {value}.")
    else:
        raise ThresholdError(f"Unsupported context size type {kind} for {param}.")
    return (kind, value)


def _pair(size: tuple[Any, ...], param: str) -> Threshold:
    if len(size) != 2:
        raise ThresholdError(f"Unsupported context size type {size!r} for {param}.")
    return validate_threshold(size[0], size[1], param)


def _mapping_clause(m: Mapping[str, Any]) -> Clause:
    if not m:
        raise ThresholdError("trigger clause must specify at least one of 'tokens', 'messages', 'fraction'")
    out: list[Threshold] = []
    for k, v in m.items():
        if k not in ("tokens", "messages", "fraction"):
            raise ThresholdError(f"Unsupported trigger metric: {k!r}")
        if isinstance(v, bool):
            raise ThresholdError(f"{k} trigger value must be numeric, got {v!r}")
        if k == "fraction" and not isinstance(v, (int, float)):
            raise ThresholdError(f"Fraction trigger values must be numeric, got {v!r}")
        if k != "fraction" and not isinstance(v, int):
            raise ThresholdError(f"{k} trigger values must be integers, got {v!r}")
        out.append(validate_threshold(k, v, "trigger"))
    return tuple(out)


def _clause(item: Any) -> Clause:
    if isinstance(item, ContextSize):
        return (item.to_tuple(),)
    if isinstance(item, AllOf):
        return tuple(c.to_tuple() for c in item.all)
    if isinstance(item, Mapping):
        return _mapping_clause(item)
    if isinstance(item, tuple):
        return (_pair(item, "trigger"),)
    raise TypeError(f"Unsupported trigger item type: {type(item)}")


def normalize_trigger(trigger: Any) -> tuple[Clause, ...]:
    """LangChain's rule: a tuple is one threshold, a dict is an AND clause, a list is OR; None never fires."""
    if trigger is None:
        return ()
    if isinstance(trigger, str):  # the CLI's "tokens:30000,messages:50&fraction:0.5"
        trigger = SummarizationConfig.model_validate({"trigger": trigger}).trigger or ()
    if isinstance(trigger, (list, tuple)) and not (len(trigger) == 2 and isinstance(trigger[0], str)):
        return tuple(_clause(item) for item in trigger)
    return (_clause(trigger),)


def normalize_keep(keep: Any) -> Threshold:
    if isinstance(keep, ContextSize):
        return keep.to_tuple()
    if not isinstance(keep, tuple):
        raise ThresholdError(f"Unsupported context size type {keep!r} for keep.")
    return _pair(keep, "keep")


def clause_label(clause: Clause) -> str:
    return "&".join(f"{kind}:{value}" for kind, value in clause)


def fraction_threshold(window: int, fraction: float) -> int:
    return max(1, int(window * fraction))


def fired_clause(clauses: Sequence[Clause], *, message_count: int, total_tokens: int, window: int | None,
                 reported_tokens: int | None = None) -> str | None:
    """The label of the first clause whose thresholds are all met (`>=`), else None."""
    for clause in clauses:
        met = True
        for kind, value in clause:
            if kind == "messages":
                met = message_count >= value
            else:
                if kind == "tokens":
                    threshold = int(value)
                elif window is None:  # no window at runtime fails only this clause, as in LangChain
                    met = False
                    break
                else:
                    threshold = fraction_threshold(window, float(value))
                # reached: the count or the last AI message's reported total (LangChain's `_should_summarize`)
                met = total_tokens >= threshold or (reported_tokens is not None and reported_tokens >= threshold)
            if not met:
                break
        if met:
            return clause_label(clause)
    return None


__all__ = [
    "DEFAULT_KEEP",
    "Clause",
    "Threshold",
    "ThresholdError",
    "clause_label",
    "fired_clause",
    "fraction_threshold",
    "normalize_keep",
    "normalize_trigger",
    "validate_threshold",
]
