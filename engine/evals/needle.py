"""Needle retention: after each compaction, is a planted fact still in the view, in a summary,
recoverable from the virtual filesystem, or lost?

Classes, checked in this order at every step (a needle is a literal string, matched case-insensitively):
- `in_view`: in a view message that is not a summary (the system prompt counts: memory lives there);
- `in_summary`: in a summary message of the view;
- `absent`: not in the thread yet (no message before this step's model call contains it, and no
  earlier view showed it: memory can bring a fact that no message holds);
- `never`: no message of the thread and no view of the run ever holds it (a typo, a fact of another
  session): at every step, so it is not read as "not in the thread yet" for the whole session;
- `recoverable`: in a file of the run's virtual filesystem written by this step (offloaded tool
  results, conversation-history files), found with the engine's own `VirtualFilesystem.grep`;
- `lost`: none of the above.

Every number comes from one computation, the classes per needle and step of this run's own views:
the bands, the table after each compaction (`at_compactions`) and the scores read the same classes.

Score (docs/evals.md): the *checked steps* are the steps at and after the first compaction (every
step when the run never compacted). `score` is the fraction of checked steps, among those where at
least one needle is in the thread, at which every needle in the thread is `in_view` or `in_summary`;
`recovery_score` also accepts `recoverable`. Both are None when no needle ever enters the thread.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage

from engine.evals.compactions import Compaction, compactions, searchable_text
from engine.run.run import Run
from engine.thread.kinds import message_kind
from engine.thread.model import Thread
from engine.workspace.vfs import FileEntry, VirtualFilesystem

IN_VIEW, IN_SUMMARY, RECOVERABLE, LOST, ABSENT = "in_view", "in_summary", "recoverable", "lost", "absent"
NEVER = "never"
CLASSES: tuple[str, ...] = (IN_VIEW, IN_SUMMARY, RECOVERABLE, LOST)
STEP_CLASSES: tuple[str, ...] = (NEVER, ABSENT, *CLASSES)
NOT_IN_PLAY = frozenset({ABSENT, NEVER})
RETAINED: frozenset[str] = frozenset({IN_VIEW, IN_SUMMARY})


@dataclass
class NeedleReport:
    """Per needle and step, the retention class; per compaction, a snapshot; one score per run."""

    needles: tuple[str, ...]
    auto_picked: bool
    introduced: dict[str, int | None]  # first step whose model call can see the needle
    classes: dict[str, list[str]]  # needle -> class per step
    compactions: list[Compaction]
    checked_steps: list[int]
    score: float | None
    recovery_score: float | None
    # needle -> VFS paths holding it; searched only for needles that were ever out of view and summary
    files: dict[str, list[str]] = field(default_factory=dict)

    @property
    def steps(self) -> int:
        return len(next(iter(self.classes.values()), []))

    def at_step(self, step: int) -> dict[str, str]:
        return {n: self.classes[n][step] for n in self.needles}

    def counts(self) -> dict[str, int]:
        """How often each class occurs over checked steps and needles already in the thread."""
        out = dict.fromkeys(CLASSES, 0)
        for s in self.checked_steps:
            for n in self.needles:
                c = self.classes[n][s]
                if c not in NOT_IN_PLAY:
                    out[c] += 1
        return out

    def at_compactions(self) -> list[dict[str, Any]]:
        """The classes at the step right after each compaction (the same classes the bands show)."""
        return [{**c.to_dict(), "classes": self.at_step(c.step)} for c in self.compactions]

    def to_dict(self, *, per_step: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "needles": list(self.needles),
            "auto_picked": self.auto_picked,
            "introduced": self.introduced,
            "score": self.score,
            "recovery_score": self.recovery_score,
            "counts": self.counts(),
            "compactions": self.at_compactions(),
            "checked_steps": len(self.checked_steps),
            "files": self.files,
        }
        if per_step:
            out["classes"] = self.classes
        return out


Hit = tuple[BaseMessage, int, bool]  # (message, bitmask of the needles it holds, is it a summary)
# Per (thread, needles): the hits of the thread's own messages, shared by every run of that thread
# (a sweep worker replays one thread many times). Messages a run creates stay in the run's index.
_THREAD_HITS: dict[tuple[int, tuple[str, ...]], tuple[Thread, frozenset[int], dict[int, Hit]]] = {}
_MAX_THREAD_HITS = 4


class _NeedleIndex:
    """Which needles each message contains, computed once per message object (views share them)."""

    def __init__(self, needles: Sequence[str], thread: Thread | None = None) -> None:
        self.lowered = [n.lower() for n in needles]
        self._masks: dict[int, Hit] = {}
        self._thread_ids: frozenset[int] = frozenset()
        self._shared: dict[int, Hit] = {}
        if thread is not None:
            key = (id(thread), tuple(self.lowered))
            entry = _THREAD_HITS.get(key)
            if entry is None or entry[0] is not thread:
                if len(_THREAD_HITS) >= _MAX_THREAD_HITS:
                    _THREAD_HITS.pop(next(iter(_THREAD_HITS)))
                entry = _THREAD_HITS[key] = (thread, frozenset(id(m) for m in thread.messages), {})
            self._thread_ids, self._shared = entry[1], entry[2]

    def lookup(self, message: BaseMessage) -> Hit:
        key = id(message)
        hit = self._masks.get(key) or self._shared.get(key)
        if hit is not None and hit[0] is message:
            return hit
        text = searchable_text(message).lower()
        m = 0
        for i, n in enumerate(self.lowered):
            if n in text:
                m |= 1 << i
        hit = (message, m, message_kind(message) == "summary")  # the message is kept so its id is never reused
        (self._shared if key in self._thread_ids else self._masks)[key] = hit
        return hit

    def mask(self, message: BaseMessage) -> int:
        return self.lookup(message)[1]


def needle_retention(run: Run, needles: Sequence[str] | None = None, *, max_auto: int = 3) -> NeedleReport:
    """Classify each needle at every step of `run`; needles default to `pick_needles(run.thread)`."""
    from engine.evals.facts import pick_needles

    auto = not needles
    picked = tuple(dict.fromkeys(n for n in (needles or pick_needles(run.thread, k=max_auto)) if n.strip()))
    index = _NeedleIndex(picked, run.thread)
    introduced = _introduced(run, picked, index)
    classes: dict[str, list[str]] = {n: [] for n in picked}
    pending: list[tuple[str, int]] = []  # (needle, step) out of view and summary: recoverable or lost
    for step, view_mask, summary_mask in _step_masks(run, index):
        for i, n in enumerate(picked):
            bit = 1 << i
            first = introduced[n]
            if view_mask & bit or summary_mask & bit:
                c = IN_VIEW if view_mask & bit else IN_SUMMARY
                if first is None or step < first:  # a layer showed it first (e.g. memory in the prompt)
                    introduced[n] = step
            elif first is None or step < first:
                c = ABSENT
            else:
                c = LOST
                pending.append((n, step))
            classes[n].append(c)
    # the filesystem is searched only for needles that left the view (history files are large)
    files, written_at = _files_with_needles(run, list(dict.fromkeys(n for n, _ in pending)))
    for n, step in pending:
        if any(written_at[p] <= step for p in files[n]):
            classes[n][step] = RECOVERABLE
    for n in picked:  # in no message and no view, ever: not "not in the thread yet" but never in it
        if introduced[n] is None and all(c == ABSENT for c in classes[n]):
            classes[n] = [NEVER] * len(classes[n])
    comps = compactions(run)
    checked = list(range(comps[0].step, len(run.steps))) if comps else list(range(len(run.steps)))
    return NeedleReport(
        needles=picked,
        auto_picked=auto,
        introduced=introduced,
        classes=classes,
        compactions=comps,
        checked_steps=checked,
        score=_score(classes, picked, checked, RETAINED),
        recovery_score=_score(classes, picked, checked, RETAINED | {RECOVERABLE}),
        files={n: files.get(n, []) for n in picked},
    )


def _step_masks(run: Run, index: _NeedleIndex) -> list[tuple[int, int, int]]:
    """Per step: (step, needles in the view outside summaries, needles in summaries) as bitmasks."""
    lookup = index.lookup
    out: list[tuple[int, int, int]] = []
    prev: Sequence[BaseMessage] = ()
    body_mask = summary_mask = 0
    for s in run.steps:
        view = s.view
        if not (prev and len(view) >= len(prev) and all(map(operator.is_, prev, view))):
            body_mask = summary_mask = 0  # not an extension of the previous view: start over
            prev = ()
        for m in view[len(prev):]:  # most views only append to the previous one
            _, mask, is_summary = lookup(m)
            if is_summary:
                summary_mask |= mask
            else:
                body_mask |= mask
        prev = view
        system_mask = index.mask(s.system) if s.system is not None else 0
        out.append((s.index, body_mask | system_mask, summary_mask))
    return out


def _score(classes: dict[str, list[str]], needles: Sequence[str], steps: list[int], ok: frozenset[str]) -> float | None:
    counted = good = 0
    for s in steps:
        present = [classes[n][s] for n in needles if classes[n][s] not in NOT_IN_PLAY]
        if not present:
            continue
        counted += 1
        good += all(c in ok for c in present)
    return round(good / counted, 4) if counted else None


def _introduced(run: Run, needles: Sequence[str], index: _NeedleIndex) -> dict[str, int | None]:
    """For each needle, the first step whose model call comes after a thread message containing it."""
    first_msg: dict[int, int] = {}
    full = (1 << len(index.lowered)) - 1
    found = 0
    for pos, m in enumerate(run.thread.messages):
        mask = index.mask(m) & ~found
        if mask:
            for i in range(len(index.lowered)):
                if mask & (1 << i):
                    first_msg[i] = pos
            found |= mask
            if found == full:
                break
    if run.thread.system_prompt:
        for i, n in enumerate(index.lowered):
            if n in run.thread.system_prompt.lower():
                first_msg[i] = -1
    out: dict[str, int | None] = {}
    for i, n in enumerate(needles):
        first = first_msg.get(i)
        out[n] = None if first is None else next((s.index for s in run.steps if s.message_index > first), None)
    return out


def _files_with_needles(run: Run, needles: Sequence[str]) -> tuple[dict[str, list[str]], dict[str, int]]:
    """VFS paths holding each needle (case-insensitive, through the engine's grep) and when each was written."""
    wanted = [n.lower() for n in needles]
    holding = {}
    for e in run.files.entries():
        low = e.content.lower()
        if any(n in low for n in wanted):  # grep only the files that can match
            holding[e.path] = FileEntry(e.path, low, e.step, e.layer, e.source_id)
    lowered = VirtualFilesystem(holding)
    files = {n: sorted({hit["path"] for hit in lowered.grep(n.lower())}) for n in needles}
    written_at = files_written_at(run)
    return files, {p: written_at.get(p, 0) for ps in files.values() for p in ps}


def files_written_at(run: Run) -> dict[str, int]:
    """The step from which each file exists: the first event naming its path, else the entry's step."""
    first: dict[str, int] = {}
    paths = set(run.files.paths())
    for e in run.events:
        for v in e.payload.values():
            if isinstance(v, str) and v in paths and v not in first:
                first[v] = e.step
    for entry in run.files.entries():
        if entry.path not in first:
            first[entry.path] = entry.step if entry.step is not None else 0
    return first
