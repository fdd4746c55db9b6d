"""Summarizers: what writes the summary text once a layer chose what to summarize.

`protocol` (the Summarizer protocol, the four sections), `offline` (the default, deterministic and
extractive, read by `reading`), `llm` (a real chat model), `choice` (which one a spec names).
May import: base, thread, tokens, config.

`engine.summarizers:OfflineSummarizer` (and the other names below) stays valid in a config's
`use:` (docs/config.md), as it was before the package was split.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "OfflineSummarizer": "engine.summarizers.offline",
    "LLMSummarizer": "engine.summarizers.llm",
    "CallableSummarizer": "engine.summarizers.choice",
    "Summarizer": "engine.summarizers.protocol",
    "make_summarizer": "engine.summarizers.choice",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'engine.summarizers' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
