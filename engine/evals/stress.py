"""Stress mode: every trigger at a small fraction of the window, to multiply compaction events.

The references force compaction at 10-25 % of the window instead of 85 % so that one run yields
many summaries to study (shared/seeds, reference/deepagents.md §11). One number sets the
summarization trigger and the filesystem layer's truncate_args trigger; keeps that would leave
nothing to compact (at or above half the new trigger) shrink to a fifth of it.
"""

from __future__ import annotations

from engine.base.errors import ConfigError
from engine.config.schema import EngineConfig
from engine.config.sizes import ContextSize

STRESS_RANGE: tuple[float, float] = (0.10, 0.25)  # what the dashboard offers
DEFAULT_STRESS_FRACTION = 0.25


def stress_config(base: EngineConfig, fraction: float = DEFAULT_STRESS_FRACTION,
                  window_tokens: int | None = None) -> EngineConfig:
    """`base` with every trigger at `fraction` of the window (summarization enabled).

    `window_tokens` (the run's window) lets a token keep be compared with the trigger; without
    it the config's or the default window is used.
    """
    if not 0 < fraction < 1:
        raise ConfigError(f"stress fraction must be between 0 and 1 (exclusive), got {fraction}", key="stress")
    window = window_tokens or base.window_tokens()
    trigger = ContextSize(type="fraction", value=fraction)
    summ = base.summarization
    trunc = base.filesystem.truncate_args
    return base.model_copy(update={
        "summarization": summ.model_copy(update={
            "enabled": True, "trigger": (trigger,), "keep": _keep(summ.keep, fraction, window)}),
        "filesystem": base.filesystem.model_copy(update={
            "truncate_args": trunc.model_copy(update={"trigger": trigger, "keep": _keep(trunc.keep, fraction, window)})}),
    })


def _keep(keep: ContextSize, fraction: float, window: int) -> ContextSize:
    """The keep, or a fifth of the trigger when the keep would swallow half the trigger or more."""
    if keep.type == "messages":
        return keep
    kept_fraction = float(keep.value) if keep.type == "fraction" else int(keep.value) / window
    if kept_fraction < fraction / 2:
        return keep
    return ContextSize(type="fraction", value=round(fraction / 5, 4))
