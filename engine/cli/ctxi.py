"""`ctxi`: the engine from the command line. Each subcommand lives in engine/cli/<name>.py.

A command module defines `NAME`, `HELP`, `add_arguments(parser)` and `run(args) -> int`, and imports
at its top only what building its parser needs: the engine (LangChain, numpy, the importers) is
imported inside `run`. Only the command being run gets its arguments, so `ctxi --help` reads the
command modules and nothing else.

Conventions every command follows: `--json` prints the command's JSON document on stdout and
nothing else there (progress and notes go to stderr); `--out PATH` writes a result to a file.
Errors a user can cause are ContextInspectorError: printed as one line on stderr, exit 2. Anything
else is a bug: one line too (exit 1), with every secret redacted (engine.base.redaction).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence
from types import ModuleType
from typing import NoReturn

from engine.base.errors import ContextInspectorError
from engine.base.redaction import describe_error, one_line, redact
from engine.cli.terminal import TerminalWriter

DEBUG_ENV = "CTXI_DEBUG"
# the command modules (engine/cli/<module>.py); each one's NAME is the word typed (export_config: export-config)
COMMANDS: tuple[str, ...] = ("inspect", "replay", "scenario", "run", "eval", "sweep", "ui", "sessions", "watch",
                             "export_config")


def _commands() -> dict[str, ModuleType]:
    found: dict[str, ModuleType] = {}
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"engine.cli.{name}")
            found[getattr(module, "NAME", name)] = module
        except ModuleNotFoundError as exc:
            if exc.name == f"engine.cli.{name}":
                continue
            raise
    return found


def _chosen(argv: Sequence[str], names: Sequence[str]) -> str | None:
    """The subcommand argv names: its first word that is not an option (the top parser has only -h)."""
    for word in argv:
        if not word.startswith("-"):
            return word if word in names else None
    return None


class _Parser(argparse.ArgumentParser):
    """argparse, plus a hint for the old `ctxi replay FILE --json report.json` spelling."""

    def error(self, message: str) -> NoReturn:
        if "unrecognized arguments" in message and "--json" in _ARGV:
            message += " (--json takes no value: it prints the JSON on stdout; write a file with --out PATH)"
        super().error(message)


_ARGV: list[str] = []  # the words main() parses, for the hint above


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The `ctxi` parser; with `argv`, only the subcommand it names gets its arguments (the rest: help text)."""
    commands = _commands()
    wanted = _chosen(argv, list(commands)) if argv is not None else None
    parser = _Parser(prog="ctxi", description="Context Inspector: replay agent threads through context layers.",
                     epilog="ctxi COMMAND --help shows a command's options. --json prints JSON on stdout.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, mod in commands.items():
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.HELP)
        if argv is None or name == wanted:
            mod.add_arguments(p)
            p.set_defaults(_run=mod.run)
    return parser


def _stdout_json(words: list[str]) -> list[str]:
    """`--json -` and `--json=-` (stdout, the spelling docs and scripts use) mean `--json`."""
    out: list[str] = []
    for i, word in enumerate(words):
        if word == "--json=-":
            out.append("--json")
        elif word == "-" and i > 0 and words[i - 1] == "--json":
            continue
        else:
            out.append(word)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    words = _stdout_json(list(sys.argv[1:] if argv is None else argv))
    _ARGV[:] = words
    parser = build_parser(words)
    args = parser.parse_args(words)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    # A closed stdout or stderr (`ctxi inspect F >&-`) is None here: output goes nowhere, as to a closed pipe.
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115 - for the process's life
    # Everything printed is terminal text: a transcript's control characters are shown, never obeyed.
    raw_out, raw_err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = TerminalWriter(raw_out), TerminalWriter(raw_err)
    try:
        return _run(args)
    finally:
        sys.stdout, sys.stderr = raw_out, raw_err


def _run(args: argparse.Namespace) -> int:
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
