"""Which summarizer a spec names ("offline", "provider:model", a chat model, a function), and which
summarizers in a config would call a real model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from engine.base.errors import ConfigError
from engine.config.schema import EngineConfig
from engine.summarizers.llm import LLMSummarizer
from engine.summarizers.offline import OfflineSummarizer
from engine.summarizers.protocol import Summarizer
from engine.tokens.counters import TokenCounter, get_counter


class CallableSummarizer:
    """A plain function of the messages (LangChain's `summarizer=` callable): the prompt is not used."""

    # how a checkpoint of a replay keeps each run-time attribute (engine/layers/checkpoint.py)
    checkpoint_kinds: ClassVar[dict[str, str]] = {"calls": "value", "input_tokens": "value"}

    def __init__(self, fn: Callable[[list[BaseMessage]], Any], *, counter: TokenCounter | None = None) -> None:
        self.fn = fn
        self.name = getattr(fn, "__name__", "callable")
        self.counter = counter or get_counter("approximate")
        self.calls = 0
        self.input_tokens = 0

    def __call__(self, messages: Sequence[BaseMessage], *, prompt_text: str = "") -> str:
        self.calls += 1
        self.input_tokens += self.counter(messages)
        summary = self.fn(list(messages))
        if not isinstance(summary, str):
            raise TypeError(f"`summarizer` must return a str, got {type(summary).__name__}.")
        return summary.strip()


def model_summarizers(config: EngineConfig) -> dict[str, str]:
    """`{dotted key: "provider:model"}` for every summarizer the config sets to a real model
    (`summarization.summarizer`, `compaction.summarizer`, and any later `*.summarizer` key)."""
    found: dict[str, str] = {}

    def walk(node: Any, prefix: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "summarizer" and isinstance(value, str) and value != "offline":
                    found[prefix + key] = value
                else:
                    walk(value, f"{prefix}{key}.")

    walk(config.to_dict(), "")
    return found


def with_offline_summaries(config: EngineConfig) -> EngineConfig:
    """`config` with every model summarizer replaced by the offline one (what runs until models are allowed)."""
    keys = model_summarizers(config)
    return config.with_overrides([f"{key}=offline" for key in keys]) if keys else config


def make_summarizer(spec: Any = "offline", counter: TokenCounter | None = None, *,
                    key: str = "summarization.summarizer") -> Summarizer:
    """A summarizer from a spec: "offline", "provider:model", a chat model, a Summarizer or a function.

    `key` is the config key the spec came from (`compaction.summarizer` for the compaction layer): a
    failure to load or to call the model is reported under it."""
    if spec is None or spec == "offline":
        return OfflineSummarizer(counter)
    if isinstance(spec, str):
        if ":" not in spec:
            raise ConfigError(f"summarizer must be 'offline' or 'provider:model', got {spec!r}", key=key)
        return LLMSummarizer(spec, counter=counter, key=key)
    if isinstance(spec, BaseChatModel):
        return LLMSummarizer(getattr(spec, "model_name", None) or type(spec).__name__, counter=counter, model=spec,
                             key=key)
    if isinstance(spec, Summarizer):
        return spec
    if callable(spec):
        return CallableSummarizer(spec, counter=counter)
    raise ConfigError(f"unsupported summarizer {type(spec).__name__}", key=key)
