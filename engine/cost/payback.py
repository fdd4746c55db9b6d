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
from engine.cost.cache import Block, CacheRules, CacheUse, PromptCache, Request
from engine.cost.cache_run import RequestBuilder, step_time
from engine.cost.prices import PER_MILLION, Price
from engine.run.run import Run, StepRecord
from engine.run.whatif import COMPACTION_EVENTS
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


def is_compaction(event: Event) -> bool:
    return (event.layer, event.kind) in COMPACTION_EVENTS or bool(event.payload.get("compacts"))


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
    starts = [s.index for s in run.steps if any(is_compaction(e) for e in s.events)]
    out: list[CompactionCost] = []
    # an id is in the thread from message i on when its last occurrence is at i or later: one pass
    # over the thread instead of a set of its remaining ids per compaction (quadratic with many)
    last_at: dict[str, int] = {}
    for i, m in enumerate(run.thread.messages):
        if m.id:
            last_at[m.id] = i
    for n, c in enumerate(starts):
        if c == 0 or c not in snapshots:
            continue
        end = starts[n + 1] if n + 1 < len(starts) else len(run.steps)
        event = next(e for e in run.steps[c].events if is_compaction(e))
        prev = run.steps[c - 1]
        base = builder.request(prev, history_before(run, run.steps[c], event))
        base_keys = {b.key for b in base.blocks}
        since = prev.message_index
        made = {m.id for m in run.steps[c].view
                if builder.block(m).key not in base_keys and not (m.id and last_at.get(m.id, -1) >= since)}
        cache = snapshots[c].copy()
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
        kept: tuple[Block, ...] = ()
        kept_tokens = 0
        for k in range(c, end):
            step = run.steps[k]
            body = builder.messages(step)
            view = step.view
            src = getattr(view, "src", None)
            start = len(prev_view) if (prev_view is not None and src is not None and getattr(prev_view, "src", None) is src
                                       and len(view) >= len(prev_view)) else 0
            new = tuple(b for m, b in zip(view[start:], body[start:], strict=True)
                        if b.key not in base_keys and m.id not in made)
            if start:
                kept, kept_tokens = kept + new, kept_tokens + sum(b.tokens for b in new)
            else:
                kept, kept_tokens = new, sum(b.tokens for b in new)
            prev_view = view
            request = Request(base.blocks + kept, step_time(run.thread, step), f"without the compaction, step {k}",
                              known_total=base.total + kept_tokens)
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
        out.append(CompactionCost(
            step=c, layer=event.layer, kind=event.kind, horizon_steps=end - c, saved_tokens=saved_tokens,
            saved_dollars=saved + miss, cache_miss_tokens=miss_tokens, cache_miss_dollars=miss,
            summarizer_dollars=summarizer_dollars, net_dollars=saved - summarizer_dollars, paid_back_after=paid_back,
            window_exceeded_step=exceeded, per_step=per_step, priced=price is not None))
    return out


__all__ = ["CompactionCost", "compaction_costs", "history_before", "is_compaction"]
