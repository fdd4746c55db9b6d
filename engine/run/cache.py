"""A cache of Runs bounded by the memory they hold, not by how many there are.

The dashboard keeps the Runs of the configs a user tried so that going back to one is instant.
A bound by count (it kept 32) lets a few long threads fill the machine: a 16,000-step Run holds
about a hundred times what a 60-step one does. Here each Run is sized once when it is stored
(engine.run.size.held_bytes: what it holds beyond its thread, counter and config) and the least
recently used Runs are dropped until the rest fit the budget. The newest Run is always kept,
even alone over the budget, since the page that asked for it is drawing it.

Sizing walks the whole Run (~0.02 s CPU for a 1,000-step thread), so the dashboard defers it
(`put(..., defer_size=True)`) until its page has been sent and drawn: app.py asks for it after the
page ran (`settle_later`), and a timer thread sizes it a moment later, once the browser is idle. A
new config's chart does not wait for the walk, and the browser does not draw the chart while the
server walks (they competed for the machine's cores: docs/benchmarks.md). A `put` does not size the
Runs that already wait: two sidebar edits within the timer's delay each got their chart without the
other's walk (the second edit sized the first's Run before storing its own: ~0.07 s for a 2,000-step
Run), and the timer sizes them all. Only when more than `max_pending` Runs would wait does a `put`
size the oldest ones itself, so the Runs held beyond the budget stay bounded even if the timer
never fires.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from engine.run.size import held_bytes

MB = 1024 * 1024
DEFAULT_BUDGET_MB = 512
# How many Runs stored unsized (put with defer_size) may wait for the timer; a put past it sizes the
# oldest on the request path. Each counts as 0 bytes until sized, so this bounds how far past the
# budget the cache can go (a sidebar edit every 0.25 s or faster, four times running, is rare).
DEFAULT_MAX_PENDING = 4


class RunCache:
    """Least-recently-used Runs whose `held_bytes` sum stays within `budget_bytes`."""

    def __init__(self, budget_bytes: int, *, size: Callable[[Any], int] = held_bytes,
                 max_pending: int = DEFAULT_MAX_PENDING) -> None:
        if budget_bytes < 0:
            raise ValueError(f"budget_bytes must be >= 0, got {budget_bytes}")
        if max_pending < 0:
            raise ValueError(f"max_pending must be >= 0, got {max_pending}")
        self.budget_bytes = budget_bytes
        self.max_pending = max_pending
        self._size = size
        self._entries: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        # stored, not sized yet (put with defer_size), oldest first
        self._pending: dict[Hashable, Any] = {}
        self._lock = threading.Lock()
        # held across a whole settle: a second settle (held_bytes, put) waits for a sizing under way on
        # the timer's thread instead of reading the Run at 0 bytes while it is being walked
        self._settling = threading.Lock()
        self._timer: threading.Timer | None = None  # settle_later's

    def get(self, key: Hashable) -> Any | None:
        with self._lock:
            hit = self._entries.get(key)
            if hit is None:
                return None
            self._entries.move_to_end(key)
            return hit[0]

    def put(self, key: Hashable, run: Any, *, defer_size: bool = False) -> Any:
        """Store `run` as the most recently used; sized now, or with `defer_size` at the next `settle`.

        A deferred `put` leaves the Runs that already wait unsized (the timer's `settle` sizes them),
        unless more than `max_pending` would wait: then it sizes the oldest ones itself."""
        if not defer_size:
            self._store(key, run, self._size(run))  # sized outside the lock: a walk of the Run
            return run
        with self._lock:
            self._entries.pop(key, None)
            self._entries[key] = (run, 0)
            self._pending.pop(key, None)  # a re-stored key waits as the newest
            self._pending[key] = run
            over = len(self._pending) > self.max_pending
        if over:
            self._settle(keep=self.max_pending)
        return run

    def settle(self) -> None:
        """Size the Runs stored with `defer_size` and drop the least recently used past the budget."""
        self._settle(keep=0)

    def _settle(self, *, keep: int) -> None:
        """Size the pending Runs, oldest first, all but the `keep` newest."""
        with self._settling:
            with self._lock:
                taken = list(self._pending)[: max(len(self._pending) - keep, 0)]
                pending = [(key, self._pending.pop(key)) for key in taken]
            for key, run in pending:
                self._store(key, run, self._size(run), only_if_held=True)

    def settle_later(self, delay_s: float) -> None:
        """`settle` on a daemon timer thread `delay_s` seconds from now (a later call replaces a timer
        still waiting; a `put` meanwhile adds its Run to those it sizes). Nothing waits: no timer."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if not self._pending:
                return
            timer = self._timer = threading.Timer(delay_s, self.settle)
            timer.daemon = True
        timer.start()

    def _store(self, key: Hashable, run: Any, nbytes: int, *, only_if_held: bool = False) -> None:
        with self._lock:
            if only_if_held:  # a deferred Run keeps its place in the order; if cleared meanwhile, it stays out
                held = self._entries.get(key)
                if held is None or held[0] is not run:
                    return
                self._entries[key] = (run, nbytes)
            else:
                self._pending.pop(key, None)
                self._entries.pop(key, None)
                self._entries[key] = (run, nbytes)
            total = sum(n for _, n in self._entries.values())
            while total > self.budget_bytes and len(self._entries) > 1:
                dropped_key, (_, dropped) = self._entries.popitem(last=False)
                self._pending.pop(dropped_key, None)
                total -= dropped

    def latest(self, match: Callable[[Hashable], bool]) -> Any | None:
        """The most recently used Run whose key `match`es (no change to the order): a re-run of the same
        thread with other settings resumes from it (engine/run/resume.py)."""
        with self._lock:
            for key in reversed(self._entries):
                if match(key):
                    return self._entries[key][0]
        return None

    def get_or_make(self, key: Hashable, make: Callable[[], Any]) -> Any:
        hit = self.get(key)
        return hit if hit is not None else self.put(key, make())

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._pending.clear()

    @property
    def held_bytes(self) -> int:
        self.settle()
        with self._lock:
            return sum(n for _, n in self._entries.values())

    def __contains__(self, key: Hashable) -> bool:
        """Whether `key` is held (no change to the recency order)."""
        with self._lock:
            return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)


__all__ = ["DEFAULT_BUDGET_MB", "DEFAULT_MAX_PENDING", "MB", "RunCache"]
