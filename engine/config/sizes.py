"""Thresholds as data: `ContextSize` ("tokens", 30000), `AllOf` (an AND clause), and trigger parsing.

`FrozenModel` is the base of every config section: frozen (hashable, so runs are cached by config)
and strict (an unknown key is an error).
"""

from __future__ import annotations

import types
from collections.abc import Hashable
from functools import cache
from typing import Any, Literal, Union, cast, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator


@cache
def _number_kind(annotation: Any) -> str | None:
    """"whole number" / "number" when a setting typed `annotation` takes numbers but not true/false, else None."""
    leaves: list[Any] = []

    def walk(a: Any) -> None:
        if get_origin(a) in (Union, types.UnionType):
            for arg in get_args(a):
                walk(arg)
        else:
            leaves.append(a)

    walk(annotation)
    if bool in leaves or Any in leaves or not any(leaf in (int, float) for leaf in leaves):
        return None
    return "number" if float in leaves else "whole number"


class FrozenModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_for_a_number(cls, value: Any, info: ValidationInfo) -> Any:
        # pydantic reads true as 1 for a number: `max_total: true` was taken silently as one sub-agent
        if isinstance(value, bool) and info.field_name is not None:
            field = cls.model_fields.get(info.field_name)
            try:
                kind = _number_kind(cast(Hashable, field.annotation)) if field is not None else None
            except TypeError:  # an unhashable annotation: not one of ours
                kind = None
            if kind is not None:
                raise ValueError(f"must be a {kind}, not true or false")
        return value


class ContextSize(FrozenModel):
    """A threshold as data: `("messages", 20)`, `("tokens", 30000)` or `("fraction", 0.85)`."""

    type: Literal["messages", "tokens", "fraction"]
    value: int | float

    @model_validator(mode="before")
    @classmethod
    def _parse(cls, v: Any) -> Any:
        if isinstance(v, str):
            kind, sep, raw = v.partition(":")
            if not sep:
                raise ValueError(f"expected TYPE:VALUE like tokens:30000, got {v!r}")
            try:
                number: int | float = float(raw) if kind.strip() == "fraction" else int(raw)
            except ValueError:
                raise ValueError(f"{kind.strip()} thresholds must be numbers, got {raw!r}.") from None
            return {"type": kind.strip(), "value": number}
        if isinstance(v, (tuple, list)) and len(v) == 2:
            return {"type": v[0], "value": v[1]}
        return v

    @model_validator(mode="after")
    def _check(self) -> ContextSize:
        # LangChain's exact messages, so a config error reads like the library's.
        if isinstance(self.value, bool):
            raise ValueError("threshold value must be a number, not a boolean")
        if self.type == "fraction":
            if not 0 < float(self.value) <= 1:
                raise ValueError(f"Fractional values must be between 0 and 1, got {self.value}.")
            object.__setattr__(self, "value", float(self.value))
        else:
            if float(self.value) != int(self.value):
                raise ValueError(f"{self.type} thresholds must be whole numbers, got {self.value}.")
            if int(self.value) <= 0:
                raise ValueError(f"{self.type} thresholds must be greater than 0, got {self.value}.")
            object.__setattr__(self, "value", int(self.value))
        return self

    def to_tuple(self) -> tuple[str, int | float]:
        return (self.type, self.value)

    def __str__(self) -> str:
        return f"{self.type}:{self.value}"


class AllOf(FrozenModel):
    """An AND clause (LangChain's dict trigger): fires only when every threshold is met."""

    all: tuple[ContextSize, ...] = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _from_langchain_dict(cls, v: Any) -> Any:
        if isinstance(v, str) and "&" in v:
            return {"all": [p.strip() for p in v.split("&")]}
        if isinstance(v, dict) and "all" not in v:
            if not v:
                raise ValueError("an AND clause needs at least one threshold ({} is rejected)")
            unknown = set(v) - {"messages", "tokens", "fraction"}
            if unknown:
                raise ValueError(f"unknown threshold keys {sorted(unknown)}; allowed: messages, tokens, fraction")
            return {"all": [{"type": k, "value": val} for k, val in v.items()]}
        return v

    def __str__(self) -> str:
        return "&".join(str(c) for c in self.all)


TriggerClause = ContextSize | AllOf


def parse_trigger(v: Any) -> Any:
    """Accept None, one clause, a list of clauses, or a 'tokens:30000,messages:50' string."""
    if v is None or v == "none" or v == "null":
        return None
    if isinstance(v, str):
        parts = [p.strip() for p in v.split(",") if p.strip()]
        return [_clause(p) for p in parts]
    if isinstance(v, (list, tuple)):
        if len(v) == 2 and isinstance(v[0], str) and v[0] in ("messages", "tokens", "fraction") and not isinstance(v[1], (dict, list)):
            return [_clause({"type": v[0], "value": v[1]})]
        return [_clause(c) for c in v]
    return [_clause(v)]


def _clause(c: Any) -> Any:
    if isinstance(c, (ContextSize, AllOf)):
        return c
    if isinstance(c, str):
        return AllOf.model_validate(c) if "&" in c else ContextSize.model_validate(c)
    if isinstance(c, dict) and ("all" in c or "type" not in c):
        return AllOf.model_validate(c)
    return ContextSize.model_validate(c)
