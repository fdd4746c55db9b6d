"""Texts a Run can rebuild from what it already holds, built when read instead of kept as copies.

A summarization event's prompt and a history file's sections are renderings of messages the run
keeps anyway (in its states and views). Kept as strings they were most of a Run's memory (a
1,000-step thread's prompts alone were 17 MB); kept as the function and the references that
make them, they cost a few pointers, and are rendered each time they are read (not cached, so
reading one does not grow the Run for good).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class LazyText:
    """`build(*args)` on every read; compares, hashes and measures as that string."""

    __slots__ = ("_args", "_build")

    def __init__(self, build: Callable[..., str], *args: Any) -> None:
        self._build = build
        self._args = args

    def __str__(self) -> str:
        return self._build(*self._args)

    def __repr__(self) -> str:
        return f"LazyText({self._build.__name__})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (str, LazyText)):
            return str(self) == str(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(str(self))

    def __len__(self) -> int:
        return len(str(self))

    def __bool__(self) -> bool:
        return bool(str(self))

    def __contains__(self, part: str) -> bool:
        return part in str(self)


def text_of(value: Any) -> Any:
    """`value` with a LazyText rendered (for JSON and anything that needs a real str)."""
    return str(value) if isinstance(value, LazyText) else value


__all__ = ["LazyText", "text_of"]
