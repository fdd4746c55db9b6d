"""The `compaction` layer: whole-history compaction the way a coding agent does it (state mode).

Before each model call it measures the request (the prompt — recorded, or measured as the
unrecorded prompt — the tool schemas and the history, with calibrated counts) and, when the
policy says so (`engine.policies`: `threshold_tokens`), replaces the history by what the policy
rebuilds from it (`rebuild`: a summary in the agent's own shape, plus what the agent re-attaches).
One `compact` event per compaction, with the threshold, tokens before and after and the summary.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, RemoveMessage, SystemMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from engine.config import EngineConfig
from engine.layers.base import ContextLayer, LayerContext
from engine.models import max_output_tokens
from engine.policies import CompactionPolicy, PolicyContext, get_policy
from engine.summarizers import Summarizer, make_summarizer
from engine.tokens import message_text


class CompactionLayer(ContextLayer):
    """Runs one agent's compaction policy (config `compaction.policy`)."""

    layer = "compaction"

    def __init__(self, context: LayerContext | None = None, *, config: EngineConfig | None = None,
                 summarizer: Any = None) -> None:
        super().__init__(context)
        self.config = (config or EngineConfig()).compaction
        self.policy: CompactionPolicy = get_policy(self.config.policy)
        spec = summarizer if summarizer is not None else self.context.summarizer
        self.summarizer: Summarizer = make_summarizer(spec if spec is not None else self.config.summarizer, self.counter)
        thread = self.context.thread
        self.max_output_tokens = max_output_tokens(config or EngineConfig(), thread.model if thread else None)
        self._prompt_tokens = self._fixed_tokens()

    @classmethod
    def from_config(cls, config: EngineConfig, context: LayerContext) -> CompactionLayer:
        return cls(context, config=config)

    def _fixed_tokens(self) -> int:
        """What every request carries besides the history: prompt and tool schemas (as recorded or measured)."""
        thread = self.context.thread
        total = getattr(self.context.calibration, "prompt_tokens", 0) or 0
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

    def policy_context(self) -> PolicyContext:
        return PolicyContext(window_tokens=self.window_tokens() or 0, max_output_tokens=self.max_output_tokens,
                             counter=self.counter, config=self.config, step=self.current_step() or 0,
                             summarize=self._summarize)

    def _summarize(self, messages: Sequence[BaseMessage], prompt: str) -> str:
        text = self.summarizer(list(messages), prompt_text=prompt)
        if not isinstance(text, str):
            raise TypeError(f"`summarizer` must return a str, got {type(text).__name__}.")
        return text

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        messages: list[BaseMessage] = [m for m in state["messages"] if not isinstance(m, SystemMessage)]
        if not messages:
            return None
        ctx = self.policy_context()
        threshold = self.policy.threshold_tokens(ctx.window_tokens, ctx.max_output_tokens, self.config)
        history_tokens = self.counter(messages)
        request = self._prompt_tokens + history_tokens
        if request < threshold:
            return None
        rebuilt = self.policy.rebuild(messages, ctx)
        after = self.counter(rebuilt)
        summary = next((message_text(m) for m in rebuilt if m.additional_kwargs.get("ctxi_kind") == "summary"), "")
        self.emit("compact", tokens_before=history_tokens, tokens_after=after,
                  message=f"{self.policy.name} compacted at {request:,} tokens (threshold {threshold:,})",
                  policy=self.policy.name, threshold_tokens=threshold, request_tokens=request,
                  removed_ids=[m.id for m in messages], inserted_ids=[m.id for m in rebuilt], summary=summary)
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *rebuilt]}
