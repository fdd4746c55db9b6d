"""Token counting: exact offline tiktoken encodings or LangChain's approximation, cached per message.

Counts are additive: a list of messages costs the sum of its messages, so a count can be cached
per message object and re-used by every step and every re-run that shares it.

A tiktoken counter has a *framing*: how a tool call and a tool result are turned into text before
they are counted. "openai" charges OpenAI's chat overheads (a few tokens per message and per call,
plus the arguments' JSON); "anthropic" counts the text Claude's tool-use prompt format renders
(namespaced `function_calls`/`invoke`/`parameter` blocks and `<function_results>` wrappers), which
is what a Claude model is sent. `counter_for_thread` picks the framing from the thread's source and model.
"""

from __future__ import annotations

import json
import os
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from typing import Any, Protocol, runtime_checkable

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately

from engine.base.gcpause import paused_gc
from engine.thread.kinds import text_category
from engine.tokens.content import (
    content_parts,
    content_without_call_blocks,
    media_tokens,
    message_text,
    render_function_calls,
    render_function_result,
    thinking_texts,
    tool_call_text,
)
from engine.tokens.encodings import buffer_length, load_encoding
from engine.tokens.segments import SEGMENT_CHARS, text_lines, text_segments

COUNTERS: tuple[str, ...] = ("o200k_base", "cl100k_base", "approximate")
DEFAULT_COUNTER = "o200k_base"
FRAMINGS: tuple[str, ...] = ("openai", "anthropic")
DEFAULT_FRAMING = "openai"
# Sources whose threads were sent to a Claude model, whatever model name they recorded.
ANTHROPIC_FORMATS: frozenset[str] = frozenset({"claude_code", "anthropic"})

# Per-message framing, as in OpenAI's chat token accounting: every message costs a few tokens
# beyond its text, and so does each tool call.
TOKENS_PER_MESSAGE = 3
TOKENS_PER_TOOL_CALL = 3


# tiktoken releases the GIL while encoding, so a batch can be shared out over cores: at most this
# many threads (more than the cores only adds waiting), and only over cores that are idle (_encode_workers).
_ENCODE_THREADS = max(1, min(8, os.cpu_count() or 1))
# Texts below which a share is not worth a thread (its start and hand-over cost more than it saves).
TEXTS_PER_WORKER = 64
# Cached one-category breakdowns below this many tokens are shared between messages (_CachedCounter._store).
SHARED_BELOW = 4096
# Messages laid out and encoded per batch in TiktokenCounter.prime (bounds its transient memory).
PRIME_CHUNK = 50_000
# Distinct tool schemas whose counts a counter keeps (count_tools); cleared when full.
SCHEMA_CACHE = 1024
# Summary lines whose counts a tiktoken counter keeps (`TiktokenCounter.count_lines`), and the longest
# line kept (the offline summary clips its lines to 240 characters; at most ~4 MB of text kept): a summary
# carries its earlier facts into the next one, and a re-run writes them again.
LINE_CACHE = 8_192
LINE_CACHE_CHARS = 500
# The encodings `engine.tokens.segments.text_lines` cuts exactly for (its comment says why).
_LINES_EXACT = frozenset({"o200k_base", "cl100k_base"})


@runtime_checkable
class TokenCounter(Protocol):
    """What layers, replay and the UI need from a token counter. Callable like LangChain's."""

    name: str

    def count_text(self, text: str) -> int: ...

    def breakdown(self, message: BaseMessage) -> Mapping[str, int]: ...

    def count_message(self, message: BaseMessage) -> int: ...

    def count_tools(self, tools: Sequence[Mapping[str, Any]]) -> int: ...

    def __call__(self, messages: Iterable[BaseMessage], **kwargs: Any) -> int: ...


