"""Why a step's request could not read what the previous one left in the prompt cache, and what it cost.

A step misses when the previous request's cached prefix is not read (`CacheUse.lost > 0`). Its cause is
found where the two requests first differ, first match wins:

| cause | the requests differ because… |
|---|---|
| `first call` | nothing was cached yet in this conversation |
| `model` | the recorded model changed between the two calls ("The cache is per-model") |
| `tools` | the tools sent changed (added, removed, reordered) |
| `system` | the system prompt changed |
| `compaction` | a compaction took effect at this step |
| `edit` | a message kept its place and id but its content changed: microcompact, context editing, argument truncation, stripped thinking (`detail` says which) |
| `insertion` | content was inserted before cached content (the previous request's message at the first difference comes later in this one) |
| `removal` | messages were dropped without a compaction |
| `prefix` | the prompt prefix changed otherwise (its size) |
| `ttl` | same content, but the cache entry expired |
| `lookback` | same content, but more than 20 blocks were appended since the cached prefix |

The kinds follow Anthropic's cache diagnostics (https://platform.claude.com/docs/en/build-with-claude/cache-diagnostics,
archived in llms-txt-archive/anthropic-platform @ 7967a16b, docs/en/build-with-claude/cache-diagnostics.md):
`model_changed`, `system_changed`, `tools_changed`, `messages_changed` ("an earlier entry in `messages`
was altered, reordered, or removed rather than appended to"), and for a match with a low read "the cache
entry was no longer available" (our `ttl`). Claude Code (2.1.251+) records that diagnosis on each
response (`message.diagnostics.cache_miss_reason`, read into `RecordedUsage.cache_miss_reason`); on the
as-recorded run `agreement()` sets it beside ours:

- `messages_changed` agrees with `compaction`, `edit`, `insertion`, `removal`; `tools_changed` with
  `tools`; `system_changed` with `system`; `model_changed` with `model`;
- `previous_message_not_found` ("not evidence that your request changed … too much time has passed"):
  no comparison was made; it agrees with `ttl`, `compaction` (Claude Code's first request after its
  compaction call) and `first call`;
- `unavailable` and a pending comparison (`cache_miss_reason: null`) are listed, not scored.

What a miss costs: the lost tokens were written again instead of read — (write − read) price per token
on Anthropic, (input − cached) on OpenAI.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage

from engine.cost.bill import write_price
from engine.cost.cache import CacheRules, CacheUse, Request
from engine.cost.prices import PER_MILLION, Price
from engine.run.run import StepRecord
from engine.run.whatif import is_compaction

CAUSES: tuple[str, ...] = ("first call", "model", "tools", "system", "compaction", "edit", "insertion", "removal",
                           "prefix", "ttl", "lookback")
# The recorded diagnosis each of our causes stands for (None: the API found no divergence, or compared nothing).
RECORDED_AGREES: dict[str, frozenset[str]] = {
    "messages_changed": frozenset({"compaction", "edit", "insertion", "removal"}),
    "tools_changed": frozenset({"tools"}),
    "system_changed": frozenset({"system"}),
    "model_changed": frozenset({"model"}),
    "previous_message_not_found": frozenset({"ttl", "compaction", "first call"}),
}
NOT_SCORED = frozenset({"unavailable", "pending", "none"})
# Layers whose events rewrite a message in place (the `edit` cause's detail)
_EDITING_LAYERS = ("context_editing", "filesystem", "recorded", "compaction")


@dataclass(frozen=True)
class Miss:
    """A step's cause of miss and its detail (None when the step read everything the previous one cached)."""

    cause: str | None
    detail: str = ""


