"""The CLI's rule for a config: a YAML file (read in bounded time and memory) or a preset, then `--set`."""

from __future__ import annotations

from typing import Any

from engine.base.errors import ConfigError
from engine.base.files import RefusedFile, read_regular
from engine.config.presets import default_preset_name
from engine.config.safe_yaml import refuse_binary
from engine.config.schema import EngineConfig, preset

MAX_CONFIG_BYTES = 8 * 1024 * 1024  # a config YAML is a few kB; this only stops a device or a wrong file


def load_config(path: str | None = None, *, preset_name: str | None = None, overrides: list[str] | None = None,
                thread: Any = None) -> EngineConfig:
    """The CLI's rule: a YAML file or a preset (default: `default_preset_name(thread)`), then `--set` overrides."""
    if path is not None and preset_name is not None:
        raise ConfigError("give --config or --preset, not both", key="--config")
    if path is not None:
        try:  # a regular file of at most MAX_CONFIG_BYTES (engine.base.files: /dev/zero or a FIFO cannot hang it)
            data = read_regular(path, MAX_CONFIG_BYTES)
            refuse_binary(data, source=path)  # a .png or .zip given by mistake: said to be binary, as an upload is
            text = data.decode("utf-8")
        except RefusedFile as exc:
            why = (f"config file is above {MAX_CONFIG_BYTES:,} bytes" if exc.limit_bytes is not None
                   else f"config file {exc.reason}")
            raise ConfigError(why, key=path) from None
        except UnicodeDecodeError as exc:
            raise ConfigError(f"config file is not UTF-8 text (invalid byte at offset {exc.start})", key=path) from None
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read config file ({getattr(exc, 'strerror', None) or exc})", key=path) from None
        cfg = EngineConfig.from_yaml(text, source=path)
    else:
        cfg = preset(preset_name or default_preset_name(thread))
    return cfg.with_overrides(overrides or [])
