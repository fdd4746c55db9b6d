"""A Run's model calls as prompt-cache requests, and the cache rules its provider follows.

Each step's request is the prompt prefix (tool schemas, system prompt and the unrecorded prompt the
calibration measured) followed by the view's messages, each a `Block` keyed by its content, so two
requests share a cached prefix exactly as far as they send the same messages in the same order.

**Where the agent puts breakpoints.** Claude Code marks its system prompt blocks and exactly one
message block, the last (`addCacheBreakpoints`: "Exactly one message-level cache_control marker per
request"; `buildSystemPromptBlocks` via `splitSysPromptPrefix`, services/api/claude.ts and
utils/api.ts of Claude Code 2.1.88 as published). LangChain's `AnthropicPromptCachingMiddleware`
(langchain-anthropic 1.7, the one Deep Agents installs) marks the last tool, the system message and,
through top-level `cache_control`, the last cacheable block. Both are: a breakpoint at the end of
the prompt prefix and one at the end of the last message — the placement used for every run.

**Where the prompt prefix ends.** The transcript does not hold the agent's system prompt; the
calibration measures it together with whatever else the first request carried beyond our count
(Claude Code's first user message brings CLAUDE.md and other context with it). A recorded cache
read that stops inside that measured prompt, at a step after the first, marks where a breakpoint
was: the end of the system prompt (the longest such read is taken). The first call's read is not
used — it comes from other sessions sharing part of the prompt. Without such a read the whole
measured prompt counts as the prefix.

**When a request starts.** Anthropic measures a cache entry's lifetime "from the start of the request
that writes or reads" it; a request starts when its last input arrived: the recorded time of the
message just before the AI message (a tool result, the user's prompt), else the AI message's own.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from engine.cost.cache import Block, CacheRules, CacheUse, Joined, PromptCache, Request
from engine.cost.prices import price_for
from engine.run.run import Run, StepRecord
from engine.thread.model import Thread

OPENAI_TTL_S = 300.0  # "5 to 10 minutes of inactivity": the low end


def parse_time(text: str | None) -> float | None:
    """Seconds since the epoch of an ISO 8601 time, or None."""
    if not text or not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def message_key(message: BaseMessage) -> str:
    """A fingerprint of what the provider is sent for a message (equal keys: identical content)."""
    calls = [(tc.get("name"), tc.get("args"), tc.get("id")) for tc in message.tool_calls] \
        if isinstance(message, AIMessage) else None
    # repr, not JSON: keys only compare messages inside one run, where equal content has equal repr
    # (an attribute a message type lacks is an AttributeError raised inside pydantic: slow at a million messages)
    body = (message.type, message.content, calls, message.tool_call_id if isinstance(message, ToolMessage) else None)
    return hashlib.sha1(repr(body).encode("utf-8", "surrogatepass")).hexdigest()


def content_blocks(message: BaseMessage) -> int:
    """API content blocks a message becomes (Anthropic's lookback window counts blocks)."""
    if isinstance(message, ToolMessage):
        return 1
    content = message.content
    n = len(content) if isinstance(content, list) else (1 if content else 0)
    if isinstance(message, AIMessage) and message.tool_calls:
        listed = {b.get("id") for b in content if isinstance(b, dict) and b.get("type") in ("tool_use", "tool_call")} \
            if isinstance(content, list) else set()
        n += sum(1 for tc in message.tool_calls if tc.get("id") not in listed)
    return max(1, n)


def step_time(thread: Thread, step: StepRecord) -> float | None:
    """When the step's request started (see the module docstring), in epoch seconds, or None."""
    own = thread.timestamps.get(step.message_id)
    usage = thread.usage.get(step.message_id)
    own_s = parse_time(own or (usage.timestamp if usage else None))
    i = step.message_index
    if 0 < i <= len(thread.messages):
        before = thread.messages[i - 1]
        if not isinstance(before, AIMessage):
            t = parse_time(thread.timestamps.get(before.id or ""))
            if t is not None and (own_s is None or t <= own_s):
                return t
    return own_s


def prefix_boundary(thread: Thread, prompt_tokens: int, *, exclude: Iterable[str] = ()) -> int | None:
    """Where the recorded reads show the prompt prefix ends (see the module docstring), or None.

    `exclude`: AI message ids whose reads are not to be used (a leave-one-out check).
    """
    skip = set(exclude)
    first = next((m.id for m in thread.messages if isinstance(m, AIMessage) and m.id in thread.usage), None)
    reads = [u.cache_read_input_tokens for mid, u in thread.usage.items()
             if mid != first and mid not in skip and u.cache_read_input_tokens
             and 0 < u.cache_read_input_tokens < prompt_tokens]
    return max(reads) if reads else None


def provider_of(model: str | None) -> str:
    """'anthropic', 'openai' or 'none' by the model's name (the price table says which cache it uses)."""
    row = price_for(model)
    return row.cache if row is not None else "none"


def recorded_ttl(thread: Thread) -> str | None:
    """The TTL the source agent's writes used, when its usage records the split."""
    five = sum(u.cache_creation_5m_tokens or 0 for u in thread.usage.values())
    hour = sum(u.cache_creation_1h_tokens or 0 for u in thread.usage.values())
    if not five and not hour:
        return None
    return "1h" if hour > five else "5m"


def cache_rules(thread: Thread, config: Any = None, model: str | None = None) -> CacheRules:
    """The cache a run of `thread` meets: the config's `cost` section, else the model's provider."""
    cost = getattr(config, "cost", None)
    name = model or (cost.model if cost is not None and cost.model else None) or _model(thread, config)
    kind = cost.cache if cost is not None and cost.cache != "auto" else provider_of(name)
    row = price_for(name, overrides=cost.prices if cost is not None else ())
    if kind == "openai":
        return CacheRules("openai", ttl="5m", min_tokens=1024, ttl_s=OPENAI_TTL_S)
    ttl = cost.cache_ttl if cost is not None and cost.cache_ttl != "auto" else (recorded_ttl(thread) or "5m")
    return CacheRules(kind, ttl=ttl, min_tokens=(row.min_cache_tokens if row is not None else None) or 1024)


def _model(thread: Thread, config: Any) -> str | None:
    configured = getattr(getattr(config, "model", None), "name", None)
    if configured:
        return str(configured)
    if thread.model:
        return thread.model
    return next((u.model for u in thread.usage.values() if u.model), None)


def _prefix_blocks(step: StepRecord, messages_tokens: int, boundary: int | None,
                   keys: dict[tuple[int, tuple[str, ...], int, str | None], tuple[Any, str]] | None = None,
                   model: str | None = None) -> list[Block]:
    prefix = max(0, step.view_tokens - messages_tokens)
    if not prefix:
        return []
    key = _prefix_key(step, prefix, model) if keys is None else _known_prefix_key(step, prefix, keys, model)
    if boundary is not None and 0 < boundary < prefix:
        return [Block(key + ":system", boundary, 1, True, "prompt"),
                Block(key + ":rest", prefix - boundary, 1, False, "prompt (after the system prompt)")]
    return [Block(key, prefix, 1, True, "prompt")]


def _prefix_key(step: StepRecord, prefix: int, model: str | None = None) -> str:
    # the model is part of the key: "The cache is per-model" (Anthropic, cache diagnostics, `model_changed`)
    system = step.system.content if step.system is not None else None
    body = [system, list(step.tool_names), prefix] + ([model] if model else [])
    return hashlib.sha1(json.dumps(body, default=str).encode()).hexdigest()


def _known_prefix_key(step: StepRecord, prefix: int,
                      keys: dict[tuple[int, tuple[str, ...], int, str | None], tuple[Any, str]],
                      model: str | None = None) -> str:
    """`_prefix_key`, made once per system message object, tool names, prefix size and model (most steps of a
    run share one system message: dumping and hashing it again is O(prompt) per step). The entry keeps the
    message alive, so its id cannot be reused by another object."""
    cache_key = (id(step.system), step.tool_names, prefix, model)
    hit = keys.get(cache_key)
    if hit is None or hit[0] is not step.system:
        if len(keys) >= 256:  # a layer rebuilding the system message every step
            keys.clear()
        hit = keys[cache_key] = (step.system, _prefix_key(step, prefix, model))
    return hit[1]


def step_models(run: Run) -> list[str | None]:
    """The model each step's call went to, as recorded (the last recorded one carried forward; the thread's
    model before any): a switch of model starts a new cache."""
    current = run.thread.model
    out: list[str | None] = []
    for step in run.steps:
        usage = run.thread.usage.get(step.message_id)
        if usage is not None and usage.model:
            current = usage.model
        out.append(current)
    return out


KEPT_STEPS = 4


def _extends(view: Sequence[BaseMessage], last: Sequence[BaseMessage]) -> bool:
    """`view` starts with exactly the messages of `last` (the same objects). Two Snapshots of one
    list (engine.run.replay: the driver only appends to it) answer in O(1); otherwise compared at C speed."""
    src = getattr(view, "src", None)
    if src is not None and getattr(last, "src", None) is src:
        return True  # the caller checked len(last) <= len(view)
    return tuple(view[: len(last)]) == tuple(last)


class RequestBuilder:
    """Steps of one run as cache requests (message keys made once per message object).

    The blocks of views that extend each other are one list, only appended to: a step's request holds
    the first blocks of it (engine.cost.cache.Joined), so a step costs its new messages, not its view.
    """

    def __init__(self, run: Run, boundary: int | None = None) -> None:
        self.run = run
        self.boundary = boundary
        self._blocks: dict[int, tuple[BaseMessage, Block]] = {}
        # the last view asked for, the block list its blocks lead (only ever appended to) and their tokens
        self._last: tuple[Sequence[BaseMessage], list[Block], int, int] | None = None
        # the last few steps' block sequences (pricing asks for a step and the one before it: a summarizer
        # call, a payback); an older step is rebuilt from the per-message blocks, which are the same
        # objects, so a rebuilt sequence is equal to the one dropped
        self._per_step: dict[int, tuple[Any, Joined]] = {}
        self._tokens: dict[int, int] = {}
        self._prefix_keys: dict[tuple[int, tuple[str, ...], int, str | None], tuple[Any, str]] = {}
        self.models = step_models(run)
        self.work = 0  # blocks listed for the views asked (counted by tests: a step costs its new messages)

    def block(self, message: BaseMessage) -> Block:
        """The message as a cache block (made once per message object: counts are fixed per object)."""
        hit = self._blocks.get(id(message))
        if hit is None or hit[0] is not message:
            made = Block(message_key(message), self.run.counter.count_message(message), content_blocks(message),
                         False, message.type)
            hit = self._blocks[id(message)] = (message, made)
        return hit[1]

    def messages(self, step: StepRecord) -> Joined:
        """The view's messages as blocks (kept per step). A view that starts with the previous view's
        messages (the same objects, as most steps do) appends its new blocks to the previous view's list:
        a step costs its new ones."""
        hit = self._per_step.get(step.index)
        if hit is not None and hit[0] is step.view:
            return hit[1]
        view = step.view
        last = self._last
        n = last[3] if last is not None else 0
        last_chain = last[1] if last is not None else None
        if last is not None and n <= len(view) and len(last[1]) == n and _extends(view, last[0]):
            chain = last[1]
            new = [self.block(m) for m in view[n:]]
            chain.extend(new)
            tokens = last[2] + sum(b.tokens for b in new)  # a running sum: the step costs its new blocks
        else:
            chain = [self.block(m) for m in view]
            tokens = sum(b.tokens for b in chain)
        self.work += len(view) - n if chain is last_chain else len(view)
        # a Snapshot is kept as it is (its first messages never change: engine.run.replay), anything else copied
        self._last = (view if hasattr(view, "src") else tuple(view), chain, tokens, len(view))
        self._tokens[step.index] = tokens
        blocks = Joined((chain, len(view)))
        self._per_step[step.index] = (view, blocks)
        while len(self._per_step) > KEPT_STEPS:
            del self._per_step[next(iter(self._per_step))]  # the oldest entry (dicts keep insertion order)
        return blocks

    def messages_tokens(self, step: StepRecord) -> int:
        """Tokens of the view's messages (kept per step)."""
        hit = self._tokens.get(step.index)
        if hit is None:
            hit = self._tokens[step.index] = sum(b.tokens for b in self.messages(step))
        return hit

    def request(self, step: StepRecord, extra: Iterable[BaseMessage] = (), *, label: str = "",
                time_s: float | None = None) -> Request:
        body = self.messages(step)
        body_tokens = self.messages_tokens(step)
        model = self.models[step.index] if step.index < len(self.models) else None
        prefix = _prefix_blocks(step, body_tokens, self.boundary, self._prefix_keys, model)
        more = [self.block(m) for m in extra]
        when = time_s if time_s is not None else step_time(self.run.thread, step)
        total = sum(b.tokens for b in prefix) + body_tokens + sum(b.tokens for b in more)
        return Request(Joined.of(prefix, body, more), when, label or f"step {step.index}", known_total=total)


def default_boundary(run: Run) -> int | None:
    """The prompt-prefix boundary of the run's thread (from its recorded reads), for its first step."""
    if not run.steps:
        return None
    first = run.steps[0]
    prompt = first.view_tokens - sum(run.counter.count_message(m) for m in first.view)
    return prefix_boundary(run.thread, prompt)


def simulate_run(run: Run, rules: CacheRules | None = None, boundary: int | None = -1) -> list[CacheUse]:
    """The modelled cache use of every step (boundary -1: measured from the thread's recorded reads)."""
    rules = rules or cache_rules(run.thread, run.config)
    builder = RequestBuilder(run, default_boundary(run) if boundary == -1 else boundary)
    cache = PromptCache(rules)
    return [cache.send(builder.request(s)) for s in run.steps]


def reproduction(run: Run, tolerance: float = 0.05) -> list[dict[str, Any]]:
    """The modelled cache read of every recorded step after the first next to the recorded one.

    The prompt-prefix boundary is measured leave-one-out: for each step, from the recorded reads of
    the *other* steps, so a step's own read never decides its prediction. The first call is left
    out: what it reads was cached by other sessions. `error` is |modelled − recorded| / recorded
    (/ the request when nothing was read); `ok` when it is within `tolerance`.
    """
    if not run.steps:
        return []
    first = run.steps[0]
    prompt = first.view_tokens - sum(run.counter.count_message(m) for m in first.view)
    thread = run.thread
    rules = cache_rules(thread, run.config)
    by_boundary: dict[int | None, list[CacheUse]] = {}
    out: list[dict[str, Any]] = []
    for step in run.steps[1:]:
        usage = thread.usage.get(step.message_id)
        if usage is None or usage.context_tokens is None:
            continue
        boundary = prefix_boundary(thread, prompt, exclude=(step.message_id,))
        if boundary not in by_boundary:
            by_boundary[boundary] = simulate_run(run, rules, boundary)
        use = by_boundary[boundary][step.index]
        recorded = usage.cache_read_input_tokens or 0
        error = abs(use.read - recorded) / (recorded or max(1, usage.context_tokens))
        out.append({"step": step.index, "recorded_read": recorded, "modelled_read": use.read,
                    "recorded_write": usage.cache_creation_input_tokens, "modelled_write": use.write,
                    "error": round(error, 6), "ok": error <= tolerance, "gap_s": use.gap_s})
    return out


__all__ = ["RequestBuilder", "cache_rules", "content_blocks", "default_boundary", "message_key", "parse_time",
           "prefix_boundary", "provider_of", "recorded_ttl", "reproduction", "simulate_run", "step_models", "step_time"]
