"""A policy that thrashes: it compacts on call after call, because what is left after each compaction is
still past its own threshold.

Nothing in an agent's own code stops this in general (Gemini CLI is the exception we know of: after a
compression that did not shrink the history it stops compressing automatically, the
`hasFailedCompressionAttempt` latch in google-gemini/gemini-cli packages/core/src/core/client.ts), so the
replay runs such settings as the agent would and says so: a `warning` event at the first step of each
run of consecutive compactions, as a keep that meets its own trigger is flagged at step 0
(engine.config.setting_warnings). Issue 35 saw `gemini-cli` compact on 33 consecutive steps of a long
Claude Code session; `deerflow` summarizes on ten in a row (steps 41-50) of one in ../shared/traces.

Two compactions in a row can be the agent's normal work (a summary, then a new large tool result);
three or more is the threshold we call thrashing (MIN_STREAK).
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.run.run import StepRecord
from engine.run.whatif import COMPACTION_EVENTS
from engine.thread.events import Event

KIND = "thrashing"
MIN_STREAK = 3
# compactions the replay's own layers made; the source's recorded ones are what the agent did, not a policy
_OWN = frozenset(pair for pair in COMPACTION_EVENTS if pair[0] != "recorded")


def _compacting_layers(step: StepRecord) -> set[str]:
    return {e.layer for e in step.events if (e.layer, e.kind) in _OWN}


def compacting(step: StepRecord) -> bool:
    """Whether one of the replay's own layers compacted at `step`."""
    return any((e.layer, e.kind) in _OWN for e in step.events)


def flag_thrashing(steps: Sequence[StepRecord]) -> list[Event]:
    """Add one `thrashing` warning at the first step of every run of MIN_STREAK or more consecutive steps
    where the same layer compacted; returns them. Idempotent: earlier such warnings are replaced."""
    for step in steps:
        step.events[:] = [e for e in step.events if e.kind != KIND]
    added: list[Event] = []
    layers = sorted({layer for s in steps for layer in _compacting_layers(s)})
    for layer in layers:
        start = None
        for i in range(len(steps) + 1):
            on = i < len(steps) and layer in _compacting_layers(steps[i])
            if on and start is None:
                start = i
            if not on and start is not None:
                length = i - start
                if length >= MIN_STREAK:
                    first, last = steps[start].index, steps[i - 1].index
                    event = Event(layer, KIND, first, severity="warning", message=(
                        f"{layer} compacted on {length} consecutive steps ({first}-{last}): what is left after "
                        "each compaction is still past its threshold, so every call compacts again (and pays for "
                        "another summary). Raise the threshold, or keep less."),
                        payload={"first_step": first, "last_step": last, "steps": length})
                    steps[start].events.append(event)
                    added.append(event)
                start = None
    return added


__all__ = ["KIND", "MIN_STREAK", "flag_thrashing"]
