"""What a run costs: per step the prompt cache's reads and writes, the bill in dollars, and its causes.

`run_cost(run)` prices every model call of a run (computed once per Run, lazily: the replay loop
never pays for it):

- **modelled** cache use per step: the run's requests fed to the provider's prompt cache
  (engine.cost.cache_run, engine.cost.cache), so any what-if says what it would have read and written;
- **recorded** cache use per step, on the as-recorded run of a thread whose source recorded it
  (Claude Code's `cache_read_input_tokens`, `cache_creation` by TTL; OpenAI's `cached_tokens`);
- the **bill**: uncached input, cache reads, cache writes (at the TTL's price) and output, in US
  dollars from engine/data/prices.yaml (or the config's `cost.prices`), per step and cumulative;
- **summarizer calls**: a compaction's own model call. Claude Code's compaction (recorded, or our
  `claude-code` policy) is a fork of the conversation — the same prefix plus the compact prompt —
  so it reads the cache the previous call left (the recorded sessions' compaction calls read
  164,830 and 166,873 tokens from it); LangChain's summarization calls the model with a prompt of
  its own (no breakpoints: all of it uncached input): the summarized messages, within
  `trim_tokens_to_summarize`, and the summary prompt. A recorded call is priced from its usage.
- **why the cache missed**, per step (`cause`): `compaction`, `edit`, `thinking stripped`, the layer
  whose event rewrote the prefix, `prefix changed`, `ttl` or `lookback`; `first call` for the first;
- **what each miss cost** (`StepCost.charged_as`, `miss_tokens`, `miss_dollars`; summed per cause by
  `lost_by_cause`): a miss that sends its unread tokens again (a TTL expiry, an edit, a change of model…)
  writes them again instead of reading them, at (write − read) (`unread_dollars`, engine.cost.misses). A compaction's unread
  tokens are the history it replaced, never sent again: it is charged what it made the cache write again, its
  account's cache misses (engine.cost.payback's `cache_miss_tokens` / `_dollars`, the figure of its net and of
  every per-compaction view), also at a compaction step that read the whole cached prefix but wrote its
  summary, and at one whose requests first differ by a change of model, tools or system prompt (see
  `StepCost.charged_as`); so the sum of those over the compactions is the aggregates' `compaction` row
  (Compare's "cache misses $", the sweep's `cache_lost_dollars`), and each step's charge is what the Step page
  says of it (engine.cost.views.miss_text). Without the accounts (`accounts=False`) each compaction's cache
  misses are still found, from its first step alone (`_FirstStepAccounts`).

Output tokens are the larger of the recorded count and our count of the response: Claude Code
writes a response's usage before the response ends, so its recorded output can fall short.
The per-compaction account (saved input, cache misses, summarizer, paid back after N steps) is in
engine.cost.payback.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain.agents.middleware.summarization import DEFAULT_SUMMARY_PROMPT
from langchain_core.messages import BaseMessage, HumanMessage

from engine.base.wording import money
from engine.cost.bill import Bill, price_recorded, price_use, recorded_dict, usd
from engine.cost.cache import CacheRules, CacheUse, PromptCache, Request
from engine.cost.cache_run import RequestBuilder, cache_rules, default_boundary, step_time
from engine.cost.misses import agrees, lost_price_per_token, miss_cause
from engine.cost.payback import CompactionAccounts, history_before, is_compaction
from engine.cost.prices import PER_MILLION, Price, price_for, table_checked
from engine.cost.split import Replayed, Split, split_bill, split_totals
from engine.policies.claude_code import SUMMARY_PROMPT as FORK_PROMPT
from engine.run.run import Run, StepRecord
from engine.run.whatif import is_agent_summary_call
from engine.thread.events import Event
from engine.thread.model import RecordedUsage

COST_KEY = "cost"
# Claude Code's compact request: the conversation so far plus this instruction (services/compact/prompt.ts).
_FORK_MESSAGE = HumanMessage(content=FORK_PROMPT, id="ctxi-compact-prompt")


@dataclass
class SummarizerCall:
    """A compaction's own model call, priced."""

    step: int  # it ran just before this step's request
    layer: str
    style: str  # "fork" (the conversation plus the compact prompt) or "separate" (a prompt of its own)
    input_tokens: int
    output_tokens: int
    bill: Bill
    cache: CacheUse | None = None
    recorded: dict[str, Any] | None = None
    recorded_bill: Bill | None = None

    @property
    def dollars(self) -> float:
        """What the call cost: its recorded usage priced where the source recorded the call (a Claude Code
        compaction's own request read its prefix from the cache as the provider billed it), else the
        modelled bill. Payback and the Evals net use this (issue 35: a recorded call was priced as modelled)."""
        return (self.recorded_bill or self.bill).total

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "layer": self.layer, "style": self.style, "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens, "cache": self.cache.to_dict() if self.cache else None,
                "dollars": self.bill.to_dict(), "recorded": self.recorded,
                "recorded_dollars": self.recorded_bill.to_dict() if self.recorded_bill else None,
                "priced_as": "recorded" if self.recorded_bill is not None else "modelled"}


