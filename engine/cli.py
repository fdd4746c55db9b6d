"""`ctxi`: the engine from the command line. Each subcommand lives in engine/commands/<name>.py.

A command module defines `NAME`, `HELP`, `add_arguments(parser)` and `run(args) -> int`.
Errors a user can cause are ContextInspectorError: printed as one line on stderr, exit 2. Anything
else is a bug: one line too (exit 1), with every secret redacted (engine.redaction).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence

from engine.errors import ContextInspectorError
from engine.redaction import describe_error, one_line, redact

DEBUG_ENV = "CTXI_DEBUG"
COMMANDS: tuple[str, ...] = ("inspect", "replay", "scenario", "run", "eval", "sweep", "ui")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ctxi", description="Context Inspector: replay agent threads through context layers.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            mod = importlib.import_module(f"engine.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"engine.commands.{name}":
                continue
            raise
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    try:
        code = int(args._run(args) or 0)
        sys.stdout.flush()  # a full disk or a closed pipe surfaces here, not at interpreter exit
        return code
    except ContextInspectorError as exc:
        print(f"ctxi {args.command}: error: {one_line(str(exc), 2000)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"ctxi {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        _silence_stdout()
        return 0
    except OSError as exc:  # a file the command could not read or write, or stdout on a full disk
        _silence_stdout()
        where = exc.filename if exc.filename is not None else "stdout"
        print(f"ctxi {args.command}: error: {one_line(str(where), 500)}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug: one line, keys redacted; CTXI_DEBUG=1 shows the (redacted) traceback
        print(f"ctxi {args.command}: internal error: {describe_error(exc, 2000)} "
              f"(set {DEBUG_ENV}=1 for the traceback)", file=sys.stderr)
        if os.environ.get(DEBUG_ENV):
            print(redact("".join(traceback.format_exception(exc))), file=sys.stderr)
        return 1


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail a second time."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout is not a real file (tests capture it)
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
