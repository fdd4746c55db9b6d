"""Config documents as plain dicts: flattening to dotted keys, merging, and `--set KEY=VALUE` parsing."""

from __future__ import annotations

from typing import Any

from engine.base.errors import ConfigError
from engine.config.safe_yaml import InvalidYaml, load_yaml


def plain(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


def flatten(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and v and k not in ("trigger", "keep"):
            out.update(flatten(v, key + "."))
        else:
            out[key] = v
    return out


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict) and k not in ("keep",):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = v
    return out


def parse_value(key: str, raw: str) -> Any:
    raw = raw.strip()
    leaf = key.rsplit(".", 1)[-1]
    if leaf in ("trigger", "keep") and ":" in raw and not raw.startswith(("{", "[")):
        return raw  # ContextSize strings: tokens:30000,messages:50
    if not raw:
        return None
    try:
        return load_yaml(raw, source=key)
    except InvalidYaml:
        # Text that is not YAML (`[IMPORTANT] be brief`) is taken as the text itself, as before, except a
        # double-quoted YAML string, the one form with escapes: `"\\ud800"` (a lone surrogate, refused by
        # the parser) must not become the literal text of its escape. The bounds (depth, aliases) always hold.
        if not raw.startswith('"'):
            return raw
        raise


def assign(d: dict[str, Any], key: str, value: Any) -> None:
    parts = key.split(".")
    node: Any = d
    for i, p in enumerate(parts[:-1]):
        if not isinstance(node, dict) or p not in node or not isinstance(node[p], dict):
            known = ", ".join(sorted(node)) if isinstance(node, dict) else ""
            raise ConfigError(f"unknown key (known here: {known})", key=".".join(parts[: i + 1]))
        node = node[p]
    if parts[-1] not in node:
        raise ConfigError(f"unknown key (known here: {', '.join(sorted(node))})", key=key)
    node[parts[-1]] = value