@dataclass
class StepCost:
    step: int
    message_id: str
    cache: CacheUse
    output_tokens: int
    bill: Bill
    cumulative: float
    cause: str | None
    recorded: dict[str, Any] | None = None
    recorded_bill: Bill | None = None
    recorded_cumulative: float | None = None
    cause_detail: str = ""
    # The unread tokens (`cache.lost`) priced as if they were written again instead of read: (write − read) per
    # token (engine.cost.misses; 0 at the first call). That is what a miss that sends them again costs, so it is
    # the charge (`miss_dollars`) of a step charged to any cause but a compaction. At a step charged to a
    # compaction it is charged nowhere, a figure for reference only: the history it replaced is never sent again
    # (its charge is `rewrite_dollars`). Written "lost_dollars" in the JSON (docs/replay-json.md).
    unread_dollars: float = 0.0
    # a compaction took effect at this step (not the first: a compaction there has no account, nothing cached yet)
    compacted: bool = False
    # what the compaction that took effect at this step made the cache write again, and its price: its account's
    # cache misses (engine.cost.payback; None at a step without a compaction, or before it is settled)
    rewrite_tokens: int | None = None
    rewrite_dollars: float | None = None
    # Claude Code's own diagnosis of this call (message.diagnostics): "none", "pending" or the reason's type
    recorded_reason: str | None = None
    recorded_missed_tokens: int | None = None
    split: Split | None = None
    recorded_split: Split | None = None

    @property
    def agrees(self) -> bool | None:
        """Our cause against the recorded diagnosis (None: nothing recorded, or a state that is not scored)."""
        return agrees(self.recorded_reason, self.cause)

    @property
    def charged_as(self) -> str | None:
        """The cause this step's cache cost is counted under (None: it cost nothing; see the module docstring):
        `compaction` at a step where a compaction took effect and either rewrote the cached prefix or read it all
        but still made the cache write its summary (its account charges that too); else the step's cause of miss,
        when it left cached tokens unread (never the first call)."""
        # Who owns the miss at a compaction step whose requests first differ by a change of model, tools or system
        # prompt (engine.cost.misses names that change, the first difference, as its cause)? The compaction: it
        # rewrote the history regardless, so the unread history is never sent again, and charging it at
        # (write − read) under the other cause priced a rewrite that did not happen (20,783 tokens, $0.07 beside
        # the compaction's own 22,496 tokens, $0.08, on sample long-refactor with the model changed there), while
        # the compaction's account — its net, its card — charged the write the step did make. What the step wrote
        # beyond its new messages is that account's cache misses, the prompt written again under the new model or
        # tools included, so the compaction row says it once. A TTL expiry or a lookback gap at a compaction step
        # that did not rewrite the cached prefix keeps its cause: there the unread tokens are sent again.
        if self.compacted and self.cause not in ("ttl", "lookback"):
            return "compaction" if self.cause is not None or self.rewrite_tokens else None
        if self.cause and self.cause != "first call" and self.cache.lost:
            return self.cause
        return None

    @property
    def miss_tokens(self) -> int | None:
        """The tokens this step's miss made the cache write again: a compaction's rewrite (its account's cache
        misses; None if not settled), else the unread tokens, sent again (0: nothing charged)."""
        charged = self.charged_as
        if charged is None:
            return 0
        return self.rewrite_tokens if charged == "compaction" else self.cache.lost

    @property
    def miss_dollars(self) -> float | None:
        """What the aggregates charge this step's miss (`lost_by_cause`): a compaction's account's cache misses
        (`rewrite_dollars`; None if not settled), else the unread tokens written again instead of read
        (`unread_dollars`; 0.0: nothing charged)."""
        charged = self.charged_as
        if charged is None:
            return 0.0
        return self.rewrite_dollars if charged == "compaction" else self.unread_dollars

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "message_id": self.message_id, "cache": self.cache.to_dict(),
                "cause": self.cause, "cause_detail": self.cause_detail, "lost_dollars": usd(self.unread_dollars),
                "miss_tokens": self.miss_tokens,
                "miss_dollars": None if self.miss_dollars is None else usd(self.miss_dollars),
                "recorded_cause": None if self.recorded_reason is None else {
                    "type": self.recorded_reason, "cache_missed_input_tokens": self.recorded_missed_tokens,
                    "agrees": self.agrees},
                "output_tokens": self.output_tokens,
                "dollars": {**self.bill.to_dict(), "cumulative": usd(self.cumulative)},
                "split": self.split.to_dict() if self.split is not None else None,
                "recorded": self.recorded,
                "recorded_dollars": None if self.recorded_bill is None else
                {**self.recorded_bill.to_dict(), "cumulative": usd(self.recorded_cumulative or 0.0)},
                "recorded_split": self.recorded_split.to_dict() if self.recorded_split is not None else None}


