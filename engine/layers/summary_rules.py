"""What a summary is made of: the trimmed input, the prompt, the summary message's texts and ids.

LangChain's summary input rules (langchain 1.5.2, `libs/langchain_v1/langchain/agents/middleware/summarization.py`:
`_trim_messages_for_summary`, `_create_summary`, `_build_new_messages`) and Deep Agents' view-mode
projection (deepagents 0.7.32, `middleware/summarization.py`: `_apply_event_to_messages`,
`_compute_state_cutoff`, `_build_new_messages_with_path`). Pure functions and texts.
"""

from __future__ import annotations

import hashlib
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from itertools import compress
from typing import Annotated, Any, ClassVar, NotRequired

from langchain.agents.middleware.summarization import DEFAULT_SUMMARY_PROMPT
from langchain.agents.middleware.types import AgentState, PrivateStateAttr
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.utils import get_buffer_string, trim_messages

from engine.thread.kinds import message_kind
from engine.thread.lazytext import LazyText
from engine.thread.model import stable_id
from engine.tokens.content import message_text

SUMMARY_EVENT_KEY = "_summarization_event"  # Deep Agents' private state key for the view-mode event


class SummaryEventState(AgentState):
    """Agent state with the private view-mode event: a middleware sees a private key in
    `request.state` inside `create_agent` only when its own state schema declares it."""

    _summarization_event: NotRequired[Annotated[dict[str, Any] | None, PrivateStateAttr]]
DEFAULT_TRIM_TOKENS = 4000  # LangChain's _DEFAULT_TRIM_TOKEN_LIMIT
FALLBACK_MESSAGE_COUNT = 15  # LangChain summarizes the last 15 messages when trimming fails

STATE_SUMMARY_TEMPLATE = "Here is a summary of the conversation to date:\n\n{summary}"
VIEW_SUMMARY_TEMPLATE = """You are in the middle of a conversation that has been summarized.

The full conversation history has been saved to {file_path} should you need to refer back to it for details.

A condensed summary follows:

<summary>
{summary}
</summary>"""
# Deep Agents' default prompt: LangChain's with a media note spliced in before `<messages>`
# (deepagents 0.7.32, middleware/summarization.py: DEEPAGENTS_DEFAULT_SUMMARY_PROMPT).
MEDIA_REFERENCE_SUMMARY_PROMPT = """<media_reference_information>
Conversation history may include XML media reference tags, for example:
<image url=\"/conversation_history/media/{{hash}}.png\" />
These tags mean the original message included media that was preserved at the referenced backend path.
Treat the tag and path as part of the conversation context. Do not infer visual details that are not available from surrounding text.
When the media could be important for future context, preserve the media reference in your summary.
The model consuming the summary can call `read_file` on the referenced path if it needs to inspect the media.
</media_reference_information>"""  # noqa: E501
DEEPAGENTS_SUMMARY_PROMPT = DEFAULT_SUMMARY_PROMPT.replace(
    "\n<messages>\n", f"\n{MEDIA_REFERENCE_SUMMARY_PROMPT}\n\n<messages>\n", 1)
NO_HISTORY = "No previous conversation history."
TOO_LONG = "Previous conversation was too long to summarize."


class _FreshCounter:
    """The counter for trim_messages, which edits a copied message's content in place while it
    searches for a partial fit: a per-object count cache would return the stale count.

    It is handed over as an object with `get_num_tokens_from_messages` (langchain-core 1.8
    `trim_messages` calls that method as the list counter, the same as calling a list-counting
    function) so trim_messages does not build the function's `inspect.signature` at every call.
    """

    __slots__ = ("counter", "known", "invalidate")

    def __init__(self, counter: Callable[..., int], originals: Sequence[BaseMessage]) -> None:
        self.counter = counter
        self.known = {id(m) for m in originals}
        self.invalidate = getattr(counter, "invalidate", None)

    def __call__(self, messages: list[BaseMessage]) -> int:
        invalidate, known = self.invalidate, self.known
        # only a partial copy is new: the check runs at C speed, the loop only when one is there
        if invalidate is not None and not known.issuperset(map(id, messages)):
            for m in messages:
                if id(m) not in known:
                    invalidate(m)
        return self.counter(messages)

    get_num_tokens_from_messages = __call__


