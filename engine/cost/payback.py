"""Did a compaction pay for itself? Its run against the same run without it, step by step, in dollars.

For a compaction that took effect at step c, the **counterfactual** is the request stream the agent
would have sent without it: step c−1's request plus what the thread recorded after it and before
the compaction (the history the compaction replaced), followed by everything each later step sends
that is neither already in it nor made by the compaction (its summary and what it re-attached). Both streams go through the provider's prompt cache from the
state it was in before the compaction (engine.cost.cache), so a later step without the compaction reads
its long prefix from the cache at the read price, or rewrites it after a TTL expiry, exactly as the
model says it would. Up to the next compaction (after which the two histories have both been
rewritten) or the end of the run:

- `saved_tokens` / `saved_dollars`: the input the later steps did not send, priced as it would have
  been billed (the gross saving, before the compaction's own costs);
- `cache_miss_tokens` / `cache_miss_dollars`: what the compaction made the cache write again — at
  step c, the tokens written beyond the messages that were new anyway (the summary and the rebuilt
  prefix after the system prompt), at the write price. This is the miss the compaction *caused*;
  misses from a TTL expiry or a lookback gap are counted on their steps (`cause`), not here;
- `summarizer_dollars`: its own model call (engine.cost.run_cost);
- `net_dollars = saved − cache misses − summarizer` over the horizon, and `paid_back_after`: the
  number of steps, from c, after which the running sum of savings first covers the summarizer and
  the misses (None: never, within the horizon).

A counterfactual request may exceed the window (the agent could not have gone on without
compacting): `window_exceeded_step` says where; the account still runs to the horizon.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage

from engine.base.wording import money
from engine.cost.bill import Bill, price_use, write_price
from engine.cost.cache import Block, CacheRules, CacheUse, Joined, PromptCache, Request
from engine.cost.cache_run import RequestBuilder, step_time
from engine.cost.prices import PER_MILLION, Price
from engine.run.run import Run, StepRecord
from engine.run.whatif import is_compaction
from engine.thread.events import Event


@dataclass
class CompactionCost:
    step: int  # the first step whose request the compaction changed
    layer: str
    kind: str
    horizon_steps: int  # steps compared (to the next compaction or the end)
    saved_tokens: int
    saved_dollars: float
    cache_miss_tokens: int
    cache_miss_dollars: float
    summarizer_dollars: float
    net_dollars: float
    paid_back_after: int | None
    window_exceeded_step: int | None
    # per step of the horizon: the counterfactual's tokens and dollars minus the run's
    per_step: list[dict[str, Any]]
    priced: bool = True

    @property
    def headline(self) -> str:
        where = f"step {self.step}"
        if not self.priced:
            return (f"The compaction at {where} saved {self.saved_tokens:,} input tokens over {self.horizon_steps} steps "
                    "(no price for this model: add a cost.prices row to see dollars).")
        if self.paid_back_after is None:
            return (f"The compaction at {where} never paid back within {self.horizon_steps} step"
                    f"{'s' if self.horizon_steps != 1 else ''}: net {money(self.net_dollars)}.")
        return (f"The compaction at {where} paid back after {self.paid_back_after} step"
                f"{'s' if self.paid_back_after != 1 else ''}: it saved {money(self.saved_dollars)} of later input, "
                f"its cache misses cost {money(self.cache_miss_dollars)} and its summarizer call "
                f"{money(self.summarizer_dollars)} (net {money(self.net_dollars)} over {self.horizon_steps} steps).")

    def to_dict(self) -> dict[str, Any]:
        r = 6
        return {"step": self.step, "layer": self.layer, "kind": self.kind, "horizon_steps": self.horizon_steps,
                "saved_tokens": self.saved_tokens, "saved_dollars": round(self.saved_dollars, r),
                "cache_miss_tokens": self.cache_miss_tokens, "cache_miss_dollars": round(self.cache_miss_dollars, r),
                "summarizer_dollars": round(self.summarizer_dollars, r), "net_dollars": round(self.net_dollars, r),
                "paid_back_after": self.paid_back_after, "window_exceeded_step": self.window_exceeded_step,
                "priced": self.priced, "headline": self.headline, "per_step": self.per_step}


def history_before(run: Run, step: StepRecord, event: Event) -> list[BaseMessage]:
    """What the thread added after the previous call and before the compaction took effect (the
    previous response, its tool results): with the previous request, the history it replaced."""
    if step.index == 0:
        return []
    prev = run.steps[step.index - 1]
    cut = event.payload.get("message_index")
    end = cut if isinstance(cut, int) and prev.message_index <= cut <= step.message_index else step.message_index
    return [m for m in run.thread.messages[prev.message_index:end] if m.type != "system"]



def compaction_costs(run: Run, *, price: Price | None, rules: CacheRules, steps: Sequence[tuple[CacheUse, Bill, int]],
                     summarizer: dict[int, float], builder: RequestBuilder,
                     snapshots: dict[int, PromptCache]) -> list[CompactionCost]:
    """One account per step a compaction took effect at (steps after the first; see the module docstring).

    `steps`: per step of the run its (cache use, bill, output tokens); `summarizer`: the dollars of the
    summarizer calls made before each step; `snapshots`: the cache before each compaction step.
    """
    accounts = CompactionAccounts(run, price=price, rules=rules, builder=builder)
    made = (accounts.account(c, snapshots[c].copy(), steps, summarizer) for c in accounts.starts if c in snapshots)
    return [a for a in made if a is not None]


@dataclass
class _Open:
    """A compaction account begun (CompactionAccounts.open): what its steps are compared against."""

    step: int
    event: Event
    cache: PromptCache
    base: Request
    base_keys: set[str]
    made: set[str | None]


class CompactionAccounts:
    """The accounts of one run's compactions, one at a time: `account(c, ...)` needs the steps up to the
    next compaction only, so a pricing pass can settle each account (and drop its cache snapshot) as
    soon as its horizon has been priced, instead of holding a snapshot per compaction to the end."""

    def __init__(self, run: Run, *, price: Price | None, rules: CacheRules, builder: RequestBuilder) -> None:
        self.run, self.price, self.rules, self.builder = run, price, rules, builder
        self.starts = [s.index for s in run.steps if any(is_compaction(e) for e in s.events)]
        self._ends = dict(zip(self.starts, [*self.starts[1:], len(run.steps)], strict=False))  # none: none
        # an id is in the thread from message i on when its last occurrence is at i or later: one pass
        # over the thread instead of a set of its remaining ids per compaction (quadratic with many)
        self.last_at: dict[str, int] = {}
        for i, m in enumerate(run.thread.messages):
            if m.id:
                self.last_at[m.id] = i

    def end(self, c: int) -> int:
        """The first step after compaction `c`'s horizon (the next compaction, or the run's end)."""
        return self._ends[c]

    def account(self, c: int, cache: PromptCache, steps: Sequence[tuple[CacheUse, Bill, int]],
                summarizer: dict[int, float]) -> CompactionCost | None:
        """The account of the compaction at step `c` (None at step 0), fed to `cache` (the cache as it was
        before step `c`; used up); `steps` must reach `end(c)`."""
        opened = self.open(c, cache)
        return self.settle(opened, steps, summarizer) if opened is not None else None

    def open(self, c: int, cache: PromptCache) -> _Open | None:
        """What the account of compaction `c` starts from: the request without it (step c−1's plus what the
        thread added before the cut) and what the compaction made. Made while pricing reaches step `c`,
        it reuses the blocks the pricing just listed for step c−1."""
        if c == 0:
            return None
        run, builder = self.run, self.builder
        event = next(e for e in run.steps[c].events if is_compaction(e))
        prev = run.steps[c - 1]
        base = builder.request(prev, history_before(run, run.steps[c], event))
        base_keys = {b.key for b in base.blocks}
        since = prev.message_index
        made = {m.id for m in run.steps[c].view
                if builder.block(m).key not in base_keys and not (m.id and self.last_at.get(m.id, -1) >= since)}
        return _Open(c, event, cache, base, base_keys, made)

    def settle(self, opened: _Open, steps: Sequence[tuple[CacheUse, Bill, int]],
               summarizer: dict[int, float]) -> CompactionCost:
        """The account of an opened compaction; `steps` must reach `end(c)`."""
        run, price, rules, builder = self.run, self.price, self.rules, self.builder
        c, event, cache, base, base_keys, made = (opened.step, opened.event, opened.cache, opened.base,
                                                  opened.base_keys, opened.made)
        end = self.end(c)
        summarizer_dollars = summarizer.get(c, 0.0)
        running = -summarizer_dollars
        saved_tokens = 0
        saved = 0.0
        paid_back: int | None = None
        exceeded: int | None = None
        per_step: list[dict[str, Any]] = []
        miss_tokens = 0
        # what each step would have sent without the compaction: the base plus the view's messages the
        # base lacks. A view that extends the previous step's (the same list, longer: engine.run.replay's
        # Snapshot) keeps the previous step's kept blocks and filters only its new messages.
        prev_view: Any = None
        kept: list[Block] = []  # only appended to while views extend: each request holds a prefix of it
        kept_tokens = 0
        for k in range(c, end):
            step = run.steps[k]
            body = builder.messages(step)
            view = step.view
            src = getattr(view, "src", None)
            start = len(prev_view) if (prev_view is not None and src is not None and getattr(prev_view, "src", None) is src
                                       and len(view) >= len(prev_view)) else 0
            new = [b for m, b in zip(view[start:], body.tail(start), strict=True)
                   if b.key not in base_keys and m.id not in made]
            if start:
                kept.extend(new)
                kept_tokens += sum(b.tokens for b in new)
            else:
                kept, kept_tokens = new, sum(b.tokens for b in new)
            prev_view = view
            request = Request(Joined.of(base.blocks, Joined((kept, len(kept)))), step_time(run.thread, step),
                              f"without the compaction, step {k}", known_total=base.total + kept_tokens)
            use = cache.send(request)
            actual_use, actual_bill, output = steps[k]
            without = price_use(use, output, price)
            delta_dollars = without.total - actual_bill.total
            delta_tokens = use.total - actual_use.total
            if k == c:
                miss_tokens = max(0, actual_use.write - kept_tokens)
            if exceeded is None and use.total > run.window_tokens:
                exceeded = k
            saved_tokens += delta_tokens
            saved += delta_dollars
            running += delta_dollars
            if price is not None and paid_back is None and running >= 0:
                paid_back = k - c + 1
            per_step.append({"step": k, "tokens_without": use.total, "tokens": actual_use.total,
                             "dollars_without": round(without.total, 6), "dollars": round(actual_bill.total, 6),
                             "net_dollars": round(running, 6)})
        per_token = 0.0 if price is None else (write_price(price, rules.ttl) if rules.kind == "anthropic" else price.input)
        miss = miss_tokens * per_token / PER_MILLION
        return CompactionCost(
            step=c, layer=event.layer, kind=event.kind, horizon_steps=end - c, saved_tokens=saved_tokens,
            saved_dollars=saved + miss, cache_miss_tokens=miss_tokens, cache_miss_dollars=miss,
            summarizer_dollars=summarizer_dollars, net_dollars=saved - summarizer_dollars, paid_back_after=paid_back,
            window_exceeded_step=exceeded, per_step=per_step, priced=price is not None)


__all__ = ["CompactionAccounts", "CompactionCost", "compaction_costs", "history_before", "is_compaction"]
