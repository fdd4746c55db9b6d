"""What a compaction cost the agent afterwards: the calls that fetched again what it had removed.

After a compaction at step c the **horizon** runs to the run's next compaction (or the end). Every tool
call the responses of those steps make is an action (engine.evals.actions).

- **recorded** (the source agent's own compaction, on the as-recorded run — what really happened): a
  call *fetches again* what the removed history held when it reads a file the removed history read or
  wrote, and that nothing has written since the compaction; or when it repeats a search, a command, a
  web fetch or another call the removed history made, before anything was written since the
  compaction (after a write, a re-run is new information, not a re-fetch). Each target counts once.
  Its tokens are its result's; its dollars are the bill of the step that made it (the recorded bill where
  one was recorded), shared among the calls of that response, plus its result written to the prompt
  cache in the next request (Anthropic's write price; OpenAI's input price).
- **estimate** (a simulated compaction, labelled so; also computed beside a recorded one): the removed
  history's fetches (reads, searches, commands, web fetches) whose *result* the view after the
  compaction no longer holds — its tool result is removed or rewritten, and for a read no kept result
  read the same file and no re-injected message names it (a summary that names a file does not give
  its content) — and that a later call of the
  horizon needs (reads or edits the same file, repeats the command or the search). Each is one more
  call: its result tokens again, priced as that later step's request read from the cache, the original
  call's arguments as output, and the result written to the cache.
- **steps to the first new write or edit**: from c to the step whose response first writes or edits
  with a call the removed history did not make identically; `actions_before_first_edit` counts the
  calls before it. `fresh_start(run)` is the same from step 0 (a cold start, for comparison).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from engine.cost.bill import write_price
from engine.cost.prices import PER_MILLION, Price
from engine.cost.run_cost import RunCost, run_cost
from engine.evals.actions import COMMAND, FETCH, OTHER, READ, SEARCH, WRITE, Action, action_of, same_path
from engine.evals.fact_classes import Fact
from engine.evals.survival import CompactionHistory, compaction_histories, reinjected_holder
from engine.run.run import Run
from engine.tokens.content import tool_call_text

RECOVERY_KEY = "recovery"
FETCHES = frozenset({READ, SEARCH, COMMAND, FETCH, OTHER})


@dataclass(frozen=True)
class Refetch:
    """One call that fetched again (recorded), or would have to (estimate), what the compaction removed."""

    step: int  # the step whose response makes (or needs) the call
    tool: str
    kind: str
    target: str
    result_tokens: int
    dollars: float
    original_step: int | None  # the step whose call had fetched it before the compaction

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "tool": self.tool, "kind": self.kind, "target": self.target,
                "result_tokens": self.result_tokens, "dollars": round(self.dollars, 6),
                "original_step": self.original_step}


@dataclass
class Recovery:
    """One compaction's recovery cost (see the module docstring)."""

    step: int
    basis: str  # "recorded" or "estimate"
    horizon_end: int  # exclusive
    refetches: list[Refetch] = field(default_factory=list)
    first_edit_step: int | None = None
    actions_before_first_edit: int = 0
    priced: bool = True
    estimate: Recovery | None = None  # beside a recorded one: what the estimate says for the same compaction

    @property
    def calls(self) -> int:
        return len(self.refetches)

    @property
    def tokens(self) -> int:
        return sum(r.result_tokens for r in self.refetches)

    @property
    def dollars(self) -> float:
        return sum(r.dollars for r in self.refetches)

    @property
    def steps_to_first_edit(self) -> int | None:
        return None if self.first_edit_step is None else self.first_edit_step - self.step

    def by_kind(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.refetches:
            out[r.kind] = out.get(r.kind, 0) + 1
        return dict(sorted(out.items()))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "step": self.step, "basis": self.basis, "horizon_steps": self.horizon_end - self.step,
            "calls": self.calls, "by_kind": self.by_kind(), "tokens": self.tokens, "dollars": round(self.dollars, 6),
            "priced": self.priced, "first_edit_step": self.first_edit_step,
            "steps_to_first_edit": self.steps_to_first_edit, "actions_before_first_edit": self.actions_before_first_edit,
            "refetches": [r.to_dict() for r in self.refetches]}
        if self.estimate is not None:
            out["estimate"] = self.estimate.to_dict()
        return out


