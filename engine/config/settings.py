"""Settings as the dashboard edits them: layer toggles and their order, a config as URL parameters and back.

What a link may set is decided in engine/config/links.py; this module only writes and reads the query.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from engine.base.errors import ConfigError
from engine.config.links import VIEW_PARAMS, link_setting_allowed, refusal
from engine.config.presets import DEFAULT_PRESET, PRESETS, default_preset_name
from engine.config.safe_yaml import load_yaml
from engine.config.schema import EngineConfig, preset
from engine.config.sections import BUILTIN_LAYERS, DEFAULT_ORDER

TOGGLE_LAYERS: tuple[str, ...] = DEFAULT_ORDER
# Where a layer turned on goes: the recorded layer first (it rebuilds the history the others see),
# context editing and the coding-agent compaction next to summarization (Claude Code microcompacts
# before it autocompacts).
# DeerFlow HEAD's durable context goes before summarization, its system-message coalescing last.
CANONICAL_ORDER: tuple[str, ...] = ("recorded", "filesystem", "subagents", "durable_context", "summarization",
                                    "context_editing", "compaction", "todo", "dangling", "memory", "coalesce")


# -- config helpers --------------------------------------------------------------------------
def layer_enabled(config: EngineConfig, name: str) -> bool:
    section = getattr(config, name, None)
    return name in config.order and bool(getattr(section, "enabled", True))


def with_layer(config: EngineConfig, name: str, on: bool) -> EngineConfig:
    """Turn a layer on (placing it in the default order if absent) or off."""
    d = config.to_dict()
    d[name]["enabled"] = on
    if on and name not in d["order"]:
        # the layers take their canonical places; the user's middleware keeps its slots
        slots = [*d["order"], name]
        layers = iter([n for n in CANONICAL_ORDER if n in slots])
        d["order"] = [next(layers) if n in BUILTIN_LAYERS else n for n in slots]
    return EngineConfig.from_dict(d)


# -- URL state -------------------------------------------------------------------------------
RESERVED_PARAMS = VIEW_PARAMS  # not config keys (engine.config.links)


def base_config(config: EngineConfig) -> EngineConfig:
    return preset(config.preset) if config.preset in PRESETS else EngineConfig()


def setting_text(key: str, value: Any) -> str:
    """A config value as written after `--set KEY=` (and in the URL): `fraction:0.5`, `[a, b]`, `view`."""
    leaf = key.rsplit(".", 1)[-1]
    if leaf == "trigger" and isinstance(value, list):
        return ",".join(_clause_text(c) for c in value) if value else "[]"
    if leaf in ("trigger", "keep") and isinstance(value, dict) and "type" in value:
        return f"{value['type']}:{value['value']}"
    if isinstance(value, str) and ":" not in value and _reads_back(value):
        return value
    return json.dumps(value, ensure_ascii=False)


def _reads_back(text: str) -> bool:
    try:  # bounded: a prompt of 5,000 `[` is text, not a RecursionError on every page's URL
        return bool(load_yaml(text, source="value") == text)
    except ConfigError:
        return False


def _clause_text(c: Mapping[str, Any]) -> str:
    if "all" in c:
        return "&".join(f"{p['type']}:{p['value']}" for p in c["all"])
    return f"{c['type']}:{c['value']}"


def url_params(config: EngineConfig) -> dict[str, str]:
    """The settings that differ from the config's preset, as query parameters (plus `preset`).

    Only settings a link may carry (`engine.config.links.LINK_SETTINGS`) are written: a workspace or a
    summarizer model chosen on the Config page stays in the session, out of the URL.
    """
    base = base_config(config)
    params = {"preset": config.preset or "custom"}
    # the user's middleware never goes into a link, nor its place in `order`
    linked = config.model_copy(update={"order": tuple(n for n in config.order if n in BUILTIN_LAYERS)})
    for key, (_, value) in base.diff(linked).items():
        if key != "preset" and link_setting_allowed(key):
            params[key] = setting_text(key, value)
    return params


def config_from_params(params: Mapping[str, str], default: str = DEFAULT_PRESET) -> tuple[EngineConfig, list[str]]:
    """Rebuild a config from query parameters; bad parameters are skipped and reported.

    A parameter that is not on the allow-list (`engine.config.links.LINK_SETTINGS`) is refused, whatever
    its value: a link cannot set a path, a workspace, a model or an endpoint. `default` is the preset the
    link's thread opens on (`as-recorded` for a thread that recorded its usage): an unknown preset falls
    back to it, as the link without a preset would, and the notice says so.
    """
    name = params.get("preset") or default
    errors: list[str] = []
    try:
        config = preset(name) if name != "custom" else EngineConfig()
    except ConfigError as exc:
        errors.append(f"{exc}; showing {default}, this thread's default")
        config = preset(default)
    for key, raw in params.items():
        if key in RESERVED_PARAMS:
            continue
        if not link_setting_allowed(key):
            errors.append(refusal(key))
            continue
        try:
            config = config.with_overrides([f"{key}={raw}"])
        except ConfigError as exc:
            errors.append(str(exc))
    return config, errors


def default_config(thread: Any = None) -> EngineConfig:
    """The settings a thread opens on in the dashboard: as recorded when its source recorded what it sent
    (`default_preset_name`); for a sample one of our scenarios generated, the settings under which its
    layers act (its lesson preset and overrides, recorded in the thread: the landing thread opens with
    offloads, summaries, a reminder and patches on its first screen, issue 35); else the default preset."""
    name = default_preset_name(thread)
    scenario = (getattr(thread, "extra", None) or {}).get("scenario") if thread is not None else None
    if name == DEFAULT_PRESET and isinstance(scenario, dict) and scenario.get("lesson_preset") in PRESETS:
        overrides = [str(o) for o in scenario.get("lesson_overrides") or ()]
        try:
            return preset(str(scenario["lesson_preset"])).with_overrides(overrides)
        except ConfigError:  # a hand-edited sample: its preset alone
            return preset(str(scenario["lesson_preset"]))
    return preset(name)
