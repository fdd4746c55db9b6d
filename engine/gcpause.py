"""Pausing Python's cyclic garbage collector while a thread's objects are built or counted.

A long thread is hundreds of thousands of small objects (LangChain messages, their dicts, cached
counts) that all stay alive. Each full collection walks every live object, and building them
triggers collections over and over, so loading or inspecting 1M tiny messages took more than
quadratic time (100k messages 12.8 s, 200k 41.8 s). Nothing built there forms cycles that must
be freed early (reference counting frees the rest), so collection is paused for the work and the
previous state restored after; `engine.replay` does the same for the same reason.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic collection inside the block (nested uses are fine); reference counting still frees."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


__all__ = ["paused_gc"]
