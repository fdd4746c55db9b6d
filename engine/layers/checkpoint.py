"""A layer's run-time state saved at a step and put back into a fresh layer: what a resumed replay needs.

A replay can resume from a checkpoint of an earlier run (engine/run/resume.py) only if every layer
can hand over its state there and take it back later. Copying each layer whole at every checkpoint
would cost O(state) time and memory per checkpoint; instead each class says, attribute by attribute,
how its value may be kept (`checkpoint_kinds`), so a checkpoint is O(1) per layer and a restore costs
O(state) at C speed (list prefix copies):

- `value`: immutable, or replaced rather than changed in place (an int, a tuple, a new set each time):
  kept and put back as it is.
- `grow`: a list only appended to (or replaced whole): kept as (list, length); restored as a copy of
  that prefix. Lists a checkpoint holds are never written below their length afterwards: the driver
  forks its state list before replacing anything, and the two layers that write into a list they keep
  copy it first when a checkpoint was taken since (`checkpoint_epoch`).
- `ordered`: a dict only added to, no key ever re-assigned or removed: kept as (dict, length);
  restored as its first `length` items (insertion order).
- `memo`: a cache of a pure function (its entries are true whatever the step): shared with the
  restored layer when that layer's settings are the same, else left empty.
- `copy`: a small container changed in place: a deep copy at the checkpoint and at each restore.
- `reset`: a cache the layer rebuilds on demand (one list copy or compare): not kept; the fresh
  layer's own value stays.
- `helper`: an object with `checkpoint_kinds` of its own (a running count, a projection, a summarizer).

Every attribute a layer holds after a replay must have a kind (tests/layers/test_checkpoint_kinds.py
fails naming the class and attribute otherwise); attributes set in `__init__` from the settings and
never changed afterwards are the layer's configuration and need none.

With `CTXI_VERIFY_CHECKPOINTS=1` (the resume tests set it) a checkpoint also keeps full copies of its
`grow` lists and `ordered` dicts, and a restore checks that nothing was written below their lengths.
"""

from __future__ import annotations

import copy
import itertools
import os
from collections.abc import Mapping
from typing import Any

VALUE = "value"
GROW = "grow"
ORDERED = "ordered"
MEMO = "memo"
COPY = "copy"
RESET = "reset"
HELPER = "helper"
KINDS = frozenset({VALUE, GROW, ORDERED, MEMO, COPY, RESET, HELPER})

VERIFY_ENV = "CTXI_VERIFY_CHECKPOINTS"
_MISSING = object()

# Bumped at each checkpoint a replay takes. A layer that writes into a list it handed out or keeps
# (below the list's end) copies the list first when the epoch moved since it made it, so no list a
# checkpoint holds changes afterwards. Process-wide: a checkpoint in another replay only costs an extra
# copy here, never a wrong value.
_epoch = [0]


def checkpoint_epoch() -> int:
    return _epoch[0]


def next_checkpoint_epoch() -> None:
    _epoch[0] += 1


class CheckpointError(RuntimeError):
    """A checkpoint that cannot be restored as it was taken (a list written below its length)."""


def kinds_of(obj: Any) -> dict[str, str]:
    """`checkpoint_kinds` of `obj`'s class and its bases (a subclass's entry wins); {} when none."""
    cls = type(obj)
    hit = _KINDS.get(cls)
    if hit is None:
        hit = {}
        for base in reversed(cls.__mro__):
            declared = base.__dict__.get("checkpoint_kinds")
            if isinstance(declared, Mapping):
                hit.update(declared)
        _KINDS[cls] = hit
    return hit


_KINDS: dict[type, dict[str, str]] = {}  # per class: the kinds merged along its bases


def checkpointable(obj: Any) -> bool:
    """Whether `obj` declares how its state is kept (user middleware does not: no resume with it)."""
    return any(isinstance(cls.__dict__.get("checkpoint_kinds"), Mapping) for cls in type(obj).__mro__)


