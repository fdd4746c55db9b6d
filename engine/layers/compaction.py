"""The `compaction` layer: whole-history compaction the way a coding agent does it (state mode).

Before each model call it measures the request the agent is about to send, as the model receives it:
the prompt (recorded, or the agent prompt measured from the recorded usage, at this step), the tool
schemas and the history as the provider's thinking rule leaves it, developer messages included, in the
provider's tokens (engine.recorded.calibration) — a policy applied to a recorded session decides on the
request that session's agent sent. When the policy says so (`engine.policies`: `should_compact`, by
default "the request reaches `threshold_tokens`"), it replaces the history by what the policy rebuilds from it (`rebuild`: a summary
in the agent's own shape plus what the agent keeps or re-attaches, or a trim without a summary).
A policy may also rewrite each tool result as its agent records it (`tool_result`: Codex's output
truncation). Events: `compact` (a summary, or a provider's server-side compaction), `trim` (old
messages dropped, no summary) and `compact_rejected` (the policy kept the history, e.g. Gemini CLI's
summary would have grown the context), each with the threshold, the request size and the tokens
before and after. Every call also records a decision (engine.thread.decisions): what the policy compared
(`measure`: the request, the previous request, events), with what, and what it did.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, ClassVar

from langchain_core.messages import AIMessage, BaseMessage, RemoveMessage, SystemMessage, ToolMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.prebuilt.tool_node import ToolCallRequest

from engine.config.schema import EngineConfig
from engine.layers.base import ContextLayer, LayerContext
from engine.layers.checks import (
    CompactionCheck,
    changed_fields,
    checks_of,
    first_compaction_change,
    first_fired,
    no_history,
    probe_context,
)
from engine.policies import CompactionPolicy, PolicyContext, get_policy
from engine.policies.base import Compaction, Measure, default_measure
from engine.summarizers.choice import make_summarizer
from engine.summarizers.protocol import Summarizer
from engine.thread import decisions
from engine.tokens.content import message_text
from engine.tokens.windows import max_output_tokens


class CompactionLayer(ContextLayer):
    """Runs one agent's compaction policy (config `compaction.policy`)."""

    layer = "compaction"
    # how a checkpoint keeps each run-time attribute (engine/layers/checkpoint.py)
    checkpoint_kinds: ClassVar[dict[str, str]] = {"summarizer": "helper", "_memory": "copy",
                                                  "_previous_request": "value", "checks": "grow",
                                                  "_decision": "value", "_compaction_call": "value"}

    def __init__(self, context: LayerContext | None = None, *, config: EngineConfig | None = None,
                 summarizer: Any = None) -> None:
        super().__init__(context)
        self.config = (config or EngineConfig()).compaction
        self.policy: CompactionPolicy = get_policy(self.config.policy)
        spec = summarizer if summarizer is not None else self.context.summarizer
        self.summarizer: Summarizer = make_summarizer(spec if spec is not None else self.config.summarizer, self.counter,
                                                      key="compaction.summarizer")
        thread = self.context.thread
        self.max_output_tokens = max_output_tokens(config or EngineConfig(), thread.model if thread else None)
        self._prompt_tokens = self._fixed_tokens()
        self._memory: dict[str, Any] = {}
        self._previous_request: int | None = None
        # every decision's request sizes and outcome, in order (engine/layers/checks.py: a resumed replay
        # reads them to find the first step a changed threshold acts at)
        self.checks: list[CompactionCheck] = []
        self._decision: decisions.Decision | None = None
        # a summarizer's own call (Claude Code's agent-acompact-* file): the agent never compacts it
        self._compaction_call: dict[str, Any] | None = (thread.extra.get("compaction_call_of") if thread is not None else None) or None

    @classmethod
    def from_config(cls, config: EngineConfig, context: LayerContext) -> CompactionLayer:
        return cls(context, config=config)

    def first_change(self, old: EngineConfig, new: EngineConfig, run: Any) -> int:
        """Every compaction records its threshold and what it rebuilt, so a changed trigger or rebuild setting
        acts first at the first compaction decided; a trigger also where the policy decides otherwise
        with the new one (from the recorded request sizes); the policy and the output truncation from
        the start."""
        changed = changed_fields(old.compaction, new.compaction)
        if changed & {"enabled", "policy", "tool_output_tokens"}:
            return 0
        checks = checks_of(run, self.layer)
        first = first_fired(checks)
        if "trigger" in changed:
            ctx = self.policy_context()
            threshold = self.policy.threshold_tokens(ctx.window_tokens, ctx.max_output_tokens, self.config,
                                                     thread=self.context.thread)
            first = min(first, first_compaction_change(checks, self.policy, ctx, threshold))
        return first

    def _fixed_tokens(self) -> int:
        """What every request carries besides the history and the measured agent prompt: the recorded
        prompt and tool schemas."""
        thread = self.context.thread
        total = 0
        if thread is not None:
            prompt = thread.system_prompt
            leading = [m for m in thread.messages[:8] if isinstance(m, SystemMessage)]
            if prompt is None and leading:
                prompt = "\n\n".join(message_text(m) for m in leading)
            if prompt:
                total += self.counter.count_message(SystemMessage(content=prompt, id="system"))
            if thread.tools:
                total += self.counter.count_tools(thread.tools)
        return total

    def policy_context(self, request_tokens: int = 0, previous_output: int | None = None) -> PolicyContext:
        thread = self.context.thread
        return PolicyContext(window_tokens=self.window_tokens() or 0, max_output_tokens=self.max_output_tokens,
                             counter=self.counter, config=self.config, step=self.current_step() or 0,
                             summarize=self._summarize, request_tokens=request_tokens,
                             previous_request_tokens=self._previous_request, previous_output_tokens=previous_output,
                             prompt_tokens=self._prompt_tokens + self.context.agent_prompt(self.current_step()),
                             offline=getattr(self.summarizer, "name", "") == "offline",
                             memory=self._memory, source_format=thread.source_format if thread else None,
                             thread_extra=thread.extra if thread else {})

    def _summarize(self, messages: Sequence[BaseMessage], prompt: str) -> str:
        text = self.summarizer(list(messages), prompt_text=prompt)
        if not isinstance(text, str):
            raise TypeError(f"`summarizer` must return a str, got {type(text).__name__}.")
        return text

    def _previous_output(self, messages: Sequence[BaseMessage]) -> int | None:
        """What the previous call answered: its recorded output tokens, else our count of its message."""
        last = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
        if last is None:
            return None
        thread = self.context.thread
        usage = thread.usage.get(last.id or "") if thread is not None else None
        if usage is not None and usage.output_tokens is not None:
            return usage.output_tokens
        return self.counter.count_message(last)

    def _decide(self, messages: Sequence[BaseMessage], ctx: PolicyContext, threshold: int | None) -> bool:
        """The policy's verdict, recorded with what it compared (see the module docstring)."""
        measure = getattr(self.policy, "measure", None)
        m: Measure = measure(messages, ctx) if measure is not None else default_measure(threshold, ctx)
        decide = getattr(self.policy, "should_compact", None)
        fires = bool(decide(messages, ctx)) if decide is not None else threshold is not None and ctx.request_tokens >= threshold
        self.checks.append(CompactionCheck(ctx.step, ctx.request_tokens, ctx.previous_request_tokens,
                                           ctx.previous_output_tokens, fires))
        self._decision = self._record_decision(m, fires)
        return fires

    def _record_decision(self, m: Measure, fires: bool) -> decisions.Decision | None:
        reached = (None if m.measured is None or m.threshold is None
                   else m.measured > m.threshold if m.op == ">" else m.measured >= m.threshold)
        reason = ""
        if fires and not reached:
            reason = "another of the policy's conditions fired" if m.measured is not None else "fired before any measure"
        elif reached and not fires:
            reason = "the policy's own condition was not met"
        return decisions.record(
            self.layer, f"{self.policy.name} compaction", measured=m.measured, threshold=m.threshold, fired=fires,
            quantity=m.quantity, unit=m.unit, series=m.series, op=m.op, expression=m.expression, reason=reason,
            policy=self.policy.name)

    def decisions_for(self, checks: Sequence[CompactionCheck]) -> list[decisions.Decision]:
        """`decision_for` of each check."""
        return [self.decision_for(c) for c in checks]

    def decision_for(self, check: CompactionCheck) -> decisions.Decision:
        """The decision this layer records for `check`'s request sizes and verdict under its own config (a
        resumed replay relabels the decisions it keeps); raises HistoryRead (engine/layers/checks.py) when
        the policy's measure reads more than the recorded sizes."""
        ctx = dataclasses.replace(
            self.policy_context(check.request_tokens, check.previous_output_tokens), step=check.step,
            previous_request_tokens=check.previous_request_tokens,
            prompt_tokens=self._prompt_tokens + self.context.agent_prompt(check.step))
        ctx = probe_context(ctx)
        threshold = self.policy.threshold_tokens(ctx.window_tokens, ctx.max_output_tokens, self.config,
                                                 thread=self.context.thread)
        measure = getattr(self.policy, "measure", None)
        m: Measure = measure(no_history(), ctx) if measure is not None else default_measure(threshold, ctx)
        with decisions.deciding() as log:
            log.step = check.step
            self._record_decision(m, check.fired)
        return log.decisions[-1]

    def _not_done(self, reason: str) -> None:
        """The policy fired but kept the history: the decision says so."""
        if self._decision is not None:
            self._decision = decisions.amend(self._decision, fired=False, reason=reason)

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        if self._compaction_call is not None:
            self._not_applicable(self._compaction_call)
            return None
        everything: list[BaseMessage] = list(state["messages"])
        messages: list[BaseMessage] = [m for m in everything if not isinstance(m, SystemMessage)]
        if not messages:
            return None
        # the request as sent: developer messages in the history too, earlier thinking as the provider drops it
        history_tokens = self.counter(self.context.sent(everything))
        request = self._prompt_tokens + self.context.agent_prompt(self.current_step()) + history_tokens
        ctx = self.policy_context(request, self._previous_output(messages))
        threshold = self.policy.threshold_tokens(ctx.window_tokens, ctx.max_output_tokens, self.config,
                                                 thread=self.context.thread)
        self._decision = None
        fires = self._decide(messages, ctx, threshold)
        self._previous_request = request
        if not fires:
            return None
        result = self.policy.rebuild(messages, ctx)
        done = result if isinstance(result, Compaction) else Compaction(messages=list(result))
        common = {"policy": self.policy.name, "threshold_tokens": threshold, "request_tokens": request,
                  "previous_request_tokens": ctx.previous_request_tokens, **done.detail}
        measure = getattr(self.policy, "decision_tokens", None)
        if measure is not None:  # what the agent compared with its threshold, when it is not the request
            common["decision_tokens"] = measure(messages, ctx)
        if done.messages is None:
            self._not_done(done.rejected or "nothing to compact")
            if done.rejected is None:
                return None  # the policy's no-op (nothing to compact), not a decision worth an event
            self.emit("compact_rejected", tokens_before=history_tokens, tokens_after=history_tokens,
                      message=f"{self.policy.name} kept the history: {done.rejected}", rejected=done.rejected, **common)
            return None
        rebuilt = done.messages
        after = self.counter(rebuilt)
        self._previous_request = self._prompt_tokens + self.context.agent_prompt(self.current_step()) + after
        summary = done.summary or next((message_text(m) for m in rebuilt
                                        if m.additional_kwargs.get("ctxi_kind") == "summary"), "")
        kept = {id(m) for m in messages}
        survivors = {id(m) for m in rebuilt}
        what = "trimmed" if done.kind == "trim" else "compacted"
        self.emit("trim" if done.kind == "trim" else "compact", tokens_before=history_tokens, tokens_after=after,
                  message=f"{self.policy.name} {what} at {request:,} tokens"
                          + (f" (threshold {threshold:,})" if threshold is not None else ""),
                  compaction_kind=done.kind, removed_ids=[m.id for m in messages if id(m) not in survivors],
                  inserted_ids=[m.id for m in rebuilt if id(m) not in kept], kept_ids=[m.id for m in rebuilt if id(m) in kept],
                  summary=summary, **common)
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *rebuilt]}

    def _not_applicable(self, of: dict[str, Any]) -> None:
        """Said once: this thread is a compaction's own summarizer call, which its agent never compacts
        (Claude Code forks the conversation with the compact prompt; a request too long for it is retried
        on a truncated copy, not compacted)."""
        if of.get("said"):
            return
        self._compaction_call = of = {**of, "said": True}
        self.emit("not_applicable", message=f"this thread is the compaction call of session {of.get('session_id')} "
                  f"({of.get('agent_id')}): {self.policy.name} does not compact it; open the session for its compactions",
                  policy=self.policy.name, compaction_call_of={k: v for k, v in of.items() if k != "said"})

    # -- tool results as the agent records them --------------------------------------------------------
    def _record(self, result: Any) -> Any:
        rewrite = getattr(self.policy, "tool_result", None)
        if rewrite is None or not isinstance(result, ToolMessage):
            return result
        recorded = rewrite(result, self.policy_context())
        if recorded is not result:
            self.emit("truncate_result", tokens_before=self.counter.count_message(result),
                      tokens_after=self.counter.count_message(recorded),
                      message=f"{self.policy.name} truncated a tool result as it records it",
                      policy=self.policy.name, tool_call_id=result.tool_call_id, message_id=result.id)
        return recorded

    def wrap_tool_call(self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]) -> Any:
        return self._record(handler(request))

    async def awrap_tool_call(self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[Any]]) -> Any:
        return self._record(await handler(request))
