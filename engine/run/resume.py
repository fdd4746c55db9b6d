"""A re-run that replays only what it changes: from the last checkpoint before the new settings act, or
before the first message of the thread that is new.

`replay(thread, config, previous=run)` (engine/run/replay.py) asks `resumed_run` first. A run keeps
checkpoints at the start of every 64th step's window and of its last step's (engine/run/driver.py),
each the replay's whole state in O(1) (engine/layers/checkpoint.py). The new run starts from the
latest one that is still true for it:

- its step is at or before `first_change(previous, config, layers)`: the first step where a layer of
  the new config can act otherwise than in `previous` (a changed trigger: where its decision differs,
  from what the layers recorded at each check, engine/layers/checks.py; a changed keep: the first
  summary; anything the layers cannot bound: step 0, a full replay);
- its message index is at or before the first message of `thread` that `previous.thread` did not
  hold as the same object (a followed session that grew, or whose last reply was rewritten).

The steps before it are `previous`'s records, shared (they are read-only), but for step 0's setting
warnings, which are the new config's. The result is the Run a full replay would make, byte for byte
(tests/run/test_resume.py checks it over every shared trace and preset and a grid of edits).
"""

from __future__ import annotations

import dataclasses
import itertools
import operator
from collections.abc import Callable, Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import ToolMessage

from engine.config.schema import EngineConfig
from engine.config.setting_warnings import KIND as SETTINGS_WARNING
from engine.layers import checkpoint as layer_state
from engine.layers.checkpoint import CheckpointError
from engine.layers.checks import NEVER, HistoryRead, changed_fields
from engine.run import thrash
from engine.run.driver import Checkpoint
from engine.run.run import Run, StepRecord
from engine.thread.decisions import Decision
from engine.thread.events import Event
from engine.thread.model import Thread

# Config sections the replay does not read: a change there changes nothing before the end.
_NOT_REPLAYED = frozenset({"cost", "preset", "version"})
# Sections whose changes no layer rule bounds: the run is replayed from the start.
_EVERYWHERE = frozenset({"model", "tokens", "order", "recorded", "input_context", "middleware"})
# Fields of a layer's section that another layer reads too (its change is not that layer's alone).
_READ_ELSEWHERE = {"subagents": frozenset({"task_tool_names"})}  # the input context's tool prompts


def first_change(previous: Run, config: EngineConfig, layers: Sequence[AgentMiddleware]) -> int:
    """The first step at which a replay of `previous.thread` with `config` (whose layers are `layers`,
    fresh) can differ from `previous`: 0 for a full replay, NEVER when no step changes."""
    old = previous.config
    if old == config:
        return NEVER
    names = tuple(getattr(m, "layer", type(m).__name__) for m in layers)
    if names != previous.layer_names:
        return 0
    by_name = {getattr(m, "layer", None): m for m in layers}
    first = NEVER
    for section in sorted(changed_fields(old, config) - _NOT_REPLAYED):
        if section in _EVERYWHERE:
            return 0
        elsewhere = _READ_ELSEWHERE.get(section, frozenset())
        if elsewhere & changed_fields(getattr(old, section), getattr(config, section)):
            return 0
        layer = by_name.get(section)
        if layer is None:  # a layer that does not run: only its warnings read it (made anew at step 0)
            continue
        first = min(first, layer.first_change(old, config, previous))  # type: ignore[attr-defined]
        if first <= 0:
            return 0
    return first


def changed_message(old: Thread, new: Thread, hint: int | None = None) -> int | None:
    """The index of the first message of `new` that is not `old`'s (len(old) when `new` only grew, NEVER
    when they are the same thread), or None when the threads differ in what the replay reads besides
    the messages (then nothing of `old`'s run can be kept).

    `hint`: the first message the caller changed (a session follower knows what its parse rebuilt:
    messages, their recorded usage and times); the recorded data of the messages before it is then
    not compared again, which would cost O(thread) per appended line."""
    if new is old:
        return NEVER
    if (new.thread_id, new.source_format, new.model, new.max_input_tokens, new.system_prompt) != \
            (old.thread_id, old.source_format, old.model, old.max_input_tokens, old.system_prompt) \
            or new.tools != old.tools or new.todos != old.todos or new.extra != old.extra:
        return None
    a, b = old.messages, new.messages
    n = min(len(a), len(b))
    if hint is not None:
        # the follower's word (it rebuilt nothing before `hint`), checked at its ends: comparing every
        # message would touch each one (their reference counts), O(thread) per appended line
        first = max(0, min(hint, n))
        if first and (a[first - 1] is not b[first - 1] or a[0] is not b[0]):
            return None
    else:
        # the same objects, compared at C speed (identity first; an equal copy counts as the same
        # message: the replay reads what a message holds; a calibrated count keyed by the object is
        # checked apart)
        same = a == b[:n] if len(a) == n else a[:n] == b
        first = n if same else next(i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x is not y and x != y)
        # what the source recorded about the messages before it must be the same
        first = min(first, _first_recorded_change(old, new, a, first))
    if old.subagents is not new.subagents:
        for call_id, sub in old.subagents.items():
            if new.subagents.get(call_id) is not sub:
                return None
    return first if _same_records(old, new, first) else None