@dataclass(frozen=True)
class Start:
    """Steps and calls from a start (step 0, or a compaction) to the first new write or edit."""

    first_edit_step: int | None
    steps: int | None
    actions: int

    def to_dict(self) -> dict[str, Any]:
        return {"first_edit_step": self.first_edit_step, "steps_to_first_edit": self.steps,
                "actions_before_first_edit": self.actions}


def _calls(run: Run, k: int) -> list[dict[str, Any]]:
    response = run.steps[k].response
    return [dict(tc) for tc in response.tool_calls] if isinstance(response, AIMessage) else []


def first_edit(run: Run, start: int, end: int, known: frozenset[str] = frozenset()) -> Start:
    """The first write or edit from step `start` (before `end`) whose call is not in `known` (signatures)."""
    actions = 0
    for k in range(start, end):
        for tc in _calls(run, k):
            a = action_of(tc)
            if a.kind == WRITE and a.signature not in known:
                return Start(k, k - start, actions)
            actions += 1
    return Start(None, None, actions)


def fresh_start(run: Run) -> Start:
    """Steps and calls from the first step to the first write or edit (a cold start)."""
    return first_edit(run, 0, len(run.steps))


def recovery(run: Run) -> list[Recovery]:
    """Each compaction's recovery cost, computed once per run (kept in `run.derived`)."""
    hit = run.derived.get(RECOVERY_KEY)
    if isinstance(hit, list):
        return hit
    histories = compaction_histories(run)
    cost = run_cost(run, accounts=False)
    results = {m.tool_call_id: m for m in run.thread.messages if isinstance(m, ToolMessage)}
    steps = [h.step for h in histories]
    out: list[Recovery] = []
    for n, h in enumerate(histories):
        end = steps[n + 1] if n + 1 < len(steps) else len(run.steps)
        estimate = _estimate(run, h, end, cost, results)
        if h.source == "recorded":
            recorded = _recorded(run, h, end, cost, results)
            recorded.estimate = estimate
            out.append(recorded)
        else:
            out.append(estimate)
    run.derived[RECOVERY_KEY] = out
    return out


def _removed_calls(history: CompactionHistory) -> list[tuple[Action, AIMessage]]:
    """The calls whose result the compaction removed — their AI message removed, or their result removed or
    rewritten in place — as actions, each with the AI message that made it."""
    results = {m.tool_call_id for m in history.removed if isinstance(m, ToolMessage)}
    gone = {id(m) for m in history.removed}
    return [(action_of(tc), m) for m in history.before if isinstance(m, AIMessage) for tc in m.tool_calls
            if id(m) in gone or str(tc.get("id") or "") in results]


def _result_tokens(run: Run, results: dict[str, ToolMessage], call_id: str) -> int:
    message = results.get(call_id)
    return run.counter.count_message(message) if message is not None else 0


def _per_result_token(cost: RunCost) -> float:
    """Dollars per token of a result entering the next request (written to the cache, or uncached input)."""
    price = cost.price
    if price is None:
        return 0.0
    per_m = write_price(price, cost.rules.ttl) if cost.rules.kind == "anthropic" else price.input
    return per_m / PER_MILLION


def _step_bill(cost: RunCost, k: int) -> float:
    if k >= len(cost.steps):
        return 0.0
    s = cost.steps[k]
    return (s.recorded_bill or s.bill).total


def _original_step(run: Run, message: BaseMessage) -> int | None:
    index = {s.message_id: s.index for s in run.steps}
    return index.get(str(message.id)) if message.id else None


def _recorded(run: Run, h: CompactionHistory, end: int, cost: RunCost, results: dict[str, ToolMessage]) -> Recovery:
    removed = _removed_calls(h)
    read_paths = [(a.target, m) for a, m in removed if a.kind in (READ, WRITE) and a.target]
    keys = {a.key: m for a, m in removed if a.kind in (SEARCH, COMMAND, FETCH, OTHER)}
    signatures = frozenset(a.signature for a, _ in removed)
    written: list[str] = []
    counted: set[tuple[str, str]] = set()
    per_token = _per_result_token(cost)
    out: list[Refetch] = []
    for k in range(h.step, end):
        calls = _calls(run, k)
        share = _step_bill(cost, k) / len(calls) if calls else 0.0
        for tc in calls:
            a = action_of(tc)
            origin: AIMessage | None = None
            key = a.key
            if a.kind == READ and not any(same_path(a.target, w) for w in written):
                origin = next((m for p, m in reversed(read_paths) if same_path(a.target, p)), None)
                key = (READ, next((p for p, _ in read_paths if same_path(a.target, p)), a.target))
            elif a.kind in (SEARCH, COMMAND, FETCH, OTHER) and not written:
                origin = keys.get(a.key)
            if origin is not None and key not in counted:
                counted.add(key)
                tokens = _result_tokens(run, results, a.call_id)
                out.append(Refetch(k, a.tool, a.kind, a.target, tokens, share + tokens * per_token,
                                   _original_step(run, origin)))
            if a.kind == WRITE:
                written.append(a.target)
    start = first_edit(run, h.step, end, signatures)
    return Recovery(h.step, "recorded", end, out, start.first_edit_step, start.actions, cost.price is not None)