def _verify() -> bool:
    return os.environ.get(VERIFY_ENV, "") not in ("", "0")


def save(obj: Any) -> dict[str, Any]:
    """`obj`'s run-time state as its kinds keep it (O(1) but for `copy` containers and helpers)."""
    saved: dict[str, Any] = {}
    check = _verify()
    for name, kind in kinds_of(obj).items():
        value: Any = getattr(obj, name, _MISSING)
        if value is _MISSING or kind == RESET:
            continue
        if kind in (VALUE, MEMO):
            saved[name] = value
        elif kind in (GROW, ORDERED):
            if value is None:
                saved[name] = None
            else:
                witness = (tuple(value) if kind == GROW else tuple(value.items())) if check else None
                saved[name] = (value, len(value), witness)
        elif kind == COPY:
            saved[name] = copy.deepcopy(value)
        elif kind == HELPER:
            if value is not None and not checkpointable(value):
                raise CheckpointError(f"{type(obj).__name__}.{name}: a {type(value).__name__} declares no "
                                      "checkpoint_kinds")
            saved[name] = None if value is None else (type(value), save(value))
        else:
            raise ValueError(f"{type(obj).__name__}.{name}: unknown checkpoint kind {kind!r}")
    return saved


def restore(obj: Any, saved: Mapping[str, Any], *, same_settings: bool = True) -> None:
    """Put `saved` (from `save` on an object of the same class) into `obj`, a fresh instance."""
    kinds = kinds_of(obj)
    for name, value in saved.items():
        kind = kinds.get(name)
        if kind is None:
            raise CheckpointError(f"{type(obj).__name__}.{name} has no checkpoint kind")
        if kind == VALUE:
            setattr(obj, name, value)
        elif kind == MEMO:
            if same_settings:
                setattr(obj, name, value)
        elif kind in (GROW, ORDERED):
            setattr(obj, name, None if value is None else _prefix(obj, name, kind, *value))
        elif kind == COPY:
            setattr(obj, name, copy.deepcopy(value))
        elif kind == HELPER:
            if value is None:
                setattr(obj, name, None)
                continue
            cls, inner = value
            target = getattr(obj, name, None)
            if type(target) is not cls:
                raise CheckpointError(f"{type(obj).__name__}.{name}: a {cls.__name__} was saved, "
                                      f"the fresh layer holds {type(target).__name__}")
            restore(target, inner, same_settings=same_settings)


def kept_prefix(source: Any, n: int) -> Any:
    """The first `n` items of a list only appended to, or of a dict only added to, as a new object."""
    return _prefix(source, "", GROW if isinstance(source, list) else ORDERED, source, n, None)


def _prefix(obj: Any, name: str, kind: str, source: Any, n: int, witness: tuple[Any, ...] | None) -> Any:
    if kind == GROW:
        if witness is not None and (len(source) < n or any(a is not b for a, b in zip(source, witness, strict=False))):
            raise CheckpointError(f"{type(obj).__name__}.{name}: the list was written below its checkpointed "
                                  f"length {n} after the checkpoint")
        return source[:n] if isinstance(source, list) else list(itertools.islice(source, n))
    # ORDERED: a copy without the keys added after the checkpoint (the newest ones, at the end)
    if witness is not None and tuple(itertools.islice(source.items(), n)) != witness:
        raise CheckpointError(f"{type(obj).__name__}.{name}: the dict changed below its checkpointed length {n}")
    out = source.copy()
    extra = len(source) - n
    if extra > 0:
        for key in list(itertools.islice(reversed(source), extra)):
            del out[key]
    return out


__all__ = [
    "COPY",
    "GROW",
    "HELPER",
    "KINDS",
    "MEMO",
    "ORDERED",
    "RESET",
    "VALUE",
    "VERIFY_ENV",
    "CheckpointError",
    "checkpoint_epoch",
    "checkpointable",
    "kept_prefix",
    "kinds_of",
    "next_checkpoint_epoch",
    "restore",
    "save",
]
