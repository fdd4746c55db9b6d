"""What each compaction of a run kept of the history it removed: its facts by class, kept or lost.

For a compaction that took effect at step c (engine.evals.compactions: recorded or simulated alike):

- the **removed history** is what the model saw in the request before it (step c−1's view) plus what
  the thread added before the compaction took effect (the last response, its tool results:
  `engine.cost.payback.history_before`), less every message step c's view still holds by id — unless the
  compaction's event names it among what it removed (`removed_ids`) and the view holds another version
  of it (Cline's trim rewrites old file reads in place): then its original is removed;
- **what the model sees after** is step c's view and its system prompt, in four parts a kept fact is
  found in, first match wins: `kept` (a message carried over), `summary` (a summary message),
  `reinjected` (a message new at step c that is not a summary: files Claude Code re-attaches, a todo
  list put back, what the source recorded after its cut), `system` (the system prompt, where memory
  lives); a lost fact is `recoverable` when a file the run's virtual filesystem holds by then states it
  (an offloaded result, Deep Agents' `/conversation_history/…`);
- the **facts** are engine.evals.fact_classes' classes, read from every removed message, plus the todos
  still open in the removed history's last todo-list call; each keeps the step that introduced it
  (an AI message's own step, a tool result's calling step, anything else the first step that saw it).

A compaction at step 0 has no request before it and is not measured. `survival(run)` is computed once
per run (kept in `run.derived`).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from engine.cost.payback import history_before, is_compaction
from engine.evals.actions import Action, action_of
from engine.evals.compactions import compactions, searchable_text
from engine.evals.fact_classes import CLASSES, Fact, FactIndex, Holder, facts_in_message, open_todos
from engine.evals.needle import files_written_at
from engine.run.run import Run, StepRecord
from engine.thread.events import Event
from engine.thread.kinds import message_kind
from engine.tokens.content import message_text

SURVIVAL_KEY = "survival"
WHERE: tuple[str, ...] = ("kept", "summary", "reinjected", "system")


@dataclass(frozen=True)
class FactRecord:
    """One fact of a compaction's removed history and what became of it."""

    cls: str
    value: str
    kept: bool
    where: str | None  # one of WHERE when kept
    recoverable: bool  # lost, but a file of the run's virtual filesystem states it
    step: int  # the step that introduced it
    message_id: str

    def to_dict(self) -> dict[str, Any]:
        return {"class": self.cls, "value": self.value, "kept": self.kept, "where": self.where,
                "recoverable": self.recoverable, "step": self.step, "message_id": self.message_id}


@dataclass
class CompactionHistory:
    """A compaction's removed history and the view after it (shared by survival and recovery)."""

    step: int
    source: str
    layer: str
    kind: str
    event: Event
    before: list[BaseMessage]  # the previous request's messages and what the thread added since
    removed: list[BaseMessage]
    after: StepRecord