class _CachedCounter:
    """Shared caching: a message's breakdown (and its total) is computed once per message object."""

    name: str = "base"

    def __init__(self) -> None:
        # id(message) -> (weak ref, content object, breakdown, total). The content object is kept so
        # a message whose content was reassigned in place (LangChain's trim_messages does that to
        # its copies while searching) is recounted instead of served a stale count.
        self._cache: dict[int, tuple[weakref.ref[BaseMessage], Any, dict[str, int], int]] = {}
        self._lock = threading.Lock()
        # One-category breakdowns shared by every message with the same count (most messages have
        # one category): a million tiny messages held a million equal dicts (bench/bench_inspect.py).
        # Callers only read breakdowns (`breakdown` returns a Mapping). Small counts only, so the
        # table stays small in a long-lived server.
        self._single: dict[tuple[str, int], dict[str, int]] = {}
        self._schemas: dict[str, int] = {}  # tool schema JSON -> tokens (count_tools)
        cache = self._cache

        def drop(ref: weakref.KeyedRef) -> None:  # one callback for all entries: the key rides on the ref
            entry = cache.get(ref.key)
            if entry is not None and entry[0] is ref:
                cache.pop(ref.key, None)

        self._drop = drop

    # subclasses implement the raw breakdown
    def _compute(self, message: BaseMessage) -> dict[str, int]:
        raise NotImplementedError

    def count_text(self, text: str) -> int:
        raise NotImplementedError

    def _cached(self, message: BaseMessage) -> dict[str, int] | None:
        hit = self._cache.get(id(message))
        if hit is not None and hit[0]() is message and hit[1] is message.content:
            return hit[2]
        return None

    def _store(self, message: BaseMessage, result: dict[str, int]) -> tuple[Any, Any, dict[str, int], int]:
        key = id(message)
        total = sum(result.values())
        if len(result) == 1 and total < SHARED_BELOW:
            (category,) = result
            result = self._single.setdefault((category, total), result)
        # a KeyedRef (stdlib, as WeakValueDictionary uses) with one shared callback: a closure per
        # message cost ~240 bytes each
        entry = (weakref.KeyedRef(message, self._drop, key), message.content, result, total)
        with self._lock:
            self._cache[key] = entry
        return entry

    def breakdown(self, message: BaseMessage) -> Mapping[str, int]:
        hit = self._cache.get(id(message))
        if hit is not None and hit[0]() is message and hit[1] is message.content:
            return hit[2]
        return self._store(message, self._compute(message))[2]

    def prime(self, messages: Iterable[BaseMessage]) -> None:
        """Pre-count many messages at once (a no-op unless the counter can batch)."""

    def count_message(self, message: BaseMessage) -> int:
        hit = self._cache.get(id(message))
        if hit is not None and hit[0]() is message and hit[1] is message.content:
            return hit[3]
        return self._store(message, self._compute(message))[3]

    def __call__(self, messages: Iterable[BaseMessage], **kwargs: Any) -> int:
        seq: Sequence[BaseMessage] = messages if isinstance(messages, (list, tuple)) else list(messages)
        get = self._cache.get
        total = 0
        missing: list[BaseMessage] = []
        for m in seq:
            hit = get(id(m))
            if hit is not None and hit[0]() is m and hit[1] is m.content:
                total += hit[3]
            else:
                missing.append(m)
        if missing:
            # one pass over a warm list (a re-run's are), then the misses in one batch when many
            if len(seq) > 64:
                self.prime(missing)
            for m in missing:
                total += self.count_message(m)
        tools = kwargs.get("tools")
        if tools:
            total += self.count_tools(tools)
        return total

    def count_tools(self, tools: Sequence[Any]) -> int:
        return sum(self._schema_tokens(json.dumps(tool_schema(t), ensure_ascii=False, sort_keys=True)) for t in tools)

    def _schema_tokens(self, schema: str) -> int:
        """A tool schema's count, once per distinct schema text: every model call's request sends
        the same tools, and a layer that counts them per call encoded them again each time."""
        known = self._schemas.get(schema)
        if known is None:
            if len(self._schemas) >= SCHEMA_CACHE:
                self._schemas.clear()
            known = self._schemas[schema] = self.count_text(schema)
        return known

    def invalidate(self, message: BaseMessage) -> None:
        """Forget a message's cached count (call after mutating a message in place)."""
        self._cache.pop(id(message), None)


def tool_schema(tool: Any) -> dict[str, Any]:
    """A tool as `{name, description, parameters}`, from a dict or a LangChain tool."""
    if isinstance(tool, Mapping):
        if "function" in tool and isinstance(tool["function"], Mapping):
            tool = tool["function"]
        return {
            "name": tool.get("name", ""),
            "description": tool.get("description", ""),
            "parameters": tool.get("parameters", tool.get("input_schema", tool.get("args_schema", {}))),
        }
    from langchain_core.utils.function_calling import convert_to_openai_tool

    fn = convert_to_openai_tool(tool)["function"]
    return {"name": fn.get("name", ""), "description": fn.get("description", ""), "parameters": fn.get("parameters", {})}