@dataclass
class RunCost:
    """The cost of a run (see the module docstring); `to_dict()` is its JSON."""

    model: str | None
    price: Price | None
    rules: CacheRules
    boundary: int | None
    timed: bool
    recorded_applies: bool
    steps: list[StepCost]
    summarizer_calls: list[SummarizerCall]
    compactions: list[Any] = field(default_factory=list)  # engine.cost.payback.CompactionCost
    accounted: bool = False  # the compaction accounts were computed

    def total(self) -> float:
        return sum(s.bill.total for s in self.steps) + sum(c.bill.total for c in self.summarizer_calls)

    def totals(self) -> dict[str, Any]:
        read = sum(s.cache.read for s in self.steps)
        sent = sum(s.cache.total for s in self.steps)
        out: dict[str, Any] = {
            "dollars": usd(self.total()),
            "calls_dollars": usd(sum(s.bill.total for s in self.steps)),
            "summarizer_dollars": usd(sum(c.bill.total for c in self.summarizer_calls)),
            # the same calls as recorded where the source recorded them (SummarizerCall.dollars); the
            # modelled figures above stay modelled, so two runs compare like for like
            "summarizer_billed_dollars": usd(sum(c.dollars for c in self.summarizer_calls)),
            "input_dollars": usd(sum(s.bill.input for s in self.steps)),
            "cache_read_dollars": usd(sum(s.bill.cache_read for s in self.steps)),
            "cache_write_dollars": usd(sum(s.bill.cache_write for s in self.steps)),
            "output_dollars": usd(sum(s.bill.output for s in self.steps)),
            "input_tokens": sent, "cache_read_tokens": read,
            "cache_write_tokens": sum(s.cache.write for s in self.steps),
            "uncached_tokens": sum(s.cache.uncached for s in self.steps),
            "output_tokens": sum(s.output_tokens for s in self.steps),
            "hit_rate": round(read / sent, 4) if sent else None,
            "lost_tokens": {cause: sum(s.cache.lost for s in self.steps if s.cause == cause)
                            for cause in sorted({s.cause for s in self.steps if s.cause and s.cache.lost})},
            "lost_by_cause": self.lost_by_cause(),
            "split": split_totals([s.split for s in self.steps if s.split is not None]),
        }
        if self.accounted:
            out["compactions"] = len(self.compactions)
            out["compaction_net_dollars"] = usd(sum(c.net_dollars for c in self.compactions))
        recorded = [s for s in self.steps if s.recorded_bill is not None]
        if self.recorded_applies and recorded:
            out["recorded_split"] = split_totals([s.recorded_split for s in recorded if s.recorded_split is not None])
            rec_read = sum((s.recorded or {}).get("cache_read") or 0 for s in recorded)
            rec_sent = sum(s.cache.total for s in recorded)
            out["recorded_dollars"] = usd(sum(s.recorded_bill.total for s in recorded if s.recorded_bill)
                                           + sum(c.recorded_bill.total for c in self.summarizer_calls if c.recorded_bill))
            out["recorded_hit_rate"] = round(rec_read / rec_sent, 4) if rec_sent else None
            out["recorded_steps"] = len(recorded)
        return out

    def agreement(self) -> dict[str, Any] | None:
        """Our cause of each miss beside the provider's recorded diagnosis (engine.cost.misses), on the steps
        whose transcript records one; None when none does. Every disagreement is listed."""
        recorded = [s for s in self.steps if s.recorded_reason is not None]
        if not recorded:
            return None
        scored = [s for s in recorded if s.agrees is not None]
        agreed = sum(1 for s in scored if s.agrees)
        by_type: dict[str, dict[str, int]] = {}
        for s in recorded:
            row = by_type.setdefault(str(s.recorded_reason), {"steps": 0, "agreed": 0})
            row["steps"] += 1
            row["agreed"] += bool(s.agrees)

        def line(s: StepCost) -> dict[str, Any]:
            rec = s.recorded or {}
            return {"step": s.step, "recorded": s.recorded_reason, "recorded_missed_tokens": s.recorded_missed_tokens,
                    "ours": s.cause, "detail": s.cause_detail, "modelled_read": s.cache.read,
                    "recorded_read": rec.get("cache_read"), "lost_tokens": s.cache.lost,
                    "gap_s": None if s.cache.gap_s is None else round(s.cache.gap_s, 3)}

        return {"recorded_steps": len(recorded), "scored": len(scored), "agreed": agreed,
                "rate": round(agreed / len(scored), 4) if scored else None, "by_type": dict(sorted(by_type.items())),
                "disagreements": [line(s) for s in scored if not s.agrees],
                "not_scored": [line(s) for s in recorded if s.agrees is None and s.recorded_reason != "none"]}

    def lost_by_cause(self) -> dict[str, dict[str, Any]]:
        """Per cause of miss (`StepCost.charged_as`): steps, the cached tokens not read (`tokens`, a count), the tokens
        the misses made the cache write again and what that cost (`StepCost.miss_tokens` / `miss_dollars`). The
        `compaction` row is the sum of the compactions' own cache misses (engine.cost.payback, the figure of every
        per-compaction view), not the price of the history they replaced, which is never sent again."""
        out: dict[str, dict[str, Any]] = {}
        for s in self.steps:
            cause = s.charged_as
            if cause is not None:
                row = out.setdefault(cause, {"steps": 0, "tokens": 0, "tokens_written_again": 0, "dollars": 0.0})
                row["steps"] += 1
                row["tokens"] += s.cache.lost
                row["tokens_written_again"] += s.miss_tokens or 0
                row["dollars"] += s.miss_dollars or 0.0
        return {cause: {**row, "dollars": usd(row["dollars"])} for cause, row in sorted(out.items())}

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "price": self.price.to_dict() if self.price else None,
            "prices_checked": table_checked(),
            "cache": {"provider": self.rules.kind, "ttl": self.rules.ttl, "min_tokens": self.rules.min_tokens,
                      "prompt_prefix_tokens": self.boundary, "timed": self.timed},
            "steps": [s.to_dict() for s in self.steps],
            "summarizer_calls": [c.to_dict() for c in self.summarizer_calls],
            "compactions": [c.to_dict() for c in self.compactions],
            "totals": self.totals(),
            "recorded_diagnosis": self.agreement(),
        }


