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
from typing import Any, cast

from langchain.agents.middleware import ModelRequest
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from engine.config import TOOLS_EXCLUDED_FROM_EVICTION, ContextSize, EngineConfig, TruncateArgsConfig
from engine.kinds import KIND_KEY
from engine.layers.base import LayerContext, RequestLayer
from engine.layers.offload import offload_to_stub, should_offload
from engine.layers.scan import grown_prefix, result_text, unchanged_prefix

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


def keep_cutoff(token_prefix: Sequence[int], keep: ContextSize, window_tokens: int | None) -> int:
    """Index of the first kept message (Deep Agents' `_determine_truncate_cutoff_index`).

    `token_prefix[i]` is the tokens of messages[:i] (length n + 1). Tokens/fraction keep the
    longest suffix that fits the budget (the walk back stops at the first message that does not).
    """
    n = len(token_prefix) - 1
    if keep.type == "fraction" and window_tokens is None:
        return max(0, n - FALLBACK_KEEP_MESSAGES)
    if keep.type == "messages":
        return max(0, n - int(keep.value))
    target = int(window_tokens * keep.value) if keep.type == "fraction" and window_tokens else int(keep.value)
    target = max(1, target)
    total = token_prefix[-1]
    return bisect_left(token_prefix, total - target)


def trigger_met(n_messages: int, total_tokens: int, trigger: ContextSize, window_tokens: int | None) -> bool:
    """One metric, `>=` (Deep Agents' `_should_truncate_args`)."""
    if trigger.type == "messages":
        return n_messages >= trigger.value
    if trigger.type == "tokens":
        return total_tokens >= trigger.value
    if window_tokens is None:
        return False
    return total_tokens >= max(1, int(window_tokens * trigger.value))


class FilesystemLayer(RequestLayer):
    """Deep Agents' large-result offload (state) and old file-write argument truncation (view)."""

    layer = "filesystem"

    def __init__(
        self,
        context: LayerContext | None = None,
        *,
        tool_result_token_limit: int | None = 20_000,
        excluded_tools: Sequence[str] = TOOLS_EXCLUDED_FROM_EVICTION,
        truncate_args: TruncateArgsConfig | None = None,
    ) -> None:
        super().__init__(context)
        self.tool_result_token_limit = tool_result_token_limit
        self.excluded_tools = frozenset(excluded_tools)
        self.truncate_args = truncate_args if truncate_args is not None else TruncateArgsConfig()
        self._truncate_tools = frozenset(self.truncate_args.tools)
        # Incremental bookkeeping over the request's messages: while the state only grows, a step
        # costs its new messages, and the cutoff only moves forward, so copies are applied once.
        self._seen: list[BaseMessage] = []
        self._prefix: list[int] = [0]
        self._candidates: list[int] = []  # indices of AI messages with long write/edit args
        self._view: list[BaseMessage] = []  # the messages with the first `_applied` candidates cut
        self._applied = 0
        self._saved_tokens = 0
        self._cut_args = 0
        self._copies: dict[int, tuple[AIMessage, AIMessage]] = {}

    @classmethod
    def from_config(cls, config: EngineConfig, context: LayerContext) -> FilesystemLayer:
        fs = config.filesystem
        return cls(context, tool_result_token_limit=fs.tool_result_token_limit,
                   excluded_tools=fs.excluded_tools, truncate_args=fs.truncate_args)

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

    # -- argument truncation (view only) ---------------------------------------------------------
    def _scan(self, messages: Sequence[BaseMessage]) -> None:
        start = grown_prefix(self, messages) or unchanged_prefix(self._seen, messages)
        if start == 0:
            self._prefix, self._candidates, self._view = [0], [], []
            self._applied = self._saved_tokens = self._cut_args = 0
        count = self.counter.count_message
        limit = self.truncate_args.max_length
        for i in range(start, len(messages)):
            m = messages[i]
            self._prefix.append(self._prefix[-1] + count(m))
            if has_long_args(m, self._truncate_tools, limit):
                self._candidates.append(i)
        self._view.extend(messages[start:])
        if start == 0:
            self._seen = list(messages)
        else:
            self._seen.extend(messages[start:])

    def _copy(self, message: AIMessage) -> AIMessage:
        # One copy per original message object, so the counter's per-message cache keeps hitting.
        hit = self._copies.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        cfg = self.truncate_args
        copy = truncated_copy(message, self._truncate_tools, cfg.max_length, cfg.truncation_text)
        self._copies[id(message)] = (message, copy)
        return copy

    def truncated_view(self, messages: Sequence[BaseMessage], window_tokens: int | None) -> list[BaseMessage] | None:
        """The messages with old long write/edit arguments cut, or None when nothing applies.

        The `truncate_args` event counts the messages and arguments cut in this view and lists the
        ids of the messages newly cut at this step.
        """
        cfg = self.truncate_args
        if not cfg.enabled or not messages:
            return None
        self._scan(messages)
        total = self._prefix[-1]
        if not self._candidates or not trigger_met(len(messages), total, cfg.trigger, window_tokens):
            return None
        cutoff = keep_cutoff(self._prefix, cfg.keep, window_tokens)
        new_ids = []
        pending = self._candidates[self._applied:bisect_left(self._candidates, cutoff)]
        if pending:
            # the list handed out at earlier steps must not change under its holders: replace in a copy
            self._view = list(self._view)
        for i in pending:
            original = cast(AIMessage, self._view[i])
            copy = self._copy(original)
            self._view[i] = copy
            self._applied += 1
            self._saved_tokens += self.counter.count_message(original) - self.counter.count_message(copy)
            self._cut_args += sum(1 for old, new in zip(original.tool_calls, copy.tool_calls, strict=True)
                                  for k, v in (old.get("args") or {}).items() if v is not (new.get("args") or {}).get(k))
            new_ids.append(copy.id)
        if not self._applied:
            return None
        self.emit("truncate_args", tokens_before=total, tokens_after=total - self._saved_tokens, messages=self._applied,
                  arguments=self._cut_args, new_message_ids=new_ids, cutoff=cutoff,
                  message=f"{self._cut_args} argument(s) in {self._applied} old write/edit call(s) truncated in the view")
        # handed out as is: it only grows by appends until the next truncation forks it (no O(n) copy a step)
        return self._view

    def _prepare(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        view = self.truncated_view(request.messages, self.window_tokens(request.model))
        return request if view is None else request.override(messages=cast(list[AnyMessage], view))


__all__ = [
    "FilesystemLayer",
    "has_long_args",
    "keep_cutoff",
    "trigger_met",
    "truncate_tool_call",
    "truncated_copy",
]
