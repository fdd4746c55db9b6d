"""`EngineConfig`: one validated engine config (pydantic) with its YAML round trip, and `preset(name)`.

The `summarization:` section accepts DeerFlow's schema verbatim, and a whole DeerFlow `config.yaml`
loads (its `summarization` and `memory` sections are taken, the rest ignored: engine/config/deerflow.py).
The sections are in engine/config/sections.py, thresholds in sizes.py, the presets in presets.py.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

import yaml
from pydantic import ValidationError, field_validator, model_validator

from engine.base.errors import ConfigError
from engine.config.deerflow import deerflow_document, is_deerflow_config
from engine.config.overrides import assign, deep_merge, flatten, parse_value, plain
from engine.config.presets import preset_fields
from engine.config.safe_yaml import check_document, load_yaml
from engine.config.sections import (
    BUILTIN_LAYERS,
    DEFAULT_ORDER,
    DEFAULT_WINDOW_TOKENS,
    CompactionConfig,
    ContextEditingConfig,
    CostConfig,
    DanglingConfig,
    FilesystemConfig,
    InputContextConfig,
    LayerName,
    MemoryConfig,
    MiddlewareSpec,
    ModelConfig,
    RecordedConfig,
    SubagentsConfig,
    SummarizationConfig,
    TodoConfig,
    TokensConfig,
)
from engine.config.sizes import FrozenModel
from engine.config.validation import config_error


class EngineConfig(FrozenModel):
    """Everything a replay needs to know; hashable, so the dashboard caches runs by config."""

    version: Literal[1] = 1
    preset: str | None = None
    model: ModelConfig = ModelConfig()
    tokens: TokensConfig = TokensConfig()
    # built-in layer names and the names of `middleware` entries
    order: tuple[str, ...] = DEFAULT_ORDER
    recorded: RecordedConfig = RecordedConfig()
    filesystem: FilesystemConfig = FilesystemConfig()
    subagents: SubagentsConfig = SubagentsConfig()
    summarization: SummarizationConfig = SummarizationConfig()
    context_editing: ContextEditingConfig = ContextEditingConfig()
    compaction: CompactionConfig = CompactionConfig()
    todo: TodoConfig = TodoConfig()
    dangling: DanglingConfig = DanglingConfig()
    memory: MemoryConfig = MemoryConfig()
    input_context: InputContextConfig = InputContextConfig()
    cost: CostConfig = CostConfig()
    # The user's own AgentMiddleware, replayed with the layers; one not named in `order` runs after
    # (inside) every layer that is, in list order.
    middleware: tuple[MiddlewareSpec, ...] = ()

    @field_validator("order")
    @classmethod
    def _order(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        if len(set(v)) != len(v):
            raise ValueError("each layer may appear once in order")
        return v

    @model_validator(mode="after")
    def _middleware_names(self) -> EngineConfig:
        names = [m.layer_name for m in self.middleware]
        for i, name in enumerate(names):
            if name in BUILTIN_LAYERS or name in type(self).model_fields:
                raise ValueError(f"middleware.{i}.name: {name!r} is a built-in layer or config key; give it another `name`")
            if name in names[:i]:
                raise ValueError(f"middleware.{i}.name: two middleware are named {name!r}; give each its own `name`")
        unknown = [n for n in self.order if n not in BUILTIN_LAYERS and n not in names]
        if unknown:
            raise ValueError(f"order: unknown layer {unknown[0]!r}; layers are {', '.join(get_args(LayerName))}"
                             + (f" and the middleware {', '.join(names)}" if names else ""))
        return self

    def layer_sequence(self) -> tuple[str, ...]:
        """Every enabled layer and middleware in list order: `order`, then middleware not named in it."""
        enabled = {m.layer_name for m in self.middleware if m.enabled}
        listed = [n for n in self.order if n in BUILTIN_LAYERS or n in enabled]
        return (*listed, *(m.layer_name for m in self.middleware if m.enabled and m.layer_name not in self.order))

    def middleware_spec(self, name: str) -> MiddlewareSpec | None:
        return next((m for m in self.middleware if m.layer_name == name), None)

    # -- windows -------------------------------------------------------------------------
    def window_tokens(self, thread_max_input_tokens: int | None = None) -> int:
        """The context window: the config's, else the thread's, else 200,000."""
        return self.model.max_input_tokens or thread_max_input_tokens or DEFAULT_WINDOW_TOKENS

    def window_origin(self, thread: Any = None) -> str:
        """Where `window_tokens` came from, in words, so a default window is never silent."""
        if self.model.max_input_tokens:
            return "set in the settings (model.max_input_tokens)"
        recorded = getattr(thread, "max_input_tokens", None)
        model = getattr(thread, "model", None)
        if recorded:
            if (getattr(thread, "extra", None) or {}).get("window_source") == "model table":
                return f"the model table's window for {model} (engine/data/models.yaml)"
            return "recorded in the thread"
        if model:
            return (f"a default: {model} is not in the model table (engine/data/models.yaml); "
                    "set the window if it differs")
        return "a default: the thread names no model; set the window if it differs"

    # -- serialization ---------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return plain(self.model_dump(mode="json"))

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.to_dict(), sort_keys=False, allow_unicode=True)

    @classmethod
    def from_dict(cls, d: dict[str, Any], *, source: str = "config") -> EngineConfig:
        check_document(d, source=source)  # depth and text first: nothing below may recurse into a bomb
        try:
            return cls.model_validate(d)
        except ValidationError as exc:
            raise config_error(exc, d, source, cls) from None

    @classmethod
    def from_yaml(cls, text: str, *, source: str = "config") -> EngineConfig:
        """Load our YAML, or a DeerFlow config.yaml (its summarization and memory sections)."""
        doc = load_yaml(text, source=source)  # bounded: depth, aliases (engine/config/safe_yaml.py)
        if doc is None:
            doc = {}
        if not isinstance(doc, dict):
            raise ConfigError("the config must be a YAML mapping", key=source)
        if is_deerflow_config(doc, cls.model_fields):
            return cls.from_dict(deerflow_document(doc), source=source)
        base = doc.get("preset")
        if base is not None:
            merged = deep_merge(preset(str(base)).to_dict(), doc)
            return cls.from_dict(merged, source=source)
        return cls.from_dict(doc, source=source)

    def with_overrides(self, assignments: list[str] | tuple[str, ...]) -> EngineConfig:
        """Apply `KEY=VALUE` overrides (dotted keys; values parsed as YAML scalars/lists)."""
        d = self.to_dict()
        for item in assignments:
            key, sep, raw = item.partition("=")
            key = key.strip()
            if not sep or not key:
                raise ConfigError(f"expected KEY=VALUE, got {item!r}", key="--set")
            assign(d, key, parse_value(key, raw))
        return EngineConfig.from_dict(d, source="--set")

    def diff(self, other: EngineConfig) -> dict[str, tuple[Any, Any]]:
        """Dotted keys whose values differ: `{key: (self_value, other_value)}`."""
        a, b = flatten(self.to_dict()), flatten(other.to_dict())
        return {k: (a.get(k), b.get(k)) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)}


def preset(name: str) -> EngineConfig:
    """A config reproducing one reference system's defaults (engine/config/presets.py, docs/config.md)."""
    return EngineConfig(**preset_fields(name))
