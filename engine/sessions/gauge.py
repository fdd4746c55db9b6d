"""The live budget of a session: the context now, the agent's own compaction threshold, calls left.

- **Context now**: the last model call's request as the provider recorded it (input + cache writes +
  cache reads, Claude Code's rule, engine.thread.model.RecordedUsage), else the last step's view in our
  count (a Run of the thread).
- **Threshold**: the agent's own rule, from the policy the engine replays it with (engine/policies: Claude
  Code's autocompact at `window − min(max output, 20k) − 13k`, Codex's 90 % of the model window, Gemini
  CLI's 50 %, Cline's `maxAllowedSize`, OpenHands counts events) with the agent's defaults; for any other
  thread, the config's first token or fraction trigger.
- **Calls left**: at the recent growth rate — the median of the request's growth over the last
  `GROWTH_CALLS` calls since the last compaction (a compaction resets the history, so growth before it
  says nothing) — how many more calls until the threshold: `ceil((threshold − now) / growth)`; none when
  the context is not growing.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass
from typing import Any

from engine.config.presets import AGENT_PRESET_OF_FORMAT
from engine.config.schema import EngineConfig
from engine.config.sections import CompactionConfig
from engine.thread.model import Thread
from engine.tokens.windows import max_output_tokens

GROWTH_CALLS = 5
DEFAULT_WINDOW = 200_000


@dataclass(frozen=True)
class Gauge:
    """What a live gauge shows (JSON twin: `to_dict`)."""

    context_tokens: int | None
    source: str  # "recorded" (the provider's count) or "counted" (ours) or "none"
    window_tokens: int
    threshold_tokens: int | None
    threshold_label: str
    growth_per_call: float | None
    calls_left: int | None
    steps: int
    compactions: int

    @property
    def fraction(self) -> float | None:
        return None if self.context_tokens is None or not self.window_tokens else self.context_tokens / self.window_tokens

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["fraction_of_window"] = None if self.fraction is None else round(self.fraction, 4)
        return d


def _recorded_contexts(thread: Thread) -> list[tuple[int, int]]:
    """(message index, recorded request size) of every call the source recorded, in order."""
    out = []
    for i, m in enumerate(thread.messages):
        usage = thread.usage.get(m.id) if m.id is not None else None
        if usage is not None and usage.context_tokens is not None:
            out.append((i, usage.context_tokens))
    return out


def _agent_threshold(thread: Thread, window: int, config: EngineConfig | None) -> tuple[int | None, str]:
    from engine.policies import get_policy

    name = AGENT_PRESET_OF_FORMAT.get(thread.source_format or "")
    if name is not None:
        policy = get_policy(name)
        tokens = policy.threshold_tokens(window, max_output_tokens(config, thread.model), CompactionConfig(),
                                         thread=thread)
        if tokens is None:
            return None, f"{name} does not compact on a token level"
        return tokens, f"{name} compacts at {tokens:,} tokens"
    if config is not None:
        from engine.views.timeline import threshold_lines

        for line in threshold_lines(config, window, thread.model, thread):
            if line.role == "trigger" and line.tokens is not None:
                return line.tokens, line.label
    return None, "no token threshold"


def gauge(thread: Thread, *, run: Any = None, config: EngineConfig | None = None) -> Gauge:
    """The gauge of `thread` as it is now (`run`: a Run of it, for the counted context of a thread that
    recorded no usage; `config`: for a thread of no known agent, whose trigger is the threshold)."""
    window = thread.max_input_tokens or (config.window_tokens(None) if config is not None else DEFAULT_WINDOW)
    recorded = _recorded_contexts(thread)
    last_cut = max((c.index for c in thread.compactions), default=-1)
    if recorded:
        now, source = recorded[-1][1], "recorded"
        sizes = [size for index, size in recorded if index >= last_cut]
    elif run is not None and getattr(run, "steps", None):
        now, source = run.steps[-1].view_tokens, "counted"
        sizes = [s.view_tokens for s in run.steps if s.message_index >= last_cut]
    else:
        now, source, sizes = None, "none", []
    recent = sizes[-(GROWTH_CALLS + 1):]
    growths = [b - a for a, b in zip(recent, recent[1:], strict=False)]
    growth = statistics.median(growths) if growths else None
    threshold, label = _agent_threshold(thread, window, config)
    calls_left: int | None = None
    if threshold is not None and now is not None:
        if now >= threshold:
            calls_left = 0
        elif growth is not None and growth > 0:
            calls_left = math.ceil((threshold - now) / growth)
    return Gauge(context_tokens=now, source=source, window_tokens=window, threshold_tokens=threshold,
                 threshold_label=label, growth_per_call=None if growth is None else float(growth),
                 calls_left=calls_left, steps=len(thread.ai_indices()), compactions=len(thread.compactions))


def bar(g: Gauge, width: int = 50) -> str:
    """A one-line text gauge: `[#########|.....^.....]` (# used, ^ the threshold)."""
    if g.context_tokens is None or not g.window_tokens:
        return "[" + "?" * width + "]"
    used = min(width, round(width * g.context_tokens / g.window_tokens))
    cells = ["#"] * used + ["."] * (width - used)
    if g.threshold_tokens is not None:
        at = min(width - 1, max(0, round(width * g.threshold_tokens / g.window_tokens) - 1))
        cells[at] = "^" if cells[at] == "." else "!"
    return "[" + "".join(cells) + "]"


__all__ = ["GROWTH_CALLS", "Gauge", "bar", "gauge"]
