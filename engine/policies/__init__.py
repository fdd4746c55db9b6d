"""Coding agents' compaction policies: each one a small set of pure rules, used by the compaction layer.

A policy says when an agent compacts (`threshold_tokens`) and what history it continues from
(`rebuild`). `engine.layers.compaction.CompactionLayer` runs the policy the config names; each
policy module cites the agent's source for every rule.
"""

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


def get_policy(name: str) -> CompactionPolicy:
    if name == "claude-code":
        from engine.policies.claude_code import POLICY

        return POLICY
    from engine.errors import ConfigError

    raise ConfigError(f"unknown compaction policy {name!r}", key="compaction.policy")


__all__ = ["CompactionPolicy", "PolicyContext", "get_policy"]
