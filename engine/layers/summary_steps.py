"""The summarization layer's plumbing, as plain functions: the plan of one model call, reported usage by
LangChain's provider rule, the history file's path and time stamp, and a plain function as a counter.

The layer (engine/layers/summarization.py) decides; these only carry and compute.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain.agents.middleware.types import ExtendedModelResponse, ModelResponse
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.types import Command

from engine.layers.approximate import NOT_AI_TYPES
from engine.layers.summary_rules import session_id
from engine.thread.lazytext import LazyText

# Providers whose messages carry a `model_provider` different from the model's `ls_provider`.
_PROVIDER_ALIASES: dict[str, frozenset[str]] = {
    "amazon_bedrock": frozenset({"bedrock", "bedrock_converse"}),
    "openai-mantle": frozenset({"openai"}),
    "anthropic-mantle": frozenset({"anthropic"}),
}

@dataclass
class Plan:
    """What one model call sends, and the state update to return with the response."""

    request: Any
    update: dict[str, Any] | None = None
    append_response: bool = False  # state-mode overflow: the response follows the rewritten history


@dataclass
class Written:
    text: str
    prompt: str | LazyText
    empty: bool



class CallableCounter:
    """A plain `f(messages) -> int` (e.g. count_tokens_approximately) as a TokenCounter."""

    def __init__(self, fn: Callable[..., int]) -> None:
        self.fn = fn
        self.name = getattr(fn, "__name__", "custom")

    def __call__(self, messages: Any, **kwargs: Any) -> int:
        return int(self.fn(list(messages)))

    def count_message(self, message: BaseMessage) -> int:
        return int(self.fn([message]))

    def count_text(self, text: str) -> int:
        return int(self.fn([HumanMessage(text)]))

    def count_tools(self, tools: Any) -> int:
        return 0


def reported_total(messages: Sequence[BaseMessage], model_provider: str | None, model: Any) -> int | None:
    """The last AI message's reported total, when its provider is the model's (LangChain's rule).

    The model's provider is `model_provider` (config `model.provider`), else the given model's
    `ls_provider`; with neither (a replay of the agent's own thread), any reported provider.
    """
    last_ai = None
    for m in reversed(messages):  # LangChain's `next(... reversed(messages) ...)`, without a generator per call
        if type(m) not in NOT_AI_TYPES and isinstance(m, AIMessage):
            last_ai = m
            break
    usage = getattr(last_ai, "usage_metadata", None)
    if not usage or not usage.get("total_tokens"):
        return None
    provider = last_ai.response_metadata.get("model_provider")  # type: ignore[union-attr]
    if not provider:
        return None
    expected = model_provider
    if expected is None and model is not None:
        try:
            expected = model._get_ls_params().get("ls_provider")
        except Exception:
            return None
        if expected is None:
            return None
    if expected is not None and provider != expected and provider not in _PROVIDER_ALIASES.get(expected, frozenset()):
        return None
    return int(usage["total_tokens"])


def finish_response(plan: Plan, response: Any) -> Any:
    """The handler's response, with the plan's state update attached as a Command (merged with an inner layer's)."""
    if plan.update is None:
        return response
    update = dict(plan.update)
    inner = response.command.update if isinstance(response, ExtendedModelResponse) and response.command else None
    model_response = response.model_response if isinstance(response, ExtendedModelResponse) else response
    if plan.append_response:
        produced = model_response.result if isinstance(model_response, ModelResponse) else [model_response]
        update["messages"] = [*update["messages"], *produced]
    if isinstance(inner, dict):  # keep an inner layer's update (create_agent tracks it itself; replay does not)
        merged_messages = [*inner.get("messages", []), *update.get("messages", [])]
        update = {**inner, **update}
        if merged_messages:
            update["messages"] = merged_messages
    if not isinstance(model_response, ModelResponse):
        model_response = ModelResponse(result=[model_response])
    return ExtendedModelResponse(model_response=model_response, command=Command(update=update))


def history_path(history_dir: str, thread: Any) -> str:
    """Deep Agents' `/conversation_history/{session}.md` for the thread (or the running agent's thread)."""
    thread_id = thread.thread_id if thread is not None else _config_thread_id()
    return f"{history_dir.rstrip('/')}/{session_id(thread_id)}.md"


def history_stamp(thread: Any, ai_indices: Sequence[int] | None, step: int) -> str:
    """The history section's time: when the step's model call happened, as recorded (Deep Agents
    writes the current UTC time; a replay has no clock), else the step number."""
    if thread is not None and ai_indices is not None and 0 <= step < len(ai_indices):
        message = thread.messages[ai_indices[step]]
        usage = thread.usage.get(message.id or "")
        if usage is not None and usage.timestamp:
            return str(usage.timestamp)
    return f"step {step}"


def _config_thread_id() -> str:
    """The LangGraph thread id when running inside an agent, else "default"."""
    try:
        from langgraph.config import get_config

        thread_id = get_config().get("configurable", {}).get("thread_id")
    except Exception:
        return "default"
    return str(thread_id) if thread_id is not None else "default"