def priced_model(run: Run) -> str | None:
    cost = getattr(run.config, "cost", None)
    if cost is not None and cost.model:
        return str(cost.model)
    if run.config.model.name:
        return run.config.model.name
    return run.thread.model or next((u.model for u in run.thread.usage.values() if u.model), None)


def output_tokens(run: Run, step: StepRecord) -> int:
    counted = run.counter.count_message(step.response) if step.response is not None else 0
    usage = run.thread.usage.get(step.message_id)
    recorded = usage.output_tokens if usage is not None and usage.output_tokens else 0
    return max(counted, recorded)


def is_as_recorded(run: Run) -> bool:
    """The run reproduces what the source agent sent (only the recorded layer): recorded usage applies."""
    config = run.config
    return tuple(config.order) == ("recorded",) and config.recorded.enabled and run.calibration is not None


def _recorded_calls(run: Run) -> list[dict[str, Any]]:
    """The usage of the source's recorded compaction calls, in order (Claude Code's acompact files)."""
    out = []
    for call in run.thread.extra.get("compaction_calls") or []:
        usage = (call.get("thread") or {}).get("usage") or {}
        if usage:
            out.append(next(iter(usage.values())))
    return out


class _StateIndex:
    """Where each id first occurs in a step's state, built once per state list and grown as it grows.

    A step's state is a Snapshot (engine.run.replay) of a list the driver only appends to, so the
    index of a longer snapshot of the same list extends the shorter one's: pricing every
    summarization call costs the run's length once, not the state's length per call (view mode
    never trims the state, and a tiny trigger summarizes at almost every step).
    """

    def __init__(self) -> None:
        self._lists: dict[int, tuple[Any, dict[str | None, int]]] = {}

    def first_positions(self, state: Any) -> tuple[Any, int, dict[str | None, int]]:
        """(the messages, how many belong to `state`, id -> first position) for a step's state."""
        src = getattr(state, "src", None)
        n = len(state)
        if not isinstance(src, list):  # not a Snapshot: index this sequence alone
            src = list(state)
            return src, n, _index_ids(src, 0, {})
        hit = self._lists.get(id(src))
        positions = hit[1] if hit is not None and hit[0] is src else {}
        self._lists[id(src)] = (src, _index_ids(src, positions.get(_INDEXED, 0), positions))
        return src, n, positions


