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

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import islice, repeat
from typing import Any

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
    blocks: Sequence[Block]  # a tuple, or a Joined sequence sharing its blocks with the previous request
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


class Joined(Sequence[Block]):
    """A request's blocks as parts, without copying them: each part is the first `n` blocks of a sequence.

    Requests that extend each other (a conversation growing step by step) hold prefixes of one
    append-only list of blocks (engine.cost.cache_run), so building a request and telling that it extends
    the previous one cost its new blocks, not the whole request (`extends`).
    """

    __slots__ = ("parts", "n")

    def __init__(self, *parts: tuple[Sequence[Block], int]) -> None:
        self.parts = tuple((seq, n) for seq, n in parts if n)
        self.n = sum(n for _, n in self.parts)

    @classmethod
    def of(cls, *pieces: Sequence[Block]) -> Joined:
        """The blocks of `pieces` in order (a Joined's parts are taken over, not nested)."""
        parts: list[tuple[Sequence[Block], int]] = []
        for piece in pieces:
            if isinstance(piece, Joined):
                parts.extend(piece.parts)
            else:
                parts.append((piece, len(piece)))
        return cls(*parts)

    def __len__(self) -> int:
        return self.n

    def __iter__(self) -> Iterator[Block]:
        for seq, n in self.parts:
            yield from (seq if len(seq) == n else islice(seq, n))

    def tail(self, start: int) -> Iterator[Block]:
        """The blocks from position `start` on."""
        for seq, n in self.parts:
            if start >= n:
                start -= n
                continue
            # a list or tuple slices at C speed; islice would step over the first `start` one by one
            yield from (seq[start:n] if isinstance(seq, (list, tuple)) else islice(seq, start, n))
            start = 0

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            start, stop, step = i.indices(self.n)
            if step == 1:  # the blocks from `start` on, without walking the ones before (engine.cost.split)
                return tuple(islice(self.tail(start), max(0, stop - start)))
            return tuple(self)[i]
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise IndexError(i)
        for seq, n in self.parts:
            if i < n:
                return seq[i]
            i -= n
        raise IndexError(i)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Joined, tuple, list)):
            return len(self) == len(other) and tuple(self) == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def extends(self, previous: Sequence[Block]) -> bool:
        """`previous` is a leading part of these blocks, told from the parts: the same leading parts
        (the same objects, or the same keys for a short part such as the prompt prefix) and the same
        list for the last one, at least as long. False does not say they differ (compare the keys)."""
        if not isinstance(previous, Joined) or not previous.parts or len(previous.parts) > len(self.parts):
            return False
        last = len(previous.parts) - 1
        for k, (seq, n) in enumerate(previous.parts):
            mine, m = self.parts[k]
            if k == last:
                return mine is seq and m >= n
            if m != n:
                return False
            if mine is not seq and (n > 8 or any(a.key != b.key for a, b in zip(islice(mine, n), islice(seq, n), strict=True))):
                return False
        return False


@dataclass
class _Layout:
    """A request as positions: per block its prefix hash, cumulative tokens and cumulative content blocks.

    The arrays may run past `size`: a later request that extends this one appends to them in place
    (O(new blocks) per step); whoever finds them longer than its own size copies before appending.
    """

    keys: list[str]
    hashes: list[int]
    cumulative: list[int]
    ends: list[int]
    flagged: list[int]  # blocks the agent marks with a breakpoint (besides the last)
    blocks: Sequence[Block] = ()  # the request's own blocks (the next request compares with them first)
    shared: int = 0  # leading blocks equal to `previous`'s (engine.cost.split: content sent before)
    size: int = 0
    # positions this layout compared with the previous request's, copied from it or computed: its cost
    # (a growing conversation's request costs its new blocks; tests count it instead of timing)
    work: int = 0


