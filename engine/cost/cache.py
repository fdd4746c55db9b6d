"""A provider's prompt cache, request by request: what each call read from it, wrote to it, and why it missed.

A request is a sequence of `Block`s in the order the provider renders them (tools, system, then the
messages); each block has a content key, its tokens, how many content blocks it holds, and whether
the agent marks a cache breakpoint at its end. `PromptCache.send(request)` answers like the
provider's usage fields (`CacheUse`). Two providers:

**Anthropic** (explicit breakpoints; https://platform.claude.com/docs/en/build-with-claude/prompt-caching,
read 2026-12-01 as archived in llms-txt-archive/anthropic-platform docs/en/build-with-claude/prompt-caching.md):
- "Prompt caching references the entire prompt - tools, system, and messages (in that order) up to and
  including the block designated with cache_control": an entry is the hash of a whole prefix.
- "Cache writes happen only at your breakpoint": each breakpoint of a request writes one entry.
- "Cache reads look backward for entries that prior requests wrote ... The lookback window is 20
  blocks ... counting the breakpoint itself as the first. If the system finds no matching entry in
  that window, checking stops (or resumes from the next explicit breakpoint, if any)."
- "By default, the cache has a 5-minute lifetime. The cache is refreshed for no additional cost each
  time the cached content is used." and "The lifetime is measured from the start of the request that
  writes or reads the cache entry"; a 1-hour TTL is available (`ttl: "1h"`).
- "Shorter prompts cannot be cached, even if marked with cache_control" (the minimum cacheable
  prompt length per model: engine/data/prices.yaml `min_cache_tokens`).
- usage: `cache_read_input_tokens` = tokens before the breakpoint already cached, `cache_creation_input_tokens`
  = tokens before the breakpoint being cached now, `input_tokens` = tokens after the last breakpoint.

**OpenAI** (automatic prefix caching; https://platform.openai.com/docs/guides/prompt-caching):
"Caching is enabled automatically for prompts that are 1024 tokens or longer", "cache hits occurring
in increments of 128 tokens ... 1024, 1152, 1280, 1408", "Cached prefixes generally remain active for
5 to 10 minutes of inactivity" (the low end is used), and the prefix cached is the longest one a
recent request already computed; writes carry no fee.

Our granularity is the message: a prefix matches up to the last message both requests share
exactly, and an entry sits at a message end or a prefix boundary (where agents put breakpoints).
Every number here is a function of the blocks and times given, so hand-made requests test each rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import repeat

ANTHROPIC_LOOKBACK_BLOCKS = 20
OPENAI_MIN_TOKENS = 1024
OPENAI_INCREMENT_TOKENS = 128
TTL_SECONDS: dict[str, float] = {"5m": 300.0, "1h": 3600.0}


@dataclass(frozen=True)
class Block:
    """One unit of a request: the prompt prefix, part of it, or one message."""

    key: str  # content fingerprint: equal keys are byte-identical content
    tokens: int
    blocks: int = 1  # API content blocks it holds (the lookback window counts them)
    breakpoint: bool = False  # the agent marks cache_control at its end (besides the last block)
    label: str = ""


@dataclass(frozen=True)
class Request:
    blocks: tuple[Block, ...]
    time_s: float | None = None  # when the request started (seconds); None: no timestamps recorded
    label: str = ""
    # the blocks' tokens when the caller already summed them as it built the request (engine.cost.cache_run
    # keeps running sums: summing every request again is O(view) per step)
    known_total: int | None = field(default=None, compare=False, repr=False)

    @cached_property
    def total(self) -> int:
        if self.known_total is not None:
            return self.known_total
        return sum(b.tokens for b in self.blocks)


@dataclass(frozen=True)
class CacheRules:
    """How one provider caches: `kind` "anthropic", "openai" or "none"."""

    kind: str
    ttl: str = "5m"
    min_tokens: int = 1024
    lookback_blocks: int = ANTHROPIC_LOOKBACK_BLOCKS
    increment_tokens: int = OPENAI_INCREMENT_TOKENS
    ttl_s: float | None = None  # overrides TTL_SECONDS[ttl] (OpenAI's retention)

    @property
    def lifetime_s(self) -> float:
        return self.ttl_s if self.ttl_s is not None else TTL_SECONDS.get(self.ttl, 300.0)


@dataclass
class CacheUse:
    """What one request did with the cache, in the provider's usage terms, and why it lost what it lost."""

    total: int
    read: int = 0
    write: int = 0
    uncached: int = 0
    ttl: str = "5m"
    # The previous request's cached prefix (its last breakpoint) and how much of it this request
    # could not reuse: `rewritten` because its content changed before that point (a compaction,
    # an edit, a layer's rewrite, stripped thinking), `expired` because the entry outlived its TTL,
    # `out_of_window` because it lay more than 20 blocks behind every breakpoint.
    previous_cached: int = 0
    rewritten: int = 0
    expired: int = 0
    out_of_window: int = 0
    too_short: bool = False  # below the model's minimum cacheable length: nothing cached
    gap_s: float | None = None  # seconds since the previous request

    @property
    def lost(self) -> int:
        return self.rewritten + self.expired + self.out_of_window

    @property
    def hit_rate(self) -> float | None:
        return round(self.read / self.total, 4) if self.total else None

    def to_dict(self) -> dict[str, object]:
        return {"read": self.read, "write": self.write, "uncached": self.uncached, "total": self.total,
                "ttl": self.ttl, "hit_rate": self.hit_rate, "previous_cached": self.previous_cached,
                "lost": self.lost, "rewritten": self.rewritten, "expired": self.expired,
                "out_of_window": self.out_of_window, "too_short": self.too_short,
                "gap_s": None if self.gap_s is None else round(self.gap_s, 3)}