def _first_recorded_change(old: Thread, new: Thread, messages: Sequence[Any], first: int) -> int:
    """The first of `messages[:first]` whose recorded usage or time is not the same in `new` (`first` when
    none): one pass over the recorded entries (few change: a reply's usage streamed in), not the messages."""
    changed: set[str] = set()
    for mine, theirs, same in ((old.usage, new.usage, operator.is_), (old.timestamps, new.timestamps, operator.eq)):
        if mine is theirs:
            continue
        get = theirs.get
        changed.update(k for k, v in mine.items() if not same(get(k), v))
        if len(theirs) != len(mine):  # an entry added for an old message (its usage arrived later)
            changed.update(k for k in theirs if k not in mine)
    changed -= {m.id or "" for m in new.messages[first:]}  # the new messages' own entries
    best = first
    for i in range(first - 1, -1, -1):  # from the end: a changed entry is a recent reply's
        if not changed:
            break
        key = messages[i].id or ""
        if key in changed:
            best = i
            changed.discard(key)
    return best


def _same_records(old: Thread, new: Thread, first: int) -> bool:
    """Recorded compactions and edits before message `first` are the same objects in both threads."""
    for a, b in ((old.compactions, new.compactions), (old.edits, new.edits)):
        kept_a = [r for r in a if r.index <= first]
        kept_b = [r for r in b if r.index <= first]
        if len(kept_a) != len(kept_b) or not all(map(operator.is_, kept_a, kept_b)):
            return False
    return True


def calibration_agrees(old: Any, new: Any, messages: Sequence[Any], end: int) -> bool:
    """The calibration of the grown thread gives `messages[:end]` what the old one did, and the calls before
    the same agent prompt (engine.recorded.calibration: a fit over the whole thread moves when a new call
    moves it, and then every count changes: the run is replayed from the start)."""
    if old is None or new is None:
        return old is new
    if old is new:
        return True
    if (old.fit.ratio != new.fit.ratio or old.prompt_tokens != new.prompt_tokens
            or old.first_turn_tokens != new.first_turn_tokens
            or new.prompt_schedule[:len(old.prompt_schedule)] != old.prompt_schedule
            or old.subagent_prompt_tokens != new.subagent_prompt_tokens
            or {k: c.fit.ratio for k, c in old.subagents.items()} != {k: c.fit.ratio for k, c in new.subagents.items()}):
        return False
    old_values, new_values = old.values.get, new.values.get
    old_totals, new_totals = old.totals.get, new.totals.get
    return all(old_totals(id(m)) == new_totals(id(m)) and old_values(id(m)) == new_values(id(m))
               for m in itertools.islice(messages, end))

def pick_checkpoint(previous: Run, step: int, index: int) -> Checkpoint | None:
    """The latest checkpoint of `previous` at or before `step` and message `index`."""
    best = None
    for cp in previous.own_checkpoints():
        if cp.step <= step and cp.index <= index and (best is None or cp.step > best.step):
            best = cp
    return best


def step_zero_events(record: StepRecord, warnings: list[Event]) -> StepRecord:
    """Step 0's record with this run's setting warnings in place of the run's it came from (they are its
    first events: emitted before the loop); the rest is the same."""
    events = record.events
    n = next((i for i, e in enumerate(events) if e.kind != SETTINGS_WARNING), len(events))
    if [(e.layer, e.kind, e.message, e.payload) for e in events[:n]] == \
            [(e.layer, e.kind, e.message, e.payload) for e in warnings]:
        return record
    return dataclasses.replace(record, events=[*warnings, *events[n:]])


def answered_agrees(cp: Checkpoint, thread: Thread) -> bool:
    """A checkpoint that read every recorded result of its thread read the same ones in `thread`."""
    if cp.answered is None:
        return True
    source, n = cp.answered
    return set(itertools.islice(source, n)) == {t.tool_call_id for t in thread.messages if isinstance(t, ToolMessage)}


