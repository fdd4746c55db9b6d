"""ctxi subcommands; the argument groups several commands share live here."""

from __future__ import annotations

import argparse

# Shared help texts, so every command words the same option the same way.
FILE_HELP = ("thread file (any supported format, auto-detected), LangGraph SQLite database, or postgresql://… URL "
             "of a LangGraph PostgreSQL checkpoint database (read-only; its password is never shown)")
MAX_BYTES_HELP = "refuse files larger than N bytes (default 512 MiB, or CTXI_MAX_BYTES)"
JSON_HELP = "print {what} as JSON on stdout instead of text"


def add_thread_arguments(p: argparse.ArgumentParser) -> None:
    """FILE, --format, --thread, --max-bytes: which thread to read."""
    from engine.formats import FORMATS

    p.add_argument("file", metavar="FILE", help=FILE_HELP)
    p.add_argument("--format", choices=FORMATS, metavar="FORMAT",
                   help="skip auto-detection and read FILE as this format: " + ", ".join(FORMATS))
    p.add_argument("--thread", dest="thread_id", metavar="ID",
                   help="thread id inside a multi-thread file or database (see ctxi inspect --list)")
    p.add_argument("--max-bytes", type=int, metavar="N", help=MAX_BYTES_HELP)


def add_config_arguments(p: argparse.ArgumentParser, *, default: str | None = None) -> None:
    """--config, --preset, --set: which engine config to replay with."""
    from engine.config import PRESETS

    p.add_argument("--config", metavar="YAML", help="engine config YAML (ours or a DeerFlow config.yaml)")
    p.add_argument("--preset", choices=PRESETS,
                   help="start from a preset (default: " + (default or "as-recorded for a thread that recorded its "
                        "usage, else deepagents") + ")")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config key (repeatable), e.g. summarization.trigger=tokens:30000,messages:50")


def add_json_argument(p: argparse.ArgumentParser, what: str) -> None:
    """--json: the same meaning on every command (engine/cli.py)."""
    p.add_argument("--json", action="store_true", help=JSON_HELP.format(what=what))