_INDEXED = "\x00indexed"  # how far a list has been indexed (no message id can be this)


def _index_ids(messages: list[BaseMessage], start: int, positions: dict[str | None, int]) -> dict[str | None, int]:
    end = len(messages)
    for i in range(start, end):
        positions.setdefault(messages[i].id, i)
    positions[_INDEXED] = end
    return positions


def _separate_input(run: Run, step: StepRecord, event: Event, index: _StateIndex | None = None,
                    prompt_tokens: dict[str, int] | None = None) -> int:
    """What LangChain's summary call reads: the summarized messages (their counts are already cached;
    within `trim_tokens_to_summarize`) and the prompt around them.

    Each summarized id is counted once, as its first occurrence in the previous step's state and
    then in what the thread added before the compaction (`history_before`).
    """
    removed = event.payload.get("removed_ids") or ()
    history = history_before(run, step, event)
    if step.index:
        src, n, first = (index or _StateIndex()).first_positions(run.steps[step.index - 1].state)
    else:
        src, n, first = [], 0, {}
    later: dict[str | None, BaseMessage] = {}
    for m in history:
        later.setdefault(m.id, m)
    count = run.counter.count_message
    tokens = 0
    for mid in dict.fromkeys(removed):
        pos = first.get(mid)
        if pos is not None and pos < n:
            tokens += count(src[pos])
        elif mid in later:
            tokens += count(later[mid])
    summarization = run.config.summarization
    trim = summarization.trim_tokens_to_summarize
    if trim is not None:
        tokens = min(tokens, trim)
    prompt = summarization.summary_prompt or DEFAULT_SUMMARY_PROMPT
    cached = None if prompt_tokens is None else prompt_tokens.get(prompt)
    if cached is None:
        cached = run.counter.count_text(prompt)
        if prompt_tokens is not None:
            prompt_tokens[prompt] = cached
    return tokens + cached


def _summary_text(event: Event) -> str:
    p = event.payload
    return str(p.get("summary") or p.get("summary_text") or "")


def run_cost(run: Run, *, accounts: bool = True) -> RunCost:
    """The cost of `run`, computed once and kept on the run. `accounts=False` skips the per-compaction
    counterfactuals (engine.cost.payback), for sweeps that only compare dollars."""
    hit = run.derived.get(COST_KEY)
    if isinstance(hit, RunCost) and (hit.accounted or not accounts):
        return hit
    result = _compute(run, accounts)
    run.derived[COST_KEY] = result
    return result