def same_sections(config: EngineConfig, other: Any, layers: Sequence[AgentMiddleware]) -> list[bool]:
    """Per layer: whether its config section is the same in `config` and `other` (its memos carry over)."""
    out = []
    for m in layers:
        name = getattr(m, "layer", None)
        section = getattr(config, name, None) if isinstance(name, str) else None
        out.append(other is not None and section is not None and isinstance(name, str)
                   and section == getattr(other, name, None) and config.model == other.model
                   and config.tokens == other.tokens)
    return out


def decisions_before(cp: Checkpoint, layers: Sequence[AgentMiddleware], same_settings: Sequence[bool],
                     old_layers: Callable[[], Sequence[Any]]) -> list[Decision]:
    """The decision records of the steps before `cp` as the new config's layers (`layers`, restored at `cp`)
    record them: the checkpoint's own where a layer's settings are the same, else each one made again
    from the measures its layer kept (`decision_for`) with the new threshold, keep and labels. The
    verdict is the same (no step before the first change decides otherwise), and so is an amendment
    the layer made after deciding (a fired trigger with nothing to cut): it is carried over when the
    old config's layer (`old_layers()`, fresh) gives something else than the record. Raises
    CheckpointError when a record cannot be made again (then the run is replayed from the start)."""
    if cp.decisions is None:
        raise CheckpointError("the checkpoint kept no decisions")
    source, n, _ = cp.decisions
    kept = source[:n]
    changed = {getattr(m, "layer", None): i for i, (m, same) in enumerate(zip(layers, same_settings, strict=True))
               if not same}
    if not changed:
        return kept
    names = list(map(_LAYER, kept))  # C-speed passes: a resume relabels up to every step before it
    olds: Sequence[Any] | None = None  # the old config's layers (ours: each has decisions_for when it decides)
    for name, i in changed.items():
        positions = list(itertools.compress(itertools.count(), map(name.__eq__, names)))
        if not positions:
            continue
        layer = layers[i]
        checks = getattr(layer, "checks", None)
        decide = getattr(layer, "decisions_for", None)
        if decide is None or not isinstance(checks, list) or len(checks) != len(positions):
            raise CheckpointError(f"{name}: its decisions cannot be made again")
        recorded = list(map(kept.__getitem__, positions))
        if list(map(_STEP, recorded)) != list(map(_STEP, checks)):
            raise CheckpointError(f"{name}: decisions and checks at different steps")
        try:
            made = decide(checks)
            # only a verdict acted on is amended (engine/thread/decisions.py `amend`): carried over when the
            # old config's layer does not give the record either
            for j in itertools.compress(itertools.count(), map(_FIRED, checks)):
                if olds is None:
                    olds = old_layers()
                old = olds[i] if i < len(olds) and getattr(olds[i], "layer", None) == name else None
                if old is None:
                    raise CheckpointError(f"{name}: no layer of the old config")
                was, record = old.decisions_for([checks[j]])[0], recorded[j]
                if was != record:
                    if dataclasses.replace(was, fired=record.fired, reason=record.reason) != record:
                        raise CheckpointError(f"{name}: a decision the old config does not give")
                    made[j] = dataclasses.replace(made[j], fired=record.fired, reason=record.reason)
        except HistoryRead as exc:
            raise CheckpointError(f"{name}: its policy measures the history") from exc
        if len(positions) == len(kept):
            kept = made
        else:
            for k, d in zip(positions, made, strict=True):
                kept[k] = d
    return kept


_LAYER, _STEP, _FIRED = operator.attrgetter("layer"), operator.attrgetter("step"), operator.attrgetter("fired")


def reflag_thrashing(steps: list[StepRecord], start: int) -> None:
    """`flag_thrashing` (engine/run/thrash.py) for a run whose records before `start` are another run's
    (shared, never changed): a run of consecutive compactions reaching `start` is flagged again from its
    first step, whose record is copied first; runs that ended before are the same in both runs."""
    s = start
    while s > 0 and thrash.compacting(steps[s - 1]):
        s -= 1
    for i in range(s, min(start, len(steps))):
        steps[i] = dataclasses.replace(steps[i], events=list(steps[i].events))
    thrash.flag_thrashing(steps[s:])


def checkpointable(layers: Sequence[AgentMiddleware]) -> bool:
    return all(layer_state.checkpointable(m) for m in layers)


__all__ = [
    "NEVER",
    "answered_agrees",
    "calibration_agrees",
    "changed_message",
    "checkpointable",
    "decisions_before",
    "first_change",
    "pick_checkpoint",
    "reflag_thrashing",
    "same_sections",
    "step_zero_events",
]