# An entry: (tokens of the prefix, when it expires or None). Tuples, so a cache copies at C speed.
_Entry = tuple[int, float | None]


@dataclass
class _Layout:
    """A request as positions: per block its prefix hash, cumulative tokens and cumulative content blocks."""

    keys: list[str]
    hashes: list[int]
    cumulative: list[int]
    ends: list[int]
    flagged: list[int]  # blocks the agent marks with a breakpoint (besides the last)
    blocks: Sequence[Block] = ()  # the request's own blocks (the next request compares with them first)
    shared: int = 0  # leading blocks equal to `previous`'s (engine.cost.split: content sent before)


def layout(blocks: Sequence[Block], previous: _Layout | None = None) -> _Layout:
    """The positions of a request; the leading blocks it shares with `previous` (same keys) are copied,
    so a growing conversation costs only its new blocks.

    Hashes only decide equality inside one process, so Python's tuple hash serves (cumulative: a
    block's hash covers everything before it).
    """
    n = 0
    if previous is not None:
        keys = previous.keys
        shared = len(previous.blocks)
        if shared == len(keys) and tuple(blocks[:shared]) == tuple(previous.blocks):
            # the common case: the same Block objects lead (identity first, at C speed); equal blocks
            # have equal keys, so this is the keys' common prefix without listing every key
            n = shared
        elif (new_keys := [b.key for b in blocks])[: len(keys)] == keys:
            n = len(keys)
        else:
            limit = min(len(keys), len(blocks))
            while n < limit and new_keys[n] == keys[n]:
                n += 1
    if n and previous is not None:
        out = _Layout(previous.keys[:n], previous.hashes[:n], previous.cumulative[:n], previous.ends[:n],
                      [i for i in previous.flagged if i < n])
    else:
        out = _Layout([], [], [], [], [])
    out.blocks = blocks
    out.shared = n
    h = out.hashes[-1] if out.hashes else 0
    tokens = out.cumulative[-1] if out.cumulative else 0
    pos = out.ends[-1] if out.ends else 0
    for i in range(n, len(blocks)):
        b = blocks[i]
        h = hash((h, b.key))
        tokens += b.tokens
        pos += max(1, b.blocks)
        out.keys.append(b.key)
        out.hashes.append(h)
        out.cumulative.append(tokens)
        out.ends.append(pos)
        if b.breakpoint:
            out.flagged.append(i)
    return out


def prefix_hashes(blocks: Sequence[Block]) -> list[int]:
    """The hash of every prefix of a request."""
    return layout(blocks).hashes


@dataclass
class _Sent:
    """The previous request as the cache saw it: its layout, and the positions its cache reached."""

    layout: _Layout
    breakpoints: list[int]  # block indices whose prefix it left cached
    cached_tokens: int

    @property
    def hashes(self) -> list[int]:
        return self.layout.hashes

    @property
    def cumulative(self) -> list[int]:
        return self.layout.cumulative