def _estimate(run: Run, h: CompactionHistory, end: int, cost: RunCost, results: dict[str, ToolMessage]) -> Recovery:
    removed = _removed_calls(h)
    before = {id(m) for m in h.before}
    kept_results = {m.tool_call_id for m in h.after.view if isinstance(m, ToolMessage) and id(m) in before}
    # a file another kept result read (Cline keeps the newest read of each file) is still held
    calls = {str(tc.get("id") or ""): tc for m in h.before if isinstance(m, AIMessage) for tc in m.tool_calls}
    kept_reads = [action_of(calls[c]).target for c in kept_results if c in calls and action_of(calls[c]).kind == READ]
    reinjected = reinjected_holder(h)
    lost = [(a, m) for a, m in removed if a.kind in FETCHES and a.target and a.call_id not in kept_results
            and not (a.kind == READ and (reinjected.holds(Fact("path", a.target))
                                         or any(same_path(a.target, p) for p in kept_reads)))]
    signatures = frozenset(a.signature for a, _ in removed)
    price = cost.price
    per_token = _per_result_token(cost)
    counted: set[tuple[str, str]] = set()
    out: list[Refetch] = []
    for k in range(h.step, end):
        for tc in _calls(run, k):
            later = action_of(tc)
            for a, m in reversed(lost):
                key = (a.kind, _canonical_target(a, lost))
                if key in counted or not _uses(later, a):
                    continue
                counted.add(key)
                tokens = _result_tokens(run, results, a.call_id)
                dollars = _extra_call(cost, k, price, _call_tokens(run, m, a), tokens, per_token)
                out.append(Refetch(k, a.tool, a.kind, a.target, tokens, dollars, _original_step(run, m)))
    start = first_edit(run, h.step, end, signatures)
    return Recovery(h.step, "estimate", end, out, start.first_edit_step, start.actions, price is not None)


def _canonical_target(action: Action, lost: Sequence[tuple[Action, AIMessage]]) -> str:
    """One name per file (its first spelling among the lost reads), so two spellings count once."""
    if action.kind != READ:
        return action.target
    return next((a.target for a, _ in lost if a.kind == READ and same_path(a.target, action.target)), action.target)


def _uses(later: Action, fetched: Action) -> bool:
    """A later call needs what `fetched` brought: the same file (read, written or edited), the same command or search."""
    if fetched.kind == READ:
        return later.kind in (READ, WRITE) and same_path(later.target, fetched.target)
    return later.key == fetched.key


def _call_tokens(run: Run, message: BaseMessage, action: Action) -> int:
    if not isinstance(message, AIMessage):
        return 0
    call = next((tc for tc in message.tool_calls if str(tc.get("id") or "") == action.call_id), None)
    return run.counter.count_text(tool_call_text(call)) if call is not None else 0


def _extra_call(cost: RunCost, k: int, price: Price | None, output_tokens: int, result_tokens: int,
                per_token: float) -> float:
    """One more call at step k's size, its prefix read from the cache, plus its result written to it."""
    if price is None or k >= len(cost.steps):
        return 0.0
    request = cost.steps[k].cache.total
    return (request * price.cache_read + output_tokens * price.output) / PER_MILLION + result_tokens * per_token


def run_recovery_totals(items: Sequence[Recovery]) -> dict[str, Any]:
    """Every compaction of a run: re-fetch calls, tokens and dollars summed (by basis)."""
    return {"compactions": len(items), "calls": sum(r.calls for r in items), "tokens": sum(r.tokens for r in items),
            "dollars": round(sum(r.dollars for r in items), 6),
            "bases": sorted({r.basis for r in items}),
            "steps_to_first_edit": [r.steps_to_first_edit for r in items]}


__all__ = ["Recovery", "Refetch", "Start", "first_edit", "fresh_start", "recovery", "run_recovery_totals"]