def _compute(run: Run, accounts: bool) -> RunCost:
    thread = run.thread
    model = priced_model(run)
    cost_config = getattr(run.config, "cost", None)
    price = price_for(model, overrides=cost_config.prices if cost_config is not None else ())
    rules = cache_rules(thread, run.config, model)
    boundary = default_boundary(run)
    builder = RequestBuilder(run, boundary)
    cache = PromptCache(rules)
    recorded_applies = is_as_recorded(run)
    recorded_calls = _recorded_calls(run) if recorded_applies else []
    steps: list[StepCost] = []
    calls: list[SummarizerCall] = []
    # each compaction's account is settled once its horizon is priced (the next compaction, or the end),
    # so one cache snapshot is held at a time, not one per compaction (each as large as the cache)
    ledger = CompactionAccounts(run, price=price, rules=rules, builder=builder) if accounts else None
    # without the accounts, each compaction's cache misses still (what the aggregates charge it; StepCost.miss_dollars)
    rewrites = None if accounts else _FirstStepAccounts(run, price=price, rules=rules, builder=builder)
    pending: Any = None  # the open account (engine.cost.payback)
    settled: list[Any] = []
    summarizer: dict[int, float] = {}
    priced = _PricedSteps(steps)
    total = 0.0
    recorded_total = 0.0
    prev_request: Request | None = None
    replayed = Replayed()
    per_lost = lost_price_per_token(price, rules)
    models = builder.models
    timed = False
    state_index, prompt_tokens = _StateIndex(), dict[str, int]()  # shared by the run's summarizer calls
    for step in run.steps:
        when = step_time(thread, step)
        timed = timed or when is not None
        compactions = [e for e in step.events if is_compaction(e)]
        if compactions and ledger is not None:
            if pending is not None:  # its horizon ends here: every step it compares is priced
                settled.append(_charged(steps, ledger.settle(pending, priced, summarizer)))
            pending = ledger.open(step.index, cache.copy())
        for event in compactions:
            call = _summarizer_call(run, builder, cache, step, event, when, price, rules, recorded_calls,
                                    state_index, prompt_tokens)
            if call is not None:
                calls.append(call)
                summarizer[call.step] = summarizer.get(call.step, 0.0) + call.dollars
                total += call.bill.total
                if call.recorded_bill is not None:
                    recorded_total += call.recorded_bill.total
        request = builder.request(step, time_s=when)
        use = cache.send(request)
        out = output_tokens(run, step)
        bill = price_use(use, out, price)
        total += bill.total
        k = step.index
        previous = (run.steps[k - 1], prev_request) if prev_request is not None and k else None
        miss = miss_cause(step, use, previous, request, (models[k - 1] if k else None, models[k]))
        entry = StepCost(k, step.message_id, use, out, bill, total, miss.cause, cause_detail=miss.detail,
                         unread_dollars=use.lost * per_lost if miss.cause != "first call" else 0.0,
                         compacted=bool(compactions) and k > 0)
        sent_before = replayed.send(request)
        entry.split = split_bill(use, bill, out, sent_before)
        usage = thread.usage.get(step.message_id)
        if recorded_applies and usage is not None and usage.context_tokens is not None:
            entry.recorded = recorded_dict(usage)
            entry.recorded_bill = price_recorded(usage, out, price, rules.ttl)
            recorded_total += entry.recorded_bill.total
            entry.recorded_cumulative = recorded_total
            entry.recorded_split = split_bill(use, entry.recorded_bill, out, sent_before,
                                              read=usage.cache_read_input_tokens or 0,
                                              write=usage.cache_creation_input_tokens or 0)
        if recorded_applies and usage is not None:
            entry.recorded_reason = usage.cache_miss_reason
            entry.recorded_missed_tokens = usage.cache_missed_input_tokens
        steps.append(entry)
        if compactions and rewrites is not None:  # no accounts: its first step only, what its cache misses need
            opened = rewrites.open(k, PromptCache(rules))
            if opened is not None:
                _charged(steps, rewrites.settle(opened, priced, summarizer))
        prev_request = request
    result = RunCost(model, price, rules, boundary, timed, recorded_applies, steps, calls)
    if ledger is not None:
        if pending is not None:
            settled.append(_charged(steps, ledger.settle(pending, priced, summarizer)))
        result.compactions = settled
        result.accounted = True
    return result


class _FirstStepAccounts(CompactionAccounts):
    """A compaction's account over its first step only: its cache misses (`cache_miss_tokens` / `_dollars`) are
    what that step wrote beyond the messages new anyway (engine.cost.payback's `settle`, at k == c), so they are
    the full account's to the token, without pricing the counterfactual of every later step. The counterfactual
    cache is not read for them: an empty one serves."""

    def end(self, c: int) -> int:
        return c + 1