@dataclass
class Survival:
    """One compaction's facts, kept or lost, and the rate per class."""

    step: int
    source: str
    layer: str
    kind: str
    removed_messages: int
    facts: list[FactRecord] = field(default_factory=list)

    def by_class(self) -> dict[str, dict[str, Any]]:
        return class_rates(self.facts)

    @property
    def kept(self) -> int:
        return sum(1 for f in self.facts if f.kept)

    @property
    def rate(self) -> float | None:
        return _rate(self.kept, len(self.facts))

    def lost(self, cls: str) -> list[FactRecord]:
        return [f for f in self.facts if f.cls == cls and not f.kept]

    def to_dict(self, *, facts: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {"step": self.step, "source": self.source, "layer": self.layer, "kind": self.kind,
                               "removed_messages": self.removed_messages, "facts_total": len(self.facts),
                               "facts_kept": self.kept, "rate": self.rate, "classes": self.by_class()}
        if facts:
            out["facts"] = [f.to_dict() for f in self.facts]
        return out


def _rate(kept: int, total: int) -> float | None:
    return round(kept / total, 4) if total else None


def class_rates(facts: Sequence[FactRecord]) -> dict[str, dict[str, Any]]:
    """Per class: total, kept, lost, rate (None without facts of that class)."""
    out: dict[str, dict[str, Any]] = {}
    for cls in CLASSES:
        total = sum(1 for f in facts if f.cls == cls)
        kept = sum(1 for f in facts if f.cls == cls and f.kept)
        out[cls] = {"total": total, "kept": kept, "lost": total - kept, "rate": _rate(kept, total)}
    return out


def run_survival_totals(items: Sequence[Survival]) -> dict[str, Any]:
    """Every compaction of a run pooled: per class and overall (the sweep's `survival`)."""
    facts = [f for s in items for f in s.facts]
    kept = sum(1 for f in facts if f.kept)
    return {"compactions": len(items), "facts_total": len(facts), "facts_kept": kept, "rate": _rate(kept, len(facts)),
            "classes": class_rates(facts)}


# -- the removed history -----------------------------------------------------------------------------
def compaction_histories(run: Run) -> list[CompactionHistory]:
    """Every measured compaction of the run, in step order (one per step; step 0 is not measured)."""
    out: list[CompactionHistory] = []
    seen: set[int] = set()
    for c in compactions(run):
        if c.step == 0 or c.step in seen or c.step >= len(run.steps):
            continue
        step = run.steps[c.step]
        event = next((e for e in step.events if is_compaction(e)), None)
        if event is None:
            continue
        seen.add(c.step)
        prev = run.steps[c.step - 1]
        before = _unique([*prev.view, *history_before(run, step, event)])
        after_ids = {m.id for m in step.view if m.id}
        after_objects = {id(m) for m in step.view}
        # what the compaction itself says it removed or rewrote in place (Cline's trim replaces old reads
        # under the same ids), and what the view no longer holds at all
        named = event.payload.get("removed_ids")
        rewritten = {str(x) for x in named} if isinstance(named, list) else set()
        removed = [m for m in before if (m.id and m.id in rewritten and id(m) not in after_objects)
                   or not ((m.id and m.id in after_ids) or id(m) in after_objects)]
        out.append(CompactionHistory(c.step, c.source, event.layer, event.kind, event, before, removed, step))
    return out


def _unique(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    seen: set[str] = set()
    out: list[BaseMessage] = []
    for m in messages:
        key = m.id or f"object:{id(m)}"
        if key not in seen:
            seen.add(key)
            out.append(m)
    return out


class _Introduced:
    """The step that introduced each message (see the module docstring), answered from the thread's order."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.position = {m.id: i for i, m in enumerate(run.thread.messages) if m.id}
        self.step_of_ai = {s.message_index: s.index for s in run.steps}
        self.indices = [s.message_index for s in run.steps]
        self.caller: dict[str, int] = {}
        self._made: dict[str, int] | None = None  # a layer-made message's id -> the first step whose view held it
        for i, m in enumerate(run.thread.messages):
            if isinstance(m, AIMessage):
                for tc in m.tool_calls:
                    if tc.get("id"):
                        self.caller[str(tc["id"])] = i

    def step(self, message: BaseMessage, upto: int) -> int:
        pos = self.position.get(message.id) if message.id else None
        if pos is not None:
            if isinstance(message, AIMessage) and pos in self.step_of_ai:
                return self.step_of_ai[pos]
            if isinstance(message, ToolMessage) and self.caller.get(message.tool_call_id) in self.step_of_ai:
                return self.step_of_ai[self.caller[message.tool_call_id]]
            k = bisect.bisect_right(self.indices, pos)
            if k < len(self.indices):
                return k
        if self._made is None:  # a message a layer made: the first view that held it (one pass over the views)
            self._made = {}
            for s in self.run.steps:
                for x in s.view:
                    if x.id and x.id not in self.position:
                        self._made.setdefault(x.id, s.index)
        first = self._made.get(message.id) if message.id else None
        return first if first is not None and first < upto else max(0, upto - 1)


_THREAD_ACTIONS: dict[int, tuple[Any, dict[str, Action], frozenset[int]]] = {}


def thread_actions(run: Run, extra: Sequence[BaseMessage] = ()) -> dict[str, Action]:
    """The action of every tool call of the thread (made once per thread) and of `extra` messages, by call id."""
    key = id(run.thread)
    entry = _THREAD_ACTIONS.get(key)
    if entry is None or entry[0] is not run.thread:
        if len(_THREAD_ACTIONS) >= _MAX_THREADS:
            _THREAD_ACTIONS.pop(next(iter(_THREAD_ACTIONS)))
        entry = _THREAD_ACTIONS[key] = (run.thread, _actions(run.thread.messages),
                                          frozenset(id(m) for m in run.thread.messages))
    made = [m for m in extra if id(m) not in entry[2]]  # messages a layer made (the thread's are known)
    return {**_actions(made), **entry[1]} if made else entry[1]


def _actions(messages: Sequence[BaseMessage]) -> dict[str, Action]:
    out: dict[str, Action] = {}
    for m in messages:
        if isinstance(m, AIMessage):
            for tc in m.tool_calls:
                if tc.get("id"):
                    out.setdefault(str(tc["id"]), action_of(tc))
    return out


# -- survival ------------------------------------------------------------------------------------------
def survival(run: Run, *, files: bool = True) -> list[Survival]:
    """Each compaction's facts, kept or lost (computed once per run). `files=False` leaves `recoverable` False
    without searching the virtual filesystem (a sweep, which counts only kept and lost, is spared the search
    of every offloaded file for every lost fact)."""
    hit = run.derived.get(SURVIVAL_KEY)
    if isinstance(hit, list):
        return hit
    light = run.derived.get(SURVIVAL_KEY + ":light")
    if not files and isinstance(light, list):
        return light
    histories = compaction_histories(run)
    introduced = _Introduced(run)
    calls = thread_actions(run, [m for h in histories for m in h.removed])
    memo = _thread_memo(run)
    out = [_survival(run, h, introduced, calls, memo, _Files(run) if files else None) for h in histories]
    run.derived[SURVIVAL_KEY if files else SURVIVAL_KEY + ":light"] = out
    return out


# The facts of each message, per thread: a sweep replays one thread at many points, and most messages the
# compactions remove or keep are the thread's own (a message's facts do not depend on the run).
_THREAD_FACTS: dict[int, tuple[Any, dict[int, tuple[BaseMessage, list[Fact]]]]] = {}
_MAX_THREADS = 4


def _thread_memo(run: Run) -> dict[int, tuple[BaseMessage, list[Fact]]]:
    key = id(run.thread)
    entry = _THREAD_FACTS.get(key)
    if entry is None or entry[0] is not run.thread:
        if len(_THREAD_FACTS) >= _MAX_THREADS:
            _THREAD_FACTS.pop(next(iter(_THREAD_FACTS)))
        entry = _THREAD_FACTS[key] = (run.thread, {})
    return entry[1]


def _facts_of(message: BaseMessage, calls: dict[str, Action], memo: dict[int, tuple[BaseMessage, list[Fact]]]) -> list[Fact]:
    hit = memo.get(id(message))
    if hit is None or hit[0] is not message:
        hit = memo[id(message)] = (message, facts_in_message(message, calls))
    return hit[1]


def removed_facts(history: CompactionHistory, calls: dict[str, Action],
                  memo: dict[int, tuple[BaseMessage, list[Fact]]] | None = None) -> list[tuple[Fact, BaseMessage]]:
    """The facts of a removed history, each once, with the message that first stated it (open todos last)."""
    memo = {} if memo is None else memo
    first: dict[Fact, BaseMessage] = {}
    todos: tuple[list[str], BaseMessage] | None = None
    for m in history.removed:
        for fact in _facts_of(m, calls, memo):
            first.setdefault(fact, m)
        if isinstance(m, AIMessage):
            for tc in m.tool_calls:
                items = open_todos(tc)
                if items is not None:
                    todos = (items, m)
    if todos is not None:
        for item in todos[0]:
            first.setdefault(Fact("decision", item), todos[1])
    return list(first.items())


def reinjected_holder(history: CompactionHistory) -> Holder:
    """The messages new at the compaction's step that are not a summary (what the agent re-attached), as text."""
    before_ids = {m.id for m in history.before if m.id}
    before_objects = {id(m) for m in history.before}
    return Holder([searchable_text(m) for m in history.after.view
                   if not ((m.id and m.id in before_ids) or id(m) in before_objects) and message_kind(m) != "summary"])


def view_holders(history: CompactionHistory, facts_of: Any = None) -> dict[str, Holder | FactIndex]:
    """The view after a compaction in its four parts (see the module docstring). The carried-over messages
    are asked for the facts they state themselves (`facts_of(message)`, default: extracted now); the
    summary, the re-injected messages and the system prompt are searched as text."""
    before_ids = {m.id for m in history.before if m.id}
    before_objects = {id(m) for m in history.before}
    parts: dict[str, list[str]] = {w: [] for w in WHERE}
    kept: list[Fact] = []
    for m in history.after.view:
        if (m.id and m.id in before_ids) or id(m) in before_objects:
            kept.extend(facts_of(m) if facts_of is not None else facts_in_message(m))
            continue
        parts["summary" if message_kind(m) == "summary" else "reinjected"].append(searchable_text(m))
    if history.after.system is not None:
        parts["system"].append(message_text(history.after.system))
    holders: dict[str, Holder | FactIndex] = {w: Holder(parts[w]) for w in WHERE if w != "kept"}
    return {"kept": FactIndex(kept), **holders}


def _survival(run: Run, history: CompactionHistory, introduced: _Introduced, calls: dict[str, Action],
              memo: dict[int, tuple[BaseMessage, list[Fact]]], files: _Files | None) -> Survival:
    holders = view_holders(history, lambda m: _facts_of(m, calls, memo))
    records: list[FactRecord] = []
    for fact, message in removed_facts(history, calls, memo):
        where = next((w for w in WHERE if holders[w].holds(fact)), None)
        recoverable = where is None and files is not None and files.holds(fact, history.step)
        records.append(FactRecord(fact.cls, fact.value, where is not None, where, recoverable,
                                  introduced.step(message, history.step), str(message.id or "")))
    records.sort(key=lambda f: (CLASSES.index(f.cls), f.step))
    return Survival(history.step, history.source, history.layer, history.kind, len(history.removed), records)


class _Files:
    """The run's virtual filesystem as Holders, one per file, read once (a history file renders its sections on
    every read), and the step from which each file exists (as the needle eval dates them)."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self._written: dict[str, int] | None = None
        self._holders: dict[str, Holder] = {}
        self._all = Holder([])

    def holds(self, fact: Fact, step: int) -> bool:
        if self._written is None:
            self._written = files_written_at(self.run)
            self._all = Holder([e.content for e in self.run.files.entries()])
        if not self._all.holds(fact):  # in no file at all (most lost facts): one search, not one per file
            return False
        for entry in self.run.files.entries():
            if self._written.get(entry.path, 0) > step:
                continue
            holder = self._holders.get(entry.path)
            if holder is None:
                holder = self._holders[entry.path] = Holder([entry.content])
            if holder.holds(fact):
                return True
        return False


__all__ = ["CompactionHistory", "FactRecord", "Survival", "WHERE", "class_rates", "compaction_histories",
           "reinjected_holder", "removed_facts", "run_survival_totals", "survival", "thread_actions", "view_holders"]
