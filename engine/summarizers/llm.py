"""A summary written by a real chat model (`init_chat_model("provider:model")`), with LangChain's retries;
its errors are one redacted line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from langchain_core.exceptions import ModelError
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from engine.base.errors import ConfigError, ModelCallError
from engine.base.redaction import describe_error, one_line, redact
from engine.summarizers.reading import (
    first_line,
)
from engine.tokens.counters import TokenCounter, get_counter


def _summary_call_config() -> dict[str, Any]:
    # LangChain marks its summary calls as internal and keeps them off the messages stream.
    from langgraph.constants import TAG_NOSTREAM

    return {"metadata": {"lc_source": "summarization"}, "tags": [TAG_NOSTREAM]}


def load_chat_model(model_spec: str, *, key: str = "summarization.summarizer") -> BaseChatModel:
    """`init_chat_model("provider:model")`, with a one-line ConfigError naming `key` when it cannot be built.

    Keys come only from the environment (the provider package reads them); nothing here reads,
    stores or prints a key.
    """
    from langchain.chat_models import init_chat_model

    try:
        return init_chat_model(model_spec)
    except ImportError as exc:
        raise ConfigError(f"cannot load {model_spec!r}: {one_line(first_line(str(exc)), 240) or 'provider package missing'}",
                          key=key) from None
    except Exception as exc:  # provider constructors raise their own types (e.g. missing credentials)
        detail = one_line(first_line(str(exc)), 240)
        raise ConfigError(f"cannot load {model_spec!r} ({type(exc).__name__}): {detail}", key=key) from None


def retryable(exc: BaseException) -> bool:
    """LangChain's `default_retry_on` (langchain 1.5.2, `agents/middleware/_retry.py`, a private
    module, so not imported): any Exception, except a `ModelError` whose `is_retryable` is False
    (an authentication failure, a refusal, a context overflow)."""
    if not isinstance(exc, Exception):
        return False
    if isinstance(exc, ModelError):
        return bool(exc.is_retryable)
    return True


class LLMSummarizer:
    """Summaries written by a chat model prompted with the layer's summary prompt."""

    # how a checkpoint of a replay keeps each run-time attribute (engine/layers/checkpoint.py)
    checkpoint_kinds: ClassVar[dict[str, str]] = {"calls": "value", "input_tokens": "value"}

    def __init__(self, model_spec: str, *, counter: TokenCounter | None = None,
                 model: BaseChatModel | None = None, key: str = "summarization.summarizer") -> None:
        self.name = model_spec
        self.key = key  # the config key it came from, for its errors
        self.model = model if model is not None else load_chat_model(model_spec, key=key)
        self.counter = counter or get_counter("approximate")
        self.calls = 0
        self.input_tokens = 0
        # LangChain's summary call: up to 3 attempts in all (with_retry's default), none after an
        # error the provider marks non-retryable (langchain 1.5.2 SummarizationMiddleware.__init__:
        # `model.with_retry(retry_if_exception_type=default_retry_on)`)
        self._runnable = self.model.with_retry(retry_if_exception_type=retryable)

    def __call__(self, messages: Sequence[BaseMessage], *, prompt_text: str) -> str:
        self.calls += 1
        self.input_tokens += self.counter.count_text(prompt_text)
        try:
            response = self._runnable.invoke(prompt_text, config=_summary_call_config())  # type: ignore[arg-type]
        except Exception as exc:  # a provider's error text may quote the key it was sent: one redacted line
            raise ModelCallError(f"{self.key}: {self.name} failed to write a summary "
                                 f"({describe_error(exc)})") from None
        # the reply is the model's: an endpoint that echoes the key it was sent must not put it in the run
        return redact(response.text.strip())
