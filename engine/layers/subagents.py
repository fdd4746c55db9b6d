"""L1 sub-agents: DeerFlow's clamp on parallel `task` calls, and the tokens spent inside each sub-agent.

- **Clamp** (`after_model`, rewrites state, DeerFlow `SubagentLimitMiddleware`): of the task calls in
  one response, the first `max_concurrent` are kept and the rest are silently dropped (no error
  result); other calls are untouched. With `max_total`, a run (one invocation) may launch at most
  that many: `allowed = min(max_concurrent, max_total - launched)`. When no call at all remains,
  DeerFlow's `[SUBAGENT LIMIT REACHED]` text is appended and `finish_reason` becomes `stop`.
  The AI message is replaced by id with a copy; the dropped calls are listed in
  `response_metadata["ctxi_dropped_calls"]` so the replay skips their recorded results.
- **Accounting** (`wrap_tool_call`): for a task call whose transcript the thread carries
  (`thread.subagents[tool_call_id]`), a `subagent` event reports the tokens the sub-agent sent
  over its steps against the tokens its result brings back to the parent.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, ClassVar, cast

from langchain.agents.middleware import AgentState
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime

from engine.config.schema import EngineConfig
from engine.config.sections import TASK_TOOL_NAMES
from engine.layers.base import ContextLayer, LayerContext
from engine.thread.message_memo import MessageMemo
from engine.tokens.counters import TokenCounter
from engine.tokens.subagent_cost import SubagentCost, subagent_cost

DROPPED_CALLS_KEY = "ctxi_dropped_calls"
DEFAULT_TASK_TOOL_NAMES = TASK_TOOL_NAMES
# DeerFlow's text (subagent_limit_middleware.py, HEAD).
LIMIT_REACHED_TEXT = (
    "[SUBAGENT LIMIT REACHED] The subagent delegation limit for this run has been reached. "
    "Continue using the subagent results already collected, execute remaining simple work "
    "directly, or summarize the remaining work instead of launching more subagents."
)


# -- clamp: pure helpers -----------------------------------------------------------------------
def allowed_task_calls(max_concurrent: int | None, max_total: int | None, launched: int) -> int | None:
    """How many task calls this response may keep; None means no limit."""
    limits = [x for x in (max_concurrent, None if max_total is None else max(0, max_total - launched)) if x is not None]
    return min(limits) if limits else None


def _append_text(content: Any, text: str) -> Any:
    """DeerFlow's `_append_text`: after the existing text, separated by a blank line."""
    if content is None or content == "":
        return text
    if isinstance(content, str):
        return f"{content}\n\n{text}"
    if isinstance(content, list):
        return [*content, {"type": "text", "text": f"\n\n{text}"}]
    return f"{content}\n\n{text}"


# A message's clamped copy, per message object (and its tool_calls) and limit (weak on the message): it
# depends only on those, so a re-run after an edit clamps to the very copy it counted before (a new copy
# per run was encoded again: ~2 % of a stress-preset replay). Nothing changes a message in place.
CLAMPED = MessageMemo()


def clamp_message(message: AIMessage, task_names: Sequence[str], allowed: int) -> tuple[AIMessage, list[dict[str, Any]]] | None:
    """The message with only the first `allowed` task calls, and the dropped calls; None if within the limit."""
    calls = list(message.tool_calls)
    task_idx = [i for i, tc in enumerate(calls) if tc.get("name") in task_names]
    if len(task_idx) <= allowed:
        return None
    drop = set(task_idx[allowed:])
    kept = [tc for i, tc in enumerate(calls) if i not in drop]
    dropped = [tc for i, tc in enumerate(calls) if i in drop]
    dropped_ids = {tc.get("id") for tc in dropped}
    kept_ids = {tc.get("id") for tc in kept}

    content: Any = message.content
    if isinstance(content, list):
        # Anthropic-style content repeats each call as a tool_use block; drop those too.
        content = [b for b in content if not (isinstance(b, dict) and b.get("type") == "tool_use" and b.get("id") in dropped_ids)]
    if not kept:
        content = _append_text(content, LIMIT_REACHED_TEXT)

    kwargs = dict(message.additional_kwargs)
    raw = kwargs.get("tool_calls")
    if isinstance(raw, list):  # provider-raw calls stay in sync with tool_calls (DeerFlow's clone helper)
        synced = [r for r in raw if isinstance(r, dict) and r.get("id") in kept_ids]
        if synced:
            kwargs["tool_calls"] = synced
        else:
            kwargs.pop("tool_calls", None)
    if not kept:
        kwargs.pop("function_call", None)
    meta = dict(message.response_metadata)
    if not kept and meta.get("finish_reason") == "tool_calls":
        meta["finish_reason"] = "stop"
    meta[DROPPED_CALLS_KEY] = [dict(tc) for tc in dropped]
    clamped = message.model_copy(update={"tool_calls": kept, "content": content, "additional_kwargs": kwargs,
                                         "response_metadata": meta})
    return clamped, [dict(tc) for tc in dropped]


