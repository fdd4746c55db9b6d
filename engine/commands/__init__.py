"""ctxi subcommands; the argument groups several commands share live here."""

from __future__ import annotations

import argparse

from engine.config import PRESETS


def add_thread_arguments(p: argparse.ArgumentParser) -> None:
    """FILE, --format, --thread, --max-bytes: which thread to read."""
    p.add_argument("file", help="thread file (any supported format; auto-detected) or the postgresql://… URL of "
                                "a LangGraph PostgreSQL checkpoint database")
    p.add_argument("--format", help="override format detection")
    p.add_argument("--thread", dest="thread_id", help="thread id inside a multi-thread file or database")
    p.add_argument("--max-bytes", type=int, help="refuse files larger than this (default 512 MiB)")


def add_config_arguments(p: argparse.ArgumentParser) -> None:
    """--config, --preset, --set: which engine config to replay with."""
    p.add_argument("--config", help="engine config YAML (ours or a DeerFlow config.yaml)")
    p.add_argument("--preset", choices=PRESETS, help="start from a preset (default: as-recorded for a thread that recorded its usage, "
                        "else deepagents)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config key, e.g. summarization.trigger=tokens:30000,messages:50")
