"""A model call's bill: its cache use (modelled or recorded) and output priced in US dollars.

The prices are a row of engine/data/prices.yaml (engine.cost.prices); a cache write is billed at its TTL's
price (Anthropic: 5-minute writes 1.25x, 1-hour writes 2x the input price; OpenAI: no write fee, the
row's write prices equal its input price).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.cost.cache import CacheUse
from engine.cost.prices import PER_MILLION, Price
from engine.thread.model import RecordedUsage


@dataclass(frozen=True)
class Bill:
    """US dollars of one call, by kind of token."""

    input: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0
    output: float = 0.0

    @property
    def total(self) -> float:
        return self.input + self.cache_read + self.cache_write + self.output

    def to_dict(self) -> dict[str, float]:
        return {"input": usd(self.input), "cache_read": usd(self.cache_read), "cache_write": usd(self.cache_write),
                "output": usd(self.output), "total": usd(self.total)}


def usd(x: float) -> float:
    return round(x, 6)


def write_price(price: Price, ttl: str) -> float:
    return price.cache_write_1h if ttl == "1h" else price.cache_write_5m


def price_use(use: CacheUse, output_tokens: int, price: Price | None) -> Bill:
    """The bill of a modelled call."""
    if price is None:
        return Bill()
    return Bill(input=use.uncached * price.input / PER_MILLION, cache_read=use.read * price.cache_read / PER_MILLION,
                cache_write=use.write * write_price(price, use.ttl) / PER_MILLION,
                output=output_tokens * price.output / PER_MILLION)


def price_recorded(usage: RecordedUsage, output_tokens: int, price: Price | None, ttl: str) -> Bill:
    """The bill of a recorded call (writes by TTL when the split is recorded)."""
    if price is None:
        return Bill()
    created = usage.cache_creation_input_tokens or 0
    five, hour = usage.cache_creation_5m_tokens, usage.cache_creation_1h_tokens
    if five is None and hour is None:
        write = created * write_price(price, ttl)
    else:
        write = (five or 0) * price.cache_write_5m + (hour or 0) * price.cache_write_1h
    return Bill(input=(usage.input_tokens or 0) * price.input / PER_MILLION,
                cache_read=(usage.cache_read_input_tokens or 0) * price.cache_read / PER_MILLION,
                cache_write=write / PER_MILLION, output=output_tokens * price.output / PER_MILLION)


def recorded_dict(usage: RecordedUsage) -> dict[str, Any]:
    total = usage.context_tokens or 0
    read = usage.cache_read_input_tokens or 0
    return {"input": usage.input_tokens, "cache_read": usage.cache_read_input_tokens,
            "cache_write": usage.cache_creation_input_tokens, "cache_write_5m": usage.cache_creation_5m_tokens,
            "cache_write_1h": usage.cache_creation_1h_tokens, "output": usage.output_tokens,
            "hit_rate": round(read / total, 4) if total else None}


__all__ = ["Bill", "price_recorded", "price_use", "recorded_dict", "usd", "write_price"]
