"""Incremental scans over a message list that only grows, and the text a scan measures.

A layer that looks at every message each step would cost O(n²) over a thread. Replay hands
layers the state's own list and only appends to it, so a layer remembers what it saw and scans
only the new tail; these helpers tell it how much of the list is unchanged. They are shared by
several layers (filesystem, todo, dangling, memory, summarization), so they live here rather
than in any one of them: no layer imports a sibling layer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage


def result_text(message: BaseMessage) -> str:
    """The text Deep Agents measures: text blocks joined by newlines, images and other blocks ignored.

    deepagents 0.7.32, middleware/_message_eviction.py (the offload threshold is checked on it).
    """
    content = message.content
    if isinstance(content, str):
        return content
    texts: list[str] = []
    for block in content:
        if isinstance(block, str):
            texts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            texts.append(str(block.get("text", "")))
    return "\n".join(texts)


def grown_prefix(owner: Any, messages: Sequence[BaseMessage]) -> int:
    """The length seen last time when `messages` is the very list seen then, only appended to.

    Replay hands layers the state's own list and never changes it except by appending (it
    forks the list before replacing anything), so this O(1) check replaces an O(n) compare;
    create_agent gives a new list each step and falls back to `unchanged_prefix`. `owner` keeps
    `_seen` (the messages seen so far) and gets `_seen_src` (the list object last seen).
    """
    src = getattr(owner, "_seen_src", None)
    owner._seen_src = messages
    n = len(owner._seen)
    return n if src is messages and n and len(messages) >= n else 0


def unchanged_prefix(previous: list[BaseMessage], messages: Sequence[BaseMessage]) -> int:
    """How many leading messages are those seen last time (all of them while the state only grows).

    List equality checks identity first at C speed, so an unchanged prefix costs a few ns per
    message; a replaced message stops the comparison (an equal-valued copy counts as unchanged).
    """
    n = len(previous)
    if n == 0 or n > len(messages):
        return 0
    head = messages[:n]
    if not isinstance(head, list):
        head = list(head)
    return n if head == previous else 0


def replaced_in_prefix(previous: list[BaseMessage], messages: Sequence[BaseMessage]) -> list[int] | None:
    """Positions where `messages` holds a same-id replacement of a previously seen message.

    `[]` when the previous messages are all still there; None when the list was rewritten (a
    message removed or a different id in its place), in which case a layer starts over. An
    upstream layer swapping in a copy (a truncated call, a stub) costs one pass of cheap checks
    instead of a full rescan.
    """
    n = len(previous)
    if n > len(messages):
        return None
    head = messages[:n]
    if not isinstance(head, list):
        head = list(head)
    if head == previous:
        return []
    replaced = [i for i, (a, b) in enumerate(zip(previous, head, strict=True)) if a is not b]
    if any(a.id is None or a.id != b.id for a, b in ((previous[i], head[i]) for i in replaced)):
        return None
    return replaced


__all__ = ["grown_prefix", "replaced_in_prefix", "result_text", "unchanged_prefix"]
