"""L0 filesystem: large tool results offloaded to `/large_tool_results/`, old file-write arguments truncated.

Two mechanisms from Deep Agents:

- **Offload** (`wrap_tool_call`, rewrites state): a tool result whose text is longer than
  `4 * tool_result_token_limit` *characters* is written to `/large_tool_results/<sanitized id>`
  and replaced by a stub with a head/tail preview. Deep Agents names the limit in tokens but
  checks characters (`NUM_CHARS_PER_TOKEN = 4`): 80,000 characters stay, 80,001 are offloaded.
  We follow that exactly, so the decision does not depend on the token counter. The paths, stub
  text and preview are pure rules in `engine.layers.offload`.
- **Argument truncation** (`wrap_model_call`, view only): once the request's messages reach the
  trigger, string arguments of `write_file`/`edit_file` calls longer than `max_length` in
  messages before the keep cutoff are shown as `value[:20] + truncation_text`. The state is
  never rewritten; a `truncate_args` event is emitted at every step where the view differs.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, ClassVar, cast

from langchain.agents.middleware import ModelRequest
from langchain.agents.middleware.types import ExtendedModelResponse
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from engine.config.schema import EngineConfig
from engine.config.sections import TOOLS_EXCLUDED_FROM_EVICTION, TruncateArgsConfig
from engine.config.sizes import ContextSize
from engine.layers.approximate import PrefixCounts, RunningScaledCount
from engine.layers.base import LayerContext, RequestLayer
from engine.layers.checkpoint import checkpoint_epoch
from engine.layers.offload import (
    EVICTED_KEY,
    evicted_human_path,
    evicted_human_view,
    offload_to_stub,
    should_evict_human,
    should_offload,
)
from engine.layers.request_copy import overridden
from engine.layers.scan import grown_prefix, result_text, unchanged_prefix
from engine.layers.summary_rules import SUMMARY_EVENT_KEY, CachedDrop, Projection, SummaryEventState
from engine.thread.kinds import KIND_KEY
from engine.thread.message_memo import MessageMemo

TRUNCATED_ARG_KEEP_CHARS = 20
# Deep Agents falls back to keeping the last 20 messages when a fraction has no window to refer to.
FALLBACK_KEEP_MESSAGES = 20


# -- argument truncation: pure helpers -----------------------------------------------------------
def truncate_tool_call(tool_call: Mapping[str, Any], max_length: int, truncation_text: str) -> Mapping[str, Any]:
    """A copy of the call whose string args longer than `max_length` become `value[:20] + truncation_text`."""
    args = tool_call.get("args") or {}
    if not any(isinstance(v, str) and len(v) > max_length for v in args.values()):
        return tool_call
    new_args = {k: (v[:TRUNCATED_ARG_KEEP_CHARS] + truncation_text if isinstance(v, str) and len(v) > max_length else v)
                for k, v in args.items()}
    return {**tool_call, "args": new_args}


def has_long_args(message: BaseMessage, tools: frozenset[str], max_length: int) -> bool:
    if not isinstance(message, AIMessage) or not message.tool_calls:
        return False
    return any(tc.get("name") in tools and any(isinstance(v, str) and len(v) > max_length for v in (tc.get("args") or {}).values())
               for tc in message.tool_calls)


def truncated_copy(message: AIMessage, tools: frozenset[str], max_length: int, truncation_text: str) -> AIMessage:
    """The message as the view shows it: long write/edit args cut, tool_use blocks in content too, marked "truncated"."""
    calls = [truncate_tool_call(tc, max_length, truncation_text) if tc.get("name") in tools else tc for tc in message.tool_calls]
    changed = {c["id"]: c["args"] for c, old in zip(calls, message.tool_calls, strict=True) if c is not old and c.get("id")}
    content: Any = message.content
    if isinstance(content, list):
        # Anthropic-style content repeats the call as a tool_use block; cut it there too, or
        # the view would still carry (and count) the full argument.
        content = [({**b, "input": changed[b["id"]]} if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("id") in changed else b)
                   for b in content]
    return message.model_copy(update={
        "tool_calls": [dict(c) for c in calls],
        "content": content,
        "additional_kwargs": {**message.additional_kwargs, KIND_KEY: "truncated"},
    })


def keep_cutoff(tokens: Sequence[int], keep: ContextSize, window_tokens: int | None) -> int:
    """Index of the first kept message (Deep Agents' `_determine_truncate_cutoff_index`).

    `tokens[i]` is message i's (unscaled) count. Messages: the last N; tokens/fraction: walk back
    from the newest message and stop before the first one that no longer fits. `len(tokens)` means
    nothing is old enough to truncate (also when the newest message alone exceeds the budget).
    """
    n = len(tokens)
    if keep.type == "fraction" and window_tokens is None:
        return n if n <= FALLBACK_KEEP_MESSAGES else n - FALLBACK_KEEP_MESSAGES
    if keep.type == "messages":
        return n if n <= int(keep.value) else n - int(keep.value)
    target = int(window_tokens * keep.value) if keep.type == "fraction" and window_tokens else int(keep.value)
    target = max(1, target)
    kept = 0
    for i in range(n - 1, -1, -1):
        if kept + tokens[i] > target:
            return i + 1
        kept += tokens[i]
    return 0


def keep_cutoff_from_sums(sums: Sequence[int], keep: ContextSize, window_tokens: int | None) -> int:
    """`keep_cutoff(tokens, ...)` from the prefix sums of non-negative `tokens` (`sums[k]` = the first
    k counts): the walk back stops before the first message whose suffix sum exceeds the target,
    and with counts >= 0 the suffix sums fall as the start moves forward, so that start is the first
    index whose suffix fits: `sums[j] >= sums[n] - target`, found by bisection."""
    n = len(sums) - 1
    if keep.type == "messages" or (keep.type == "fraction" and window_tokens is None):
        return keep_cutoff(range(n), keep, window_tokens)  # decided by the number of messages alone
    target = int(window_tokens * keep.value) if keep.type == "fraction" and window_tokens else int(keep.value)
    target = max(1, target)
    return bisect_left(sums, sums[n] - target)


def trigger_met(n_messages: int, total_tokens: int, trigger: ContextSize, window_tokens: int | None) -> bool:
    """One metric, `>=` (Deep Agents' `_should_truncate_args`)."""
    if trigger.type == "messages":
        return n_messages >= trigger.value
    if trigger.type == "tokens":
        return total_tokens >= trigger.value
    if window_tokens is None:
        return False
    return total_tokens >= max(1, int(window_tokens * trigger.value))


# A call's truncated copy for the view, per original message object and truncation settings (weak on the
# original, as the token counter's cache is): the copy depends only on those, and a re-run after an edit
# that cut the same call found it made and counted (a new copy per run was encoded again).
TRUNCATED = MessageMemo()


class FilesystemLayer(RequestLayer):
    """Deep Agents' large-result offload and large human-message eviction (state), and old file-write
    argument truncation (view)."""

    layer = "filesystem"
    state_schema = SummaryEventState  # reads the summarization event to count what the model sees
    # how a checkpoint keeps each run-time attribute (engine/layers/checkpoint.py)
    checkpoint_kinds: ClassVar[dict[str, str]] = {
        "_seen": "grow", "_seen_src": "reset", "_candidates": "grow", "_tagged": "grow", "_copies": "memo", "_cut_stats": "memo",
        "_tool_counts": "memo", "_state_tokens": "helper", "_drop": "helper", "_project": "helper",
        "_totals": "helper", "_sums": "helper", "_cut_before": "value", "_last_view": "reset"}

    def __init__(
        self,
        context: LayerContext | None = None,
        *,
        tool_result_token_limit: int | None = 20_000,
        excluded_tools: Sequence[str] = TOOLS_EXCLUDED_FROM_EVICTION,
        truncate_args: TruncateArgsConfig | None = None,
        human_message_token_limit: int | None = None,
    ) -> None:
        super().__init__(context)
        self.tool_result_token_limit = tool_result_token_limit
        self.excluded_tools = frozenset(excluded_tools)
        self.truncate_args = truncate_args if truncate_args is not None else TruncateArgsConfig()
        self.human_message_token_limit = human_message_token_limit
        self._truncate_tools = frozenset(self.truncate_args.tools)
        # Incremental bookkeeping over the request's messages: while the state only grows, a step
        # costs its new messages (positions of AI messages with long write/edit arguments and of
        # evicted human messages).
        self._seen: list[BaseMessage] = []
        self._candidates: list[int] = []
        self._tagged: list[int] = []
        self._copies: dict[int, tuple[BaseMessage, BaseMessage]] = {}
        # per original cut: (original, its truncated copy, tokens saved, arguments cut), computed once
        self._cut_stats: dict[int, tuple[BaseMessage, BaseMessage, int, int]] = {}
        self._tool_counts: dict[tuple[int, ...], tuple[tuple[Any, ...], int]] = {}
        self._state_tokens = RunningScaledCount(self.counter)
        self._drop = CachedDrop()
        self._project = Projection()  # apply_event, extended in place while the state only grows
        self._totals = RunningScaledCount(self.decision_counter)
        self._sums = PrefixCounts(self.decision_counter)
        self._cut_before: set[str] = set()
        # the last truncated view: (state list, its length then, its last message, cut positions, view,
        # the checkpoint epoch when the view list was made)
        self._last_view: tuple[Sequence[BaseMessage], int, BaseMessage, list[int], list[BaseMessage], int] | None = None

    @classmethod
    def from_config(cls, config: EngineConfig, context: LayerContext) -> FilesystemLayer:
        fs = config.filesystem
        return cls(context, tool_result_token_limit=fs.tool_result_token_limit,
                   excluded_tools=fs.excluded_tools, truncate_args=fs.truncate_args,
                   human_message_token_limit=fs.human_message_token_limit)

    # -- offload ------------------------------------------------------------------------------
    def _offload(self, message: ToolMessage, tool_name: str | None) -> ToolMessage:
        if (tool_name or message.name) in self.excluded_tools:
            return message
        text = result_text(message)
        if not should_offload(text, self.tool_result_token_limit):
            return message
        stub, path = offload_to_stub(self.vfs, message, step=self.current_step())
        before, after = self.counter.count_message(message), self.counter.count_message(stub)
        self.emit("offload", tokens_before=before, tokens_after=after, path=path, tool_call_id=message.tool_call_id,
                  tool=tool_name or message.name, chars=len(text),
                  message=f"{tool_name or message.name or 'tool'} result ({len(text):,} chars) offloaded to {path}")
        return stub

    def _after_tool(self, request: ToolCallRequest, result: ToolMessage | Command[Any]) -> ToolMessage | Command[Any]:
        name = request.tool_call.get("name")
        if isinstance(result, ToolMessage):
            return self._offload(result, name)
        if isinstance(result, Command) and isinstance(result.update, dict) and result.update.get("messages"):
            # Deep Agents also offloads results carried inside a Command.
            msgs = [self._offload(m, name) if isinstance(m, ToolMessage) else m for m in result.update["messages"]]
            return replace(result, update={**result.update, "messages": msgs})
        return result

    def wrap_tool_call(self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]) -> Any:
        return self._after_tool(request, handler(request))

    async def awrap_tool_call(self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[Any]]) -> Any:
        return self._after_tool(request, await handler(request))

    # -- incremental scan ---------------------------------------------------------------------------
    def _scan(self, messages: Sequence[BaseMessage]) -> None:
        start = grown_prefix(self, messages) or unchanged_prefix(self._seen, messages)
        if start == 0:
            self._candidates, self._tagged = [], []
        limit = self.truncate_args.max_length
        for i in range(start, len(messages)):
            m = messages[i]
            if has_long_args(m, self._truncate_tools, limit):
                self._candidates.append(i)
            elif m.type == "human" and m.additional_kwargs.get(EVICTED_KEY):
                self._tagged.append(i)
        if start == 0:
            self._seen = list(messages)
        else:
            self._seen.extend(messages[start:])

    def _copy(self, message: BaseMessage, make: Callable[[Any], BaseMessage]) -> BaseMessage:
        # One copy per original message object, so the counter's per-message cache keeps hitting.
        hit = self._copies.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        copy = make(message)
        self._copies[id(message)] = (message, copy)
        return copy

    # -- large human messages (state tag, view preview) -----------------------------------------------
    def _evict(self, messages: Sequence[BaseMessage]) -> tuple[Sequence[BaseMessage], BaseMessage | None]:
        """Deep Agents' eviction: the newest message, an untagged human message over the limit, is
        written to a file and tagged in state; the tagged copy is returned for the state update."""
        if not messages or not should_evict_human(messages[-1], self.human_message_token_limit):
            return messages, None
        last = messages[-1]
        path = evicted_human_path(last)
        text = result_text(last)
        self.vfs.write(path, text, step=self.current_step(), layer=self.layer, source_id=last.id)
        tagged = last.model_copy(update={"additional_kwargs": {**last.additional_kwargs, EVICTED_KEY: path}})
        preview = evicted_human_view(tagged)
        self.emit("evict_human", tokens_before=self.counter.count_message(last),
                  tokens_after=self.counter.count_message(preview), path=path, message_id=last.id, chars=len(text),
                  message=f"human message ({len(text):,} chars) saved to {path}; the model sees a preview")
        return [*messages[:-1], tagged], tagged

    def _human_previews(self, messages: Sequence[BaseMessage]) -> Sequence[BaseMessage]:
        if not self._tagged:
            return messages
        view = list(messages)
        for i in self._tagged:
            view[i] = self._copy(view[i], evicted_human_view)
        return view

    # -- argument truncation (view only) ---------------------------------------------------------
    def truncated_view(self, messages: Sequence[BaseMessage], window_tokens: int | None, *, system: BaseMessage | None = None,
                       tools: Sequence[Any] = (), event: Mapping[str, Any] | None = None) -> list[BaseMessage] | None:
        """The messages with old long write/edit arguments cut, or None when nothing applies.

        Deep Agents does this inside its summarization middleware, on what the model would see
        (`[summary, *kept]` once a summary exists) and recomputed at every call: the trigger counts
        the system message, those messages and the tools (usage-scaled); the keep cutoff walks back
        over them. `messages` are the state's; `event` is the summarization event in state.
        """
        cfg = self.truncate_args
        if not cfg.enabled or not messages:
            return None
        self._scan(messages)
        # only calls from the summary's cutoff on are shown (and so cut): none there, nothing to do
        low = int(event["cutoff_index"]) if event else 0
        if not self._candidates or self._candidates[-1] < low:
            return None
        effective = self._project(messages, event, self._drop)
        # effective index j >= 1 is state index offset + j once a summary exists
        offset = int(event["cutoff_index"]) - 1 if event else 0
        counter = self.decision_counter
        lead = (counter.count_message(system) if system is not None else 0) + self._tools_tokens(counter, tools)
        total = self._totals(effective, lead_tokens=lead, lead_messages=1 if system is not None else 0)
        if not trigger_met(len(effective), total, cfg.trigger, window_tokens):
            return None
        sums = self._sums(effective)
        cutoff = (keep_cutoff_from_sums(sums, cfg.keep, window_tokens) if self._sums.nonnegative
                  else keep_cutoff([b - a for a, b in zip(sums, sums[1:], strict=False)], cfg.keep, window_tokens))
        if cutoff >= len(effective):
            return None
        # candidates are state indices in increasing order (appended as the scan goes)
        candidates = self._candidates
        cut = candidates[bisect_left(candidates, low):bisect_left(candidates, cutoff + offset)]
        if not cut:
            return None
        view = self._view_list(messages, cut, low)
        saved = arguments = 0
        stats = self._cut_stats
        for i in cut:
            original = messages[i]  # view[i] may hold its copy already
            hit = stats.get(id(original))
            if hit is None or hit[0] is not original:  # a call cut stays cut at every later step: once each
                hit = stats[id(original)] = self._cut_stat(cast(AIMessage, original))
            view[i] = hit[1]
            saved += hit[2]
            arguments += hit[3]
        ids = [view[i].id for i in cut]
        new_ids = [i for i in ids if i not in self._cut_before]
        self._cut_before = {i for i in ids if i is not None}
        before = self._state_tokens(messages, scaled=False)  # = self.counter(messages), kept as the state grows
        self.emit("truncate_args", tokens_before=before, tokens_after=before - saved, messages=len(cut),
                  arguments=arguments, new_message_ids=new_ids, cutoff=cutoff + offset,
                  message=f"{arguments} argument(s) in {len(cut)} old write/edit call(s) truncated in the view")
        return view

    def _cut_stat(self, original: AIMessage) -> tuple[BaseMessage, BaseMessage, int, int]:
        """(original, its truncated copy, the tokens that saves, the arguments it cuts). The copy is made
        once per message and settings (`TRUNCATED`), so a re-run finds it counted already."""
        cfg = self.truncate_args
        copy, arguments = TRUNCATED.get(original, f"{cfg.max_length}\0{cfg.truncation_text}\0{sorted(self._truncate_tools)}",
                                        self._truncation)
        saved = self.counter.count_message(original) - self.counter.count_message(copy)
        return original, copy, saved, arguments

    def _truncation(self, original: BaseMessage) -> tuple[BaseMessage, int]:
        copy = cast(AIMessage, self._truncated(cast(AIMessage, original)))
        arguments = sum(1 for old, new in zip(cast(AIMessage, original).tool_calls, copy.tool_calls, strict=True)
                        for k, v in (old.get("args") or {}).items() if v is not (new.get("args") or {}).get(k))
        return copy, arguments

    def _view_list(self, messages: Sequence[BaseMessage], cut: Sequence[int], low: int = 0) -> list[BaseMessage]:
        """The list the truncated view is written into: the last one, appended to, while the state is the
        same list only grown and no message it holds is newly cut (the caller then sets only slots it
        already holds or that are new here), so the layers inside see one growing list, as they see the
        state; otherwise a copy of the state. Appending keeps every list handed over a prefix of itself.

        A new summary moves the cut's start to its cutoff (`low`, a state index): calls it cut that now
        lie below `low` are dropped from the front of the cut. A copy of the state would hold their
        originals there; the last list gets them back in place instead (its other slots are those of
        the copy already), so the content is the copy's and no O(state) copy is made: over a 16,000-step
        thread the copies were 5M list slots, every one a write to a message's reference count scattered
        over the thread (callgrind with a 2 MB cache: 4M misses in `list_extend`, a quarter of the run's).
        The slots changed in place lie below the summary's cutoff, which only view-mode summarization
        sets. It projects `[summary, *messages[cutoff:]]` (a new list: the layers inside it never see
        this one) and checks ids, which a truncated copy shares with its original; a layer between the
        two with a scan kept by list identity (todo, dangling) keeps what it read there, which is the
        same for a copy and its original (tool-call ids and names, message types: only the write/edit
        arguments and the kind tag differ).

        A list a checkpoint holds (a running count's `src` inside) is not written below its end: once a
        checkpoint was taken since the view was made, the slots are written into a copy of it (once per
        checkpoint, engine/layers/checkpoint.py)."""
        last = self._last_view
        epoch = checkpoint_epoch()
        if last is not None:
            src, n, tail, old_cut, view, made = last
            k = bisect_left(old_cut, low)  # calls cut last time, now below the summary's cutoff
            if (messages is src and type(messages) is list and len(messages) >= n and n and messages[n - 1] is tail
                    and list(cut[:len(old_cut) - k]) == old_cut[k:] and all(i >= n for i in cut[len(old_cut) - k:])):
                if made != epoch:
                    view = list(view)
                for i in old_cut[:k]:
                    view[i] = messages[i]
                view.extend(messages[n:])
            else:
                last = None
        if last is None:
            view = list(messages)
        self._last_view = (messages, len(messages), messages[-1], list(cut), view, epoch)
        return view

    def _tools_tokens(self, counter: Any, tools: Sequence[Any]) -> int:
        """The tools' tokens, once per set of tool objects (every call sends the same ones); the
        entry keeps the tools alive, so their ids are not reused by other objects."""
        if not tools:
            return 0
        key = tuple(map(id, tools))
        hit = self._tool_counts.get(key)
        if hit is None:
            if len(self._tool_counts) >= 256:  # a layer making new tool objects every call
                self._tool_counts.clear()
            hit = self._tool_counts[key] = (tuple(tools), counter.count_tools(list(tools)))
        return hit[1]

    def _truncated(self, message: AIMessage) -> BaseMessage:
        cfg = self.truncate_args
        return truncated_copy(message, self._truncate_tools, cfg.max_length, cfg.truncation_text)

    def _plan(self, request: ModelRequest[Any]) -> tuple[ModelRequest[Any], BaseMessage | None]:
        messages, tagged = self._evict(request.messages)
        if not (self.truncate_args.enabled or self.human_message_token_limit):
            return request, None
        self._scan(messages)
        view = self._human_previews(messages)
        state: Mapping[str, Any] = request.state if isinstance(request.state, Mapping) else {}
        event = state.get(SUMMARY_EVENT_KEY)
        truncated = self.truncated_view(view, self.window_tokens(request.model), system=request.system_message,
                                        tools=request.tools, event=event if isinstance(event, Mapping) else None)
        if truncated is not None:
            view = truncated
        if view is request.messages:
            return request, None
        # a list made here (eviction, previews, truncation) is handed over as it is: one copy of the state
        return overridden(request, messages=cast(list[AnyMessage], view if isinstance(view, list) else list(view))), tagged

    def _prepare(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        return self._plan(request)[0]

    @staticmethod
    def _with_tag(response: Any, tagged: BaseMessage | None) -> Any:
        if tagged is None:
            return response
        # the state keeps the text; the tag (same id) replaces the original message
        return ExtendedModelResponse(model_response=response, command=Command(update={"messages": [tagged]}))

    def wrap_model_call(self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Any]) -> Any:
        planned, tagged = self._plan(request)
        return self._with_tag(handler(planned), tagged)

    async def awrap_model_call(self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Awaitable[Any]]) -> Any:
        planned, tagged = self._plan(request)
        return self._with_tag(await handler(planned), tagged)


__all__ = [
    "FilesystemLayer",
    "has_long_args",
    "keep_cutoff",
    "trigger_met",
    "truncate_tool_call",
    "truncated_copy",
]
