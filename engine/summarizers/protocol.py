"""What a summarizer is: the `Summarizer` protocol, and the four sections every summary has.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from langchain_core.messages import BaseMessage

SECTIONS: tuple[str, ...] = ("SESSION INTENT", "SUMMARY", "ARTIFACTS", "NEXT STEPS")
MAX_SUMMARY_TOKENS = 1500
CHARS_PER_TOKEN = 4  # the bound is in characters, so the text does not depend on the counter


@runtime_checkable
class Summarizer(Protocol):
    """Turns the messages chosen for summarization into summary text."""

    name: str
    calls: int
    input_tokens: int

    def __call__(self, messages: Sequence[BaseMessage], *, prompt_text: str) -> str: ...