def miss_cause(step: StepRecord, use: CacheUse, previous: tuple[StepRecord, Request] | None, request: Request,
               models: tuple[str | None, str | None] = (None, None)) -> Miss:
    """The cause of the step's miss (see the module docstring); `previous` is the previous step and its request,
    `models` the recorded models of the previous call and this one."""
    if previous is None:
        return Miss("first call")
    if use.rewritten:
        prev_step, prev_request = previous
        if models[0] and models[1] and models[0] != models[1]:
            return Miss("model", f"{models[0]} → {models[1]}")
        n = _first_difference(prev_request, request)
        prev_offset = len(prev_request.blocks) - len(prev_step.view)
        offset = len(request.blocks) - len(step.view)
        if n is not None and (n < prev_offset or n < offset):
            if tuple(prev_step.tool_names) != tuple(step.tool_names):
                return Miss("tools", _tools_detail(prev_step.tool_names, step.tool_names))
            if _system_text(prev_step) != _system_text(step):
                return Miss("system")
            if not any(is_compaction(e) for e in step.events):
                return Miss("prefix", "the prompt before the messages changed size")
        if any(is_compaction(e) for e in step.events):
            event = next(e for e in step.events if is_compaction(e))
            return Miss("compaction", f"{event.layer}.{event.kind}")
        old = _message_at(prev_step.view, n, prev_offset)
        new = _message_at(step.view, n, offset)
        if old is not None and new is not None and old.id and old.id == new.id:
            return Miss("edit", _edit_detail(step, new))
        if old is not None and n is not None and _later(prev_request.blocks[n].key, request, n):
            return Miss("insertion", f"{new.type} message {new.id or ''} inserted".strip() if new is not None else "")
        rewriting = [e for e in step.events if e.layer not in ("input_context", "memory")]
        return Miss("removal", f"{rewriting[0].layer}.{rewriting[0].kind}" if rewriting else "")
    if use.expired:
        return Miss("ttl", f"{use.gap_s:,.0f} s since the previous call" if use.gap_s is not None else "")
    if use.out_of_window:
        return Miss("lookback")
    return Miss(None)


def _first_difference(previous: Request, request: Request) -> int | None:
    pairs = zip((b.key for b in previous.blocks), (b.key for b in request.blocks), strict=False)
    return next((i for i, (a, b) in enumerate(pairs) if a != b), None)


def _message_at(view: Sequence[BaseMessage], n: int | None, offset: int) -> BaseMessage | None:
    if n is None or n - offset < 0 or n - offset >= len(view):
        return None
    return view[n - offset]


def _later(key: str, request: Request, n: int) -> bool:
    return any(b.key == key for b in request.blocks[n + 1:])


def _system_text(step: StepRecord) -> Any:
    return step.system.content if step.system is not None else None


def _tools_detail(before: Sequence[str], after: Sequence[str]) -> str:
    added = [t for t in after if t not in before]
    removed = [t for t in before if t not in after]
    parts = ([f"added {', '.join(added[:3])}"] if added else []) + ([f"removed {', '.join(removed[:3])}"] if removed else [])
    return "; ".join(parts) or "reordered"


def _edit_detail(step: StepRecord, message: BaseMessage) -> str:
    if message.additional_kwargs.get("ctxi_thinking_stripped"):
        return "thinking stripped"
    event = next((e for e in step.events if e.layer in _EDITING_LAYERS or e.kind == "edit"), None)
    if event is not None:
        return f"{event.layer}.{event.kind}"
    return "a message changed in place"


def lost_price_per_token(price: Price | None, rules: CacheRules) -> float:
    """What a token costs when it is written again instead of read (0 without a price or a cache)."""
    if price is None or rules.kind == "none":
        return 0.0
    if rules.kind == "anthropic":
        return (write_price(price, rules.ttl) - price.cache_read) / PER_MILLION
    return (price.input - price.cache_read) / PER_MILLION


def agrees(recorded: str | None, ours: str | None) -> bool | None:
    """Whether our cause agrees with the recorded diagnosis (None: the recorded state is not scored)."""
    if recorded is None or recorded in NOT_SCORED:
        return None
    allowed = RECORDED_AGREES.get(recorded)
    if allowed is None:  # a type the docs do not list yet
        return None
    return ours in allowed


__all__ = ["CAUSES", "Miss", "NOT_SCORED", "RECORDED_AGREES", "agrees", "lost_price_per_token", "miss_cause"]