@dataclass
class PromptCache:
    """The provider-side cache of one conversation, fed its requests in order."""

    rules: CacheRules
    entries: dict[int, _Entry] = field(default_factory=dict)
    previous: _Sent | None = None
    last_time_s: float | None = None

    def copy(self) -> PromptCache:
        """An independent cache in the same state (for counterfactual request streams)."""
        return PromptCache(self.rules, dict(self.entries), self.previous, self.last_time_s)

    def _alive(self, entry: _Entry | None, now: float | None) -> bool:
        return entry is not None and (now is None or entry[1] is None or now < entry[1])

    def _expiry(self, now: float | None) -> float | None:
        return None if now is None else now + self.rules.lifetime_s

    def send(self, request: Request) -> CacheUse:
        blocks = request.blocks
        now = request.time_s
        if not blocks or self.rules.kind == "none":
            return self._send_uncached(request)
        lay = layout(blocks, self.previous.layout if self.previous is not None else None)
        total = lay.cumulative[-1]
        gap = None if now is None or self.last_time_s is None else now - self.last_time_s
        use = CacheUse(total=total, ttl=self.rules.ttl, gap_s=gap)
        if now is not None:
            self.last_time_s = now
        if self.rules.kind == "openai":
            self._send_openai(use, lay, now)
        else:
            self._send_anthropic(use, lay, now)
        return use

    def _send_uncached(self, request: Request) -> CacheUse:
        now = request.time_s
        gap = None if now is None or self.last_time_s is None else now - self.last_time_s
        if now is not None:
            self.last_time_s = now
        self.previous = None
        return CacheUse(total=request.total, uncached=request.total, ttl=self.rules.ttl, gap_s=gap)

    # -- Anthropic: explicit breakpoints ---------------------------------------------------------
    def _send_anthropic(self, use: CacheUse, lay: _Layout, now: float | None) -> None:
        rules = self.rules
        hashes, cumulative, ends = lay.hashes, lay.cumulative, lay.ends  # ends: the lookback counts content blocks
        last = len(hashes) - 1
        marked = sorted({*lay.flagged, last})
        hit: int | None = None
        for bp in reversed(marked):
            for i in range(bp, -1, -1):
                if ends[bp] - ends[i] >= rules.lookback_blocks:
                    break
                if self._alive(self.entries.get(hashes[i]), now):
                    hit = i
                    break
            if hit is not None:
                break
        read = cumulative[hit] if hit is not None else 0
        cacheable = [bp for bp in marked if cumulative[bp] >= rules.min_tokens]
        written_to = max((cumulative[bp] for bp in cacheable), default=0)
        use.read = read
        use.write = max(0, written_to - read)
        use.uncached = use.total - max(read, written_to)
        use.too_short = not cacheable
        self._attribute(use, hashes, cumulative, ends, marked, hit, now)
        expiry = self._expiry(now)
        for bp in cacheable:
            self.entries[hashes[bp]] = (cumulative[bp], expiry)
        if hit is not None:  # "refreshed ... each time the cached content is used"
            self.entries[hashes[hit]] = (cumulative[hit], expiry)
        self.previous = _Sent(lay, cacheable, written_to if cacheable else read)

    def _attribute(self, use: CacheUse, hashes: list[int], cumulative: list[int], ends: list[int],
                   marked: list[int], hit: int | None, now: float | None) -> None:
        """Split what the previous request left cached and this one did not read into its causes."""
        prev = self.previous
        if prev is None or not prev.cached_tokens:
            return
        use.previous_cached = prev.cached_tokens
        shared = _common_prefix(prev.hashes, hashes)  # blocks both requests hold, in order
        # the longest entry the previous request left that this request still contains
        reachable_at = max((i for i in prev.breakpoints if i < shared), default=None)
        reachable = prev.cumulative[reachable_at] if reachable_at is not None else 0
        use.rewritten = max(0, prev.cached_tokens - reachable)
        if reachable > use.read and reachable_at is not None:
            entry = self.entries.get(hashes[reachable_at])
            in_window = any(0 <= ends[bp] - ends[reachable_at] < self.rules.lookback_blocks for bp in marked)
            # the search would have found a live entry inside a window (it looks at every position)
            if in_window and not self._alive(entry, now):
                use.expired = reachable - use.read
            else:
                use.out_of_window = reachable - use.read

    # -- OpenAI: automatic prefix caching ---------------------------------------------------------
    def _send_openai(self, use: CacheUse, lay: _Layout, now: float | None) -> None:
        rules = self.rules
        hashes, cumulative = lay.hashes, lay.cumulative
        longest = next((cumulative[i] for i in range(len(hashes) - 1, -1, -1)
                        if self._alive(self.entries.get(hashes[i]), now)), 0)
        read = _rounded(longest, rules)
        use.read = read
        use.uncached = use.total - read
        use.too_short = use.total < rules.min_tokens
        prev = self.previous
        if prev is not None and prev.cached_tokens:
            use.previous_cached = prev.cached_tokens
            shared = _common_prefix(prev.hashes, hashes)
            reachable = prev.cumulative[shared - 1] if shared else 0
            use.rewritten = max(0, prev.cached_tokens - reachable)
            if reachable > longest:
                use.expired = _rounded(reachable, rules) - read
        expiry = self._expiry(now)
        # every prefix of a processed prompt is cached (the longest one is what a later request finds)
        if use.total >= rules.min_tokens:
            # (tokens, expiry) pairs made by zip, at C speed: this runs over the whole request at every step
            self.entries.update(zip(hashes, zip(cumulative, repeat(expiry)), strict=True))
        self.previous = _Sent(lay, list(range(len(hashes))), _rounded(use.total, rules))


def _rounded(tokens: int, rules: CacheRules) -> int:
    if tokens < rules.min_tokens:
        return 0
    return rules.min_tokens + (tokens - rules.min_tokens) // rules.increment_tokens * rules.increment_tokens


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading blocks two requests share (their cumulative hashes agree up to there)."""
    lo, hi = 0, min(len(a), len(b))
    # cumulative hashes: once they differ they differ for good, so bisect
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[mid - 1] == b[mid - 1]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def simulate(requests: Sequence[Request], rules: CacheRules) -> list[CacheUse]:
    """Feed `requests` in order to a fresh cache; one CacheUse per request."""
    cache = PromptCache(rules)
    return [cache.send(r) for r in requests]


__all__ = ["Block", "CacheRules", "CacheUse", "PromptCache", "Request", "prefix_hashes", "simulate"]