def layout(blocks: Sequence[Block], previous: _Layout | None = None) -> _Layout:
    """The positions of a request; the leading blocks it shares with `previous` (same keys) are taken
    from it, so a growing conversation costs only its new blocks.

    Hashes only decide equality inside one process, so Python's tuple hash serves (cumulative: a
    block's hash covers everything before it).
    """
    n = work = 0
    if previous is not None:
        keys = previous.keys
        shared = previous.size
        if isinstance(blocks, Joined) and shared <= len(blocks) and blocks.extends(previous.blocks):
            n = shared  # the same list of blocks, longer: nothing to compare
        elif shared == len(previous.blocks) and shared <= len(blocks) and tuple(blocks[:shared]) == tuple(previous.blocks):
            # the same Block objects lead (identity first, at C speed); equal blocks have equal keys
            n = work = shared
        else:
            new_keys = [b.key for b in blocks]
            work = len(new_keys)
            limit = min(shared, len(new_keys))
            if new_keys[:limit] == keys[:limit]:
                n = limit
            else:
                while n < limit and new_keys[n] == keys[n]:
                    n += 1
    if n and previous is not None:
        if n == previous.size == len(previous.hashes):  # nobody appended past it: extend its arrays in place
            out = _Layout(previous.keys, previous.hashes, previous.cumulative, previous.ends,
                          [i for i in previous.flagged if i < n])
        else:
            out = _Layout(previous.keys[:n], previous.hashes[:n], previous.cumulative[:n], previous.ends[:n],
                          [i for i in previous.flagged if i < n])
            work += n
    else:
        out = _Layout([], [], [], [], [])
    out.blocks = blocks
    out.shared = n
    h = out.hashes[n - 1] if n else 0
    tokens = out.cumulative[n - 1] if n else 0
    pos = out.ends[n - 1] if n else 0
    keys_, hashes, cumulative, ends, flagged = out.keys, out.hashes, out.cumulative, out.ends, out.flagged
    i = n
    for b in (blocks.tail(n) if isinstance(blocks, Joined) else blocks[n:]):
        h = hash((h, b.key))
        tokens += b.tokens
        pos += max(1, b.blocks)
        keys_.append(b.key)
        hashes.append(h)
        cumulative.append(tokens)
        ends.append(pos)
        if b.breakpoint:
            flagged.append(i)
        i += 1
    out.size = i
    out.work = work + i - n
    return out


def prefix_hashes(blocks: Sequence[Block]) -> list[int]:
    """The hash of every prefix of a request."""
    return layout(blocks).hashes


# An entry: (tokens of the prefix, its expiry cell). A cell is a one-item list holding when the entry
# expires (None: never). The prefixes of the latest OpenAI request share one cell, so re-sending them
# all (every step of a growing conversation) refreshes them in O(1) (see `PromptCache._send_openai`).
_Cell = list[float | None]
_Entry = tuple[int, _Cell]


@dataclass
class _Sent:
    """The previous request as the cache saw it: its layout, and the positions its cache reached."""

    layout: _Layout
    breakpoints: Sequence[int]  # block indices whose prefix it left cached
    cached_tokens: int

    @property
    def hashes(self) -> list[int]:
        return self.layout.hashes

    @property
    def cumulative(self) -> list[int]:
        return self.layout.cumulative

    @property
    def size(self) -> int:
        return self.layout.size