def _idle_cores() -> float:
    """Cores no runnable task is using, by the 1-minute load average (all of them where it is unknown)."""
    cpus = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # Windows has no load average
        return float(cpus)
    return max(0.0, cpus - load)


def _encode_workers(n_texts: int) -> int:
    """Threads to encode a batch of `n_texts` texts on: one per idle core, at least one.

    A thread only pays where it gets a core of its own. On a busy machine (other jobs on every
    core) two threads of ours shared the cores with them and with each other: in one process at
    load ~8 on 2 cores, the same batch took 1.03 s CPU on two threads and 0.77 s on one, and no
    less wall time (bench/bench_replay.py `first`, docs/benchmarks.md). So a batch is split only
    over the cores the load average leaves idle (rounded: a core 60 % idle counts). A process that
    has itself been busy for the last minute (a server, a benchmark) is in that average too, which
    errs toward fewer threads, the cheaper side in CPU.
    """
    most = min(_ENCODE_THREADS, n_texts // TEXTS_PER_WORKER)
    if most <= 1:
        return 1  # too few texts to share out: no need to read the load
    return max(1, min(most, int(_idle_cores() + 0.5)))


class TiktokenCounter(_CachedCounter):
    """Exact counts with a tiktoken encoding (o200k_base by default), loaded offline.

    `framing` says how tool calls and results become text (module docstring): "openai" or "anthropic".
    """

    def __init__(self, encoding: str = DEFAULT_COUNTER, framing: str = DEFAULT_FRAMING) -> None:
        super().__init__()
        if framing not in FRAMINGS:
            raise ValueError(f"unknown framing {framing!r}; choose one of {', '.join(FRAMINGS)}")
        self.name = encoding
        self.framing = framing
        self._encoding = load_encoding(encoding)
        import tiktoken  # imported by load_encoding

        self._tiktoken_ordinary = tiktoken.Encoding.encode_ordinary
        self._fast_length = buffer_length(self._encoding)
        self._lines: dict[str, int] = {}  # count_lines' cache

    def _length(self) -> Callable[[str], int]:
        """The token count of a text, as `len(encode_ordinary(text))`: a transcript that quotes
        "<|endoftext|>" counts it as text. From tiktoken's token buffer (`buffer_length`) where
        `encode_ordinary` is tiktoken's own; a wrapped or replaced one (a spy, a subclass) is called."""
        encode = self._encoding.encode_ordinary
        fast = self._fast_length
        if fast is not None and getattr(encode, "__func__", None) is self._tiktoken_ordinary:
            return fast
        return lambda text: len(encode(text))

    def count_text(self, text: str) -> int:
        if not text:
            return 0
        if len(text) <= SEGMENT_CHARS:
            return self._length()(text)
        return self._token_lengths([text])[0]  # long: in bounded segments, on the idle cores (engine.tokens.segments)

    def count_lines(self, text: str) -> int:
        """`count_text(text)`, line by line, each line's count kept: the same count
        (`engine.tokens.segments.text_lines` cuts only where tiktoken starts a new piece anyway).

        For summary text. A summary carries the facts of the one before it and of the messages it reads,
        line for line, and a re-run after a settings edit writes most of them again: encoding each new
        summary whole was ~7 % of a trigger edit's replay on the stress preset (2,000 steps, 49 summaries)."""
        if self.name not in _LINES_EXACT:
            return self.count_text(text)
        cache, length, total = self._lines, self._length(), 0
        for line in text_lines(text):
            n = cache.get(line)
            if n is None:
                if len(line) > LINE_CACHE_CHARS:
                    total += self.count_text(line)
                    continue
                if len(cache) >= LINE_CACHE:
                    cache.clear()
                n = cache[line] = length(line)
            total += n
        return total

    def prime(self, messages: Iterable[BaseMessage]) -> None:
        """Count every uncached message in one batch: tiktoken encodes the texts on the idle cores."""
        todo = [m for m in messages if self._cached(m) is None]
        if len(todo) < 8:
            return
        # in chunks: the layouts of a million messages at once held ~300 bytes each until the last was
        # counted (bench/bench_inspect.py); a chunk is still thousands of texts for the workers
        for start in range(0, len(todo), PRIME_CHUNK):
            self._prime(todo[start:start + PRIME_CHUNK])

    def _prime(self, todo: list[BaseMessage]) -> None:
        layouts = [self._layout(m) for m in todo]
        # distinct texts in first-seen order (sorting long texts would cost more than it saves)
        texts = list(dict.fromkeys(t for pieces, _ in layouts for _, t in pieces if t))
        lengths = dict(zip(texts, self._token_lengths(texts), strict=True))
        for m, (pieces, out) in zip(todo, layouts, strict=True):
            for category, text in pieces:
                if text:
                    out[category] += lengths[text]
            self._store(m, out)

    def _token_lengths(self, texts: list[str]) -> list[int]:
        """Token counts of many texts: one worker per idle core (`_encode_workers`), each encoding a
        contiguous share.

        tiktoken's own batch call submits one task per text, whose overhead eats the gain on
        thousands of texts; a few large shares keep the cores busy instead.
        """
        length = self._length()  # "<|endoftext|>" is text, as encode(disallowed_special=()) has it

        def lengths(share: list[str]) -> list[int]:
            return list(map(length, share))

        # A long text is counted in bounded segments (engine.tokens.segments: exact where tiktoken's pieces
        # break, so one huge unbroken run cannot make the count quadratic); segments of all texts
        # are shared out together, so one huge text also uses the idle cores.
        owners: list[int] | None = None
        if any(len(t) > SEGMENT_CHARS for t in texts):
            flat: list[str] = []
            owners = []
            for i, t in enumerate(texts):
                parts = text_segments(t)
                flat.extend(parts)
                owners.extend([i] * len(parts))
            texts = flat
        workers = _encode_workers(len(texts))
        if workers <= 1:
            counts = lengths(texts)
        else:
            size = -(-len(texts) // workers)
            shares = [texts[i : i + size] for i in range(0, len(texts), size)]
            with ThreadPoolExecutor(max_workers=workers) as pool:
                counts = [n for part in pool.map(lengths, shares) for n in part]
        if owners is None:
            return counts
        totals = [0] * (owners[-1] + 1 if owners else 0)
        for owner, n in zip(owners, counts, strict=True):
            totals[owner] += n
        return totals

    def _layout(self, message: BaseMessage) -> tuple[list[tuple[str, str]], dict[str, int]]:
        """The texts a message is counted as, each with its category, and fixed tokens per category.

        `_compute` and the batch path of `prime` both read this, so they always count the same texts.
        """
        category = text_category(message)
        content = content_without_call_blocks(message)
        # an AI message's thinking is its own category (issue 31: providers keep or drop it by their own rule)
        thoughts = thinking_texts(content) if isinstance(message, AIMessage) else []
        texts, media = content_parts(content, thinking=not thoughts)
        fixed = {category: TOKENS_PER_MESSAGE + sum(media_tokens(block, self.framing) for block in media)}
        if self.framing == "anthropic" and isinstance(message, ToolMessage):
            # The tool's name sits inside the wrapper, so it is not charged again below.
            wrapped = render_function_result(str(message.name or ""), "\n".join(texts), error=message.status == "error")
            return [(category, wrapped)], fixed
        pieces = [(category, t) for t in texts]
        if thoughts:
            fixed["thinking"] = 0
            pieces.extend(("thinking", t) for t in thoughts)
        if message.name:
            pieces.append((category, message.name))
            fixed[category] += 1
        if isinstance(message, AIMessage) and message.tool_calls:
            if self.framing == "anthropic":
                pieces.append(("tool_calls", render_function_calls(message.tool_calls)))
                fixed["tool_calls"] = 0
            else:
                fixed["tool_calls"] = TOKENS_PER_TOOL_CALL * len(message.tool_calls)
                for tc in message.tool_calls:
                    pieces.append(("tool_calls", str(tc.get("name", ""))))
                    pieces.append(("tool_calls", tool_call_text(tc)))
        return pieces, fixed

    def _compute(self, message: BaseMessage, count: Any = None) -> dict[str, int]:
        count = count or self.count_text
        pieces, out = self._layout(message)
        for category, text in pieces:
            if text:
                out[category] += self.count_lines(text) if category == "summary" else count(text)
        return out


class ApproximateCounter(_CachedCounter):
    """LangChain's `count_tokens_approximately` (chars / 4 + 3 per message), split by category."""

    name = "approximate"
    # LangChain's approximation has no tool-call rendering, so it ignores the framing it is asked for.
    framing = DEFAULT_FRAMING

    def __init__(self, chars_per_token: float = 4.0) -> None:
        super().__init__()
        self.chars_per_token = chars_per_token

    def count_text(self, text: str) -> int:
        import math

        return math.ceil(len(text) / self.chars_per_token) if text else 0

    def _compute(self, message: BaseMessage) -> dict[str, int]:
        try:
            total = count_tokens_approximately([message], chars_per_token=self.chars_per_token)
        except TypeError:
            # LangChain's counter looks block types up in a set, so an unhashable `type` (hostile or
            # broken input) raises; counted with that type as its JSON text instead, as the other counters do
            total = count_tokens_approximately([_hashable_block_types(message)], chars_per_token=self.chars_per_token)
        category = text_category(message)
        if isinstance(message, AIMessage) and (message.tool_calls or isinstance(message.content, list)):
            call_chars = len(repr(message.tool_calls)) if message.tool_calls and isinstance(message.content, str) else 0
            think_chars = sum(map(len, thinking_texts(message.content)))
            text_chars = len(message_text(message)) + 1 - think_chars
            whole = call_chars + think_chars + text_chars
            call_share = round(total * call_chars / whole) if call_chars else 0
            think_share = round(total * think_chars / whole) if think_chars else 0
            out = {category: total - call_share - think_share}
            if message.tool_calls:
                out["tool_calls"] = call_share
            if think_share:
                out["thinking"] = think_share
            return out
        return {category: total}

    def count_tools(self, tools: Sequence[Any]) -> int:
        # LangChain's own rule: a dict tool is dumped as it is, a BaseTool as {name, description,
        # parameters}; all characters summed, then one division (rounded up).
        return count_tokens_approximately([], tools=list(tools), chars_per_token=self.chars_per_token) if tools else 0


def _hashable_block_types(message: BaseMessage) -> BaseMessage:
    if not isinstance(message.content, list):
        return message
    content = [{**b, "type": json.dumps(b["type"], default=str)}
               if isinstance(b, dict) and "type" in b and not isinstance(b["type"], str) else b
               for b in message.content]
    return message.model_copy(update={"content": content})


@cache
def approximate_counter(chars_per_token: float = 4.0) -> ApproximateCounter:
    """The process-wide approximate counter with `chars_per_token` (LangChain uses 3.3 for Claude)."""
    return ApproximateCounter(chars_per_token)


@cache
def _shared_counter(name: str, framing: str) -> TokenCounter:
    if name == "approximate":
        return approximate_counter()
    return TiktokenCounter(name, framing)


def get_counter(name: str = DEFAULT_COUNTER, framing: str = DEFAULT_FRAMING) -> TokenCounter:
    """The process-wide counter for `name` (o200k_base, cl100k_base or approximate) and `framing`.

    `framing` is "openai" or "anthropic" (see the module docstring); the approximate counter ignores it.
    """
    if name not in COUNTERS:
        raise ValueError(f"unknown token counter {name!r}; choose one of {', '.join(COUNTERS)}")
    if framing not in FRAMINGS:
        raise ValueError(f"unknown framing {framing!r}; choose one of {', '.join(FRAMINGS)}")
    return _shared_counter(name, DEFAULT_FRAMING if name == "approximate" else framing)


def framing_for_thread(thread: Any) -> str:
    """"anthropic" for a thread a Claude model was sent (by source format or model name), else "openai"."""
    if getattr(thread, "source_format", None) in ANTHROPIC_FORMATS:
        return "anthropic"
    if "claude" in str(getattr(thread, "model", None) or "").lower():
        return "anthropic"
    return DEFAULT_FRAMING


def prime_thread(counter: TokenCounter, thread: Any) -> None:
    """Count a thread's and its sub-agents' messages in one batch (on the idle cores) where the counter can."""
    prime = getattr(counter, "prime", None)  # optional: a custom counter may not batch
    if prime is not None:
        # a batch lays out and caches thousands of messages: no cycles, so no cyclic collection
        # walking the whole thread meanwhile (engine.base.gcpause)
        with paused_gc():
            prime([*thread.messages, *(m for sub in thread.subagents.values() for m in sub.messages)])


def counter_for_thread(thread: Any, name: str | None = None) -> TokenCounter:
    """The shared counter `name` (default o200k_base) with the framing that fits `thread`."""
    return get_counter(name or DEFAULT_COUNTER, framing_for_thread(thread))


def breakdown_messages(counter: TokenCounter, messages: Iterable[BaseMessage]) -> dict[str, int]:
    """Tokens by category over a list of messages."""
    totals: dict[str, int] = {}
    for m in messages:
        for cat, n in counter.breakdown(m).items():
            totals[cat] = totals.get(cat, 0) + n
    return totals