def trim_for_summary(messages: Sequence[BaseMessage], max_tokens: int | None,
                     counter: Callable[..., int], *,
                     floor: Callable[[BaseMessage], int] | None = None) -> list[BaseMessage]:
    """The newest messages within `max_tokens`, starting on a human message (LangChain's trim call:
    `trim_messages(..., start_on="human", strategy="last", allow_partial=True, include_system=True)`,
    langchain 1.5.2 `SummarizationMiddleware._trim_messages_for_summary`).

    `floor`, when given, is a per-message count whose sum over any list is at most `counter`'s count
    of that list (trim_whole_messages reads it to skip counting what cannot fit)."""
    if max_tokens is None:
        return list(messages)
    try:
        # every list trim_whole_messages counts is made of `messages` themselves (no partial copy
        # whose count could be stale), so it counts with `counter` as it is
        whole = trim_whole_messages(messages, max_tokens, counter, floor)
        if whole is not None:
            return whole
        count = _FreshCounter(counter, messages)
        trimmed = trim_messages(list(messages), max_tokens=max_tokens, token_counter=count,
                                start_on="human", strategy="last", allow_partial=True, include_system=True)
    except Exception:  # LangChain falls back to the last 15 messages on any trimming error
        return list(messages[-FALLBACK_MESSAGE_COUNT:])
    count(trimmed)  # forget counts cached for the partial copy mid-search
    return trimmed


def trim_whole_messages(messages: Sequence[BaseMessage], max_tokens: int,
                        count: Callable[[list[BaseMessage]], int],
                        floor: Callable[[BaseMessage], int] | None = None) -> list[BaseMessage] | None:
    """trim_for_summary's result when no partial message can be part of it, else None (call trim_messages).

    langchain-core 1.8 `messages/utils.py`, step for step with the same counter calls:
    `_last_max_tokens` sets a leading system message aside (its tokens off the limit) and reverses
    the rest; `_first_max_tokens` returns everything when it fits, else binary-searches how many of
    the newest messages fit (`idx`), copies the next one and fits part of its text, then drops
    messages from the oldest end until one is a human message (`end_on=start_on="human"`,
    `_is_message_type`: `message.type == "human"`). A partial copy of a message that is not human
    is always dropped again, and what remains is the whole-message result: so when the next
    message is not human and has a string content (whose copy and split cannot raise and send
    trimming to its fallback), the result is the newest `idx` messages minus that oldest non-human
    run, computed here without trim_messages' deep copy, line split and probes.

    With `floor` (a nonnegative per-message count whose sum never exceeds `count` of the same list:
    LangChain's approximate count is the sum of its per-message counts, and usage scaling only
    multiplies it by a factor in [1, 1.25], then rounds up), every prefix at least as long as the
    shortest one whose floor sum is over the limit is over it too: the search's answer for those
    is known without counting them, so the whole list (everything older than the 4,000 tokens
    trimmed to) is not counted. The search takes the same branches, so the result is the same.
    """
    rest = list(messages)
    # by type, once per class (a negative answer only sends the list to trim_messages, which gives the same)
    if not all(issubclass(t, BaseMessage) for t in set(map(type, rest))):
        return None  # trim_messages converts other inputs first
    system: BaseMessage | None = None
    limit = max_tokens
    if rest and isinstance(rest[0], SystemMessage):
        system = rest[0]
        limit = max(0, max_tokens - count([system]))
        rest = rest[1:]
    newest_first = rest[::-1]
    idx = len(newest_first)
    over_from = idx + 1  # prefixes this long or longer are over the limit (floor sums)
    if floor is not None:
        acc = 0
        for k, m in enumerate(newest_first, 1):
            c = floor(m)
            if c < 0:  # not a floor of a growing sum: count every probe
                break
            acc += c
            if acc > limit:
                over_from = k
                break

    def over(k: int) -> bool:
        return k >= over_from or count(newest_first[:k]) > limit

    if newest_first and over(len(newest_first)):
        left, right = 0, len(newest_first)
        for _ in range(len(newest_first).bit_length()):  # _first_max_tokens' search, step for step
            if left >= right:
                break
            mid = (left + right + 1) // 2
            if not over(mid):
                left = mid
            else:
                right = mid - 1
        if left >= len(newest_first):
            return None
        candidate = newest_first[left]
        if candidate.type == "human" or not isinstance(candidate.content, str):
            return None  # a partial copy may stay
        idx = left
    while idx > 0 and newest_first[idx - 1].type != "human":
        idx -= 1
    kept = newest_first[:idx][::-1]
    return [system, *kept] if system is not None else kept


