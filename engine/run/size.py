"""How many bytes a Run holds beyond its thread, so a cache of Runs can be bounded by memory.

A count of Runs says little: a 16,000-step Run holds some hundred times what a 60-step one does.
`held_bytes` walks the object graph reachable from the Run (`gc.get_referents`, sizes from
`sys.getsizeof`) and leaves out what the Run shares with other runs and does not own: the thread
(its messages are the run's inputs, loaded once per thread), the shared token counter and its
cache, the config, and code (modules, classes, functions). Every object is counted once, so a list
that many steps' views share counts once, and a lazily rendered text (engine.thread.lazytext) counts as
the references it keeps, not as the text it would render.
"""

from __future__ import annotations

import gc
import sys
import types
from collections.abc import Iterable
from typing import Any

# Objects that are code or process-wide, never a Run's own data.
_SKIP = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
         types.CodeType, types.FrameType, types.MethodWrapperType, types.WrapperDescriptorType)


def _reachable(roots: Iterable[Any], seen: set[int], total: list[int] | None) -> None:
    stack = list(roots)
    size = sys.getsizeof
    referents = gc.get_referents
    while stack:
        obj = stack.pop()
        key = id(obj)
        if key in seen or isinstance(obj, _SKIP):
            continue
        seen.add(key)
        if total is not None:
            total[0] += size(obj)
        stack.extend(referents(obj))


def held_bytes(run: Any, *, shared: Iterable[Any] = ()) -> int:
    """Bytes reachable from `run` and not from its thread, counter, config or `shared` (an estimate:
    `sys.getsizeof` of each object once, allocator overhead aside).

    The walk stops at the shared objects and at each of the thread's (and sub-agents') messages
    and their texts rather than walking everything behind them (the counter alone reaches the encoding's 200,000
    ranks): anything else the run shares with the thread is counted, so the estimate errs high,
    the safe side for a bound.
    """
    thread = run.thread
    seen = {id(o) for o in (thread, run.counter, run.config, *shared)}
    for t in (thread, *getattr(thread, "subagents", {}).values()):
        seen.add(id(t))
        for m in t.messages:
            # and the message's texts: a layer may keep one as it is (an offloaded tool result's
            # file is the result's own string)
            seen.update((id(m), id(m.content)))
            if isinstance(m.content, list):
                for block in m.content:
                    seen.add(id(block))
                    if isinstance(block, dict):
                        seen.update(id(v) for v in block.values() if isinstance(v, str))
    total = [0]
    _reachable([run], seen, total)
    return total[0]


__all__ = ["held_bytes"]
