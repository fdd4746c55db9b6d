"""What a compaction policy is: the context it decides in and the two rules it implements."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from langchain_core.messages import BaseMessage

from engine.config import CompactionConfig
from engine.tokens import TokenCounter


@dataclass(frozen=True)
class PolicyContext:
    """What a policy may read when it decides and rebuilds."""

    window_tokens: int
    max_output_tokens: int | None
    counter: TokenCounter
    config: CompactionConfig
    step: int
    summarize: Callable[[Sequence[BaseMessage], str], str]  # (messages, prompt) -> summary text


class CompactionPolicy(Protocol):
    name: str
    summary_prompt: str

    def threshold_tokens(self, window_tokens: int, max_output_tokens: int | None, config: CompactionConfig) -> int:
        """The request size (tokens) at or above which the agent compacts before the call (pure)."""
        ...

    def rebuild(self, history: Sequence[BaseMessage], ctx: PolicyContext) -> list[BaseMessage]:
        """The history the agent continues from after compacting `history`."""
        ...
