"""DeerFlow's `config.yaml`: which files are DeerFlow's, and the config document one stands for.

Its `summarization` section is our schema verbatim (DeerFlow's `SummarizationConfig`); its `memory`
section sets our memory layer; the rest (models, sandbox, tools) is not about context and is ignored.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel

from engine.config.overrides import plain
from engine.config.presets import preset_fields
from engine.config.sections import SummarizationConfig


def is_deerflow_config(doc: dict[str, Any], our_keys: Iterable[str]) -> bool:
    """A DeerFlow config.yaml: has keys we do not know next to `summarization` (models, sandbox, ...)."""
    return bool(set(doc) - set(our_keys)) and ("summarization" in doc or "config_version" in doc or "models" in doc)


def deerflow_document(doc: dict[str, Any]) -> dict[str, Any]:
    """Our config document for a DeerFlow config.yaml, on the preset of its version (HEAD's files carry
    `config_version`)."""
    fields = preset_fields("deerflow-head" if "config_version" in doc else "deerflow")
    base = {k: plain(v.model_dump(mode="json") if isinstance(v, BaseModel) else v) for k, v in fields.items()}
    summ = doc.get("summarization")
    if isinstance(summ, dict):
        allowed = set(SummarizationConfig.model_fields)
        # DeerFlow v2.0.0 keys that were later removed are ignored, not rejected.
        base["summarization"] = {**base["summarization"], **{k: v for k, v in summ.items() if k in allowed}}
        if summ.get("trim_tokens_to_summarize", 4000) is None:
            # DeerFlow passes trim only when set, so null leaves LangChain's default of 4000
            base["summarization"]["trim_tokens_to_summarize"] = 4000
    mem = doc.get("memory")
    if isinstance(mem, dict):
        backend = mem.get("backend_config")
        cfg: dict[Any, Any] = backend if isinstance(backend, dict) else mem
        enabled = bool(mem.get("enabled", True)) and bool(mem.get("injection_enabled", True))
        base["memory"] = {**base["memory"], "enabled": enabled}
        if "max_injection_tokens" in cfg:
            base["memory"]["max_injection_tokens"] = cfg["max_injection_tokens"]
    return base
