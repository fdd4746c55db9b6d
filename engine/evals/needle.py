"""Needle retention: after each compaction, is a planted fact still in the view, in a summary,
recoverable from the virtual filesystem, or lost?

Classes, checked in this order at every step (a needle is a literal string, matched case-insensitively):
- `in_view`: in a view message that is not a summary (the system prompt counts: memory lives there);
- `in_summary`: in a summary message of the view;
- `absent`: not in the thread yet (no message before this step's model call contains it, and no
  earlier view showed it: memory can bring a fact that no message holds);
- `recoverable`: in a file of the run's virtual filesystem written by this step (offloaded tool
  results, conversation-history files), found with the engine's own `VirtualFilesystem.grep`;
- `lost`: none of the above.

Score (docs/evals.md): the *checked steps* are the steps at and after the first compaction (every
step when the run never compacted). `score` is the fraction of checked steps, among those where at
least one needle is in the thread, at which every needle in the thread is `in_view` or `in_summary`;
`recovery_score` also accepts `recoverable`. Both are None when no needle ever enters the thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import BaseMessage

from engine.evals.compactions import Compaction, compactions, searchable_text
from engine.kinds import message_kind
from engine.run import Run
from engine.vfs import FileEntry, VirtualFilesystem

IN_VIEW, IN_SUMMARY, RECOVERABLE, LOST, ABSENT = "in_view", "in_summary", "recoverable", "lost", "absent"
CLASSES: tuple[str, ...] = (IN_VIEW, IN_SUMMARY, RECOVERABLE, LOST)
STEP_CLASSES: tuple[str, ...] = (ABSENT, *CLASSES)
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
    files: dict[str, list[str]] = field(default_factory=dict)  # needle -> VFS paths holding it

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
                if c != ABSENT:
                    out[c] += 1
        return out

    def at_compactions(self) -> list[dict[str, Any]]:
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


class _NeedleIndex:
    """Which needles each message contains, computed once per message object (views share them)."""

    def __init__(self, needles: Sequence[str]) -> None:
        self.lowered = [n.lower() for n in needles]
        self._masks: dict[int, tuple[BaseMessage, int, bool]] = {}

    def lookup(self, message: BaseMessage) -> tuple[BaseMessage, int, bool]:
        """(message, bitmask of the needles it contains, whether it is a summary)."""
        hit = self._masks.get(id(message))
        if hit is not None and hit[0] is message:
            return hit
        text = searchable_text(message).lower()
        m = 0
        for i, n in enumerate(self.lowered):
            if n in text:
                m |= 1 << i
        hit = (message, m, message_kind(message) == "summary")  # the message is kept so its id is never reused
        self._masks[id(message)] = hit
        return hit

    def mask(self, message: BaseMessage) -> int:
        return self.lookup(message)[1]


def needle_retention(run: Run, needles: Sequence[str] | None = None, *, max_auto: int = 3) -> NeedleReport:
    """Classify each needle at every step of `run`; needles default to `pick_needles(run.thread)`."""
    from engine.evals.facts import pick_needles

    auto = not needles
    picked = tuple(dict.fromkeys(n for n in (needles or pick_needles(run.thread, k=max_auto)) if n.strip()))
    index = _NeedleIndex(picked)
    introduced = _introduced(run, picked, index)
    files, written_at = _files_with_needles(run, picked)
    classes: dict[str, list[str]] = {n: [] for n in picked}
    for s in run.steps:
        view_mask = summary_mask = 0
        if s.system is not None:
            view_mask |= index.mask(s.system)
        lookup = index.lookup
        for m in s.view:
            _, mask, is_summary = lookup(m)
            if is_summary:
                summary_mask |= mask
            else:
                view_mask |= mask
        for i, n in enumerate(picked):
            bit = 1 << i
            first = introduced[n]
            if view_mask & bit or summary_mask & bit:
                c = IN_VIEW if view_mask & bit else IN_SUMMARY
                if first is None or s.index < first:  # a layer showed it first (e.g. memory in the prompt)
                    introduced[n] = s.index
            elif first is None or s.index < first:
                c = ABSENT
            elif any(written_at[p] <= s.index for p in files[n]):
                c = RECOVERABLE
            else:
                c = LOST
            classes[n].append(c)
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
        files=files,
    )


def _score(classes: dict[str, list[str]], needles: Sequence[str], steps: list[int], ok: frozenset[str]) -> float | None:
    counted = good = 0
    for s in steps:
        present = [classes[n][s] for n in needles if classes[n][s] != ABSENT]
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
        pos = first_msg.get(i)
        out[n] = None if pos is None else next((s.index for s in run.steps if s.message_index > pos), None)
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
    written_at = _written_at(run)
    return files, {p: written_at.get(p, 0) for ps in files.values() for p in ps}


def _written_at(run: Run) -> dict[str, int]:
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
