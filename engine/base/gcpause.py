"""Pausing Python's cyclic garbage collector while a thread's objects are built or counted.

A long thread is hundreds of thousands of small objects (LangChain messages, their dicts, cached
counts) that all stay alive. Each full collection walks every live object, and building them
triggers collections over and over, so loading or inspecting 1M tiny messages took more than
quadratic time (100k messages 12.8 s, 200k 41.8 s). Nothing built there forms cycles that must
be freed early (reference counting frees the rest), so collection is paused for the work and the
previous state restored after; `engine.run.replay` does the same for the same reason.

When the pause ends, everything the block built and kept is still in the youngest generation
(CPython counts allocations while collection is disabled), so the first allocation after it runs
a young collection over all of it, and the survivors are walked again by the middle generation's
next collection: ~4 % of a 1,000-step re-run (the `plain` bench), for objects that are meant to
live on (a Run, a counter's cache). `promote_survivors` moves them to the oldest generation
instead, unwalked: `gc.freeze()` then `gc.unfreeze()` (CPython 3.11 `Modules/gcmodule.c`:
`gc_freeze_impl` merges every generation into the permanent one and zeroes the young count,
`gc_unfreeze_impl` merges the permanent one into the oldest), where the next full collection
reads them as it reads every other long-lived object. A process that froze objects itself (a
pre-fork server keeping pages shared) is left alone: unfreezing would undo its freeze.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


def promote_survivors() -> None:
    """Move every object the collector tracks to its oldest generation, without walking them."""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()


@contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic collection inside the block (nested uses are fine); reference counting still frees.
    The outermost block hands what it kept to the oldest generation (`promote_survivors`)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            promote_survivors()
            gc.enable()


def release_memory() -> None:
    """Collect cycles and hand freed heap back to the system (glibc `malloc_trim`, where there is one).

    For after a failed load of a large input: a long-lived server otherwise keeps the peak resident
    (an upload of 3 million tiny messages left a server at 4.2 GB)."""
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


_TRIM: list[Any] = []


def _malloc_trim() -> Any:
    if not _TRIM:
        import ctypes
        import ctypes.util

        name = ctypes.util.find_library("c")
        try:
            _TRIM.append(getattr(ctypes.CDLL(name), "malloc_trim", None) if name else None)
        except OSError:
            _TRIM.append(None)
    return _TRIM[0]


__all__ = ["paused_gc", "promote_survivors", "release_memory"]