def format_prompt(template: str, messages: Sequence[BaseMessage]) -> str:
    return template.format(messages=get_buffer_string(list(messages), format="xml")).rstrip()


# The message types get_buffer_string renders (langchain-core 1.8, messages/utils.py); any other
# raises, so a prompt with one is rendered at once, where it always failed, not when it is read.
_RENDERED = (HumanMessage, AIMessage, SystemMessage, ToolMessage, ChatMessage, FunctionMessage)
_SLOT = "\x00ctxi-messages\x00"


def renders_lazily(messages: Sequence[BaseMessage]) -> bool:
    return bool(messages) and all(isinstance(m, _RENDERED) for m in messages)


class SummaryPrompt(LazyText):
    """`format_prompt(template, messages)`, rendered when read; the messages are the run's own objects."""

    __slots__ = ()

    def __init__(self, template: str, messages: Sequence[BaseMessage]) -> None:
        super().__init__(format_prompt, template, tuple(messages))

    def frame(self) -> tuple[str, str]:
        """The prompt before its first `<message` and after its last `</message>`, without rendering it.

        get_buffer_string(format="xml") renders every message as one `<message …>…</message>`
        element whose text and attributes are escaped (langchain-core 1.8, messages/utils.py), so
        the rendered messages start with the first `<message` and end with the last `</message>`
        unless the template's own text around its one `{messages}` slot holds one (LangChain's
        default prompt wraps the slot in `<messages>…</messages>`): then that one is the first
        or the last, and neither tag can be formed across the slot's edges. Otherwise (no slot,
        or several) the prompt is rendered.
        """
        template, messages = self._args
        marked = template.format(messages=_SLOT)
        if messages and _SLOT not in template and marked.count(_SLOT) == 1:
            head, tail = marked.split(_SLOT)
            head = head.split("<message", 1)[0]
            tail = tail.rsplit("</message>", 1)[-1] if "</message>" in tail else tail
            return head, tail.rstrip()
        text = str(self)
        return text.split("<message", 1)[0], (text.rsplit("</message>", 1)[-1] if "</message>" in text else "")


def summary_prompt(template: str, messages: Sequence[BaseMessage]) -> str | SummaryPrompt:
    """The summary prompt, lazily when its messages can be rendered later exactly as now."""
    return SummaryPrompt(template, messages) if renders_lazily(messages) else format_prompt(template, messages)


def _history_section(stamp: str, messages: tuple[BaseMessage, ...]) -> str:
    originals = [m for m in messages
                 if not (isinstance(m, HumanMessage) and m.additional_kwargs.get("lc_source") == "summarization")]
    return f"## Summarized at {stamp}\n\n{get_buffer_string(originals, format='xml')}\n\n"


def history_section(messages: Sequence[BaseMessage], stamp: str) -> str | LazyText:
    """One appended section of the history file (Deep Agents' `_offload_to_backend`): earlier summary
    messages left out, the rest in LangChain's XML buffer format; lazily when it renders the same later."""
    if renders_lazily(messages):
        return LazyText(_history_section, stamp, tuple(messages))
    return _history_section(stamp, tuple(messages))


# Deep Agents' reasoning blocks bound to the conversation before them (deepagents 0.7.32,
# middleware/summarization.py: _NATIVE_REASONING_BLOCK_TYPES, _bound_reasoning_types).
NATIVE_REASONING_BLOCK_TYPES = frozenset({"thinking", "redacted_thinking", "reasoning_content"})
_BEDROCK_PROVIDERS = frozenset({"bedrock", "bedrock_converse"})


def bound_reasoning_types(message: AIMessage) -> frozenset[str]:
    """Reasoning block types Claude binds to earlier history: untagged messages lose the native types,
    Anthropic (and Claude on Bedrock) also `reasoning`, any other provider keeps its reasoning."""
    provider = message.response_metadata.get("model_provider")
    if provider is None:
        return NATIVE_REASONING_BLOCK_TYPES
    model = str(message.response_metadata.get("model_name", "")).lower()
    if provider == "anthropic" or (provider in _BEDROCK_PROVIDERS and ("claude" in model or "anthropic" in model)):
        return NATIVE_REASONING_BLOCK_TYPES | {"reasoning"}
    return frozenset()


