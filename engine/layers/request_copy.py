"""`request.override(**changes)` without `dataclasses.replace`, for the layers' per-call rewrites.

`ModelRequest.override` (langchain 1.5.2, `langchain/agents/middleware/types.py`) is
`dataclasses.replace(self, **changes)`: it reads every field and calls `ModelRequest.__init__`,
which stores each field with `object.__setattr__` and turns a None `tools`, `state` or
`model_settings` into `[]`, `{"messages": []}` or `{}`. A layer that rewrites the messages of
every call (summarization's projection, the filesystem layer's truncated view) paid that ~10 µs
per call, as much as the rest of its plan. `overridden` builds the same object directly: a new
instance holding the same field values, the changed ones replaced. It falls back to `override`
for anything but a plain `ModelRequest` with the fields that `__init__` sets (another class, a
field added by a later LangChain), a change `__init__` would normalize (None, `system_prompt`), or
a request holding such a value, so the result is always what `override` returns.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from langchain.agents.middleware import ModelRequest

# the fields ModelRequest.__init__ stores (langchain 1.5.2); any other set means another version
_FIELDS = frozenset({"model", "messages", "system_message", "tool_choice", "tools", "response_format", "state",
                     "runtime", "model_settings"})
_PLAIN = frozenset(f.name for f in fields(ModelRequest)) == _FIELDS


def copied(request: ModelRequest[Any], changes: dict[str, Any]) -> ModelRequest[Any] | None:
    """A new request of the same class holding the same field values, `changes` replaced; None when only
    `override` builds it right (fields other than `__init__`'s, or a value `__init__` would normalize)."""
    held = getattr(request, "__dict__", None)
    if not _PLAIN or held is None or held.keys() != _FIELDS:
        return None
    values = {**held, **changes}
    if values.keys() != _FIELDS or values["tools"] is None or values["state"] is None or values["model_settings"] is None:
        return None
    new = object.__new__(type(request))
    new.__dict__.update(values)
    return new


def overridden(request: ModelRequest[Any], **changes: Any) -> ModelRequest[Any]:
    """`request.override(**changes)`, built without `dataclasses.replace` when that gives the same request
    (a plain `ModelRequest`, as create_agent passes; the replay's own requests copy themselves the same
    way in their `override`, engine.run.chain)."""
    if type(request) is ModelRequest:
        new = copied(request, changes)
        if new is not None:
            return new
    return request.override(**changes)


__all__ = ["copied", "overridden"]
