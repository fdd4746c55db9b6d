"""Settings that defeat themselves: a summarization `keep` that already meets its own `trigger`.

LangChain's SummarizationMiddleware (langchain 1.5.2,
`libs/langchain_v1/langchain/agents/middleware/summarization.py`) summarizes when any trigger clause
is met (`_should_summarize`, every comparison `>=`) and then keeps the most recent `keep` worth of
messages after the summary (`_determine_cutoff_index`). If what is kept alone already meets a
clause, the very next model call meets it again: each call summarizes once more and the summary
message makes the context grow instead of shrink (issue 15 measured 81 summarizer calls on one
real session). Nothing in LangChain rejects such settings, so the replay runs them as the library
would and this module only says so: next to the field in the dashboard, and as a `warning` event at
step 0 of the run.

A clause is compared with `keep` only in the same unit: tokens and fractions (resolved against the
window: `int(max_input_tokens * fraction)` in both
`_should_summarize` and `_find_token_based_cutoff`) with each other, messages with messages. An AND
clause is flagged only when `keep` meets every one of its parts.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.config.schema import EngineConfig
from engine.config.sections import SummarizationConfig
from engine.config.sizes import AllOf, ContextSize

KEEP_KEY = "summarization.keep"
KIND = "settings_warning"


@dataclass(frozen=True)
class SettingWarning:
    """One self-defeating setting: the config key it is about, the layer, and one line saying why."""

    key: str
    layer: str
    message: str


def _level(size: ContextSize, window: int | None) -> tuple[str, float] | None:
    """A threshold as a comparable (unit, amount): tokens for tokens and fractions, else messages."""
    if size.type == "messages":
        return ("messages", float(size.value))
    if size.type == "tokens":
        return ("tokens", float(size.value))
    if not window:
        return None
    return ("tokens", float(int(window * float(size.value))))


def _shown(size: ContextSize, level: tuple[str, float]) -> str:
    return f"{size} (= {int(level[1]):,} tokens)" if size.type == "fraction" else str(size)


def keep_meets_trigger(summarization: SummarizationConfig, window: int | None) -> list[SettingWarning]:
    """One warning per trigger clause that `keep` already meets (empty when the settings are sound)."""
    keep = _level(summarization.keep, window)
    if keep is None or not summarization.trigger:
        return []
    out = []
    for clause in summarization.trigger:
        parts = clause.all if isinstance(clause, AllOf) else (clause,)
        levels = [_level(p, window) for p in parts]
        if not all(lv is not None and lv[0] == keep[0] and keep[1] >= lv[1] for lv in levels):
            continue
        trigger_text = " & ".join(_shown(p, lv) for p, lv in zip(parts, levels, strict=True) if lv is not None)
        out.append(SettingWarning(
            key=KEEP_KEY, layer="summarization",
            message=(f"keep {_shown(summarization.keep, keep)} ≥ trigger {trigger_text}: what a summary keeps "
                     "already meets the trigger, so summarization fires again on the next call and every summary "
                     "grows the context. Set keep below the trigger.")))
    return out


def setting_warnings(config: EngineConfig, window: int | None) -> list[SettingWarning]:
    """Every self-defeating setting of the layers `config` turns on (summarization's keep vs trigger)."""
    s = config.summarization
    if "summarization" not in config.order or not s.enabled:
        return []
    return keep_meets_trigger(s, window)


__all__ = ["KEEP_KEY", "KIND", "SettingWarning", "keep_meets_trigger", "setting_warnings"]
