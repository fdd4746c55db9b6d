"""Stress mode: every trigger at a small fraction of the window, to multiply compaction events.

The references force compaction at 10-25 % of the window instead of 85 % so that one run yields
many summaries to study (shared/seeds, reference/deepagents.md §11). One number sets the
summarization trigger, the filesystem layer's truncate_args trigger and, when a coding agent's
compaction policy runs, its compaction trigger; keeps that would leave nothing to compact (at or
above half the new trigger) shrink to a fifth of it.

`stress_plan` says what stress mode replays for a run: its own settings with their triggers lowered,
or, for the as-recorded run (which replays the agent's recorded compactions and has no trigger to
lower), the preset of the agent that recorded the thread with its trigger lowered; or nothing, with
the reason, when no trigger can be lowered at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.base.errors import ConfigError
from engine.config.presets import AGENT_PRESET_OF_FORMAT
from engine.config.schema import EngineConfig, preset
from engine.config.sizes import ContextSize

STRESS_RANGE: tuple[float, float] = (0.10, 0.25)  # what the dashboard offers
DEFAULT_STRESS_FRACTION = 0.25

# A policy that refuses a trigger below its own floor: Anthropic's compaction trigger is at least
# 50,000 input tokens (engine/policies/server_compaction.py ANTHROPIC_MIN_TRIGGER, Anthropic's docs).
MIN_COMPACTION_TRIGGER_TOKENS: dict[str, int] = {"anthropic-compaction": 50_000}


@dataclass(frozen=True)
class StressPlan:
    """What stress mode replays as run B (JSON twin: `to_dict`).

    `config` None: no trigger can be lowered, `reason` says why. `base` names the settings B starts
    from; `lowered` lists each trigger B sets, in words with its tokens."""

    fraction: float
    window_tokens: int
    config: EngineConfig | None
    base: str
    lowered: tuple[str, ...] = ()
    reason: str = ""
    agent_preset: str | None = None  # set when B replaces the recorded compactions by this preset

    def describe(self) -> str:
        """One sentence: what B is (or why there is no B)."""
        if self.config is None:
            return self.reason
        return (f"stress mode at {self.fraction:.0%} of the {self.window_tokens:,}-token window on {self.base}: "
                f"{_join(self.lowered)}")

    def to_dict(self) -> dict[str, Any]:
        return {"fraction": self.fraction, "window_tokens": self.window_tokens, "base": self.base,
                "agent_preset": self.agent_preset, "lowered": list(self.lowered), "reason": self.reason or None,
                "config": None if self.config is None else self.config.to_dict()}


def stress_config(base: EngineConfig, fraction: float = DEFAULT_STRESS_FRACTION,
                  window_tokens: int | None = None) -> EngineConfig:
    """`base` with every trigger at `fraction` of the window (summarization enabled).

    `window_tokens` (the run's window) lets a token keep be compared with the trigger; without
    it the config's or the default window is used. A coding agent's compaction, when it runs, gets
    its trigger as the tokens that fraction is (each policy reads a fraction of its own window:
    Claude Code's effective window, Codex's model window), at least the policy's floor.
    """
    if not 0 < fraction < 1:
        raise ConfigError(f"stress fraction must be between 0 and 1 (exclusive), got {fraction}", key="stress")
    window = window_tokens or base.window_tokens()
    trigger = ContextSize(type="fraction", value=fraction)
    summ = base.summarization
    trunc = base.filesystem.truncate_args
    update: dict[str, Any] = {
        "summarization": summ.model_copy(update={
            "enabled": True, "trigger": (trigger,), "keep": _keep(summ.keep, fraction, window)}),
        "filesystem": base.filesystem.model_copy(update={
            "truncate_args": trunc.model_copy(update={"trigger": trigger, "keep": _keep(trunc.keep, fraction, window)})}),
    }
    if _runs_compaction(base):
        update["compaction"] = base.compaction.model_copy(update={
            "trigger": ContextSize(type="tokens", value=_compaction_tokens(base, fraction, window))})
    return base.model_copy(update=update)


def stress_plan(config: EngineConfig, thread: Any, fraction: float = DEFAULT_STRESS_FRACTION,
                window_tokens: int | None = None) -> StressPlan:
    """What stress mode replays for a run of `thread` under `config` (see the module docstring)."""
    if not 0 < fraction < 1:
        raise ConfigError(f"stress fraction must be between 0 and 1 (exclusive), got {fraction}", key="stress")
    window = window_tokens or config.window_tokens(getattr(thread, "max_input_tokens", None))
    name = config.preset or "custom"
    if _lowerable(config):
        stressed = stress_config(config, fraction, window)
        return StressPlan(fraction, window, stressed, f"the current settings ({name})", _lowered(stressed, window))
    source = str(getattr(thread, "source_format", "") or "")
    replays_recorded = "recorded" in config.layer_sequence() and config.recorded.enabled
    agent = AGENT_PRESET_OF_FORMAT.get(source) if replays_recorded else None
    if agent is None:
        why = (f"the current settings ({name}) replay what the {source or 'source'} agent recorded (its own "
               "compactions, if any), and no agent preset here models that agent's policy" if replays_recorded
               else f"the current settings ({name}) run no summarization, argument truncation or agent compaction")
        return StressPlan(fraction, window, None, f"the current settings ({name})", reason=(
            f"Stress mode has no trigger to lower: {why}. Pick a preset with a trigger in the sidebar "
            "(e.g. deepagents or stress) to stress it on this thread."))
    # what the user set beyond the layers (model, counting, prices, their middleware) carries over
    base = preset(agent).model_copy(update={"model": config.model, "tokens": config.tokens, "cost": config.cost,
                                            "middleware": config.middleware})
    stressed = stress_config(base, fraction, window)
    return StressPlan(fraction, window, stressed,
                      f"the {agent} preset (the compaction policy of the agent that recorded this thread), "
                      "replayed instead of its recorded compactions",
                      _lowered(stressed, window), agent_preset=agent)


def _runs_compaction(config: EngineConfig) -> bool:
    return "compaction" in config.layer_sequence() and config.compaction.enabled


def _lowerable(config: EngineConfig) -> bool:
    """Whether a layer whose trigger stress mode sets runs under `config`."""
    layers = config.layer_sequence()
    return ("summarization" in layers or _runs_compaction(config)
            or ("filesystem" in layers and config.filesystem.enabled and config.filesystem.truncate_args.enabled))


def _compaction_tokens(config: EngineConfig, fraction: float, window: int) -> int:
    return max(int(window * fraction), MIN_COMPACTION_TRIGGER_TOKENS.get(config.compaction.policy, 1))


def _lowered(stressed: EngineConfig, window: int) -> tuple[str, ...]:
    """Each trigger of `stressed` that stress mode set and a running layer reads, in words."""
    layers = stressed.layer_sequence()
    out: list[str] = []
    if "summarization" in layers:
        [trigger] = stressed.summarization.trigger or (None,)
        if trigger is not None:
            out.append(f"the summarization trigger at {_tokens(trigger, window)}")
    fs = stressed.filesystem
    if "filesystem" in layers and fs.enabled and fs.truncate_args.enabled and fs.truncate_args.trigger is not None:
        out.append(f"the argument-truncation trigger at {_tokens(fs.truncate_args.trigger, window)}")
    if _runs_compaction(stressed) and stressed.compaction.trigger is not None:
        tokens = int(stressed.compaction.trigger.value)
        floor = " (its minimum)" if tokens == MIN_COMPACTION_TRIGGER_TOKENS.get(stressed.compaction.policy) else ""
        out.append(f"the {stressed.compaction.policy} compaction trigger at {tokens:,} tokens{floor}")
    return tuple(out)


def _tokens(size: Any, window: int) -> str:
    return f"{int(window * float(size.value)):,} tokens" if size.type == "fraction" else f"{size.value:,} {size.type}"


def _join(parts: tuple[str, ...]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _keep(keep: ContextSize, fraction: float, window: int) -> ContextSize:
    """The keep, or a fifth of the trigger when the keep would swallow half the trigger or more."""
    if keep.type == "messages":
        return keep
    kept_fraction = float(keep.value) if keep.type == "fraction" else int(keep.value) / window
    if kept_fraction < fraction / 2:
        return keep
    return ContextSize(type="fraction", value=round(fraction / 5, 4))
