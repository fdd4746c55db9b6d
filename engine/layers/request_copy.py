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


def overridden(request: ModelRequest[Any], **changes: Any) -> ModelRequest[Any]:
    """`request.override(**changes)`, built without `dataclasses.replace` when that gives the same request."""
    held = getattr(request, "__dict__", None)
    if not _PLAIN or type(request) is not ModelRequest or held is None or held.keys() != _FIELDS:
        return request.override(**changes)
    values = {**held, **changes}
    if values.keys() != _FIELDS or values["tools"] is None or values["state"] is None or values["model_settings"] is None:
        return request.override(**changes)
    new = object.__new__(ModelRequest)
    new.__dict__.update(values)
    return new


__all__ = ["overridden"]
