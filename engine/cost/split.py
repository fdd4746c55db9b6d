"""The bill split by what the input was: new this call, or replayed from earlier calls (cached or not).

A long session re-sends its history on every call; this says how much of each call's input was new
(content no earlier request of the run held: the last response, its tool results, a summary) and how
much was replayed, and what each cost:

- `replayed_cached` = the tokens read from the prompt cache (a read is always of content sent before);
- `replayed_uncached` = replayed tokens that were not read (written to the cache again, or sent
  uncached: after a compaction, an edit, an expired entry);
- `new` = the rest; `cache_write` and `output` as billed.

Dollars: reads are replayed dollars; the uncached and cache-write dollars are shared between new and
replayed-uncached tokens in proportion; output apart. `replayed_share` = replayed input dollars over
all input dollars.

Which blocks were sent before is answered in O(new blocks) per step: the leading blocks a request
shares with the previous one (`engine.cost.cache.layout`'s `shared`) were all sent, and each other
block is looked up in the keys sent so far.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.cost.bill import Bill, usd
from engine.cost.cache import CacheUse, Request, layout


@dataclass(frozen=True)
class Split:
    """One call's input by novelty, in tokens and dollars."""

    new_tokens: int
    replayed_cached_tokens: int
    replayed_uncached_tokens: int
    cache_write_tokens: int
    output_tokens: int
    new_dollars: float
    replayed_dollars: float
    output_dollars: float

    @property
    def replayed_tokens(self) -> int:
        return self.replayed_cached_tokens + self.replayed_uncached_tokens

    def to_dict(self) -> dict[str, Any]:
        return {"new_tokens": self.new_tokens, "replayed_cached_tokens": self.replayed_cached_tokens,
                "replayed_uncached_tokens": self.replayed_uncached_tokens, "cache_write_tokens": self.cache_write_tokens,
                "output_tokens": self.output_tokens, "new_dollars": usd(self.new_dollars),
                "replayed_dollars": usd(self.replayed_dollars), "output_dollars": usd(self.output_dollars)}


class Replayed:
    """Tokens of each request that earlier requests of the run already sent (fed the requests in order)."""

    def __init__(self) -> None:
        self.sent: set[str] = set()
        self.previous: Any = None  # the previous request's layout

    def send(self, request: Request) -> int:
        blocks = request.blocks
        lay = layout(blocks, self.previous)
        shared = lay.shared
        replayed = lay.cumulative[shared - 1] if shared else 0
        for b in blocks[shared:]:
            if b.key in self.sent:
                replayed += b.tokens
            else:
                self.sent.add(b.key)
        self.previous = lay
        return replayed


def split_bill(use: CacheUse, bill: Bill, output_tokens: int, replayed: int, *, read: int | None = None,
               write: int | None = None) -> Split:
    """Split one call (`read`/`write`: the recorded cache use, when pricing a recorded bill)."""
    total = use.total
    read_tokens = use.read if read is None else read
    written = use.write if write is None else write
    cached = min(read_tokens, replayed, total)
    uncached = max(0, min(replayed, total) - cached)
    new = max(0, total - cached - uncached)
    rest = bill.input + bill.cache_write  # what the tokens not read cost
    not_read = new + uncached
    new_share = new / not_read if not_read else 0.0
    return Split(new, cached, uncached, written, output_tokens, rest * new_share,
                 bill.cache_read + rest * (1 - new_share), bill.output)


def split_totals(splits: Sequence[Split]) -> dict[str, Any]:
    """A run's splits summed, and the share of input dollars spent re-sending history."""
    new_d = sum(s.new_dollars for s in splits)
    rep_d = sum(s.replayed_dollars for s in splits)
    out: dict[str, Any] = {
        "new_tokens": sum(s.new_tokens for s in splits),
        "replayed_cached_tokens": sum(s.replayed_cached_tokens for s in splits),
        "replayed_uncached_tokens": sum(s.replayed_uncached_tokens for s in splits),
        "cache_write_tokens": sum(s.cache_write_tokens for s in splits),
        "output_tokens": sum(s.output_tokens for s in splits),
        "new_dollars": usd(new_d), "replayed_dollars": usd(rep_d),
        "output_dollars": usd(sum(s.output_dollars for s in splits)),
        "replayed_share": round(rep_d / (new_d + rep_d), 4) if new_d + rep_d else None,
    }
    tokens = out["new_tokens"] + out["replayed_cached_tokens"] + out["replayed_uncached_tokens"]
    out["replayed_token_share"] = round((tokens - out["new_tokens"]) / tokens, 4) if tokens else None
    return out


__all__ = ["Replayed", "Split", "split_bill", "split_totals"]