def drop_bound_reasoning(message: BaseMessage) -> BaseMessage:
    """A message kept from before a summary without its bound reasoning blocks (Deep Agents'
    `_drop_bound_reasoning`): Claude can reject a request once the conversation before them changed."""
    if not isinstance(message, AIMessage) or not isinstance(message.content, list):
        return message
    bound = bound_reasoning_types(message)
    content = [b for b in message.content if not (isinstance(b, dict) and b.get("type") in bound)]
    if len(content) == len(message.content):
        return message
    return message.model_copy(update={"content": content})


class CachedDrop:
    """`drop_bound_reasoning` with one copy per message object, so projections re-use counted objects."""

    # how a checkpoint keeps each run-time attribute (engine/layers/checkpoint.py)
    checkpoint_kinds: ClassVar[dict[str, str]] = {"_copies": "memo", "_span": "value"}

    def __init__(self) -> None:
        self._copies: dict[int, tuple[BaseMessage, BaseMessage]] = {}
        self._span: tuple[tuple[BaseMessage, ...], list[BaseMessage]] = ((), [])

    def span(self, messages: Sequence[BaseMessage]) -> list[BaseMessage]:
        """`[self(m) for m in messages]`, re-used while the same messages come again: one summary's
        span `messages[cutoff:created_at_index]` is projected at every call until the next summary."""
        src, out = self._span
        if len(src) == len(messages) and all(map(operator.is_, src, messages)):  # identity, at C speed
            return out
        out = list(map(self, messages))
        self._span = (tuple(messages), out)
        return out

    def __call__(self, message: BaseMessage) -> BaseMessage:
        hit = self._copies.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        copy = drop_bound_reasoning(message)
        self._copies[id(message)] = (message, copy)
        return copy


def apply_event(messages: Sequence[BaseMessage], event: Mapping[str, Any] | None,
                drop: Callable[[BaseMessage], BaseMessage] = drop_bound_reasoning) -> list[BaseMessage]:
    """Deep Agents' projection: `[summary, *messages[cutoff:]]` once an event exists.

    Messages kept verbatim from before the summary (`cutoff <= i < created_at_index`) lose their
    bound reasoning blocks; an event without `created_at_index` drops none.
    """
    if not event:
        return list(messages)
    cutoff = int(event["cutoff_index"])
    if cutoff > len(messages):
        return [event["summary_message"]]
    kept_from = event.get("created_at_index")
    if not isinstance(kept_from, int) or kept_from <= cutoff:
        return [event["summary_message"], *messages[cutoff:]]
    span = messages[cutoff:kept_from]
    dropped = drop.span(span) if isinstance(drop, CachedDrop) else map(drop, span)
    return [event["summary_message"], *dropped, *messages[kept_from:]]


class Projection:
    """`apply_event(messages, event, drop)` for a layer that projects at every model call, re-used
    while the same messages come again grown: `messages` the very list object of the last call,
    holding at least as many messages, the last one seen still in its place, and `event` the same
    object. The projection made last time is then extended in place by the new messages, so the
    lists a layer counts stay one list only appended to, and the running counts over it take their
    O(1) path (engine.layers.approximate `RunningScaledCount._grown`) instead of an O(view)
    comparison and copy per call.

    Such a list only grows (the replay driver's state: it forks the list before any replacement;
    layers override the request's messages, never mutate them; the filesystem layer's truncated
    view changes a slot it handed over only below the summary's cutoff, which no projection reads:
    `FilesystemLayer._view_list`), so its projected part is unchanged and the new messages follow
    the summary's drop span (they come after `created_at_index`, the state's length when the
    summary was made). Extending the list returned last time is safe for its holders: the layers
    inside read a request's list as one that only grows (their scans are kept by list identity the
    same way), and the step's view is copied into the driver's own log (`engine.run.step_sums.ViewLog`).
    """

    __slots__ = ("event", "n", "out", "src", "tail")
    # how a checkpoint keeps each run-time attribute (engine/layers/checkpoint.py): `out` is only extended
    checkpoint_kinds: ClassVar[dict[str, str]] = {"event": "value", "n": "value", "out": "grow", "src": "value",
                                                  "tail": "value"}

    def __init__(self) -> None:
        self.src: Sequence[BaseMessage] | None = None
        self.n = 0
        self.tail: BaseMessage | None = None
        self.event: Mapping[str, Any] | None = None
        self.out: list[BaseMessage] = []

    def __call__(self, messages: Sequence[BaseMessage], event: Mapping[str, Any] | None,
                 drop: Callable[[BaseMessage], BaseMessage] = drop_bound_reasoning) -> list[BaseMessage]:
        n = self.n
        if (messages is self.src and type(messages) is list and event is self.event and n
                and len(messages) >= n and messages[n - 1] is self.tail and self._extends(event, n)):
            out = self.out
            if len(messages) > n:
                out.extend(messages[n:])
        else:
            out = apply_event(messages, event, drop)
        self.src, self.n, self.event, self.out = messages, len(messages), event, out
        self.tail = messages[-1] if messages else None
        return out

    @staticmethod
    def _extends(event: Mapping[str, Any] | None, n: int) -> bool:
        """Whether messages appended after the first `n` join the projection as they are."""
        if not event:
            return True
        if int(event["cutoff_index"]) > n:
            return False
        kept_from = event.get("created_at_index")
        return not isinstance(kept_from, int) or kept_from <= n