@dataclass
class PromptCache:
    """The provider-side cache of one conversation, fed its requests in order."""

    rules: CacheRules
    entries: dict[int, _Entry] = field(default_factory=dict)
    previous: _Sent | None = None
    last_time_s: float | None = None
    # OpenAI: the cell every prefix of the previous request holds, and how many of its prefixes that is
    chain: tuple[_Cell, int] | None = None
    # positions laid out (compared, copied, computed) and entries looked up or written, over every request:
    # what the requests cost, counted (a growing conversation costs its new blocks per step)
    work: int = 0

    def copy(self) -> PromptCache:
        """An independent cache in the same state (for counterfactual request streams).

        The entries are copied at C speed and their expiry cells shared: only a chain's cell is ever
        refreshed in place, so both sides drop their chain (the next request of each writes its prefixes
        with a cell of its own) and neither refreshes what the other holds.
        """
        self.chain = None
        return PromptCache(self.rules, dict(self.entries), self.previous, self.last_time_s)

    def _alive(self, entry: _Entry | None, now: float | None) -> bool:
        return entry is not None and _live(entry[1], now)

    def _expiry(self, now: float | None) -> float | None:
        return None if now is None else now + self.rules.lifetime_s

    def send(self, request: Request) -> CacheUse:
        blocks = request.blocks
        now = request.time_s
        if not blocks or self.rules.kind == "none":
            return self._send_uncached(request)
        lay = layout(blocks, self.previous.layout if self.previous is not None else None)
        self.work += lay.work
        total = lay.cumulative[lay.size - 1]
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
        self.chain = None
        return CacheUse(total=request.total, uncached=request.total, ttl=self.rules.ttl, gap_s=gap)

    # -- Anthropic: explicit breakpoints ---------------------------------------------------------
    def _send_anthropic(self, use: CacheUse, lay: _Layout, now: float | None) -> None:
        rules = self.rules
        hashes, cumulative, ends = lay.hashes, lay.cumulative, lay.ends  # ends: the lookback counts content blocks
        last = lay.size - 1
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
        self._attribute(use, lay, marked, hit, now)
        expiry = self._expiry(now)
        for bp in cacheable:
            self.entries[hashes[bp]] = (cumulative[bp], [expiry])
        if hit is not None:  # "refreshed ... each time the cached content is used"
            self.entries[hashes[hit]] = (cumulative[hit], [expiry])
        self.previous = _Sent(lay, cacheable, written_to if cacheable else read)
        self.chain = None

    def _attribute(self, use: CacheUse, lay: _Layout, marked: list[int], hit: int | None, now: float | None) -> None:
        """Split what the previous request left cached and this one did not read into its causes."""
        prev = self.previous
        if prev is None or not prev.cached_tokens:
            return
        hashes, ends = lay.hashes, lay.ends
        use.previous_cached = prev.cached_tokens
        shared = _common_prefix(prev.hashes, hashes, prev.size, lay.size)  # blocks both requests hold, in order
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
        """Every prefix of a processed prompt is cached; a request reads the longest live one.

        The prefixes of the previous request all hold one expiry cell (`chain`); a request that extends
        it (the usual step) looks only at its new blocks and that cell, and refreshes the cell instead
        of every prefix: O(new blocks). Any other request walks and writes every prefix, as stated.
        """
        rules = self.rules
        hashes, cumulative, size = lay.hashes, lay.cumulative, lay.size
        prev = self.previous
        shared = _common_prefix(prev.hashes, hashes, prev.size, size) if prev is not None else 0
        chain = self.chain
        extends = chain is not None and prev is not None and shared == prev.size == chain[1]
        floor = shared if extends else 0  # positions below it all hold the chain's cell
        found = next((i for i in range(size - 1, floor - 1, -1) if self._alive(self.entries.get(hashes[i]), now)), None)
        self.work += size - (found if found is not None else floor)
        longest = cumulative[found] if found is not None else None
        if longest is None:
            longest = cumulative[shared - 1] if extends and shared and _live(chain[0], now) else 0  # type: ignore[index]
        read = _rounded(longest, rules)
        use.read = read
        use.uncached = use.total - read
        use.too_short = use.total < rules.min_tokens
        if prev is not None and prev.cached_tokens:
            use.previous_cached = prev.cached_tokens
            reachable = prev.cumulative[shared - 1] if shared else 0
            use.rewritten = max(0, prev.cached_tokens - reachable)
            if reachable > longest:
                use.expired = _rounded(reachable, rules) - read
        expiry = self._expiry(now)
        if use.total >= rules.min_tokens:
            if extends:
                cell = chain[0]  # type: ignore[index]
                cell[0] = expiry  # every prefix the previous request sent is sent again: refreshed at once
                start = shared
            else:
                cell, start = [expiry], 0
            # (tokens, cell) pairs made by zip, at C speed
            self.entries.update(zip(hashes[start:size], zip(cumulative[start:size], repeat(cell)), strict=True))
            self.work += size - start
            self.chain = (cell, size)
        else:
            self.chain = None
        self.previous = _Sent(lay, range(size), _rounded(use.total, rules))


def _live(cell: _Cell, now: float | None) -> bool:
    expiry = cell[0]
    return now is None or expiry is None or now < expiry


def _rounded(tokens: int, rules: CacheRules) -> int:
    if tokens < rules.min_tokens:
        return 0
    return rules.min_tokens + (tokens - rules.min_tokens) // rules.increment_tokens * rules.increment_tokens


def _common_prefix(a: Sequence[int], b: Sequence[int], len_a: int | None = None, len_b: int | None = None) -> int:
    """How many leading blocks two requests share (their cumulative hashes agree up to there); `len_a`,
    `len_b`: the requests' sizes when their arrays run on (a shared layout)."""
    lo, hi = 0, min(len(a) if len_a is None else len_a, len(b) if len_b is None else len_b)
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
