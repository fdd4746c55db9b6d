"""The Config page's form, derived from the pydantic schema: every setting of every layer gets a field.

Pure (no Streamlit): field specs, the value a widget shows, and the config a submitted form makes.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from typing import Any, Literal, Union, get_args, get_origin

import yaml
from pydantic import BaseModel

from engine.config.safe_yaml import load_yaml
from engine.config.schema import EngineConfig
from engine.config.settings import layer_enabled
from engine.config.sizes import ContextSize

SECTIONS: tuple[str, ...] = ("summarization", "compaction", "context_editing", "recorded", "filesystem", "subagents",
                             "todo", "dangling", "memory", "input_context", "model", "tokens", "cost", "general")


def open_section(config: EngineConfig) -> str | None:
    """The form section shown open: the first, in the form's order, of a layer the stack runs.

    On the as-recorded preset that is its recorded history, not summarization (off there); on a
    coding-agent policy its compaction; None when the stack runs none of the sections' layers.
    """
    return next((section for section in SECTIONS if layer_enabled(config, section)), None)


LONG_TEXT = frozenset({"summary_prompt", "custom_prompt"})
GENERAL_FIELDS = ("order", "middleware")


@dataclass(frozen=True)
class FormField:
    key: str  # dotted config key, e.g. summarization.keep
    label: str
    widget: str  # checkbox | select | int | float | text | textarea | size | trigger | list | yaml
    options: tuple[str, ...] = ()
    optional: bool = False
    help: str = ""


def _unwrap(annotation: Any) -> tuple[Any, bool]:
    """(the type without None, whether None is allowed)."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        optional = len(args) < len(get_args(annotation))
        if len(args) == 1:
            return args[0], optional
        return Union[tuple(args)], optional  # noqa: UP007 - a runtime union of the remaining members
    return annotation, False


def _widget(name: str, annotation: Any) -> tuple[str, tuple[str, ...], bool]:
    tp, optional = _unwrap(annotation)
    origin = get_origin(tp)
    if name == "trigger" and origin is tuple:
        return "trigger", (), optional
    if tp is bool:
        return "checkbox", (), optional
    if origin is Literal:  # an optional choice offers "none" first (None in the config)
        return "select", (("none",) if optional else ()) + tuple(str(a) for a in get_args(tp)), optional
    if tp is int:
        return "int", (), optional
    if tp is float:
        return "float", (), optional
    if tp is str:
        return ("textarea" if name in LONG_TEXT else "text"), (), optional
    if tp is ContextSize:
        return "size", (), optional
    if origin is tuple:
        inner = get_args(tp)[0]
        inner_tp, _ = _unwrap(inner)
        if inner_tp is str or get_origin(inner_tp) is Literal:
            return "list", (), optional
        return "yaml", (), optional
    if origin in (Union, types.UnionType) and set(get_args(tp)) <= {int, float}:
        return "float", (), optional
    return "yaml", (), optional


def _fields_of(model: type[BaseModel], prefix: str) -> list[FormField]:
    out: list[FormField] = []
    hints = typing.get_type_hints(model)
    for name, info in model.model_fields.items():
        annotation = hints.get(name, info.annotation)
        tp, _ = _unwrap(annotation)
        if isinstance(tp, type) and issubclass(tp, BaseModel) and tp is not ContextSize:
            out.extend(_fields_of(tp, f"{prefix}{name}."))
            continue
        widget, options, optional = _widget(name, annotation)
        out.append(FormField(f"{prefix}{name}", name.replace("_", " "), widget, options, optional,
                             info.description or ""))
    return out


def form_fields(section: str) -> list[FormField]:
    """The fields of one section of the config, nested sections flattened with dotted keys."""
    if section == "general":
        return [f for f in _fields_of(EngineConfig, "") if f.key in GENERAL_FIELDS]
    model = EngineConfig.model_fields[section].annotation
    assert isinstance(model, type) and issubclass(model, BaseModel)
    return _fields_of(model, f"{section}.")


def all_fields() -> list[FormField]:
    return [f for s in SECTIONS for f in form_fields(s)]


def _get(d: dict[str, Any], key: str) -> Any:
    node: Any = d
    for part in key.split("."):
        node = node[part]
    return node


def _set(d: dict[str, Any], key: str, value: Any) -> None:
    parts = key.split(".")
    node = d
    for part in parts[:-1]:
        node = node[part]
    node[parts[-1]] = value


def _size_text(v: dict[str, Any]) -> str:
    return f"{v['type']}:{v['value']}"


def widget_value(config: EngineConfig, field: FormField) -> Any:
    """What the widget for `field` shows for `config`."""
    v = _get(config.to_dict(), field.key)
    if field.widget == "trigger":
        if v is None:
            return "none"
        return ", ".join("&".join(_size_text(p) for p in c["all"]) if "all" in c else _size_text(c) for c in v)
    if field.widget == "size":
        return _size_text(v) if v is not None else ""
    if field.widget == "list":
        return ", ".join(str(x) for x in v) if v is not None else ""
    if field.widget == "yaml":
        return yaml.safe_dump(v, sort_keys=False, allow_unicode=True).strip() if v not in (None, []) else ""
    if field.widget in ("text", "textarea"):
        return v or ""
    if field.widget == "select":
        return "none" if v is None else str(v)
    return v


def _parse(field: FormField, raw: Any) -> Any:
    if field.widget == "list":
        items = [x.strip() for x in str(raw or "").split(",") if x.strip()]
        return items if items or not field.optional else None
    if field.widget == "yaml":
        text = str(raw or "").strip()
        if not text:
            return None if field.optional else []
        return load_yaml(text, source=field.key)  # bounded: depth and aliases, one line at the line
    if field.widget in ("text", "textarea"):
        text = str(raw or "")
        return text if text.strip() or not field.optional else None
    if field.widget == "size":
        text = str(raw or "").strip()
        return None if not text and field.optional else text
    if field.widget == "trigger":
        return str(raw or "").strip() or "none"
    if field.widget == "select" and field.optional and raw == "none":
        return None
    return raw


def apply_form(config: EngineConfig, values: dict[str, Any]) -> EngineConfig:
    """The config a submitted form describes; a ConfigError names the first bad key."""
    d = config.to_dict()
    by_key = {f.key: f for f in all_fields()}
    for key, raw in values.items():
        field = by_key.get(key)
        if field is not None:
            _set(d, key, _parse(field, raw))
    return EngineConfig.from_dict(d, source="form")


def field_for_error(error_key: str | None, fields: list[FormField]) -> str | None:
    """The form field an error key belongs to (the longest dotted prefix), e.g. memory.facts.0 -> memory.facts."""
    if not error_key:
        return None
    best = None
    for f in fields:
        if error_key == f.key or error_key.startswith(f.key + "."):
            if best is None or len(f.key) > len(best):
                best = f.key
    return best