def state_cutoff(event: Mapping[str, Any] | None, effective_cutoff: int) -> int:
    """A cutoff on the projected list as a state index (the summary's slot is not a state message)."""
    if not event:
        return effective_cutoff
    return int(event["cutoff_index"]) + effective_cutoff - 1


def session_id(thread_id: str) -> str:
    """Deep Agents names the file `session_<uuid4 hex>`; ours is derived from the thread id (same shape)."""
    return "session_" + hashlib.sha256(thread_id.encode("utf-8")).hexdigest()[:32]


_message_id = operator.attrgetter("id")
_additional_kwargs = operator.attrgetter("additional_kwargs")


def summary_id(to_summarize: Sequence[BaseMessage], text: str) -> str:
    """`summary-{n}-{hash}`: n counts the chain (a summary of a summary is n+1), hash its inputs."""
    depth = 0
    # a message without additional_kwargs has no summary marker (engine.thread.kinds.message_kind): only the
    # others are read, picked at C speed (compress), as the ids are
    for m in compress(to_summarize, map(_additional_kwargs, to_summarize)):
        if message_kind(m) == "summary":
            found = re.match(r"summary-(\d+)-", m.id or "")
            depth = max(depth, int(found.group(1)) if found else 1)
    return stable_id("summary", depth + 1, (list(map(_message_id, to_summarize)), text))




def ensure_ids(messages: Sequence[BaseMessage], start: int = 0) -> None:
    # LangChain assigns uuid4s here; a stable id keeps replays identical.
    if None not in map(_message_id, messages[start:]):  # the common case, at C speed (islice would walk the prefix)
        return
    for i, m in enumerate(messages):
        if m.id is None:
            m.id = stable_id(f"msg-{m.type}", i, message_text(m))


class IdCheck:
    """Checks ids only past the prefix verified last time: state grows by appends, so each
    step costs its new messages instead of the whole (never trimmed, in view mode) history."""

    checkpoint_kinds: ClassVar[dict[str, str]] = {"length": "value", "last": "value"}

    def __init__(self) -> None:
        self.length = 0
        self.last: BaseMessage | None = None

    def __call__(self, messages: Sequence[BaseMessage]) -> None:
        n = self.length
        size = len(messages)
        if n and size >= n and messages[n - 1] is self.last:
            # ensure_ids(messages, n) when a new message has no id: the check inline (once per model call)
            for i in range(n, size):
                if messages[i].id is None:
                    ensure_ids(messages, n)
                    break
        else:
            ensure_ids(messages, 0)
        self.length = size
        self.last = messages[size - 1] if size else None


__all__ = [
    "DEEPAGENTS_SUMMARY_PROMPT",
    "DEFAULT_TRIM_TOKENS",
    "SUMMARY_EVENT_KEY",
    "SummaryEventState",
    "CachedDrop",
    "FALLBACK_MESSAGE_COUNT",
    "NO_HISTORY",
    "STATE_SUMMARY_TEMPLATE",
    "TOO_LONG",
    "VIEW_SUMMARY_TEMPLATE",
    "IdCheck",
    "SummaryPrompt",
    "Projection",
    "apply_event",
    "bound_reasoning_types",
    "drop_bound_reasoning",
    "ensure_ids",
    "format_prompt",
    "history_section",
    "renders_lazily",
    "session_id",
    "state_cutoff",
    "summary_id",
    "summary_prompt",
    "trim_for_summary",
]
