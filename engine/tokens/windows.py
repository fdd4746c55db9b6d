"""Model windows: the context window and output limit of a named model, from one data file.

`engine/data/models.yaml` is the table (dated, with its sources); a thread's recorded window always
wins over it. Provider prefixes ("openai:", "anthropic/") and date or "[1m]" suffixes are handled here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

# libyaml's safe loader when PyYAML has it (as engine/cost/prices.py): models.yaml read in 5 ms, not 65
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
ONE_MILLION_SUFFIX = "[1m]"  # Claude Code's marker for the 1M-token context beta


@dataclass(frozen=True)
class ModelLimits:
    prefix: str
    window_tokens: int
    max_output_tokens: int | None = None
    # "all", "last_turn" or "none": which earlier thinking the provider sends the model (None: no rule)
    thinking: str | None = None
    # agent name -> the window that agent gives the model by default (Claude Code: 200k for 4.x)
    agent_windows: tuple[tuple[str, int], ...] = ()


@cache
def _table() -> tuple[ModelLimits, ...]:
    text = resources.files("engine").joinpath("data/models.yaml").read_text(encoding="utf-8")
    doc: dict[str, Any] = yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader
    rows = [ModelLimits(str(r["prefix"]), int(r["window"]), r.get("max_output"), r.get("thinking"),
                        tuple((k.removesuffix("_window"), int(v)) for k, v in r.items() if k.endswith("_window")))
            for r in doc["models"]]
    return tuple(sorted(rows, key=lambda r: -len(r.prefix)))


@cache
def _thinking_rules() -> tuple[tuple[str, str], ...]:
    text = resources.files("engine").joinpath("data/models.yaml").read_text(encoding="utf-8")
    doc: dict[str, Any] = yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader
    rows = [(str(r["prefix"]), str(r["thinking"])) for r in doc.get("thinking_rules") or ()]
    return tuple(sorted(rows, key=lambda r: -len(r[0])))


def thinking_rule(model: str | None) -> str:
    """Which earlier thinking the provider keeps in a request to `model`: "all", "last_turn" or "none"
    (engine/data/models.yaml: a row's `thinking`, else `thinking_rules`; "all" when unknown: what the
    transcript recorded is what was sent)."""
    row = model_limits(model)
    if row is not None and row.thinking:
        return row.thinking
    if model and isinstance(model, str):
        name = _bare(model)
        hit = next((rule for prefix, rule in _thinking_rules() if name.startswith(prefix)), None)
        if hit is not None:
            return hit
    return "all"


def bare_model_name(model: str) -> str:
    """A model name without its provider prefix ("openai:gpt-4o", "anthropic/claude-..."), lower case."""
    name = model.strip().lower()
    name = re.sub(r"^[a-z_-]+[:/]", "", name)
    return name.rsplit("/", 1)[-1]


_bare = bare_model_name


def model_limits(model: str | None) -> ModelLimits | None:
    """The table row for `model` (longest matching prefix), or None for an unknown or missing name."""
    if not model or not isinstance(model, str):
        return None
    name = _bare(model)
    row = next((r for r in _table() if name.startswith(r.prefix)), None)
    if row is not None and name.endswith(ONE_MILLION_SUFFIX):
        return ModelLimits(row.prefix, 1_000_000, row.max_output_tokens, row.thinking)
    return row


def model_window(model: str | None, agent: str | None = None) -> int | None:
    """The context window of `model` in tokens (as `agent` runs it, when the table says), or None."""
    row = model_limits(model)
    if row is None:
        return None
    return dict(row.agent_windows).get(agent or "", row.window_tokens)


def max_output_tokens(config: Any, model: str | None) -> int | None:
    """The output limit a policy reserves room for: the config's `model.max_output_tokens`, else the table's."""
    configured = getattr(getattr(config, "model", None), "max_output_tokens", 0) or 0
    if configured:
        return int(configured)
    row = model_limits(model)
    return row.max_output_tokens if row else None