# -- accounting: engine/tokens/subagent_cost.py (pure; the views read it without this layer) ----------


class SubagentLayer(ContextLayer):
    """DeerFlow's task-call clamp and the sub-agent token accounting."""

    layer = "subagents"
    # after_model reads only the newest message and keeps nothing of the state's list between calls:
    # the driver may replace the newest message in place when this is the only hook that saw it
    keeps_state_view = False
    # how a checkpoint keeps each run-time attribute (engine/layers/checkpoint.py)
    checkpoint_kinds: ClassVar[dict[str, str]] = {"_launched": "value", "_costs": "memo"}

    def __init__(
        self,
        context: LayerContext | None = None,
        *,
        max_concurrent: int | None = 3,
        max_total: int | None = None,
        task_tool_names: Sequence[str] = DEFAULT_TASK_TOOL_NAMES,
    ) -> None:
        super().__init__(context)
        # DeerFlow clamps both limits into range instead of rejecting them (HEAD: [1, 4] and [1, 50]).
        self.max_concurrent = None if max_concurrent is None else max(1, min(4, max_concurrent))
        self.max_total = None if max_total is None else max(1, min(50, max_total))
        self.task_tool_names = tuple(task_tool_names)
        self._launched = 0  # task calls kept in the current run (invocation)
        self._costs: dict[str, SubagentCost] = {}

    @classmethod
    def from_config(cls, config: EngineConfig, context: LayerContext) -> SubagentLayer:
        s = config.subagents
        return cls(context, max_concurrent=s.max_concurrent, max_total=s.max_total, task_tool_names=s.task_tool_names)

    # -- clamp ------------------------------------------------------------------------------------
    def before_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        self._launched = 0
        return None

    async def abefore_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        return self.before_agent(state, runtime)

    def after_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        messages = state.get("messages") or []
        if not messages or not isinstance(messages[-1], AIMessage) or not messages[-1].tool_calls:
            return None
        last: AIMessage = messages[-1]
        n_tasks = sum(1 for tc in last.tool_calls if tc.get("name") in self.task_tool_names)
        allowed = allowed_task_calls(self.max_concurrent, self.max_total, self._launched)
        if allowed is None or n_tasks <= allowed:
            self._launched += n_tasks
            return None
        names = self.task_tool_names
        result = CLAMPED.keyed(last, f"{allowed}\0{sorted(names)}", last.tool_calls,
                               lambda m: clamp_message(cast(AIMessage, m), names, allowed))
        assert result is not None  # n_tasks > allowed
        clamped, dropped = result
        self._launched += allowed
        total_reached = self.max_total is not None and self._launched >= self.max_total
        self.emit("clamp", tokens_before=self.counter.count_message(last), tokens_after=self.counter.count_message(clamped),
                  message_id=last.id, kept=allowed, dropped=len(dropped),
                  dropped_ids=[tc.get("id") for tc in dropped], max_concurrent=self.max_concurrent,
                  max_total=self.max_total, limit_reached=total_reached,
                  message=f"kept {allowed} of {n_tasks} task calls; {len(dropped)} dropped")
        return {"messages": [clamped]}

    async def aafter_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        return self.after_model(state, runtime)

    # -- accounting -----------------------------------------------------------------------------
    def _account(self, request: ToolCallRequest, result: Any) -> Any:
        call = request.tool_call
        thread = self.context.thread
        call_id = call.get("id") or ""
        if call.get("name") not in self.task_tool_names or thread is None or call_id not in thread.subagents:
            return result
        if call_id not in self._costs:
            self._costs[call_id] = subagent_cost(thread.subagents[call_id], self.counter)
        cost = self._costs[call_id]
        returned = _returned_tokens(result, self.counter)
        ratio = round(cost.inside_tokens / returned, 2) if returned else None
        self.emit("subagent", tokens_before=cost.transcript_tokens, tokens_after=returned, tool_call_id=call_id,
                  inside_tokens=cost.inside_tokens, inside_peak_tokens=cost.inside_peak_tokens,
                  inside_steps=cost.inside_steps, recorded_inside_tokens=cost.recorded_inside_tokens,
                  returned_tokens=returned, ratio=ratio,
                  message=f"sub-agent sent {cost.inside_tokens:,} tokens over {cost.inside_steps} steps; "
                          f"returned {returned:,} tokens to the parent")
        return result

    def wrap_tool_call(self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]) -> Any:
        return self._account(request, handler(request))

    async def awrap_tool_call(self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[Any]]) -> Any:
        return self._account(request, await handler(request))


def _returned_tokens(result: Any, counter: TokenCounter) -> int:
    if isinstance(result, ToolMessage):
        return counter.count_message(result)
    update = getattr(result, "update", None)
    if isinstance(update, dict):
        return sum(counter.count_message(m) for m in update.get("messages") or [] if isinstance(m, ToolMessage))
    return 0


__all__ = [
    "DROPPED_CALLS_KEY",
    "LIMIT_REACHED_TEXT",
    "SubagentCost",
    "SubagentLayer",
    "allowed_task_calls",
    "clamp_message",
    "subagent_cost",
]
