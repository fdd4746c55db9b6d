"""ctxi subcommands; the argument groups several commands share live here."""

from __future__ import annotations

import argparse

# Shared help texts, so every command words the same option the same way.
FILE_HELP = ("thread file (any supported format, auto-detected), LangGraph SQLite database, or postgresql://… URL "
             "of a LangGraph PostgreSQL checkpoint database (read-only; its password is never shown)")
MAX_BYTES_HELP = "refuse files larger than N bytes (default 512 MiB, or CTXI_MAX_BYTES)"
JSON_HELP = "print {what} as JSON on stdout instead of text"
ALLOW_MIDDLEWARE_HELP = ("import and run the Python classes the config's `middleware:` names (`use: module:Class`); "
                         "without it such a config is refused, naming each class and the file it would be imported "
                         "from (SECURITY.md)")


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
    from engine.config.presets import PRESETS

    p.add_argument("--config", metavar="YAML", help="engine config YAML (ours or a DeerFlow config.yaml)")
    p.add_argument("--preset", choices=PRESETS,
                   help="start from a preset (default: " + (default or "as-recorded for a thread that recorded its "
                        "usage, else deepagents") + ")")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config key (repeatable), e.g. summarization.trigger=tokens:30000,messages:50")
    add_middleware_argument(p)


def add_middleware_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--allow-middleware", action="store_true", help=ALLOW_MIDDLEWARE_HELP)


def check_middleware_allowed(args: argparse.Namespace, *configs: object) -> None:
    """Refuse, before anything is imported, a config that names middleware the user did not allow.

    Every `use:` is checked statically first (engine/layers/user_code.py: `os:system`, a function, a
    module that defines no such class are refused whatever the flag says). A `middleware:` entry is
    Python code even when it is a real AgentMiddleware (LangChain's ShellToolMiddleware runs its
    `startup_commands` in a shell), and a config file may come from anyone: so it runs only with
    --allow-middleware, and without it the one line names each class and the file it would import.
    """
    from engine.base.errors import ContextInspectorError
    from engine.layers.user import plan_middleware

    plans: dict[str, str] = {}
    for config in configs:
        for plan in plan_middleware(config):
            plans.setdefault(plan.use, plan.describe())
    if plans and not getattr(args, "allow_middleware", False):
        raise ContextInspectorError(
            "middleware: the config names Python code that would be imported and run: " + "; ".join(plans.values())
            + ". Add --allow-middleware to run it (only for code you trust: SECURITY.md)")


def add_json_argument(p: argparse.ArgumentParser, what: str) -> None:
    """--json: the same meaning on every command (engine/cli/ctxi.py)."""
    p.add_argument("--json", action="store_true", help=JSON_HELP.format(what=what))


def check_output_path(option: str, path: str | None) -> None:
    """Refuse an output path that cannot be a file before any work is done (`-` is stdout)."""
    import os

    from engine.base.errors import ContextInspectorError

    if not path or path == "-":
        return
    if os.path.isdir(path):
        raise ContextInspectorError(f"{option} {path}: is a folder; give a file name")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise ContextInspectorError(f"{option} {path}: the folder {parent} does not exist")


def write_output(option: str, path: str, text: str) -> None:
    """Write `text` to the file `path`; any failure (a full disk, /dev/full, permissions) is one line naming it."""
    from engine.base.errors import ContextInspectorError

    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:  # raised by write or by close (a buffered write to /dev/full fails there)
        raise ContextInspectorError(f"{option} {path}: cannot write ({exc.strerror or exc})") from None