def _charged(steps: list[StepCost], account: Any) -> Any:
    """Set on its step what a settled compaction account made the cache write again; the account, unchanged."""
    entry = steps[account.step]
    entry.rewrite_tokens, entry.rewrite_dollars = account.cache_miss_tokens, account.cache_miss_dollars
    return account


class _PricedSteps(Sequence[tuple[CacheUse, Bill, int]]):
    """The priced steps as (cache use, bill, output tokens), read in place (engine.cost.payback)."""

    def __init__(self, steps: list[StepCost]) -> None:
        self.steps = steps

    def __len__(self) -> int:
        return len(self.steps)

    def __getitem__(self, k: Any) -> Any:
        s = self.steps[k]
        return (s.cache, s.bill, s.output_tokens)


def _summarizer_call(run: Run, builder: RequestBuilder, cache: PromptCache, step: StepRecord, event: Event,
                     when: float | None, price: Price | None, rules: CacheRules,
                     recorded_calls: list[dict[str, Any]], state_index: _StateIndex | None = None,
                     prompt_tokens: dict[str, int] | None = None) -> SummarizerCall | None:
    """Price a compaction's own model call (see the module docstring)."""
    summary = _summary_text(event)
    out = run.counter.count_text(summary) if summary else 0
    if event.layer == "recorded" and not is_agent_summary_call(step.index, event):
        return None  # a trim (no summary written), or a compaction before the first request
    if event.layer == "summarization":
        tokens = _separate_input(run, step, event, state_index, prompt_tokens)
        bill = Bill(input=tokens * price.input / PER_MILLION, output=out * price.output / PER_MILLION) if price else Bill()
        return SummarizerCall(step.index, event.layer, "separate", tokens, out, bill)
    if step.index == 0:
        return None
    prev = run.steps[step.index - 1]
    request = builder.request(prev, [*history_before(run, step, event), _FORK_MESSAGE], label=f"summarizer before step {step.index}", time_s=when)
    use = cache.send(request)
    call = SummarizerCall(step.index, event.layer, "fork", request.total, out, price_use(use, out, price), use)
    if event.layer == "recorded" and recorded_calls:
        raw = recorded_calls.pop(0)
        usage = RecordedUsage.from_dict(raw)
        call.output_tokens = max(out, usage.output_tokens or 0)
        call.bill = price_use(use, call.output_tokens, price)
        call.recorded = recorded_dict(usage)
        call.recorded_bill = price_recorded(usage, call.output_tokens, price, rules.ttl)
    return call


def cost_lines(cost: RunCost) -> list[str]:
    """The CLI summary's cost lines."""
    t = cost.totals()
    hit = f"{100 * t['hit_rate']:.1f}%" if t["hit_rate"] is not None else "-"
    where = cost.price.prefix if cost.price else "no price for this model (add cost.prices)"
    lines = [f"cost         {money(t['dollars'])} modelled ({cost.rules.kind} cache, {cost.rules.ttl}, priced as {where}); "
             f"cache hit rate {hit}"]
    if "recorded_dollars" in t:
        rec = f"{100 * t['recorded_hit_rate']:.1f}%" if t["recorded_hit_rate"] is not None else "-"
        lines.append(f"recorded     {money(t['recorded_dollars'])} from the recorded usage; cache hit rate {rec}")
    lines += [f"compaction   {c.headline}" for c in cost.compactions]
    return lines


def cost_against(run: Run, baseline: Run) -> dict[str, Any]:
    """Dollars of a what-if next to its as-recorded baseline (both modelled, so they compare)."""
    mine, theirs = run_cost(run).totals(), run_cost(baseline).totals()
    return {"dollars": mine["dollars"], "baseline_dollars": theirs["dollars"],
            "dollars_delta": usd(mine["dollars"] - theirs["dollars"]),
            "hit_rate": mine["hit_rate"], "baseline_hit_rate": theirs["hit_rate"]}


__all__ = ["Bill", "cost_against", "cost_lines", "RunCost", "StepCost", "SummarizerCall", "history_before", "is_as_recorded", "price_recorded", "price_use",
           "run_cost"]
