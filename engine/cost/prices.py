"""Model prices: dollars per million tokens of each kind, from one dated data file the config can override.

`engine/data/prices.yaml` is the table (each row with its source); `cost.prices` rows in a config
replace or add rows (same columns). A missing write price falls back to the provider's rule:
Anthropic bills a 5-minute write at 1.25x and a 1-hour write at 2x the input price, a read at 0.1x
(platform.claude.com prompt-caching, "Pricing"); OpenAI bills no write fee (its write prices are the
input price).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

from engine.tokens.windows import bare_model_name

PER_MILLION = 1_000_000
ANTHROPIC_WRITE_5M = 1.25
ANTHROPIC_WRITE_1H = 2.0
ANTHROPIC_READ = 0.1


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens for one model (a row of the table)."""

    prefix: str
    input: float
    output: float
    cache_read: float
    cache_write_5m: float
    cache_write_1h: float
    cache: str = "none"  # the prompt cache the provider runs: anthropic | openai | none
    min_cache_tokens: int | None = None
    source: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def price_row(d: Any, *, source: str = "") -> Price:
    """A Price from a table row or a config override (missing cache prices follow the provider's rule)."""
    get = d.get if isinstance(d, dict) else (lambda k, default=None: getattr(d, k, default))
    prefix = str(get("prefix"))
    cache_kind = get("cache") or ("anthropic" if bare_model_name(prefix).startswith("claude") else "openai")
    base = float(get("input") or 0)
    anthropic = cache_kind == "anthropic"
    read = get("cache_read")
    w5 = get("cache_write_5m")
    w1 = get("cache_write_1h")
    return Price(
        prefix=bare_model_name(prefix), input=base, output=float(get("output") or 0),
        cache_read=float(read) if read is not None else (base * ANTHROPIC_READ if anthropic else base),
        cache_write_5m=float(w5) if w5 is not None else (base * ANTHROPIC_WRITE_5M if anthropic else base),
        cache_write_1h=float(w1) if w1 is not None else (base * ANTHROPIC_WRITE_1H if anthropic else base),
        cache=str(cache_kind), min_cache_tokens=get("min_cache_tokens"),
        source=str(get("source") or source))


@cache
def _table() -> tuple[str, tuple[Price, ...]]:
    text = resources.files("engine").joinpath("data/prices.yaml").read_text(encoding="utf-8")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    doc: dict[str, Any] = yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader
    rows = [price_row(r) for r in doc["models"]]
    return str(doc.get("checked", "")), tuple(sorted(rows, key=lambda r: -len(r.prefix)))


def table_checked() -> str:
    """The date the price table was compiled (prices.yaml `checked`)."""
    return _table()[0]


def price_table() -> tuple[Price, ...]:
    return _table()[1]


def price_for(model: str | None, overrides: Iterable[Any] = ()) -> Price | None:
    """The row for `model` (longest matching prefix; a config override wins), or None when unknown."""
    if not model or not isinstance(model, str):
        return None
    name = bare_model_name(model)
    own = sorted((price_row(o, source="config") for o in overrides), key=lambda r: -len(r.prefix))
    for rows in (own, price_table()):
        row = next((r for r in rows if name.startswith(r.prefix)), None)
        if row is not None:
            return row
    return None


__all__ = ["Price", "price_for", "price_row", "price_table", "table_checked"]
